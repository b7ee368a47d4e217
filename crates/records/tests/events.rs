//! Event files written by [`SummaryWriter`] read back by TensorBoard's own `EventAccumulator`
//! (the `tensorboard` package): every scalar, histogram, text, tensor and image value.

use std::path::{Path, PathBuf};
use std::process::Command;

use tensorcast_core::Tensor;
use tensorcast_records::events::{read_events, SummaryWriter};
use tensorcast_testkit::peers::{python_with, stdout_of};

fn write_log(dir: &Path) -> PathBuf {
    let mut w = SummaryWriter::create(dir, "testhost").unwrap();
    for step in 0..3i64 {
        w.scalar("loss", 1.0 / (step as f32 + 1.0), step).unwrap();
        let data: Vec<f64> = (0..16)
            .map(|i| f64::from(i) * (step as f64 + 1.0))
            .collect();
        w.histogram("weights", &data, step, 30).unwrap();
        w.text("note", &format!("step {step}"), step).unwrap();
    }
    w.tensor("t", &Tensor::vector(&[1i32, 2, 3]), 5).unwrap();
    let red: Vec<u8> = (0..4 * 4).flat_map(|_| [255u8, 0, 0]).collect();
    w.image("red", &[&red], (4, 4, 3), 2).unwrap();
    // Flushed as written: the file holds every event before the writer is closed.
    let path = w.path().to_path_buf();
    let events = read_events(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(events.len(), 1 + 9 + 2);
    w.close().unwrap();
    path
}

const ACCUMULATE: &str = r#"
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
import numpy as np
from tensorboard.util import tensor_util
acc = EventAccumulator(sys.argv[1], size_guidance={"tensors": 0, "images": 0})
acc.Reload()
tags = acc.Tags()
out = {"tensors": sorted(tags["tensors"])}
for tag in tags["tensors"]:
    out[tag] = [[e.step, tensor_util.make_ndarray(e.tensor_proto).tolist()] for e in acc.Tensors(tag)]
out["red"] = [[e.step, len(e.tensor_proto.string_val)] for e in acc.Tensors("red")]
out["plugins"] = {p: sorted(acc.PluginTagToContent(p)) for p in ["scalars", "histograms", "text", "images"]}
def conv(x):
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, list):
        return [conv(y) for y in x]
    if isinstance(x, dict):
        return {k: conv(y) for k, y in x.items()}
    return x
print(json.dumps(conv(out)))
"#;

#[test]
fn tensorboards_event_accumulator_reads_back_every_value() {
    let Some(py) = python_with("tensorboard") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = write_log(dir.path());
    let out = stdout_of(Command::new(&py).args(["-c", ACCUMULATE]).arg(&path));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["tensors"],
        serde_json::json!(["loss", "note", "red", "t", "weights"])
    );
    assert_eq!(
        v["loss"],
        serde_json::json!([[0, 1.0], [1, 0.5], [2, 0.3333333432674408]])
    );
    assert_eq!(v["note"][2], serde_json::json!([2, "step 2"]));
    assert_eq!(v["t"], serde_json::json!([[5, [1, 2, 3]]]));
    // Width, height, one PNG.
    assert_eq!(v["red"], serde_json::json!([[2, 3]]));
    let w = &v["weights"][1];
    assert_eq!(w[0], 1);
    let rows = w[1].as_array().unwrap();
    assert_eq!(rows.len(), 30);
    assert_eq!(rows[0], serde_json::json!([0.0, 1.0, 1.0]));
    let total: f64 = rows.iter().map(|r| r[2].as_f64().unwrap()).sum();
    assert_eq!(total, 16.0);
    assert_eq!(rows[29][1], 30.0);
    for (plugin, tag) in [
        ("scalars", "loss"),
        ("histograms", "weights"),
        ("text", "note"),
        ("images", "red"),
    ] {
        assert_eq!(v["plugins"][plugin], serde_json::json!([tag]), "{plugin}");
    }
}

#[test]
fn images_are_pngs_that_decode_to_the_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_log(dir.path());
    let events = read_events(&std::fs::read(path).unwrap()).unwrap();
    let img = events
        .iter()
        .flat_map(|e| e.summary.iter().flat_map(|s| s.value.iter()))
        .find(|v| v.tag == "red")
        .unwrap();
    assert_eq!(img.plugin_name(), "images");
    let t = img.tensor.as_ref().unwrap();
    assert_eq!(&t.string_val[0][..], b"4");
    let png = &t.string_val[2];
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // Decoded by Python's zlib (an inflater that is not ours), with the standard library
    // only: any Python will do, and a machine with none skips (fails under CI=true).
    let Some(python) = python_with("zlib") else {
        return;
    };
    let file = dir.path().join("red.png");
    std::fs::write(&file, png).unwrap();
    let out = stdout_of(Command::new(&python).arg("-c").arg(DECODE_PNG).arg(&file));
    let rows: Vec<Vec<u8>> = serde_json::from_str(&out).unwrap();
    // Four rows of filter type 0 (none) and four red RGB pixels.
    let row: Vec<u8> = std::iter::once(0)
        .chain((0..4).flat_map(|_| [255, 0, 0]))
        .collect();
    assert_eq!(rows, vec![row; 4]);
}

/// Prints the rows of the PNG file `argv[1]` (one IDAT chunk) inflated: a JSON list of byte
/// lists.
const DECODE_PNG: &str = r#"
import json, struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n"
width, height = struct.unpack(">II", d[16:24])
i = d.index(b"IDAT")
n = struct.unpack(">I", d[i - 4:i])[0]
raw = zlib.decompress(d[i + 4:i + 4 + n])
stride = 1 + 3 * width
print(json.dumps([list(raw[r * stride:(r + 1) * stride]) for r in range(height)]))
"#;
