//! The `graph` commands under hostile input (issue 17): DOT injection checked through Graphviz's
//! own `dot`, writes through the atomic output layer, reads through the input layer, names
//! escaped on the terminal, a closed pipe, fetch names, and the memory limit.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tensorcast::graph::ops::AddV2;
use tensorcast::proto::{AttrValue, GraphDef, Message, NodeDef};

use tensorcast_testkit::files::dir_entries;
use tensorcast_testkit::graph_defs::{fill_const, graph_def, identity_chain, node};
use tensorcast_testkit::graphs::placeholder_broadcast;

use crate::common::stderr;
use crate::common::{run_in as run, BIN};

fn temp_dir(test: &str) -> PathBuf {
    crate::common::temp_dir(&format!("graph-hostile-{test}"))
}

fn graph_def_bytes(nodes: Vec<NodeDef>) -> Vec<u8> {
    graph_def(nodes).encode_to_vec()
}

/// `y = AddV2(BroadcastTo(x, [2,3]), x)`: one BroadcastTo the rewrite removes.
fn broadcast_graph() -> Vec<u8> {
    let (root, x, b) = placeholder_broadcast();
    AddV2::new(&root.with_op_name("y"), &b, &x).unwrap();
    root.graph().to_graph_def_bytes()
}

fn run_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    crate::common::run_with_stdin(BIN, dir, args, input)
}

fn one_line_exit_2(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    err
}

/// Graphviz's `dot`: the test script installs it; a machine without it fails this test in CI.
fn dot_available() -> bool {
    let found = Command::new("dot").arg("-V").output().is_ok();
    if !found {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "graphviz's dot is missing (scripts/test.sh installs it)"
        );
        eprintln!("graph_hostile: no `dot` here; the DOT text alone is checked");
    }
    found
}

