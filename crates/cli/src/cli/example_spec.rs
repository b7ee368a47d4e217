//! The feature-spec file of `convert examples.tfrecord out.npz --spec spec.json`: a JSON
//! object from feature name to TensorFlow's feature class and its arguments, by their Python
//! names:
//!
//! ```json
//! {
//!   "x":    {"type": "FixedLenFeature", "shape": [4], "dtype": "float32", "default_value": null},
//!   "tags": {"type": "VarLenFeature", "dtype": "string"},
//!   "seq":  {"type": "FixedLenSequenceFeature", "shape": [3], "dtype": "float32",
//!            "allow_missing": true, "default_value": 0.5},
//!   "r":    {"type": "RaggedFeature", "dtype": "int64", "value_key": "tok",
//!            "partitions": [{"type": "RowLengths", "key": "tok_lens"}],
//!            "row_splits_dtype": "int32", "validate": false}
//! }
//! ```
//!
//! Omitted arguments take TensorFlow's defaults (`default_value` none, `allow_missing`
//! false, `value_key` the feature's name, `partitions` none, `row_splits_dtype` int64);
//! string values are UTF-8 text; partitions are `RowLengths` / `RowSplits` (`key`) and
//! `UniformRowLength` (`length`). Unknown types and keys are errors (a typo is never ignored).

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{Map, Value};
use tensorcast::{DataType, TString, Tensor};
use tensorcast_records::{FeatureSpec, Partition};

/// Reads and parses the spec file at `path`; errors name the file and the feature.
pub(crate) fn load(path: &Path) -> Result<Vec<(String, FeatureSpec)>> {
    let name = || {
        format!(
            "--spec {}",
            tensorcast::io::escaped(&path.display().to_string())
        )
    };
    // Through the one input layer: at most 64 MiB from any file (a spec is a few lines).
    let bytes = tensorcast::io::read_path_at_most(path, 64 << 20, tensorcast::io::ReadMode::Read)
        .map_err(|e| match e.kind() {
            tensorcast::io::ErrorKind::TooLarge => anyhow!("not a spec (they are small): {e}"),
            _ => anyhow!(e),
        })
        .with_context(name)?;
    let text = std::str::from_utf8(bytes.as_slice())
        .map_err(|e| anyhow!("not UTF-8: {e}"))
        .with_context(name)?;
    parse(text).with_context(name)
}

/// Parses a spec document (see the module docs), features in name order.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, FeatureSpec)>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let Value::Object(features) = doc else {
        bail!("the spec must be a JSON object from feature name to feature spec");
    };
    if features.is_empty() {
        bail!("the spec names no features");
    }
    features
        .iter()
        .map(|(name, v)| {
            feature(v)
                .map(|s| (name.clone(), s))
                .with_context(|| format!("feature '{}'", tensorcast::io::escaped(name)))
        })
        .collect()
}

fn feature(v: &Value) -> Result<FeatureSpec> {
    let Value::Object(o) = v else {
        bail!("expected an object such as {{\"type\": \"VarLenFeature\", \"dtype\": \"int64\"}}");
    };
    let ty = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("no \"type\" (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature or RaggedFeature)"))?;
    let allowed: &[&str] = match ty {
        "FixedLenFeature" => &["type", "shape", "dtype", "default_value"],
        "VarLenFeature" => &["type", "dtype"],
        "FixedLenSequenceFeature" => &["type", "shape", "dtype", "allow_missing", "default_value"],
        "RaggedFeature" => &[
            "type",
            "dtype",
            "value_key",
            "partitions",
            "row_splits_dtype",
            "validate",
        ],
        other => bail!(
            "unknown type \"{other}\" (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature \
             or RaggedFeature)"
        ),
    };
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        bail!(
            "{ty} takes no \"{k}\" (it takes {})",
            allowed[1..].join(", ")
        );
    }
    let dtype = dtype_of(o, "dtype")?.ok_or_else(|| anyhow!("{ty} needs a \"dtype\""))?;
    Ok(match ty {
        "FixedLenFeature" => {
            let shape = shape(o)?;
            let default_value = match o.get("default_value") {
                None | Some(Value::Null) => None,
                Some(v) => Some(values(v, dtype)?),
            };
            FeatureSpec::FixedLen {
                shape,
                dtype,
                default_value,
            }
        }
        "VarLenFeature" => FeatureSpec::VarLen { dtype },
        "FixedLenSequenceFeature" => {
            let shape = shape(o)?;
            let allow_missing = match o.get("allow_missing") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(v) => bail!("allow_missing is {v}, not true or false"),
            };
            let default_value = match o.get("default_value") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Array(_)) => {
                    bail!("default_value {v} must be a scalar for a FixedLenSequenceFeature")
                }
                Some(v) => Some(values(v, dtype)?),
            };
            FeatureSpec::FixedLenSequence {
                shape,
                dtype,
                allow_missing,
                default_value,
            }
        }
        _ => {
            let value_key = match o.get("value_key") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(v) => bail!("value_key is {v}, not a string"),
            };
            let partitions = match o.get("partitions") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a.iter().map(partition).collect::<Result<_>>()?,
                Some(v) => bail!("partitions is {v}, not a list"),
            };
            let row_splits_dtype = dtype_of(o, "row_splits_dtype")?.unwrap_or(DataType::INT64);
            if !matches!(row_splits_dtype, DataType::INT32 | DataType::INT64) {
                bail!(
                    "row_splits_dtype must be int32 or int64, not {}",
                    row_splits_dtype.name()
                );
            }
            match o.get("validate") {
                None | Some(Value::Bool(_)) => {}
                Some(v) => bail!("validate is {v}, not true or false"),
            }
            FeatureSpec::Ragged {
                dtype,
                value_key,
                partitions,
                row_splits_dtype,
            }
        }
    })
}

