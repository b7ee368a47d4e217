//! The binary on TFRecord files: `inspect` (content detection, compression, record count,
//! tensors or Example schema, `--json`), `convert` to and from TFRecord with `--compression`,
//! TFRecord to TFRecord byte for byte, Examples parsed with `--spec` (checked against
//! TensorFlow's `tf.io.parse_example` of the same file), strings through npy/npz as `S<n>`,
//! and the npy header limit.

use std::process::Command;

use crate::common::{ok, run_in, samples};
use serde_json::Value;
use tensorcast::io::{read_file, Format, NamedTensor};
use tensorcast::{TString, Tensor};
use tensorcast_records::{read_records, Compression, ReaderOptions};
use tensorcast_testkit::peers::stdout_of;

fn sample(name: &str) -> String {
    samples().join(name).display().to_string()
}

#[test]
fn inspect_tells_tfrecords_by_content_and_shows_their_schema_or_tensors() {
    let dir = crate::common::temp_dir("tfr-inspect");
    // A misleading name: detection is by content.
    std::fs::copy(samples().join("examples.tfrecord"), dir.join("data.bin")).unwrap();
    let text = ok(&run_in(&dir, &["inspect", "data.bin", "--values", "2"]));
    assert!(
        text.starts_with("data.bin: tfrecord (none), 8 records of tf.train.Example, 923 B\n"),
        "{text}"
    );
    assert!(
        text.contains("  tags      bytes_list      8/8    0..3\n"),
        "{text}"
    );
    assert!(text.contains("  x: 0 0.25...\n"), "{text}");
    let json: Value =
        serde_json::from_str(&ok(&run_in(&dir, &["inspect", "--json", "data.bin"]))).unwrap();
    let f = &json["files"][0];
    assert_eq!(f["format"], "tfrecord");
    assert_eq!(f["compression"], "none");
    assert_eq!(f["records"], 8);
    assert_eq!(f["content"], "example");
    let x = f["features"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "x")
        .unwrap();
    assert_eq!(
        (x["min_length"].as_u64(), x["max_length"].as_u64()),
        (Some(4), Some(4))
    );
    assert_eq!(x["kinds"][0], "float_list");

    let gz = sample("tensors.tfrecord.gz");
    let json: Value =
        serde_json::from_str(&ok(&run_in(&dir, &["inspect", "--json", &gz]))).unwrap();
    let f = &json["files"][0];
    assert_eq!(
        (f["compression"].as_str(), f["records"].as_u64()),
        (Some("GZIP"), Some(3))
    );
    assert_eq!(f["content"], "serialize_tensor");
    let t = &f["tensors"];
    assert_eq!(t[0]["dtype"], "float");
    assert_eq!(t[0]["shape"], serde_json::json!([2, 3]));
    assert_eq!(
        t[2]["debug_string"],
        "Tensor<type: string shape: [2] values: hello world>"
    );
}

#[test]
fn damaged_tfrecords_are_one_line_dataloss_errors_with_the_offset() {
    let dir = crate::common::temp_dir("tfr-damaged");
    let mut bytes = std::fs::read(samples().join("examples.tfrecord")).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 0xff;
    std::fs::write(dir.join("bad.tfrecord"), &bytes).unwrap();
    for args in [
        &["inspect", "bad.tfrecord"][..],
        &["convert", "bad.tfrecord", "out.tfrecord"],
    ] {
        let o = run_in(&dir, args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("tensorcast: bad.tfrecord: "), "{err}");
        assert!(err.contains("corrupted record at "), "{err}");
    }
    assert!(!dir.join("out.tfrecord").exists(), "no partial output");
}