#[test]
fn graph_dot_of_hostile_names_injects_nothing_through_dot() {
    let dir = temp_dir("dot");
    let evil_op = "P\\\"]; evil [URL=\"javascript:alert(1)\"]; //";
    let bytes = graph_def_bytes(vec![
        node("a", evil_op, &[], &[]),
        node("b", "Frob", &["a", "^a"], &[]),
        // Names TensorFlow's rule allows cannot carry quotes; attr values and op types can.
        node("c", "X\nY\u{1b}]0;title\u{7}", &["b"], &[]),
    ]);
    std::fs::write(dir.join("g.pb"), &bytes).unwrap();
    let o = run(&dir, &["graph", "dot", "g.pb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    // Every statement is one line; the only attributes are the ones we write.
    for line in text.lines() {
        assert!(!line.contains("URL=\"javascript"), "{line}");
    }
    if dot_available() {
        let mut child = Command::new("dot")
            .arg("-Tsvg")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let svg = String::from_utf8_lossy(&out.stdout);
        assert!(!svg.contains("xlink:href"), "{svg}");
        assert!(!svg.contains("href=\"javascript"), "{svg}");
        // The op type is shown as text (escaped by the SVG writer), not as markup.
        assert!(svg.contains("evil"), "{svg}");
        assert_eq!(svg.matches("<g id=\"node").count(), 3, "{svg}");
    }
}

#[test]
fn graph_optimize_writes_through_the_atomic_output_layer() {
    let dir = temp_dir("optimize");
    std::fs::write(dir.join("g.pb"), broadcast_graph()).unwrap();
    // A symlink at the output is followed: its target is replaced, the link stays.
    std::fs::write(dir.join("target.pb"), b"old").unwrap();
    std::os::unix::fs::symlink("target.pb", dir.join("out.pb")).unwrap();
    // A file planted at the old fixed temporary name is left alone.
    std::fs::write(dir.join("victim"), b"keep").unwrap();
    std::os::unix::fs::symlink("victim", dir.join("out.pb.tmp")).unwrap();
    let o = run(&dir, &["graph", "optimize", "g.pb", "-o", "out.pb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(dir.join("out.pb"))
        .unwrap()
        .file_type()
        .is_symlink());
    let written = std::fs::read(dir.join("target.pb")).unwrap();
    assert!(GraphDef::decode(written.as_slice()).is_ok());
    assert_eq!(std::fs::read(dir.join("victim")).unwrap(), b"keep");
    assert_eq!(
        dir_entries(&dir),
        ["g.pb", "out.pb", "out.pb.tmp", "target.pb", "victim"]
    );
    // `-o -` writes standard output, not a file named `-`.
    let o = run(&dir, &["graph", "optimize", "g.pb", "-o", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.join("-").exists());
    assert_eq!(o.stdout, written);
}

#[test]
fn graph_commands_read_standard_input_and_bound_streams() {
    let dir = temp_dir("input");
    let bytes = broadcast_graph();
    let o = run_with_stdin(&dir, &["graph", "inspect", "-"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("BroadcastTo"));
    let o = run(
        &dir,
        &["--max-stream", "1M", "graph", "inspect", "/dev/zero"],
    );
    let err = one_line_exit_2(&o);
    assert!(err.contains("/dev/zero") && err.contains("limit"), "{err}");
    let o = run_with_stdin(&dir, &["graph", "optimize", "-", "-o", "out.pb"], &bytes);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn graph_names_with_escape_sequences_are_printed_escaped() {
    let dir = temp_dir("escapes");
    let op = "Evil\u{1b}]0;pwned\u{7}\u{1b}[2J";
    let bytes = graph_def_bytes(vec![
        node("x", op, &[], &[("a\u{1b}[31m", AttrValue::of_int(1))]),
        node("y", "Identity", &["x"], &[("T", AttrValue::of_type(1))]),
    ]);
    std::fs::write(dir.join("g.pb"), &bytes).unwrap();
    for args in [
        &["graph", "inspect", "g.pb"][..],
        &["graph", "dot", "g.pb"],
        &["graph", "run", "g.pb", "--fetch", "y"],
    ] {
        let o = run(&dir, args);
        for stream in [&o.stdout, &o.stderr] {
            assert!(
                !stream.contains(&0x1b) && !stream.contains(&0x07),
                "{args:?}: {}",
                String::from_utf8_lossy(stream)
            );
        }
    }
    let o = run(&dir, &["graph", "run", "g.pb", "--fetch", "y"]);
    let err = one_line_exit_2(&o);
    assert!(err.contains("\\x1b]0;pwned"), "{err}");
}

#[test]
fn graph_output_into_a_closed_pipe_is_not_an_internal_error() {
    let dir = temp_dir("pipe");
    std::fs::write(dir.join("g.pb"), identity_chain(20_000).encode_to_vec()).unwrap();
    for sub in ["inspect", "dot"] {
        let mut child = Command::new(BIN)
            .args(["graph", sub, "g.pb"])
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 64];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert!(!err.contains("internal error"), "{sub}: {err}");
        assert_eq!(o.status.code(), Some(0), "{sub}: {err}");
    }
}

#[test]
fn graph_run_checks_fetch_names_before_running() {
    let dir = temp_dir("fetch");
    std::fs::write(dir.join("g.pb"), broadcast_graph()).unwrap();
    let x = tensorcast::Tensor::from_vec(
        vec![1.0f32, 2.0, 3.0],
        tensorcast::TensorShape::new(&[1, 3]).unwrap(),
    )
    .unwrap();
    tensorcast::io::write_file(
        &dir.join("x.npy"),
        tensorcast::io::Format::Npy,
        &[tensorcast::io::NamedTensor::new("x", x)],
    )
    .unwrap();
    let o = run(
        &dir,
        &[
            "graph", "run", "g.pb", "--feed", "x=x.npy", "--fetch", "y", "--fetch", "y", "-o",
            "out.npz",
        ],
    );
    let err = one_line_exit_2(&o);
    assert!(
        err.contains("two fetches would both be written as 'y'"),
        "{err}"
    );
    assert!(!dir.join("out.npz").exists());
    // A node name that would climb out of an extraction folder.
    let evil = graph_def_bytes(vec![
        node("x", "Placeholder", &[], &[("dtype", AttrValue::of_type(1))]),
        node(
            ".././../tmp/evil",
            "Identity",
            &["x"],
            &[("T", AttrValue::of_type(1))],
        ),
    ]);
    std::fs::write(dir.join("evil.pb"), evil).unwrap();
    let o = run(
        &dir,
        &[
            "graph",
            "run",
            "evil.pb",
            "--feed",
            "x=x.npy",
            "--fetch",
            ".././../tmp/evil",
            "-o",
            "out.npz",
        ],
    );
    let err = one_line_exit_2(&o);
    assert!(err.contains("unsafe file name"), "{err}");
    let o = run(
        &dir,
        &[
            "graph", "run", "g.pb", "--feed", "x=x.npy", "--fetch", "y", "-o", "out.npz",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn graph_run_constants_are_bounded_by_max_memory() {
    let dir = temp_dir("max-memory");
    let fill = |name: &str| fill_const(name, 1, 1 << 26, false);
    let bytes = graph_def_bytes(vec![
        fill("a"),
        fill("b"),
        node("y", "AddV2", &["a", "b"], &[("T", AttrValue::of_type(1))]),
    ]);
    std::fs::write(dir.join("g.pb"), &bytes).unwrap();
    let o = run(&dir, &["graph", "run", "g.pb", "--fetch", "y"]);
    let err = one_line_exit_2(&o);
    assert!(err.contains("--max-memory"), "{err}");
    assert!(err.contains("536870912 bytes"), "{err}");
    // An unknown op anywhere in what the run needs is reported before anything is decoded.
    let bytes = graph_def_bytes(vec![fill("a"), node("y", "Frobnicate", &["a"], &[])]);
    std::fs::write(dir.join("h.pb"), &bytes).unwrap();
    let o = run(
        &dir,
        &["--max-memory", "1T", "graph", "run", "h.pb", "--fetch", "y"],
    );
    let err = one_line_exit_2(&o);
    assert!(err.contains("Frobnicate (1 node)"), "{err}");
}

#[test]
fn graph_commands_read_and_write_text_graph_defs() {
    let dir = temp_dir("text");
    std::fs::write(dir.join("g.pb"), broadcast_graph()).unwrap();
    // Binary in, text out (by the extension), text back in: the same graph.
    let o = run(&dir, &["graph", "optimize", "g.pb", "-o", "opt.pbtxt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("opt.pbtxt")).unwrap();
    assert!(text.starts_with("node {\n  name: \"x\""), "{text}");
    let o = run(&dir, &["graph", "optimize", "opt.pbtxt", "-o", "again.pb"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let a = GraphDef::decode(std::fs::read(dir.join("again.pb")).unwrap().as_slice()).unwrap();
    let b = tensorcast::proto::graph_def_from_text(&text).unwrap();
    assert_eq!(a, b);
    let o = run(&dir, &["graph", "inspect", "opt.pbtxt"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("AddV2"));
    // A text file with a mistake names its line and column.
    std::fs::write(
        dir.join("bad.pbtxt"),
        "node {\n  name: \"x\"\n  opp: \"Y\"\n}\n",
    )
    .unwrap();
    let o = run(&dir, &["graph", "inspect", "bad.pbtxt"]);
    let err = one_line_exit_2(&o);
    assert!(err.contains("3:6: NodeDef has no field named opp"), "{err}");
}

// ---- issue 37 ------------------------------------------------------------------------------

/// A SavedModel in `dir/name` whose `serving_default` returns `y = Sum(c, 0)` of a float
/// `Const` `c` of `elements` ones (`literal`: stored value by value; else one value TensorFlow
/// fills the rest from).
fn sum_of_const_saved_model(dir: &Path, name: &str, elements: i64, literal: bool) -> String {
    let c = if literal {
        tensorcast_testkit::graph_defs::const_of(
            "c",
            &tensorcast::Tensor::vector(&vec![1.0f32; elements as usize]),
        )
    } else {
        fill_const("c", 1, elements, true)
    };
    let gd = graph_def(vec![
        c,
        tensorcast_testkit::graph_defs::const_of("axis", &tensorcast::Tensor::scalar_of(0i32)),
        node(
            "y",
            "Sum",
            &["c", "axis"],
            &[
                ("T", AttrValue::of_type(1)),
                ("Tidx", AttrValue::of_type(3)),
            ],
        ),
    ]);
    tensorcast_testkit::graph_defs::write_saved_model(&dir.join(name), gd, &[], &[("y", "y:0", 1)])
        .unwrap();
    name.to_string()
}

#[test]
fn graph_run_saved_model_constants_honour_max_memory() {
    let dir = temp_dir("saved-model-max-memory");
    // 300 MiB once filled, from a file of a few bytes: past the default 256M, within 1G.
    let big = sum_of_const_saved_model(&dir, "big", 300 << 18, false);
    let o = run(&dir, &["graph", "run", &big]);
    let err = one_line_exit_2(&o);
    assert!(err.contains("--max-memory"), "{err}");
    assert!(err.contains("314572800 bytes"), "{err}");
    let o = run(&dir, &["--max-memory", "1G", "graph", "run", &big]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "y: Tensor<type: float shape: [] values: 78643200>\n"
    );
    // A 4 MiB constant stored value by value: refused under --max-memory 1M (its file is past
    // the limit too), run under 8M.
    let small = sum_of_const_saved_model(&dir, "small", 1 << 20, true);
    let o = run(&dir, &["--max-memory", "1M", "graph", "run", &small]);
    let err = one_line_exit_2(&o);
    assert!(err.contains("1048576"), "{err}");
    let o = run(&dir, &["--max-memory", "8M", "graph", "run", &small]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "y: Tensor<type: float shape: [] values: 1048576>\n"
    );
}

#[test]
fn graph_run_tensor_list_reserve_2e31_elements_is_an_error_not_an_abort() {
    use tensorcast_testkit::graph_defs::tensor_list_reserve;
    let dir = temp_dir("tensor-list-reserve");
    let mut nodes = tensor_list_reserve(i32::MAX, None);
    nodes.push(node("len", "TensorListLength", &["list"], &[]));
    let gd = graph_def(nodes);
    std::fs::write(dir.join("g.pb"), gd.encode_to_vec()).unwrap();
    tensorcast_testkit::graph_defs::write_saved_model(
        &dir.join("sm"),
        gd,
        &[],
        &[("len", "len:0", 3)],
    )
    .unwrap();
    for args in [
        &["graph", "run", "g.pb", "--fetch", "len"][..],
        &["graph", "run", "sm"][..],
    ] {
        let o = run(&dir, args);
        let err = one_line_exit_2(&o);
        assert!(
            err.contains("node list: TensorListReserve: a list of 2147483647 elements takes"),
            "{err}"
        );
        assert!(err.contains("raise --max-memory"), "{err}");
    }
}
