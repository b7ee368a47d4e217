//! `tf_observed/checkpoint.jsonl`: TensorFlow's tensor bundles (records of op `checkpoint`)
//! and its errors on damaged ones (`checkpoint_error`).
//!
//! For `checkpoint`: the files are laid out in a fresh folder; tensorcast must list the keys
//! TensorFlow lists, with their dtypes and shapes, read every tensor as TensorFlow read it
//! (mapped and read, and by every name a user may give: prefix, `.index`, `.data` file,
//! folder), print TensorFlow's `debug_string`, give each object-graph key one of TensorFlow's
//! object paths (one not through the optimizer when there is one) and link slots to their
//! variables; and where `write` is set, writing the tensors and slices shard by shard in the data
//! files' order must give TensorFlow's `.index` and `.data-*` bytes exactly.
//! For `checkpoint_error`: opening (and reading `read`) must fail with TensorFlow's message.

use std::path::Path;

use serde_json::Value;
use tensorcast::io::checkpoint::{
    data_file_name, sharded_bundle_bytes, stored_items, Checkpoint, CheckpointWriteOptions,
};
use tensorcast::io::{ReadMode, ReadOptions};
use tensorcast::proto::serialize_tensor;
use tensorcast::DataType;

use crate::{check_tensor, hex_decode, hex_encode, Outcome};

