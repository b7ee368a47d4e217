//! `summarize.jsonl`: SummarizeValue in both layouts, and DebugString built on it.

use serde_json::Value;

use crate::{tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let t = match tensor_of(&rec["input"]) {
        Ok(t) => t,
        Err(e) => return Outcome::Fail(format!("input: {e}")),
    };
    let Some(max) = rec["max_entries"].as_i64() else {
        return Outcome::Fail("max_entries missing".into());
    };
    let mut problems = Vec::new();
    if let Some(v1) = rec["print_v1"].as_str() {
        let got = t.summarize_value(max, false);
        if got != v1 {
            problems.push(format!("print_v1 {got:?} != expected {v1:?}"));
        }
        let dbg = t.debug_string(max);
        let want = format!(
            "Tensor<type: {} shape: {} values: {v1}>",
            t.dtype(),
            t.shape()
        );
        if dbg != want {
            problems.push(format!("debug_string {dbg:?} != expected {want:?}"));
        }
    }
    if let Some(v2) = rec["print_v2"].as_str() {
        let got = t.summarize_value(max, true);
        if got != v2 {
            problems.push(format!("print_v2 {got:?} != expected {v2:?}"));
        }
    }
    if problems.is_empty() {
        Outcome::Pass
    } else {
        Outcome::Fail(problems.join("; "))
    }
}