#[test]
fn tfrecord_to_tfrecord_keeps_the_records_and_an_uncompressed_copy_is_byte_exact() {
    let dir = crate::common::temp_dir("tfr-copy");
    let src = sample("examples.tfrecord");
    ok(&run_in(&dir, &["convert", &src, "same.tfrecord"]));
    let original = std::fs::read(&src).unwrap();
    assert_eq!(std::fs::read(dir.join("same.tfrecord")).unwrap(), original);
    let records = read_records(&original, ReaderOptions::default()).unwrap();
    for (out, flag, c) in [
        ("a.tfrecord.gz", None, Compression::Gzip),
        ("a.tfrecords.zz", None, Compression::Zlib),
        ("b.tfrecord", Some("gzip"), Compression::Gzip),
        ("c.bin", Some("zlib"), Compression::Zlib),
    ] {
        let mut args = vec!["convert", &src, out];
        if let Some(f) = flag {
            args.extend(["--compression", f]);
        }
        if !out.contains(".tfrecord") {
            args.extend(["--format", "tfrecord"]);
        }
        ok(&run_in(&dir, &args));
        let back = std::fs::read(dir.join(out)).unwrap();
        assert_eq!(
            read_records(&back, ReaderOptions::with_compression(c)).unwrap(),
            records,
            "{out}"
        );
        // And back to none: the original bytes.
        ok(&run_in(&dir, &["convert", out, "plain.tfrecord"]));
        assert_eq!(std::fs::read(dir.join("plain.tfrecord")).unwrap(), original);
    }
}

#[test]
fn serialize_tensor_records_convert_to_and_from_tensor_files() {
    let dir = crate::common::temp_dir("tfr-tensors");
    let src = sample("tensors.tfrecord.gz");
    ok(&run_in(&dir, &["convert", &src, "t.npz"]));
    let c = read_file(&dir.join("t.npz")).unwrap();
    let names: Vec<&str> = c.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["record_0", "record_1", "record_2"]);
    assert_eq!(
        c[2].tensor.as_slice::<TString>().unwrap(),
        &[TString::from("hello"), TString::from("world")]
    );
    // Back to records: what tf.io.serialize_tensor wrote, byte for byte.
    ok(&run_in(&dir, &["convert", "t.npz", "back.tfrecord.gz"]));
    let opts = || ReaderOptions::with_compression(Compression::Gzip);
    let tf_records = read_records(&std::fs::read(&src).unwrap(), opts()).unwrap();
    let ours = read_records(
        &std::fs::read(dir.join("back.tfrecord.gz")).unwrap(),
        opts(),
    )
    .unwrap();
    assert_eq!(ours, tf_records);
    // safetensors refuses strings; a numeric file goes there and back.
    ok(&run_in(
        &dir,
        &["convert", &sample("batch.npz"), "b.tfrecord"],
    ));
    ok(&run_in(&dir, &["convert", "b.tfrecord", "b.safetensors"]));
    let b = read_file(&dir.join("b.safetensors")).unwrap();
    let orig = read_file(&samples().join("batch.npz")).unwrap();
    assert_eq!(b.len(), orig.len());
    for (i, y) in orig.iter().enumerate() {
        let x = b.iter().find(|t| t.name == format!("record_{i}")).unwrap();
        assert_eq!(x.tensor, y.tensor, "{}", y.name);
    }
}

#[test]
fn examples_are_not_mistaken_for_tensors_and_spec_errors_name_the_feature() {
    let dir = crate::common::temp_dir("tfr-spec-errors");
    let o = run_in(&dir, &["convert", &sample("examples.tfrecord"), "x.npz"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("parse them into tensors with --spec SPEC.json"),
        "{err}"
    );
    // The sample's Examples through `spec`.
    let convert_with = |spec: &str| {
        std::fs::write(dir.join("spec.json"), spec).unwrap();
        let examples = sample("examples.tfrecord");
        run_in(
            &dir,
            &["convert", &examples, "x.npz", "--spec", "spec.json"],
        )
    };
    let o = convert_with(r#"{"x": {"type": "FixedLenFeature", "shape": [3], "dtype": "float32"}}"#);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("Key: x, Index: 0.  Number of float values != expected."),
        "{err}"
    );
    let o = convert_with(r#"{"x": {"type": "Fixed"}}"#);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("feature 'x': unknown type \"Fixed\""), "{err}");
}

#[test]
fn npy_header_limit_is_numpys_and_the_flag_raises_it() {
    let dir = crate::common::temp_dir("tfr-npy-header");
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (), }}{}\n",
        " ".repeat(12_000)
    );
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    file.extend_from_slice(dict.as_bytes());
    file.extend_from_slice(&1.5f32.to_le_bytes());
    std::fs::write(dir.join("big.npy"), &file).unwrap();
    let o = run_in(&dir, &["inspect", "big.npy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Header info length (12056) is large and may not be safe to load securely"),
        "{err}"
    );
    let text = ok(&run_in(
        &dir,
        &["inspect", "big.npy", "--max-npy-header", "16K"],
    ));
    assert!(text.contains("values: 1.5"), "{text}");
}

