//! The conformance runner: replays what TensorFlow 2.21 did (vectors in `tests/conformance/`,
//! or the folder named by `TENSORCAST_CONFORMANCE_DIR`) against tensorcast.
//!
//! Prints one line per vector file, `conformance <file>: N passed, M failed, K skipped`, and
//! fails if any record failed. Files whose op tensorcast does not implement are reported with
//! every record skipped.

#![allow(
    dead_code,
    reason = "helpers shared by the per-file modules; not every file uses each"
)]
#![allow(
    clippy::missing_errors_doc,
    reason = "a test binary: its helpers' errors are failed records, not a public API"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use tensorcast_core::{DataType, TString, Tensor, TensorShape};

mod ops;

/// What one record came to.
pub enum Outcome {
    Pass,
    Fail(String),
    Skip,
}

pub use tensorcast_testkit::records::{hex_decode, hex_encode};

pub fn dtype_of(v: &Value) -> Result<DataType, String> {
    let name = v.as_str().ok_or("dtype is not a string")?;
    DataType::from_name(name).ok_or_else(|| format!("unknown dtype {name}"))
}

pub fn shape_of(v: &Value) -> Result<TensorShape, String> {
    let dims: Vec<i64> = v
        .as_array()
        .ok_or("shape is not an array")?
        .iter()
        .map(|d| d.as_i64().ok_or("dim is not an integer"))
        .collect::<Result<_, _>>()?;
    TensorShape::new(&dims).map_err(|e| e.to_string())
}

/// Builds the tensor a record describes.
pub fn tensor_of(v: &Value) -> Result<Tensor, String> {
    let dtype = dtype_of(&v["dtype"])?;
    let shape = shape_of(&v["shape"])?;
    if dtype == DataType::STRING {
        let strings: Vec<TString> = v["strings"]
            .as_array()
            .ok_or("string tensor without strings")?
            .iter()
            .map(|s| hex_decode(s.as_str().unwrap_or("")).map(TString::from))
            .collect::<Result<_, _>>()?;
        return Tensor::from_vec(strings, &shape).map_err(|e| e.to_string());
    }
    let bytes = hex_decode(v["hex"].as_str().ok_or("tensor without hex")?)?;
    let buf =
        tensorcast_core::buffer::Buffer::copy_from_slice(&bytes).map_err(|e| e.to_string())?;
    Tensor::from_buffer(dtype, &shape, buf).map_err(|e| e.to_string())
}

/// Compares a result with a record's `expect` tensor: dtype, shape and bytes.
pub fn check_tensor(got: &Tensor, want: &Value) -> Result<(), String> {
    let want_t = tensor_of(want)?;
    if got.dtype() != want_t.dtype() {
        return Err(format!(
            "dtype {} != expected {}",
            got.dtype(),
            want_t.dtype()
        ));
    }
    if got.shape() != want_t.shape() {
        return Err(format!(
            "shape {} != expected {}",
            got.shape(),
            want_t.shape()
        ));
    }
    if got.dtype() == DataType::STRING {
        let a = got.as_slice::<TString>().map_err(|e| e.to_string())?;
        let b = want_t.as_slice::<TString>().map_err(|e| e.to_string())?;
        if a != b {
            return Err(format!("strings {a:?} != expected {b:?}"));
        }
        return Ok(());
    }
    let a = got.tensor_data().map_err(|e| e.to_string())?;
    let b = want_t.tensor_data().map_err(|e| e.to_string())?;
    if a != b {
        return Err(format!(
            "bytes {} != expected {}",
            hex_encode(a),
            hex_encode(b)
        ));
    }
    Ok(())
}

fn main() {
    let dir = tensorcast_testkit::records::conformance_dir();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) => {
            eprintln!("conformance: cannot read {}: {e}", dir.display());
            std::process::exit(2);
        }
    };
    files.sort();
    // Vectors we recorded from TensorFlow ourselves (with the generator scripts beside them),
    // for behaviour the shared vectors do not cover; replayed after the shared ones.
    let observed = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/tf_observed");
    if let Ok(rd) = std::fs::read_dir(&observed) {
        let mut extra: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        extra.sort();
        files.extend(extra);
    }
    let verbose = std::env::var_os("TENSORCAST_CONFORMANCE_VERBOSE").is_some();
    // `TENSORCAST_CONFORMANCE_FILES=a,b`: replay only the files whose name contains one of the
    // words (the test script's reruns at lower SIMD levels take the files whose ops go through
    // the SIMD paths); every other file is still listed, as not selected.
    let only: Option<Vec<String>> = std::env::var("TENSORCAST_CONFORMANCE_FILES").ok().map(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect()
    });
    let (mut total_pass, mut total_fail) = (0usize, 0usize);
    let mut failures: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in &files {
        let base = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let name = if path.starts_with(&observed) {
            format!("tf_observed/{base}")
        } else {
            base
        };
        if let Some(words) = &only {
            if !words.iter().any(|w| name.contains(w.as_str())) {
                println!("conformance {name}: not selected (TENSORCAST_CONFORMANCE_FILES)");
                continue;
            }
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("conformance {name}: cannot read: {e}");
                total_fail += 1;
                continue;
            }
        };
        let (mut pass, mut fail, mut skip) = (0usize, 0usize, 0usize);
        for (lineno, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let outcome = match serde_json::from_str::<Value>(line) {
                Ok(rec) => ops::run(&name, &rec),
                Err(e) => Outcome::Fail(format!("line {}: bad JSON: {e}", lineno + 1)),
            };
            match outcome {
                Outcome::Pass => pass += 1,
                Outcome::Skip => skip += 1,
                Outcome::Fail(why) => {
                    fail += 1;
                    let id = serde_json::from_str::<Value>(line)
                        .ok()
                        .and_then(|r| r["id"].as_str().map(String::from))
                        .unwrap_or_else(|| format!("line {}", lineno + 1));
                    failures
                        .entry(name.clone())
                        .or_default()
                        .push(format!("{id}: {why}"));
                }
            }
        }
        println!("conformance {name}: {pass} passed, {fail} failed, {skip} skipped");
        ops::finish(&name);
        if name == "graph_shape_inference.jsonl" {
            if let Some(line) = ops::graph_shape_inference::eager_report() {
                println!("{line}");
            }
        }
        total_pass += pass;
        total_fail += fail;
    }
    for (file, list) in &failures {
        let shown = if verbose {
            list.len()
        } else {
            list.len().min(10)
        };
        for f in &list[..shown] {
            println!("  FAIL {file} {f}");
        }
        if shown < list.len() {
            println!(
                "  ... {} more in {file} (TENSORCAST_CONFORMANCE_VERBOSE=1 shows all)",
                list.len() - shown
            );
        }
    }
    println!("conformance: {total_pass} passed, {total_fail} failed");
    if total_fail > 0 {
        std::process::exit(1);
    }
}
