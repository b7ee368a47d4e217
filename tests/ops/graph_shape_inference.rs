//! `graph_shape_inference.jsonl`: one node built on a fresh graph (inputs `in0`, `in1`, ...; the
//! node `op`), whose inferred output dtypes and partial shapes, or graph-time error message, must
//! be TensorFlow's. Where the record also has an `eager` outcome and the build succeeded, the
//! node is run in a session (placeholders fed with ones) and the run-time outcome is checked as
//! well: reported on its own line, with records whose op has no kernel yet counted apart.

use std::sync::atomic::{AtomicUsize, Ordering};
use tensorcast_kernels::TensorOps;

use serde_json::Value;
use tensorcast::graph::ops::{Placeholder, PlaceholderAttrs, Shape, ShapeAttrs};
use tensorcast::graph::{Error, Input, Scope, Session};
use tensorcast::{DataType, Tensor, TensorShape};

use super::graph_common::{attrs_of, partial_shape_json, partial_shape_of};
use crate::{dtype_of, tensor_of, Outcome};

static EAGER_PASS: AtomicUsize = AtomicUsize::new(0);
static EAGER_FAIL: AtomicUsize = AtomicUsize::new(0);
static EAGER_NO_KERNEL: AtomicUsize = AtomicUsize::new(0);
static EAGER_FAILURES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The eager (run-time) counts, printed after the file's line.
pub fn eager_report() -> Option<String> {
    let (p, f, k) = (
        EAGER_PASS.load(Ordering::Relaxed),
        EAGER_FAIL.load(Ordering::Relaxed),
        EAGER_NO_KERNEL.load(Ordering::Relaxed),
    );
    if p + f + k == 0 {
        return None;
    }
    let mut s = format!(
        "conformance graph_shape_inference.jsonl (run-time `eager` outcomes through Session): {p} passed, {f} failed, {k} not run (no kernel yet)"
    );
    for line in EAGER_FAILURES
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default()
        .iter()
        .take(10)
    {
        s.push_str(&format!("\n  FAIL eager {line}"));
    }
    s.into()
}

/// A tensor of ones of `dtype` and `shape` (what the generator fed placeholders).
fn ones(dtype: DataType, shape: &TensorShape) -> Result<Tensor, String> {
    let n = shape.num_elements() as usize;
    if dtype == DataType::STRING {
        let v = vec![tensorcast::TString::from("1"); n];
        return Tensor::from_vec(v, shape).map_err(|e| e.to_string());
    }
    let t = Tensor::from_vec(vec![1.0f64; n], shape).map_err(|e| e.to_string())?;
    t.cast(dtype).map_err(|e| e.to_string())
}

struct Built {
    scope: Scope,
    feeds: Vec<(String, Tensor)>,
    inputs: Vec<Input>,
}

