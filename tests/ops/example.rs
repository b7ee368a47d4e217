//! `tf_observed/example.jsonl` (see `gen_example.py`): TFRecord files TensorFlow 2.21 wrote and
//! read back (errors included), and `tf.io.parse_example` / `parse_single_example` /
//! `parse_sequence_example` over feature specs, replayed against tensorcast-records.
//!
//! Records must match exactly: the records read and TensorFlow's error text; parsed tensors'
//! dtype, shape and bytes; error texts word for word (except the one documented zlib-rs
//! message, see crates/records/tests/tf_observed.rs).

use bytes::Bytes;
use serde_json::Value;
use tensorcast_core::{DataType, TString, Tensor};
use tensorcast_records::{
    parse_example, parse_sequence_example, parse_single_example, read_records, Code, Compression,
    FeatureSpec, Parsed, Partition, ReaderOptions, RecordReader, RecordWriter, RecordsError,
};

use crate::{check_tensor, hex_decode, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let r = match rec["op"].as_str() {
        Some("tfrecord_read") => tfrecord_read(rec),
        Some("tfrecord_write") => tfrecord_write(rec),
        Some("parse_example") | Some("parse_single_example") => parse(rec),
        Some("parse_sequence_example") => parse_sequence(rec),
        _ => return Outcome::Skip,
    };
    match r {
        Ok(()) => Outcome::Pass,
        Err(why) => Outcome::Fail(why),
    }
}

fn compression(rec: &Value) -> Result<Compression, String> {
    let name = rec["compression"].as_str().ok_or("no compression")?;
    Compression::from_tf_name(name).ok_or_else(|| format!("unknown compression {name}"))
}

fn hex_field(v: &Value) -> Result<Vec<u8>, String> {
    hex_decode(v.as_str().ok_or("not a hex string")?)
}

fn tfrecord_read(rec: &Value) -> Result<(), String> {
    let c = compression(rec)?;
    let file = hex_field(&rec["file_hex"])?;
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
        .ok_or("no records")?
        .iter()
        .map(hex_field)
        .collect::<Result<_, _>>()?;
    if got != want {
        return Err(format!(
            "read {} records, TensorFlow {}",
            got.len(),
            want.len()
        ));
    }
    match (err, rec.get("error")) {
        (None, None) => Ok(()),
        (Some(e), Some(w)) => {
            let text = e.to_string();
            let tf = w["message"].as_str().unwrap_or("");
            let known = rec["name"] == "garbage_in_stream"
                && c == Compression::Zlib
                && text == "inflate() failed with error -3: repeated call with bad state";
            if text != tf && !known {
                return Err(format!("error {text:?}, TensorFlow {tf:?}"));
            }
            if e.code() != Code::DataLoss || w["kind"] != "DataLossError" {
                return Err(format!(
                    "error code {:?}, TensorFlow {}",
                    e.code(),
                    w["kind"]
                ));
            }
            Ok(())
        }
        (e, w) => Err(format!("error {e:?}, TensorFlow {w:?}")),
    }
}

fn tfrecord_write(rec: &Value) -> Result<(), String> {
    let c = compression(rec)?;
    let records: Vec<Vec<u8>> = rec["records"]
        .as_array()
        .ok_or("no records")?
        .iter()
        .map(hex_field)
        .collect::<Result<_, _>>()?;
    let tf_file = hex_field(&rec["file_hex"])?;
    let mut w = RecordWriter::new(Vec::new(), c).map_err(|e| e.to_string())?;
    for r in &records {
        w.write_record(r).map_err(|e| e.to_string())?;
    }
    let ours = w.finish().map_err(|e| e.to_string())?;
    // Uncompressed: byte-identical. Compressed: the deflate bytes depend on the zlib build, so
    // both files must read back to the records.
    if c == Compression::None && ours != tf_file {
        return Err("bytes differ from TensorFlow's".into());
    }
    let opts = ReaderOptions::with_compression(c);
    for (who, file) in [("ours", &ours), ("TensorFlow's", &tf_file)] {
        let back = read_records(file, opts.clone()).map_err(|e| format!("{who}: {e}"))?;
        if back != records {
            return Err(format!("{who} file reads back differently"));
        }
    }
    Ok(())
}

fn dtype(v: &Value) -> Result<DataType, String> {
    match v.as_str() {
        Some("float32") => Ok(DataType::FLOAT),
        Some("int64") => Ok(DataType::INT64),
        Some("int32") => Ok(DataType::INT32),
        Some("string") => Ok(DataType::STRING),
        other => Err(format!("unknown dtype {other:?}")),
    }
}