#[test]
fn string_tensors_go_to_npy_and_npz_as_fixed_width_bytes() {
    let dir = crate::common::temp_dir("tfr-npy-strings");
    let t = Tensor::from_vec(vec![TString::from("ab"), TString::from("xyz")], [2]).unwrap();
    tensorcast::io::write_file(
        &dir.join("s.pb"),
        Format::TensorProto,
        &[NamedTensor::new("s", t.clone())],
    )
    .unwrap();
    ok(&run_in(&dir, &["convert", "s.pb", "s.npy"]));
    ok(&run_in(&dir, &["convert", "s.pb", "s.npz"]));
    let npy = std::fs::read(dir.join("s.npy")).unwrap();
    assert!(String::from_utf8_lossy(&npy[..64]).contains("'descr': '|S3'"));
    assert_eq!(&npy[npy.len() - 6..], b"ab\0xyz");
    for f in ["s.npy", "s.npz"] {
        assert_eq!(read_file(&dir.join(f)).unwrap()[0].tensor, t, "{f}");
    }
}

const TF_PARSE: &str = r#"
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
records, spec_path, ours_path, strings_path = sys.argv[1:5]
spec = json.load(open(spec_path))
def feature(s):
    d = tf.as_dtype(s["dtype"])
    if s["type"] == "FixedLenFeature":
        return tf.io.FixedLenFeature(s["shape"], d, s.get("default_value"))
    if s["type"] == "VarLenFeature":
        return tf.io.VarLenFeature(d)
    parts = [tf.io.RaggedFeature.RowLengths(p["key"]) for p in s["partitions"]]
    return tf.io.RaggedFeature(d, value_key=s["value_key"], partitions=parts,
                               row_splits_dtype=tf.as_dtype(s["row_splits_dtype"]), validate=s["validate"])
batch = next(iter(tf.data.TFRecordDataset(records).batch(1000)))
out = tf.io.parse_example(batch, {k: feature(v) for k, v in spec.items()})
flat = {}
for k, v in out.items():
    if isinstance(v, tf.SparseTensor):
        flat[k + ".indices"], flat[k + ".values"], flat[k + ".dense_shape"] = v.indices, v.values, v.dense_shape
    elif isinstance(v, tf.RaggedTensor):
        flat[k + ".flat_values"] = v.flat_values
        for i, s in enumerate(v.nested_row_splits):
            flat[f"{k}.row_splits.{i}"] = s
    else:
        flat[k] = v
ours = np.load(ours_path)   # no pickle: strings are fixed-width bytes
assert sorted(ours.files) == sorted(flat), (sorted(ours.files), sorted(flat))
for k, v in flat.items():
    want = v.numpy()
    got = ours[k]
    if want.dtype == object:
        assert got.dtype.kind == "S", (k, got.dtype)
        assert [bytes(x) for x in want.tolist()] == got.tolist(), k
    else:
        assert got.dtype == want.dtype and got.shape == want.shape, (k, got.dtype, want.dtype, got.shape, want.shape)
        assert np.array_equal(got, want), k
s = np.load(strings_path)
assert s.dtype == np.dtype("S3") and s.tolist() == [b"ab", b"xyz"], s
print("ok", len(flat))
"#;