fn build_inputs(rec: &Value) -> Result<Built, String> {
    let scope = Scope::new_root_scope();
    let mut feeds = Vec::new();
    let mut inputs = Vec::new();
    for (i, spec) in rec["inputs"]
        .as_array()
        .ok_or("inputs is not a list")?
        .iter()
        .enumerate()
    {
        let name = format!("in{i}");
        let out = match spec["kind"].as_str() {
            Some("placeholder") => {
                let dtype = dtype_of(&spec["dtype"])?;
                let shape = partial_shape_of(&spec["shape"])?;
                if let Some(s) = shape.to_shape() {
                    if let Ok(t) = ones(dtype, &s) {
                        feeds.push((format!("{name}:0"), t));
                    }
                }
                Placeholder::with_attrs(
                    &scope.with_op_name(&name),
                    dtype,
                    PlaceholderAttrs::default().shape(shape),
                )
                .map_err(|e| e.to_string())?
                .output
            }
            Some("const") => {
                let t = tensor_of(&spec["value"])?;
                tensorcast::graph::ops::Const::new(&scope.with_op_name(&name), t)
                    .map_err(|e| e.to_string())?
                    .output
            }
            Some("shape_of") => {
                let of = &spec["of"];
                let dtype = dtype_of(&of["dtype"])?;
                let shape = partial_shape_of(&of["shape"])?;
                let src = format!("{name}_src");
                if let Some(s) = shape.to_shape() {
                    if let Ok(t) = ones(dtype, &s) {
                        feeds.push((format!("{src}:0"), t));
                    }
                }
                let p = Placeholder::with_attrs(
                    &scope.with_op_name(&src),
                    dtype,
                    PlaceholderAttrs::default().shape(shape),
                )
                .map_err(|e| e.to_string())?;
                let out_type = dtype_of(&spec["out_type"])?;
                Shape::with_attrs(
                    &scope.with_op_name(&name),
                    p,
                    ShapeAttrs::default().out_type(out_type),
                )
                .map_err(|e| e.to_string())?
                .output
            }
            other => return Err(format!("unknown input kind {other:?}")),
        };
        inputs.push(Input::from(out));
    }
    Ok(Built {
        scope,
        feeds,
        inputs,
    })
}

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn check(rec: &Value) -> Result<(), String> {
    let op = rec["op"].as_str().ok_or("op is not a string")?;
    let Built {
        scope,
        feeds,
        inputs,
    } = build_inputs(rec)?;
    let attrs = attrs_of(&rec["attrs"])?;
    let result = scope.with_op_name("op").new_operation(op, inputs, attrs);
    match (result, rec.get("expect"), rec.get("error")) {
        (Ok(operation), Some(expect), None) => {
            let want = expect["outputs"]
                .as_array()
                .ok_or("expect.outputs is not a list")?;
            if operation.num_outputs() != want.len() {
                return Err(format!(
                    "{} outputs, expected {}",
                    operation.num_outputs(),
                    want.len()
                ));
            }
            for (i, w) in want.iter().enumerate() {
                let out = operation.output(i);
                let dtype = out.dtype().ok_or("no dtype")?;
                if dtype != dtype_of(&w["dtype"])? {
                    return Err(format!("output {i} dtype {dtype}, expected {}", w["dtype"]));
                }
                let got = partial_shape_json(&out.shape());
                if got != w["shape"] {
                    return Err(format!("output {i} shape {got}, expected {}", w["shape"]));
                }
            }
            if !scope.ok() {
                return Err("scope not ok after a successful build".into());
            }
            check_eager(rec, &scope, &feeds);
            Ok(())
        }
        (Err(e), None, Some(error)) => {
            let want = error["message"].as_str().unwrap_or("");
            if e.to_string() != want {
                return Err(format!("error {:?}, expected {want:?}", e.to_string()));
            }
            if scope.ok() {
                return Err("the scope did not keep the error".into());
            }
            Ok(())
        }
        (Ok(_), _, _) => Err(format!("built, expected error {}", rec["error"]["message"])),
        (Err(e), _, _) => Err(format!("failed with {e:?}, expected outputs")),
    }
}

fn check_eager(rec: &Value, scope: &Scope, feeds: &[(String, Tensor)]) {
    let Some(eager) = rec.get("eager") else {
        return;
    };
    let session = Session::new(scope.graph());
    let feed: Vec<(&str, Tensor)> = feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let id = rec["id"].as_str().unwrap_or("?").to_string();
    let n_out = eager["expect"]["outputs"].as_array().map_or(1, Vec::len);
    let fetches: Vec<String> = (0..n_out).map(|i| format!("op:{i}")).collect();
    let fetch: Vec<&str> = fetches.iter().map(String::as_str).collect();
    let result = session.run(&feed, &fetch, &[]);
    let verdict: Result<(), String> = match (result, eager.get("expect"), eager.get("error")) {
        (Err(Error::NoKernel { .. } | Error::MissingKernels(_)), _, _) => {
            EAGER_NO_KERNEL.fetch_add(1, Ordering::Relaxed);
            return;
        }
        (Ok(out), Some(expect), _) => {
            let want = expect["outputs"].as_array().cloned().unwrap_or_default();
            want.iter().zip(&out).try_for_each(|(w, t)| {
                let shape: Vec<i64> = t.shape().dim_sizes().to_vec();
                if dtype_of(&w["dtype"])? != t.dtype() || Value::from(shape.clone()) != w["shape"] {
                    Err(format!("{} {:?}, expected {w}", t.dtype(), shape))
                } else {
                    Ok(())
                }
            })
        }
        (Err(e), None, Some(error)) => {
            let want = error["message"].as_str().unwrap_or("");
            if e.to_string() == want || error["kind"] != "InvalidArgumentError" {
                Ok(())
            } else {
                Err(format!("error {:?}, expected {want:?}", e.to_string()))
            }
        }
        (Ok(_), _, _) => Err(format!("ran, expected error {}", eager["error"])),
        (Err(e), _, _) => Err(format!("failed with {e}, expected {}", eager["expect"])),
    };
    match verdict {
        Ok(()) => EAGER_PASS.fetch_add(1, Ordering::Relaxed),
        Err(why) => {
            if let Ok(mut l) = EAGER_FAILURES.lock() {
                l.push(format!("{id}: {why}"));
            }
            EAGER_FAIL.fetch_add(1, Ordering::Relaxed)
        }
    };
}
