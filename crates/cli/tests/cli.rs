//! The `tensorcast` binary end to end: every subcommand on fixtures written in a temporary
//! directory, every error class (exit 2, one line naming the file), `diff`'s exit codes.

use crate::common::stderr;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{run_in, stdout};
use serde_json::Value;
use tensorcast::io::{read_file, write_file, Format, NamedTensor};
use tensorcast::{bf16, f16, DataType, TString, Tensor, TensorShape};

/// A fresh, empty directory for one test.
fn temp_dir(test: &str) -> PathBuf {
    crate::common::temp_dir(&format!("cli-{test}"))
}

fn matrix_f32() -> Tensor {
    let v: Vec<f32> = (0..6).map(|i| i as f32).collect();
    Tensor::from_vec(v, TensorShape::new(&[2, 3]).unwrap()).unwrap()
}

fn write(dir: &Path, name: &str, format: Format, tensors: Vec<NamedTensor>) -> PathBuf {
    let p = dir.join(name);
    write_file(&p, format, &tensors).unwrap();
    p
}

fn write_one(dir: &Path, name: &str, t: Tensor) -> PathBuf {
    let format = Format::from_path(Path::new(name)).unwrap();
    write(dir, name, format, vec![NamedTensor::new("t", t)])
}

/// Asserts exit code 2 and exactly one stderr line, starting `tensorcast: <file>:` and
/// containing `problem`.
fn assert_one_line_error(o: &Output, file: &str, problem: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err:?}");
    assert!(
        err.starts_with(&format!("tensorcast: {file}:")),
        "the line names the file: {err:?}"
    );
    assert!(err.contains(problem), "{problem:?} not in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn inspect_prints_an_aligned_table_stats_and_debug_string() {
    let dir = temp_dir("inspect_table");
    write_one(&dir, "m.npy", matrix_f32());
    let o = run_in(&dir, &["inspect", "m.npy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("m.npy: npy, 1 tensor, "), "{out}");
    assert!(
        out.contains("m: Tensor<type: float shape: [2,3] values: [0 1 2]...>"),
        "{out}"
    );
    // Header and row line up: every column starts at the same character in both lines.
    let lines: Vec<&str> = out.lines().collect();
    let (header, row) = (lines[1], lines[2]);
    for col in ["dtype", "shape", "IsAligned"] {
        let at = header.find(col).unwrap();
        assert_eq!(
            &row[at - 2..at],
            "  ",
            "column {col} starts after two spaces:\n{out}"
        );
    }
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[..4], ["m", "float", "[2,3]", "24"]);
    assert_eq!(cells[cells.len() - 4..], ["0", "5", "2.5", "0"]);
    // Right-aligned numbers end where their header ends.
    let bytes_end = header.find("bytes").unwrap() + "bytes".len();
    assert_eq!(&row[bytes_end - 2..bytes_end], "24");
}

#[test]
fn inspect_values_and_print_v2_change_the_debug_string() {
    let dir = temp_dir("inspect_values");
    write_one(&dir, "m.npy", matrix_f32());
    let o = run_in(&dir, &["inspect", "--values", "6", "m.npy"]);
    assert!(
        stdout(&o).contains("values: [0 1 2][3 4 5]>"),
        "{}",
        stdout(&o)
    );
    let o = run_in(&dir, &["inspect", "--values", "1", "--print-v2", "m.npy"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("m: Tensor<type: float shape: [2,3]>\n    [[0 ... 2]\n     [3 ... 5]]\n"),
        "{out}"
    );
}

#[test]
fn inspect_json_is_one_document_with_every_tensor() {
    let dir = temp_dir("inspect_json");
    write(
        &dir,
        "w.safetensors",
        Format::Safetensors,
        vec![
            NamedTensor::new(
                "w",
                Tensor::vector(&[bf16::from_f32(-1.5), bf16::from_f32(3.0), bf16::NAN]),
            ),
            NamedTensor::new("b", Tensor::vector(&[1i64, -7, 4])),
        ],
    );
    write(
        &dir,
        "z.npz",
        Format::Npz,
        vec![NamedTensor::new(
            "mask",
            Tensor::vector(&[true, false, true, true]),
        )],
    );
    write_one(
        &dir,
        "h.pb",
        Tensor::vector(&[f16::from_f32(0.5), f16::from_f32(0.25)]),
    );
    let o = run_in(
        &dir,
        &["inspect", "--json", "w.safetensors", "z.npz", "h.pb"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).expect("valid JSON");
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["format"], "safetensors");
    assert_eq!(files[1]["format"], "npz");
    assert_eq!(files[2]["format"], "tensorproto");
    let tensors = files[0]["tensors"].as_array().unwrap();
    let w = tensors.iter().find(|t| t["name"] == "w").unwrap();
    assert_eq!(w["dtype"], "bfloat16");
    assert_eq!(w["shape"], serde_json::json!([3]));
    assert_eq!(w["bytes"], 6);
    assert_eq!(w["stats"]["min"], -1.5);
    assert_eq!(w["stats"]["max"], 3.0);
    assert_eq!(w["stats"]["mean"], 0.75);
    assert_eq!(w["stats"]["nan_count"], 1);
    assert!(w["alignment"].as_u64().unwrap().is_power_of_two());
    assert!(w["is_aligned"].is_boolean());
    let b = tensors.iter().find(|t| t["name"] == "b").unwrap();
    assert_eq!(b["stats"]["min"], -7);
    assert_eq!(b["stats"]["max"], 4);
    assert_eq!(
        b["debug_string"],
        "Tensor<type: int64 shape: [3] values: 1 -7 4>"
    );
    let mask = &files[1]["tensors"][0];
    assert_eq!(mask["dtype"], "bool");
    assert_eq!(mask["stats"]["mean"], 0.75);
    let h = &files[2]["tensors"][0];
    assert_eq!(h["name"], "h");
    assert_eq!(h["dtype"], "half");
    assert_eq!(h["stats"]["mean"], 0.375);
}

#[test]
fn inspect_without_files_reads_the_samples_directory() {
    let dir = temp_dir("inspect_samples");
    let samples = dir.join("samples");
    std::fs::create_dir(&samples).unwrap();
    write_one(&samples, "a.npy", matrix_f32());
    write_one(&samples, "b.pb", Tensor::vector(&[TString::from("hello")]));
    std::fs::write(samples.join("README.md"), "not a tensor file\n").unwrap();
    let o = run_in(&dir, &["inspect"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("samples/a.npy: npy, 1 tensor"), "{out}");
    assert!(out.contains("samples/b.pb: tensorproto, 1 tensor"), "{out}");
    assert!(
        out.contains("b: Tensor<type: string shape: [1] values: hello>"),
        "{out}"
    );
    assert!(!out.contains("README"), "{out}");
}

#[test]
fn inspect_without_files_falls_back_to_the_shipped_samples() {
    // An empty directory has no samples/: the source tree's are used (the README's first
    // command shows them).
    let dir = temp_dir("inspect_shipped");
    let o = run_in(&dir, &["inspect"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .join("samples");
    let files = out
        .lines()
        .filter(|l| l.starts_with(&*shipped.to_string_lossy()))
        .count();
    assert!(files >= 4, "several sample files expected:\n{out}");
    for format in ["npy", "npz", "safetensors", "tensorproto"] {
        assert!(
            out.contains(&format!(": {format}, ")),
            "no {format} sample:\n{out}"
        );
    }
}

#[test]
fn inspect_of_a_directory_reads_its_tensor_files() {
    let dir = temp_dir("inspect_dir");
    let sub = dir.join("d");
    std::fs::create_dir(&sub).unwrap();
    write_one(&sub, "one.npy", matrix_f32());
    write_one(&sub, "two.pb", matrix_f32());
    let o = run_in(&dir, &["inspect", "--json", "d"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["files"].as_array().unwrap().len(), 2);
    std::fs::create_dir(dir.join("empty")).unwrap();
    assert_one_line_error(
        &run_in(&dir, &["inspect", "empty"]),
        "empty",
        "no tensor files",
    );
}

#[test]
fn inspect_detects_the_format_from_content_not_the_extension() {
    let dir = temp_dir("inspect_content");
    let p = write_one(&dir, "x.npy", matrix_f32());
    std::fs::rename(&p, dir.join("x.bin")).unwrap();
    let o = run_in(&dir, &["inspect", "x.bin"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("x.bin: npy, 1 tensor"));
}

#[test]
fn inspect_reports_each_bad_file_and_still_shows_the_good_ones() {
    let dir = temp_dir("inspect_partial");
    write_one(&dir, "good.npy", matrix_f32());
    std::fs::write(dir.join("bad.npy"), b"\x93NUMPY garbage").unwrap();
    let o = run_in(&dir, &["inspect", "good.npy", "bad.npy"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("good.npy: npy"));
    assert_one_line_error(&o, "bad.npy", "");
}

#[test]
fn convert_round_trips_npy_safetensors_npy() {
    let dir = temp_dir("convert_round_trip");
    write_one(&dir, "a.npy", matrix_f32());
    for (args, code) in [
        (vec!["convert", "a.npy", "a.safetensors"], 0),
        (vec!["convert", "a.safetensors", "back.npy"], 0),
        (vec!["diff", "a.npy", "back.npy"], 0),
        (vec!["convert", "a.npy", "a.data", "--to", "pb"], 0),
        (vec!["convert", "a.data", "a.npz"], 0),
        (vec!["diff", "a.npz", "a.npy"], 0),
    ] {
        let o = run_in(&dir, &args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
    }
    let st = read_file(&dir.join("a.safetensors")).unwrap();
    assert_eq!(st[0].name, "a");
    assert_eq!(st[0].tensor, matrix_f32());
    assert_eq!(
        read_file(&dir.join("back.npy")).unwrap()[0].tensor,
        matrix_f32()
    );
    assert_eq!(
        read_file(&dir.join("a.data")).unwrap()[0].tensor,
        matrix_f32()
    );
}

#[test]
fn convert_cast_casts_every_tensor() {
    let dir = temp_dir("convert_cast");
    write(
        &dir,
        "in.safetensors",
        Format::Safetensors,
        vec![
            NamedTensor::new("x", Tensor::vector(&[1.5f32, -2.0])),
            NamedTensor::new("y", Tensor::vector(&[3i32])),
        ],
    );
    let o = run_in(
        &dir,
        &[
            "convert",
            "in.safetensors",
            "out.safetensors",
            "--cast",
            "bf16",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = read_file(&dir.join("out.safetensors")).unwrap();
    let x = out.iter().find(|t| t.name == "x").unwrap();
    assert_eq!(x.tensor.dtype(), DataType::BFLOAT16);
    assert_eq!(
        x.tensor.as_slice::<bf16>().unwrap(),
        &[bf16::from_f32(1.5), bf16::from_f32(-2.0)]
    );
    let y = out.iter().find(|t| t.name == "y").unwrap();
    assert_eq!(y.tensor.as_slice::<bf16>().unwrap(), &[bf16::from_f32(3.0)]);
}

#[test]
fn bitcast_follows_tensorflow_and_reinterpret_follows_tik() {
    let dir = temp_dir("bitcast");
    write_one(&dir, "f.npy", Tensor::vector(&[1.0f32, -2.0]));
    let o = run_in(&dir, &["bitcast", "f.npy", "--to", "uint8", "-o", "u.npy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let u = &read_file(&dir.join("u.npy")).unwrap()[0].tensor;
    assert_eq!(u.dtype(), DataType::UINT8);
    assert_eq!(u.shape().dim_sizes(), &[2, 4]);
    assert_eq!(
        u.as_slice::<u8>().unwrap(),
        &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]
    );
    let o = run_in(
        &dir,
        &[
            "bitcast",
            "f.npy",
            "--to",
            "u8",
            "--reinterpret",
            "-o",
            "r.safetensors",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = &read_file(&dir.join("r.safetensors")).unwrap()[0].tensor;
    assert_eq!(r.shape().dim_sizes(), &[8]);
    // And back: the round trip is the identity.
    let o = run_in(
        &dir,
        &["bitcast", "u.npy", "--to", "DT_FLOAT", "-o", "f2.npy"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        run_in(&dir, &["diff", "f.npy", "f2.npy"]).status.code(),
        Some(0)
    );
}

#[test]
fn broadcast_materialises_the_shape() {
    let dir = temp_dir("broadcast");
    write_one(&dir, "row.npy", Tensor::vector(&[1i16, 2, 3]));
    let o = run_in(
        &dir,
        &["broadcast", "row.npy", "--shape", "2,3", "-o", "out.npz"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = &read_file(&dir.join("out.npz")).unwrap()[0];
    assert_eq!(t.name, "row");
    assert_eq!(t.tensor.shape().dim_sizes(), &[2, 3]);
    assert_eq!(t.tensor.as_slice::<i16>().unwrap(), &[1, 2, 3, 1, 2, 3]);
}

#[test]
fn diff_exit_codes_say_whether_tensors_differ() {
    let dir = temp_dir("diff");
    write_one(&dir, "a.npy", matrix_f32());
    let mut v: Vec<f32> = (0..6).map(|i| i as f32).collect();
    v[5] += 0.5;
    write_one(
        &dir,
        "b.npy",
        Tensor::from_vec(v, TensorShape::new(&[2, 3]).unwrap()).unwrap(),
    );
    let o = run_in(&dir, &["diff", "a.npy", "a.npy"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("no differences (1 tensor)"));

    let o = run_in(&dir, &["diff", "a.npy", "b.npy"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let row = out.lines().nth(2).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "a",
            "/",
            "b",
            "float",
            "[2,3]",
            "differ",
            "1",
            "of",
            "6",
            "0.5",
            "0.09090909",
            "[1,2]"
        ],
        "{out}"
    );
    assert!(out.ends_with("1 of 1 tensor differs\n"), "{out}");

    assert_eq!(
        run_in(&dir, &["diff", "a.npy", "b.npy", "--atol", "0.5"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run_in(&dir, &["diff", "a.npy", "b.npy", "--atol", "0.4"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        run_in(&dir, &["diff", "a.npy", "b.npy", "--rtol", "0.1"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn diff_reports_dtype_shape_and_missing_tensors() {
    let dir = temp_dir("diff_mismatch");
    write_one(&dir, "f.npy", Tensor::vector(&[1.0f32]));
    write_one(&dir, "d.npy", Tensor::vector(&[1.0f64]));
    write_one(&dir, "s.npy", Tensor::vector(&[1.0f32, 1.0]));
    let o = run_in(&dir, &["diff", "f.npy", "d.npy"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("float / double"), "{}", stdout(&o));
    assert!(stdout(&o).contains("dtype differs"));
    let o = run_in(&dir, &["diff", "f.npy", "s.npy"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("[1] / [2]  shape differs"),
        "{}",
        stdout(&o)
    );
    let t = Tensor::vector(&[1u8]);
    write(
        &dir,
        "x.npz",
        Format::Npz,
        vec![
            NamedTensor::new("p", t.clone()),
            NamedTensor::new("q", t.clone()),
        ],
    );
    write(
        &dir,
        "y.npz",
        Format::Npz,
        vec![NamedTensor::new("p", t.clone()), NamedTensor::new("r", t)],
    );
    let o = run_in(&dir, &["diff", "x.npz", "y.npz"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("only in x.npz"));
    assert!(stdout(&o).contains("only in y.npz"));
    assert!(
        stdout(&o).ends_with("2 of 3 tensors differ\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn missing_file_is_one_line_exit_2() {
    let dir = temp_dir("err_missing");
    for args in [
        vec!["inspect", "nope.npy"],
        vec!["convert", "nope.npy", "out.npz"],
        vec!["bitcast", "nope.npy", "--to", "u8", "-o", "o.npy"],
        vec!["broadcast", "nope.npy", "--shape", "2", "-o", "o.npy"],
        vec!["diff", "nope.npy", "nope.npy"],
    ] {
        let o = run_in(&dir, &args);
        assert_one_line_error(&o, "nope.npy", "No such file");
    }
    assert!(!dir.join("out.npz").exists());
}

#[test]
fn garbage_and_truncated_files_are_one_line_exit_2() {
    let dir = temp_dir("err_garbage");
    std::fs::write(dir.join("junk.bin"), b"hello, these are not tensors at all").unwrap();
    std::fs::write(dir.join("junk.npy"), b"hello, these are not tensors at all").unwrap();
    let good = std::fs::read(write_one(&dir, "good.npy", matrix_f32())).unwrap();
    std::fs::write(dir.join("cut.npy"), &good[..good.len() - 5]).unwrap();
    let st = std::fs::read(write_one(&dir, "good.safetensors", matrix_f32())).unwrap();
    std::fs::write(dir.join("cut.safetensors"), &st[..st.len() - 3]).unwrap();

    assert_one_line_error(
        &run_in(&dir, &["inspect", "junk.bin"]),
        "junk.bin",
        "unknown format",
    );
    assert_one_line_error(
        &run_in(&dir, &["inspect", "junk.npy"]),
        "junk.npy",
        "bad magic",
    );
    assert_one_line_error(
        &run_in(&dir, &["inspect", "cut.npy"]),
        "cut.npy",
        "truncated",
    );
    assert_one_line_error(
        &run_in(&dir, &["convert", "cut.npy", "o.pb"]),
        "cut.npy",
        "truncated",
    );
    assert_one_line_error(
        &run_in(&dir, &["diff", "good.npy", "cut.safetensors"]),
        "cut.safetensors",
        "",
    );
}

#[test]
fn unknown_dtype_is_one_line_exit_2() {
    let dir = temp_dir("err_dtype");
    write_one(&dir, "a.npy", matrix_f32());
    let o = run_in(&dir, &["convert", "a.npy", "b.npy", "--cast", "float33"]);
    assert_one_line_error(&o, "a.npy", "unknown data type 'float33'");
    let o = run_in(&dir, &["bitcast", "a.npy", "--to", "bogus", "-o", "b.npy"]);
    assert_one_line_error(&o, "a.npy", "unknown data type 'bogus'");
    assert!(!dir.join("b.npy").exists());
}

#[test]
fn bad_shape_and_incompatible_ops_are_one_line_exit_2() {
    let dir = temp_dir("err_shape");
    write_one(&dir, "v.npy", Tensor::vector(&[1i8, 2, 3]));
    let o = run_in(
        &dir,
        &["broadcast", "v.npy", "--shape", "2,x", "-o", "o.npy"],
    );
    assert_one_line_error(&o, "v.npy", "bad shape '2,x'");
    let o = run_in(
        &dir,
        &["broadcast", "v.npy", "--shape", "-2,3", "-o", "o.npy"],
    );
    assert_one_line_error(&o, "v.npy", "negative");
    // [3] cannot broadcast to [2,4]: TensorFlow's message.
    let o = run_in(
        &dir,
        &["broadcast", "v.npy", "--shape", "2,4", "-o", "o.npy"],
    );
    assert_one_line_error(&o, "v.npy", "");
    // int8 [3] cannot become int32: TensorFlow's Bitcast message.
    let o = run_in(&dir, &["bitcast", "v.npy", "--to", "int32", "-o", "o.npy"]);
    assert_one_line_error(&o, "v.npy", "Cannot bitcast from 6 to 3");
    assert!(!dir.join("o.npy").exists());
    // No output format: named by the output file.
    let o = run_in(&dir, &["convert", "v.npy", "o.weird"]);
    assert_one_line_error(&o, "o.weird", "output format");
    // Two tensors cannot go into one npy.
    let t = Tensor::vector(&[1u8]);
    write(
        &dir,
        "two.npz",
        Format::Npz,
        vec![NamedTensor::new("p", t.clone()), NamedTensor::new("q", t)],
    );
    let o = run_in(&dir, &["convert", "two.npz", "one.npy"]);
    assert_one_line_error(&o, "one.npy", "exactly one tensor");
}

#[test]
fn usage_errors_exit_2() {
    let dir = temp_dir("err_usage");
    assert_eq!(run_in(&dir, &["frobnicate"]).status.code(), Some(2));
    assert_eq!(run_in(&dir, &["bitcast", "a.npy"]).status.code(), Some(2));
    assert_eq!(run_in(&dir, &["diff", "a.npy"]).status.code(), Some(2));
    assert_eq!(run_in(&dir, &["--help"]).status.code(), Some(0));
}

#[test]
fn bench_runs_the_report() {
    let dir = temp_dir("bench");
    let o = run_in(
        &dir,
        &[
            "bench",
            "--json",
            "--filter",
            "bitcast_f32_u8_1KiB",
            "--runs",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(stdout(&o).trim()).expect("valid JSON");
    let m = &doc["bitcast_f32_u8_1KiB"];
    assert_eq!(m["bytes"], 1024);
    assert!(m["seconds"].as_f64().unwrap() > 0.0);
    // An in-cache workload brings its memcpy of the same bytes, filter or not.
    assert_eq!(doc["memcpy_1KiB"]["bytes"], 1024);
    assert!(doc.get("memcpy_256MiB").is_none());
}

/// The sample graph shipped in `samples/`.
fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../samples")
        .join(name)
}

#[test]
fn graph_inspect_run_optimize_dot_work_on_the_sample() {
    let dir = temp_dir("graph-sample");
    let pb = sample("graph_small.pb");
    let x = sample("graph_small_x.npy");
    let (pb, x) = (pb.to_str().unwrap(), x.to_str().unwrap());
    let o = run_in(&dir, &["graph", "inspect", pb]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("row_2x3                  BroadcastTo  row, Const/Const"),
        "{}",
        stdout(&o)
    );
    let o = run_in(&dir, &["graph", "inspect", "--json", pb]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["nodes"][4]["outputs"][0]["shape"], "[2,3]");
    let feed = format!("x={x}");
    let o = run_in(
        &dir,
        &[
            "graph", "run", pb, "--feed", &feed, "--fetch", "eq:0", "--fetch", "sum", "-o",
            "out.npz",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = read_file(&dir.join("out.npz")).unwrap();
    assert_eq!(
        out[0].tensor.to_vec::<bool>().unwrap(),
        [true, false, true, true, true, false]
    );
    assert_eq!(
        out[1].tensor.to_vec::<f32>().unwrap(),
        [2.0, 2.0, 6.0, 2.0, 4.0, 3.0]
    );
    let o = run_in(&dir, &["graph", "optimize", pb, "-o", "opt.pb"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("row_2x3"));
    let o = run_in(
        &dir,
        &[
            "graph", "run", "opt.pb", "--feed", &feed, "--fetch", "sum", "-o", "opt.npz",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        read_file(&dir.join("opt.npz")).unwrap()[0].tensor,
        out[1].tensor
    );
    let o = run_in(&dir, &["graph", "inspect", "opt.pb"]);
    assert!(!stdout(&o).contains("BroadcastTo"));
    let o = run_in(&dir, &["graph", "dot", pb]);
    assert!(stdout(&o).starts_with("digraph tensorcast {"));
    assert!(stdout(&o).contains("\"row\" -> \"row_2x3\""));
}

#[test]
fn graph_errors_are_one_line_with_exit_2() {
    let dir = temp_dir("graph-errors");
    let pb = sample("graph_small.pb");
    let pb = pb.to_str().unwrap();
    let o = run_in(&dir, &["graph", "run", pb, "--fetch", "eq"]);
    assert_one_line_error(
        &o,
        pb,
        "You must feed a value for placeholder tensor 'x' with dtype float and shape [2,3]",
    );
    let o = run_in(&dir, &["graph", "run", pb, "--fetch", "zz:0"]);
    assert_one_line_error(&o, pb, "The operation, 'zz', does not exist in the graph.");
    std::fs::write(dir.join("bad.pb"), [0x0a, 0xff, 0xff]).unwrap();
    let o = run_in(&dir, &["graph", "inspect", "bad.pb"]);
    assert_one_line_error(&o, "bad.pb", "Invalid GraphDef");
    let o = run_in(&dir, &["graph", "inspect", "missing.pb"]);
    assert_one_line_error(&o, "missing.pb", "");
}