#[test]
fn parsed_examples_in_npz_equal_tensorflows_parse_example() {
    let Some(py) = crate::common::tensorflow_python() else {
        return;
    };
    let dir = crate::common::temp_dir("tfr-tf-parse");
    let (records, spec) = (sample("examples.tfrecord"), sample("examples_spec.json"));
    ok(&run_in(
        &dir,
        &["convert", &records, "parsed.npz", "--spec", &spec],
    ));
    let t = Tensor::from_vec(vec![TString::from("ab"), TString::from("xyz")], [2]).unwrap();
    tensorcast::io::write_file(&dir.join("s.npy"), Format::Npy, &[NamedTensor::new("s", t)])
        .unwrap();
    let script = dir.join("tf_parse.py");
    std::fs::write(&script, TF_PARSE).unwrap();
    let out = stdout_of(
        Command::new(&py)
            .arg(&script)
            .args([records.as_str(), spec.as_str()])
            .arg(dir.join("parsed.npz"))
            .arg(dir.join("s.npy")),
    );
    assert_eq!(out.trim(), "ok 8");
}

#[test]
fn inspect_lists_an_event_files_tags_with_step_ranges_and_last_values() {
    let dir = crate::common::temp_dir("tfr-events");
    let ev = sample("events.out.tfevents.1700000000.sample.v2");
    let text = ok(&run_in(&dir, &["inspect", &ev]));
    assert!(text.contains("(a TensorBoard event file)"), "{text}");
    for line in [
        "  loss      scalars          3   0..2  0.333333343\n",
        "  note      text             3   0..2  step 2\n",
        "  red       images           1      2  1 image 4x4\n",
        "  weights   histograms       3   0..2  16 values in 30 buckets, [-3, 3]\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let json: Value =
        serde_json::from_str(&ok(&run_in(&dir, &["inspect", "--json", &ev]))).unwrap();
    let f = &json["files"][0];
    assert_eq!(f["content"], "events");
    let acc = &f["tags"][0];
    assert_eq!(acc["tag"], "accuracy");
    assert_eq!(
        (acc["first_step"].as_i64(), acc["last_step"].as_i64()),
        (Some(0), Some(2))
    );
    assert_eq!(acc["last_value"], "0.7");
}

#[test]
fn a_gzip_bomb_stops_at_max_memory_with_one_line() {
    use std::io::Write;
    let dir = crate::common::temp_dir("tfr-bomb");
    // One record header claiming 1 GiB, then zeros: a few hundred KB of GZIP.
    let len = (1u64 << 30).to_le_bytes();
    let mut gz = flate2_like_gzip();
    gz.write_all(&len).unwrap();
    gz.write_all(&tensorcast_records::masked_crc32c(&len).to_le_bytes())
        .unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        gz.write_all(&zeros).unwrap();
    }
    std::fs::write(dir.join("bomb.tfrecord.gz"), gz.finish().unwrap()).unwrap();
    let o = run_in(
        &dir,
        &["inspect", "bomb.tfrecord.gz", "--max-memory", "16M"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("tensorcast: bomb.tfrecord.gz: "), "{err}");
}

/// A GZIP stream writer, through the records crate's own writer's backend.
fn flate2_like_gzip() -> GzipSink {
    GzipSink(Vec::new())
}

/// Collects raw bytes, then compresses them as one GZIP stream on `finish` (the records
/// crate writes GZIP record streams; here the stream holds a hand-made header).
struct GzipSink(Vec<u8>);

impl std::io::Write for GzipSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl GzipSink {
    fn finish(self) -> std::io::Result<Vec<u8>> {
        // gzip(1) is everywhere the tests run; its stream is a standard GZIP member.
        let mut child = Command::new("gzip")
            .arg("-c")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().unwrap();
        let data = self.0;
        let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data));
        let out = child.wait_with_output()?;
        feeder.join().unwrap()?;
        Ok(out.stdout)
    }
}
