//! `tensorcast graph run|inspect` on SavedModels TensorFlow 2.21 wrote
//! (tests/tf_observed/saved_models, see gen_saved_model_run.py).

use std::path::PathBuf;
use std::process::Output;

use crate::common::run;
use crate::common::{stderr, temp_dir};

fn model(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/tf_observed/saved_models")
        .join(name)
        .display()
        .to_string()
}

/// An npy file of a float32 [2,2] tensor.
fn x_npy(dir: &std::path::Path) -> String {
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    for v in [1.0f32, 2.0, 3.0, 4.0] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let p = dir.join("x.npy");
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// `graph run` of the `affine` model with one `--input`.
fn run_affine(input: &str) -> Output {
    run(&["graph", "run", &model("affine"), "--input", input])
}

#[test]
fn graph_run_runs_a_saved_model_signature() {
    let dir = temp_dir("graph_saved_model_run");
    let x = x_npy(&dir);
    let o = run_affine(&format!("x={x}"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "y: Tensor<type: float shape: [2,2] values: [2.5 -5.75][6.5 -11.75]>\n"
    );
    let out = dir.join("out.npz");
    let o = run(&[
        "graph",
        "run",
        &model("affine"),
        "--signature",
        "serving_default",
        "--input",
        &format!("x={x}"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["inspect", out.to_str().unwrap(), "--json"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\"y\""), "{text}");
}

#[test]
fn graph_run_on_a_saved_model_names_what_does_not_fit() {
    let dir = temp_dir("graph_saved_model_errors");
    let x = x_npy(&dir);
    let o = run_affine(&format!("z={x}"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("signature 'serving_default' has no input 'z'; its inputs are x"),
        "{}",
        stderr(&o)
    );
    let o = run(&["graph", "run", &model("affine"), "--tag-set", "train"]);
    assert!(
        stderr(&o).contains("Could not find meta graph def matching supplied tags: { train }"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "graph",
        "run",
        &model("affine"),
        "--input",
        &format!("x={x}"),
        "--fetch",
        "q",
    ]);
    assert!(
        stderr(&o).contains("has no output 'q'; its outputs are y"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn graph_inspect_reads_a_saved_models_graph() {
    let o = run(&["graph", "inspect", &model("nested")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("StatefulPartitionedCall"), "{text}");
    assert!(text.contains("VarHandleOp"), "{text}");
}

/// The `affine` SavedModel with its `saved_model.pb` rewritten as `saved_model.pbtxt` (by
/// tensorcast's text printer), variables and fingerprint copied.
fn affine_as_text(dir: &std::path::Path) -> String {
    let src = PathBuf::from(model("affine"));
    let dst = dir.join("affine_text");
    std::fs::create_dir_all(dst.join("variables")).unwrap();
    for f in [
        "variables/variables.index",
        "variables/variables.data-00000-of-00001",
        "fingerprint.pb",
    ] {
        std::fs::copy(src.join(f), dst.join(f)).unwrap();
    }
    let pb = std::fs::read(src.join("saved_model.pb")).unwrap();
    let text = tensorcast::proto::saved_model_binary_to_text(&pb).unwrap();
    std::fs::write(dst.join("saved_model.pbtxt"), text).unwrap();
    dst.display().to_string()
}

#[test]
fn a_text_saved_model_runs_and_shows_as_the_binary_one() {
    let dir = temp_dir("graph_saved_model_text");
    let x = x_npy(&dir);
    let text = affine_as_text(&dir);
    let input = format!("x={x}");
    let binary_run = run(&["graph", "run", &model("affine"), "--input", &input]);
    let text_run = run(&["graph", "run", &text, "--input", &input]);
    assert!(text_run.status.success(), "{}", stderr(&text_run));
    assert_eq!(text_run.stdout, binary_run.stdout);
    let binary_show = run(&["saved-model", "show", &model("affine"), "--all"]);
    let text_show = run(&["saved-model", "show", &text, "--all"]);
    assert!(text_show.status.success(), "{}", stderr(&text_show));
    assert_eq!(
        String::from_utf8_lossy(&text_show.stdout).replace(&text, "D"),
        String::from_utf8_lossy(&binary_show.stdout).replace(&model("affine"), "D")
    );
    let inspect = run(&["graph", "inspect", &text]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
}

#[test]
fn graph_bench_times_a_saved_model_and_a_graph_def() {
    let dir = temp_dir("graph_bench");
    let x = x_npy(&dir);
    let input = format!("x={x}");
    let affine = model("affine");
    let saved_model = |more: &[&str]| {
        let mut args = vec!["graph", "bench", &affine, "--input", &input];
        args.extend_from_slice(more);
        run(&args)
    };
    let o = saved_model(&["--runs", "7", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"], 7);
    let (min, med, max) = (
        v["min_s"].as_f64().unwrap(),
        v["median_s"].as_f64().unwrap(),
        v["max_s"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= med && med <= max, "{v}");
    // A GraphDef: x -> Identity.
    let gd = dir.join("g.pbtxt");
    std::fs::write(
        &gd,
        "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n\
         node { name: \"y\" op: \"Neg\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } }\n",
    )
    .unwrap();
    let gd = gd.display().to_string();
    let o = run(&[
        "graph", "bench", &gd, "--feed", &input, "--fetch", "y", "--runs", "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("runs: 3  min: "), "{text}");
    // Errors: no fetch; a failing run names the problem.
    let o = run(&["graph", "bench", &gd, "--feed", &input]);
    assert!(
        stderr(&o).contains("needs at least one --fetch"),
        "{}",
        stderr(&o)
    );
    let o = run(&["graph", "bench", &gd, "--fetch", "y"]);
    assert!(!o.status.success());
    // --profile: the op types and the slowest nodes (GraphDefs only).
    let profiled = |runs: &str, json: bool| {
        let mut args = vec![
            "graph",
            "bench",
            &gd,
            "--feed",
            &input,
            "--fetch",
            "y",
            "--runs",
            runs,
            "--profile",
        ];
        if json {
            args.push("--json");
        }
        run(&args)
    };
    let o = profiled("4", true);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ops = v["profile"].as_array().unwrap();
    assert_eq!(ops.len(), 1, "{v}");
    assert_eq!(
        (&ops[0]["op"], &ops[0]["nodes"], &ops[0]["share"]),
        (&"Neg".into(), &1.into(), &1.0.into())
    );
    assert_eq!(v["slowest"][0]["node"], "y");
    assert!(v["slowest"][0]["mean_s"].as_f64().unwrap() > 0.0, "{v}");
    let o = profiled("2", false);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("profile (2 runs") && text.contains("Neg") && text.contains("slowest nodes:"),
        "{text}"
    );
    let o = saved_model(&["--profile"]);
    assert!(
        stderr(&o).contains("--profile times the nodes of a GraphDef"),
        "{}",
        stderr(&o)
    );
}