/// A default value in the spec JSON (a number, a string or a list of them) as a flat tensor.
fn default_tensor(v: &Value, dt: DataType) -> Result<Option<Tensor>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let items: Vec<&Value> = match v.as_array() {
        Some(a) => a.iter().collect(),
        None => vec![v],
    };
    let n = items.len() as i64;
    let t = match dt {
        DataType::FLOAT => Tensor::from_vec(
            items
                .iter()
                .map(|x| x.as_f64().unwrap_or(0.0) as f32)
                .collect::<Vec<_>>(),
            [n].as_slice(),
        ),
        DataType::INT64 => Tensor::from_vec(
            items
                .iter()
                .map(|x| x.as_i64().unwrap_or(0))
                .collect::<Vec<_>>(),
            [n].as_slice(),
        ),
        _ => Tensor::from_vec(
            items
                .iter()
                .map(|x| TString::from(x.as_str().unwrap_or("")))
                .collect::<Vec<_>>(),
            [n].as_slice(),
        ),
    };
    t.map(Some).map_err(|e| e.to_string())
}

fn dims(v: &Value) -> Result<Vec<i64>, String> {
    v.as_array()
        .ok_or("shape is not a list")?
        .iter()
        .map(|d| d.as_i64().ok_or_else(|| "bad dim".to_string()))
        .collect()
}

fn spec_of(s: &Value) -> Result<FeatureSpec, String> {
    let dt = dtype(&s["dtype"])?;
    Ok(match s["type"].as_str() {
        Some("FixedLenFeature") => FeatureSpec::FixedLen {
            shape: dims(&s["shape"])?,
            dtype: dt,
            default_value: default_tensor(&s["default_value"], dt)?,
        },
        Some("VarLenFeature") => FeatureSpec::VarLen { dtype: dt },
        Some("FixedLenSequenceFeature") => FeatureSpec::FixedLenSequence {
            shape: dims(&s["shape"])?,
            dtype: dt,
            allow_missing: s["allow_missing"].as_bool().unwrap_or(false),
            default_value: default_tensor(&s["default_value"], dt)?,
        },
        Some("RaggedFeature") => FeatureSpec::Ragged {
            dtype: dt,
            value_key: s["value_key"].as_str().map(String::from),
            partitions: s["partitions"]
                .as_array()
                .map(|a| a.as_slice())
                .unwrap_or_default()
                .iter()
                .map(|p| match p["type"].as_str() {
                    Some("RowLengths") => Ok(Partition::RowLengths(
                        p["key"].as_str().unwrap_or("").into(),
                    )),
                    Some("RowSplits") => {
                        Ok(Partition::RowSplits(p["key"].as_str().unwrap_or("").into()))
                    }
                    Some("RowStarts") => {
                        Ok(Partition::RowStarts(p["key"].as_str().unwrap_or("").into()))
                    }
                    Some("RowLimits") => {
                        Ok(Partition::RowLimits(p["key"].as_str().unwrap_or("").into()))
                    }
                    Some("ValueRowIds") => Ok(Partition::ValueRowIds(
                        p["key"].as_str().unwrap_or("").into(),
                    )),
                    Some("UniformRowLength") => Ok(Partition::UniformRowLength(
                        p["length"].as_i64().unwrap_or(0),
                    )),
                    other => Err(format!("partition {other:?}")),
                })
                .collect::<Result<_, _>>()?,
            row_splits_dtype: if s["row_splits_dtype"].is_null() {
                DataType::INT64
            } else {
                dtype(&s["row_splits_dtype"])?
            },
        },
        other => return Err(format!("unknown spec type {other:?}")),
    })
}