fn dtype_of(o: &Map<String, Value>, key: &str) -> Result<Option<DataType>> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let d = super::parse_dtype(s.trim_start_matches("tf."))?;
            Ok(Some(d))
        }
        Some(v) => bail!("{key} is {v}, not a dtype name such as \"float32\""),
    }
}

fn shape(o: &Map<String, Value>) -> Result<Vec<i64>> {
    match o.get("shape") {
        None => bail!("needs a \"shape\" (a list of sizes; [] for a scalar)"),
        Some(Value::Array(a)) => a
            .iter()
            .map(|d| {
                d.as_i64()
                    .ok_or_else(|| anyhow!("shape holds {d}, not an integer"))
            })
            .collect(),
        Some(v) => bail!("shape is {v}, not a list of sizes"),
    }
}

fn partition(v: &Value) -> Result<Partition> {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    let key = || {
        v.get("key")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| anyhow!("partition {v} needs a \"key\""))
    };
    Ok(match ty {
        "RowLengths" => Partition::RowLengths(key()?),
        "RowSplits" => Partition::RowSplits(key()?),
        "RowStarts" => Partition::RowStarts(key()?),
        "RowLimits" => Partition::RowLimits(key()?),
        "ValueRowIds" => Partition::ValueRowIds(key()?),
        "UniformRowLength" => Partition::UniformRowLength(
            v.get("length")
                .and_then(Value::as_i64)
                .ok_or_else(|| anyhow!("partition {v} needs an integer \"length\""))?,
        ),
        _ => bail!(
            "partition {v}: the type must be RowLengths, RowSplits, RowStarts, RowLimits, \
             ValueRowIds or UniformRowLength"
        ),
    })
}

/// A default value (a scalar or a nested list, flattened) as a tensor of `dtype`.
fn values(v: &Value, dtype: DataType) -> Result<Tensor> {
    let mut flat = Vec::new();
    flatten(v, &mut flat, 0)?;
    let n = flat.len();
    let bad = |x: &Value| anyhow!("default_value holds {x}, not a {} value", dtype.name());
    let t = match dtype {
        DataType::FLOAT => Tensor::from_vec(
            flat.iter()
                .map(|x| x.as_f64().map(|f| f as f32).ok_or_else(|| bad(x)))
                .collect::<Result<Vec<f32>>>()?,
            [n as i64],
        ),
        DataType::INT64 => Tensor::from_vec(
            flat.iter()
                .map(|x| x.as_i64().ok_or_else(|| bad(x)))
                .collect::<Result<Vec<i64>>>()?,
            [n as i64],
        ),
        DataType::STRING => Tensor::from_vec(
            flat.iter()
                .map(|x| x.as_str().map(TString::from).ok_or_else(|| bad(x)))
                .collect::<Result<Vec<TString>>>()?,
            [n as i64],
        ),
        d => bail!("dtype {} is not float32, int64 or string", d.name()),
    };
    t.map_err(|e| anyhow!("{e}"))
}

fn flatten<'a>(v: &'a Value, out: &mut Vec<&'a Value>, depth: usize) -> Result<()> {
    if depth > 64 {
        bail!("default_value is nested too deeply");
    }
    match v {
        Value::Array(a) => a.iter().try_for_each(|x| flatten(x, out, depth + 1)),
        x => {
            out.push(x);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issues_spec_parses() {
        let specs = parse(
            r#"{
              "x": {"type": "FixedLenFeature", "shape": [4], "dtype": "float32", "default_value": [1, 2, 3, 4]},
              "n": {"type": "FixedLenFeature", "shape": [], "dtype": "int64", "default_value": null},
              "tags": {"type": "VarLenFeature", "dtype": "string"},
              "seq": {"type": "FixedLenSequenceFeature", "shape": [3], "dtype": "float32", "allow_missing": true, "default_value": 0.5},
              "r": {"type": "RaggedFeature", "dtype": "int64", "value_key": "tok", "partitions": [{"type": "RowLengths", "key": "tok_lens"}], "row_splits_dtype": "int32", "validate": false}
            }"#,
        )
        .unwrap();
        let names: Vec<&str> = specs.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(names, ["n", "r", "seq", "tags", "x"]);
        assert_eq!(
            specs[1].1,
            FeatureSpec::Ragged {
                dtype: DataType::INT64,
                value_key: Some("tok".into()),
                partitions: vec![Partition::RowLengths("tok_lens".into())],
                row_splits_dtype: DataType::INT32,
            }
        );
        let FeatureSpec::FixedLen {
            default_value: Some(d),
            ..
        } = &specs[4].1
        else {
            panic!("{:?}", specs[4]);
        };
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn typos_and_bad_values_are_errors() {
        for (doc, want) in [
            (
                r#"{"x": {"type": "FixedLen", "dtype": "float32"}}"#,
                "unknown type \"FixedLen\"",
            ),
            (
                r#"{"x": {"type": "VarLenFeature", "dtype": "float32", "shape": [1]}}"#,
                "takes no \"shape\"",
            ),
            (r#"{"x": {"type": "VarLenFeature"}}"#, "needs a \"dtype\""),
            (
                r#"{"x": {"type": "FixedLenFeature", "dtype": "float32"}}"#,
                "needs a \"shape\"",
            ),
            (
                r#"{"x": {"type": "FixedLenFeature", "shape": [1], "dtype": "int64", "default_value": ["a"]}}"#,
                "not a int64 value",
            ),
            (r#"[]"#, "must be a JSON object"),
            (r#"{"#, "not JSON"),
        ] {
            let e = format!("{:#}", parse(doc).unwrap_err());
            assert!(e.contains(want), "{doc}: {e}");
        }
    }
}
