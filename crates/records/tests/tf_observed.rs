//! Replays the TFRecord records of `tests/tf_observed/example.jsonl` (what TensorFlow 2.21
//! read and wrote, see `gen_example.py` beside it). The root conformance runner replays the
//! same file, Examples included; this keeps the reader's TensorFlow behaviour tested with the
//! crate alone.

use serde_json::Value;
use tensorcast_records::{read_records, Compression, ReaderOptions, RecordReader, RecordWriter};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn vectors() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/tf_observed/example.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Vectors where we differ from TensorFlow, knowingly: zlib-rs 0.6.8 loses the message of a
/// distance error found in its fast path (zlib's `invalid distance too far back`) and reports
/// `repeated call with bad state`; the error is still `DATA_LOSS` at the same place.
const KNOWN_DIFFERENT: &[(&str, Compression)] = &[("garbage_in_stream", Compression::Zlib)];

fn compression(rec: &Value) -> Compression {
    Compression::from_tf_name(rec["compression"].as_str().unwrap()).unwrap()
}

#[test]
fn tfrecord_reads_match_tensorflow() {
    let mut n = 0;
    for rec in vectors().iter().filter(|r| r["op"] == "tfrecord_read") {
        let name = rec["name"].as_str().unwrap();
        let c = compression(rec);
        let file = hex(rec["file_hex"].as_str().unwrap());
        let mut r = RecordReader::new(&file[..], ReaderOptions::with_compression(c));
        let mut got = Vec::new();
        let err = loop {
            match r.next_record() {
                Ok(Some(x)) => got.push(x.to_vec()),
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let want: Vec<Vec<u8>> = rec["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| hex(h.as_str().unwrap()))
            .collect();
        assert_eq!(got, want, "{name} {c:?}: records");
        match (&err, rec.get("error")) {
            (None, None) => {}
            (Some(e), Some(w)) => {
                let want = w["message"].as_str().unwrap();
                if KNOWN_DIFFERENT.contains(&(name, c)) {
                    assert_eq!(
                        e.to_string(),
                        "inflate() failed with error -3: repeated call with bad state"
                    );
                } else {
                    assert_eq!(e.to_string(), want, "{name} {c:?}");
                }
                assert_eq!(w["kind"], "DataLossError", "{name}");
                assert_eq!(e.code(), tensorcast_records::Code::DataLoss, "{name}");
            }
            (e, w) => panic!("{name} {c:?}: error {e:?}, TensorFlow {w:?}"),
        }
        n += 1;
    }
    assert!(n >= 50, "only {n} tfrecord_read vectors");
}

#[test]
fn tfrecord_writes_match_tensorflow() {
    let mut n = 0;
    for rec in vectors().iter().filter(|r| r["op"] == "tfrecord_write") {
        let c = compression(rec);
        let records: Vec<Vec<u8>> = rec["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| hex(h.as_str().unwrap()))
            .collect();
        let tf_file = hex(rec["file_hex"].as_str().unwrap());
        let mut w = RecordWriter::new(Vec::new(), c).unwrap();
        for r in &records {
            w.write_record(r).unwrap();
        }
        let ours = w.finish().unwrap();
        if c == Compression::None {
            assert_eq!(ours, tf_file, "{}: bytes", rec["name"]);
        }
        // Compressed: the same records when read back (the deflate bytes depend on the
        // zlib implementation and TensorFlow's memLevel 9, which flate2 does not expose).
        let opts = ReaderOptions::with_compression(c);
        assert_eq!(read_records(&ours, opts.clone()).unwrap(), records);
        assert_eq!(read_records(&tf_file, opts).unwrap(), records);
        n += 1;
    }
    assert_eq!(n, 12);
}
