//! One module per vector file: what each record asks and how to check it.

use serde_json::Value;

use crate::Outcome;

mod summarize;

/// Runs one record of `file`.
pub fn run(file: &str, rec: &Value) -> Outcome {
    match file {
        "summarize.jsonl" => summarize::run(rec),
        _ => Outcome::Skip,
    }
}