fn lay_out(rec: &Value) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let files = rec["files"].as_object().ok_or("record without files")?;
    for (name, hex) in files {
        let bytes = hex_decode(hex.as_str().ok_or("file is not hex")?)?;
        std::fs::write(dir.path().join(name), bytes).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

pub fn run(rec: &Value) -> Outcome {
    let r = match rec["op"].as_str() {
        Some("checkpoint") => run_read(rec),
        Some("checkpoint_error") => run_error(rec),
        _ => return Outcome::Skip,
    };
    match r {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check_all(ckpt: &Checkpoint, rec: &Value, how: &str) -> Result<(), String> {
    let want = rec["tensors"].as_array().ok_or("no tensors")?;
    let keys: Vec<&str> = ckpt.keys().collect();
    let want_keys: Vec<&str> = want.iter().filter_map(|t| t["key"].as_str()).collect();
    if keys != want_keys {
        return Err(format!(
            "{how}: keys {keys:?} != TensorFlow's {want_keys:?}"
        ));
    }
    for w in want {
        let key = w["key"].as_str().unwrap_or("");
        let e = ckpt.entry(key).ok_or(format!("no entry {key}"))?;
        let dtype = crate::dtype_of(&w["dtype"])?;
        let shape = crate::shape_of(&w["shape"])?;
        if e.dtype != dtype || e.shape != shape {
            return Err(format!(
                "{how}: {key}: entry {} {} != TensorFlow's {} {}",
                e.dtype, e.shape, dtype, shape
            ));
        }
        let t = ckpt
            .read(key)
            .map_err(|e| format!("{how}: reading {key}: {e}"))?;
        if dtype == DataType::VARIANT {
            let got = hex_encode(&serialize_tensor(&t).map_err(|e| e.to_string())?);
            if Some(got.as_str()) != w["variant_hex"].as_str() {
                return Err(format!("{how}: {key}: variant serializes to {got}"));
            }
            continue;
        }
        check_tensor(&t, w).map_err(|e| format!("{how}: {key}: {e}"))?;
    }
    Ok(())
}

fn run_read(rec: &Value) -> Result<(), String> {
    let dir = lay_out(rec)?;
    let prefix_name = rec["prefix"].as_str().ok_or("no prefix")?;
    let prefix = dir.path().join(prefix_name);
    let mapped = Checkpoint::open(&prefix, &ReadOptions::default()).map_err(|e| e.to_string())?;
    check_all(&mapped, rec, "mapped")?;
    let read_opts = ReadOptions {
        mode: ReadMode::Read,
        ..ReadOptions::default()
    };
    let index = dir.path().join(format!("{prefix_name}.index"));
    check_all(
        &Checkpoint::open(&index, &read_opts).map_err(|e| e.to_string())?,
        rec,
        "read by .index",
    )?;
    let data = dir.path().join(tensorcast::io::checkpoint::data_file_name(
        prefix_name,
        0,
        mapped.num_shards(),
    ));
    let by_data = Checkpoint::open(&data, &read_opts).map_err(|e| e.to_string())?;
    if by_data.prefix() != prefix {
        return Err(format!(
            "a .data file resolves to {}",
            by_data.prefix().display()
        ));
    }
    if dir.path().join("checkpoint").is_file() {
        let by_dir = Checkpoint::open(dir.path(), &read_opts).map_err(|e| e.to_string())?;
        check_all(&by_dir, rec, "by folder")?;
    }
    // inspect_checkpoint's text.
    let debug = hex_decode(rec["debug_string"].as_str().ok_or("no debug_string")?)?;
    if mapped.debug_string() != debug {
        return Err(format!(
            "debug_string {:?} != TensorFlow's {:?}",
            String::from_utf8_lossy(&mapped.debug_string()),
            String::from_utf8_lossy(&debug)
        ));
    }
    check_object_graph(&mapped, rec)?;
    if rec["write"].as_bool() == Some(true) {
        check_write(&mapped, dir.path(), prefix_name)?;
    }
    Ok(())
}

fn check_object_graph(ckpt: &Checkpoint, rec: &Value) -> Result<(), String> {
    let Some(all_paths) = rec["all_paths"].as_object() else {
        return Ok(());
    };
    let g = ckpt
        .object_graph()
        .map_err(|e| e.to_string())?
        .ok_or("no object graph")?;
    for (key, paths) in all_paths {
        let paths: Vec<&str> = paths
            .as_array()
            .ok_or("paths")?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let got = g
            .tensor(key)
            .ok_or(format!("the graph does not name {key}"))?;
        if !paths.contains(&got.path.as_str()) {
            return Err(format!(
                "{key}: path {} is none of TensorFlow's {paths:?}",
                got.path
            ));
        }
        let outside = |p: &str| !p.split('/').any(|c| c.contains("optimizer"));
        if paths.iter().any(|p| outside(p)) && !outside(&got.path) {
            return Err(format!(
                "{key}: path {} goes through the optimizer",
                got.path
            ));
        }
    }
    for s in rec["slots"].as_array().into_iter().flatten() {
        let (var, name, slot) = (s[0].as_str(), s[1].as_str(), s[2].as_str());
        let got = g.tensor(slot.unwrap_or("")).and_then(|t| t.slot.clone());
        match got {
            Some(so)
                if Some(so.variable_key.as_str()) == var && Some(so.slot_name.as_str()) == name => {
            }
            other => return Err(format!("slot {s}: got {other:?}")),
        }
    }
    Ok(())
}

fn check_write(ckpt: &Checkpoint, dir: &Path, prefix: &str) -> Result<(), String> {
    // Every stored tensor (whole, or a slice of a partitioned one) in the order TensorFlow
    // added it (the data file's order, a zero-element tensor before the one at its offset).
    let shards = stored_items(ckpt).map_err(|e| e.to_string())?;
    let n = ckpt.num_shards();
    let (index, datas) = sharded_bundle_bytes(&shards, &CheckpointWriteOptions::default())
        .map_err(|e| e.to_string())?;
    for (i, data) in datas.iter().enumerate() {
        let tf_data = std::fs::read(dir.join(data_file_name(prefix, i as i32, n)))
            .map_err(|e| e.to_string())?;
        if *data != tf_data {
            return Err(format!(
                "written shard {i} differs: {} vs TensorFlow's {}",
                short_hex(data),
                short_hex(&tf_data)
            ));
        }
    }
    let tf_index = std::fs::read(dir.join(format!("{prefix}.index"))).map_err(|e| e.to_string())?;
    if index != tf_index {
        let at = index.iter().zip(&tf_index).position(|(a, b)| a != b);
        return Err(format!(
            "written index differs (lengths {} and {}, first difference at {at:?}): {} vs TensorFlow's {}",
            index.len(),
            tf_index.len(),
            short_hex(&index),
            short_hex(&tf_index)
        ));
    }
    Ok(())
}

fn short_hex(b: &[u8]) -> String {
    let h = hex_encode(&b[..b.len().min(200)]);
    if b.len() > 200 {
        format!("{h}...")
    } else {
        h
    }
}

fn run_error(rec: &Value) -> Result<(), String> {
    let dir = lay_out(rec)?;
    let prefix = dir.path().join(rec["prefix"].as_str().ok_or("no prefix")?);
    let want = rec["error"]["message"]
        .as_str()
        .ok_or("no error message")?
        .replace("{dir}", &dir.path().display().to_string());
    for mode in [ReadMode::Map, ReadMode::Read] {
        let opts = ReadOptions {
            mode,
            ..ReadOptions::default()
        };
        let got = Checkpoint::open(&prefix, &opts).and_then(|c| match rec["read"].as_str() {
            Some(key) => c.read(key).map(|_| ()),
            None => Ok(()),
        });
        match got {
            Ok(()) => {
                return Err(format!(
                    "{mode:?}: read without error; TensorFlow said {want}"
                ))
            }
            Err(e) if e.to_string() == want => {}
            // A short data shard: TensorFlow's text, after the shard's file name.
            Err(e)
                if e.to_string().strip_suffix(&want).is_some_and(|head| {
                    head.starts_with(&prefix.display().to_string())
                        && head.contains(".data-")
                        && head.ends_with(": ")
                }) => {}
            Err(e) => return Err(format!("{mode:?}: error {e:?} != TensorFlow's {want:?}")),
        }
    }
    Ok(())
}