fn specs_of(v: &Value) -> Result<Vec<(String, FeatureSpec)>, String> {
    let mut out: Vec<(String, FeatureSpec)> = v
        .as_object()
        .ok_or("spec is not an object")?
        .iter()
        .map(|(k, s)| Ok((k.clone(), spec_of(s)?)))
        .collect::<Result<_, String>>()?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Compares one parsed output with TensorFlow's (`expect[name]`).
fn check_parsed(name: &str, got: &Parsed, want: &Value) -> Result<(), String> {
    let ctx = |e: String| format!("{name}: {e}");
    match (got, want["kind"].as_str()) {
        (Parsed::Dense(t), Some("dense")) => check_tensor(t, &want["value"]).map_err(ctx),
        (
            Parsed::Sparse {
                indices,
                values,
                dense_shape,
            },
            Some("sparse"),
        ) => {
            check_tensor(indices, &want["indices"]).map_err(|e| ctx(format!("indices: {e}")))?;
            check_tensor(values, &want["values"]).map_err(|e| ctx(format!("values: {e}")))?;
            check_tensor(dense_shape, &want["dense_shape"])
                .map_err(|e| ctx(format!("dense_shape: {e}")))
        }
        (
            Parsed::Ragged {
                flat_values,
                row_splits,
            },
            Some("ragged"),
        ) => {
            check_tensor(flat_values, &want["flat_values"])
                .map_err(|e| ctx(format!("flat_values: {e}")))?;
            let ws = want["row_splits"].as_array().ok_or("no row_splits")?;
            if ws.len() != row_splits.len() {
                return Err(ctx(format!(
                    "{} row splits, TensorFlow {}",
                    row_splits.len(),
                    ws.len()
                )));
            }
            for (i, (g, w)) in row_splits.iter().zip(ws).enumerate() {
                check_tensor(g, w).map_err(|e| ctx(format!("row_splits {i}: {e}")))?;
            }
            Ok(())
        }
        (g, k) => Err(ctx(format!("got {g:?}, TensorFlow a {k:?} result"))),
    }
}

fn check_outcome(
    got: Result<Vec<(String, Parsed)>, RecordsError>,
    rec: &Value,
    expect: &Value,
) -> Result<(), String> {
    match (got, rec.get("error")) {
        (Ok(out), None) => {
            let want = expect.as_object().ok_or("no expect")?;
            if out.len() != want.len() {
                return Err(format!("{} outputs, TensorFlow {}", out.len(), want.len()));
            }
            for (name, p) in &out {
                check_parsed(name, p, &want[name])?;
            }
            Ok(())
        }
        (Err(e), Some(w)) => check_error(&e, w),
        (Ok(_), Some(w)) => Err(format!(
            "succeeded, TensorFlow failed with {}",
            w["message"]
        )),
        (Err(e), None) => Err(format!("failed with {e}, TensorFlow succeeded")),
    }
}

fn check_error(e: &RecordsError, w: &Value) -> Result<(), String> {
    let tf = w["message"].as_str().unwrap_or("");
    if e.to_string() != tf {
        return Err(format!("error {:?}, TensorFlow {tf:?}", e.to_string()));
    }
    if w["kind"] == "InvalidArgumentError" && e.code() != Code::InvalidArgument {
        return Err(format!(
            "error code {:?}, TensorFlow {}",
            e.code(),
            w["kind"]
        ));
    }
    Ok(())
}

fn parse(rec: &Value) -> Result<(), String> {
    if rec.get("python_error").is_some() {
        return Ok(()); // refused by TensorFlow's Python layer before the kernel
    }
    let specs = specs_of(&rec["spec"])?;
    let got = if rec["op"] == "parse_single_example" {
        let ser = Bytes::from(hex_field(&rec["serialized"])?);
        parse_single_example(&ser, &specs)
    } else {
        let ser: Vec<Bytes> = rec["serialized"]
            .as_array()
            .ok_or("no serialized")?
            .iter()
            .map(|h| hex_field(h).map(Bytes::from))
            .collect::<Result<_, _>>()?;
        let names: Option<Vec<String>> = rec["example_names"].as_array().map(|a| {
            a.iter()
                .map(|n| n.as_str().unwrap_or("").to_string())
                .collect()
        });
        parse_example(&ser, names.as_deref(), &specs)
    };
    check_outcome(got, rec, &rec["expect"])
}

fn parse_sequence(rec: &Value) -> Result<(), String> {
    if rec.get("python_error").is_some() {
        return Ok(());
    }
    let ctx = specs_of(&rec["context_spec"])?;
    let seq = specs_of(&rec["sequence_spec"])?;
    let ser: Vec<Bytes> = rec["serialized"]
        .as_array()
        .ok_or("no serialized")?
        .iter()
        .map(|h| hex_field(h).map(Bytes::from))
        .collect::<Result<_, _>>()?;
    match (
        parse_sequence_example(&ser, None, &ctx, &seq),
        rec.get("error"),
    ) {
        (Ok(out), None) => {
            let want = &rec["expect"];
            check_outcome(Ok(out.context), rec, &want["context"])?;
            check_outcome(Ok(out.sequence), rec, &want["sequence"])?;
            let wl = want["lengths"].as_object().ok_or("no lengths")?;
            if wl.len() != out.lengths.len() {
                return Err(format!(
                    "{} lengths, TensorFlow {}",
                    out.lengths.len(),
                    wl.len()
                ));
            }
            for (name, t) in &out.lengths {
                check_tensor(t, &wl[name]).map_err(|e| format!("lengths {name}: {e}"))?;
            }
            Ok(())
        }
        (Err(e), Some(w)) => check_error(&e, w),
        (Ok(_), Some(w)) => Err(format!(
            "succeeded, TensorFlow failed with {}",
            w["message"]
        )),
        (Err(e), None) => Err(format!("failed with {e}, TensorFlow succeeded")),
    }
}
