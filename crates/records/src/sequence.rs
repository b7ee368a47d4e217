//! `tf.io.parse_sequence_example`: serialized `SequenceExample`s to context and sequence
//! tensors, with TensorFlow's results and error texts.

use bytes::Bytes;
use tensorcast_core::{DataType, Tensor};

use crate::error::{RecordsError, Result};
use crate::parse::{
    build, checked_count, empty_values, extend, extend_cycled, kind_of, name_of, parse_count_text,
    sequence_padding, shape_product, shape_string, to_tensor, values_kind, FeatureSpec, Parsed,
    Plan, Row, RowCols,
};
use crate::wire::{decode_feature, walk_features, Cursor, Kind, Span, Values, WireResult};

/// What [`parse_sequence_example`] returns: TensorFlow's `(context, feature_lists,
/// lengths)`, each in the order of its specs.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceParsed {
    /// The context features.
    pub context: Vec<(String, Parsed)>,
    /// The sequence features.
    pub sequence: Vec<(String, Parsed)>,
    /// For each `FixedLenSequence` sequence feature, the number of steps of each example
    /// (`[batch]` int64).
    pub lengths: Vec<(String, Tensor)>,
}

/// One example's feature lists: for each wanted key, its steps (`None`: absent).
type Lists = Vec<Option<Vec<Option<Values>>>>;

/// Decodes one `SequenceExample`. TensorFlow reads a damaged `SequenceExample` as far as it
/// goes (a cut-short `feature_lists` gives "Feature list ... is required", not a parse error,
/// as recorded); so do we, keeping what decoded before the damage.
fn decode_one(
    ctx_plan: &Plan<'_>,
    seq_plan: &Plan<'_>,
    serialized: &Bytes,
) -> Result<(Row, Lists)> {
    let mut ctx_last: Vec<Option<(usize, usize)>> = vec![None; ctx_plan.keys.len()];
    let mut seq_last: Vec<Option<(usize, usize)>> = vec![None; seq_plan.keys.len()];
    let _ = walk_sequence_example(serialized, &mut |is_ctx, key, range| {
        let (plan, last) = if is_ctx {
            (ctx_plan, &mut ctx_last)
        } else {
            (seq_plan, &mut seq_last)
        };
        if let Some(&i) = plan.index.get(key) {
            last[i] = Some(range);
        }
    });
    let row: Row = ctx_last
        .into_iter()
        .map(|r| match r {
            None => Ok(None),
            Some(range) => decode_feature(serialized, range)
                .map(Some)
                .map_err(|_| crate::parse::unparsable(serialized)),
        })
        .collect::<Result<_>>()?;
    let lists: Lists = seq_last
        .into_iter()
        .map(|r| match r {
            None => Ok(None),
            Some((s, e)) => {
                let mut steps = Vec::new();
                let mut c = Cursor {
                    data: &serialized[..e],
                    pos: s,
                };
                while !c.done() {
                    let (f, w) = c.key().map_err(|_| crate::parse::unparsable(serialized))?;
                    if f == 1 && w == 2 {
                        let range = c
                            .len_delimited()
                            .map_err(|_| crate::parse::unparsable(serialized))?;
                        steps.push(
                            decode_feature(serialized, range)
                                .map_err(|_| crate::parse::unparsable(serialized))?,
                        );
                    } else {
                        c.skip(w)
                            .map_err(|_| crate::parse::unparsable(serialized))?;
                    }
                }
                Ok(Some(steps))
            }
        })
        .collect::<Result<_>>()?;
    Ok((row, lists))
}

/// Walks a `SequenceExample`: `found(true, key, feature)` for context features,
/// `found(false, key, feature_list)` for feature lists.
fn walk_sequence_example(data: &[u8], found: &mut dyn FnMut(bool, &[u8], Span)) -> WireResult<()> {
    let mut c = Cursor::new(data);
    while !c.done() {
        let (field, wire) = c.key()?;
        match (field, wire) {
            (1, 2) => {
                let r = c.len_delimited()?;
                walk_features(data, r, &mut |k, v| found(true, k, v))?;
            }
            (2, 2) => {
                let r = c.len_delimited()?;
                // FeatureLists has the same shape as Features: map<string, FeatureList> = 1.
                walk_features(data, r, &mut |k, v| found(false, k, v))?;
            }
            _ => c.skip(wire)?,
        }
    }
    Ok(())
}

/// Parses a batch of serialized `SequenceExample`s as `tf.io.parse_sequence_example` does.
///
/// Context specs are those of [`crate::parse_example`]. Sequence specs are
/// `FixedLenSequence` (dense `[batch, max_steps] + shape`, each step holding exactly the
/// shape's values; a missing list is an error unless `allow_missing`), `VarLen` (sparse
/// `[batch, max_steps, max_values]`) and `Ragged` without partitions (`[batch, (steps),
/// (values)]`).
///
/// # Errors
/// [`RecordsError::InvalidArgument`] with TensorFlow's texts: a required context feature or
/// feature list missing, a step of the wrong type or length, an unsupported spec.
pub fn parse_sequence_example(
    serialized: &[Bytes],
    names: Option<&[String]>,
    context: &[(String, FeatureSpec)],
    sequence: &[(String, FeatureSpec)],
) -> Result<SequenceParsed> {
    let ctx_plan = Plan::new(context);
    let seq_plan = Plan::new(sequence);
    let decoded: Vec<(Row, Lists)> = serialized
        .iter()
        .map(|s| decode_one(&ctx_plan, &seq_plan, s))
        .collect::<Result<_>>()?;
    let (rows, lists): (Vec<Row>, Vec<Lists>) = decoded.into_iter().unzip();
    let context_out = context
        .iter()
        .map(|(name, spec)| {
            build(name, spec, &ctx_plan, &RowCols(&rows), names)
                .map(|p| (name.clone(), p))
                .map_err(context_text)
        })
        .collect::<Result<_>>()?;
    let mut sequence_out = Vec::new();
    let mut lengths = Vec::new();
    for (name, spec) in sequence {
        let slot = seq_plan.index[name.as_bytes()];
        let col: Vec<Option<&Vec<Option<Values>>>> =
            lists.iter().map(|l| l[slot].as_ref()).collect();
        let (parsed, len) = build_sequence(name, spec, &col, names)?;
        sequence_out.push((name.clone(), parsed));
        if let Some(len) = len {
            lengths.push((name.clone(), len));
        }
    }
    Ok(SequenceParsed {
        context: context_out,
        sequence: sequence_out,
        lengths,
    })
}

/// The context parser words some errors its own way: a missing feature without the `Name:`
/// prefix, a type mismatch as `Context feature: k.`, a wrong length as an inconsistent
/// number of elements.
fn context_text(e: RecordsError) -> RecordsError {
    let RecordsError::InvalidArgument(m) = e else {
        return e;
    };
    if m.contains("is required but could not be found") {
        if let Some((_, rest)) = m.split_once(", Feature: ") {
            return RecordsError::InvalidArgument(format!("Feature: {rest}"));
        }
        return RecordsError::InvalidArgument(m);
    }
    let Some((head, tail)) = m.split_once(", Index: ") else {
        return RecordsError::InvalidArgument(m);
    };
    let Some((name, key)) = head.split_once(", Key: ") else {
        return RecordsError::InvalidArgument(m);
    };
    let Some((_, tail)) = tail.split_once(".  ") else {
        return RecordsError::InvalidArgument(m);
    };
    if let Some(types) = tail.strip_prefix("Data types don't match. ") {
        let expected = types
            .split_once("expected type: ")
            .or_else(|| types.split_once("Expected type: "))
            .map(|(_, e)| e.split(',').next().unwrap_or(e));
        if let Some(expected) = expected {
            return RecordsError::InvalidArgument(format!(
                "{name}, Context feature: {key}.  Data types don't match. Expected type: {expected}"
            ));
        }
    }
    if let Some(c) = parse_count_text(tail) {
        return RecordsError::InvalidArgument(format!(
            "Inconsistent max number of elements for feature {key}: expected {}, but found {}",
            shape_product(c.shape),
            c.got
        ));
    }
    RecordsError::InvalidArgument(m)
}

fn step_type_error(name: &str, key: &str, step: usize, want: Kind) -> RecordsError {
    RecordsError::invalid(format!(
        "Name: {name}, Feature list: {key}, Index: {step}.  Data types don't match. Expected type: {}",
        want.tf_name()
    ))
}

/// The steps of one example, each checked to be of `kind` (a step with no list counts as
/// an empty list of any kind).
fn steps_of<'v>(
    steps: &'v [Option<Values>],
    kind: Kind,
    name: &str,
    key: &str,
) -> Result<Vec<Option<&'v Values>>> {
    steps
        .iter()
        .enumerate()
        .map(|(j, s)| match s {
            Some(v) if values_kind(v) != kind => Err(step_type_error(name, key, j, kind)),
            Some(v) => Ok(Some(v)),
            None => Ok(None),
        })
        .collect()
}

fn build_sequence(
    key: &str,
    spec: &FeatureSpec,
    col: &[Option<&Vec<Option<Values>>>],
    names: Option<&[String]>,
) -> Result<(Parsed, Option<Tensor>)> {
    let batch = col.len() as i64;
    let bad = |e: tensorcast_core::Error| RecordsError::invalid(e.to_string());
    match spec {
        FeatureSpec::FixedLenSequence {
            shape,
            dtype,
            allow_missing,
            default_value,
        } => {
            let kind = kind_of(*dtype)?;
            let stride = checked_count(shape)?;
            let mut per_example = Vec::with_capacity(col.len());
            for (i, steps) in col.iter().enumerate() {
                let name = name_of(names, i);
                let Some(steps) = steps else {
                    if !allow_missing {
                        return Err(RecordsError::invalid(format!(
                            "Name: {name}, Feature list '{key}' is required but could not be found.  Did you mean to include it in feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?"
                        )));
                    }
                    per_example.push(Vec::new());
                    continue;
                };
                let steps = steps_of(steps, kind, name, key)?;
                for (j, s) in steps.iter().enumerate() {
                    let n = s.map_or(0, |v| v.len());
                    if n != stride {
                        return Err(RecordsError::invalid(format!(
                            "Name: {name}, Key: {key}, Index: {j}.  Number of values != expected.  values size: {n} but output shape: {}",
                            shape_string(shape)
                        )));
                    }
                }
                per_example.push(steps);
            }
            let max_steps = per_example.iter().map(Vec::len).max().unwrap_or(0);
            let pad = sequence_padding(default_value.as_ref(), kind)?;
            let mut out = empty_values(kind);
            let mut lens = Vec::with_capacity(col.len());
            for steps in &per_example {
                for v in steps.iter().flatten() {
                    extend(&mut out, v.as_vref(), 0..stride);
                }
                for _ in steps.len()..max_steps {
                    extend_cycled(&mut out, &pad, stride);
                }
                lens.push(steps.len() as i64);
            }
            let mut dims = vec![batch, max_steps as i64];
            dims.extend_from_slice(shape);
            Ok((
                Parsed::Dense(to_tensor(out, &dims)?),
                Some(Tensor::from_vec(lens, [batch].as_slice()).map_err(bad)?),
            ))
        }
        FeatureSpec::VarLen { dtype } => {
            let kind = kind_of(*dtype)?;
            let mut indices = Vec::new();
            let mut out = empty_values(kind);
            let (mut max_steps, mut max_len) = (0usize, 0usize);
            for (i, steps) in col.iter().enumerate() {
                let Some(steps) = steps else { continue };
                let steps = steps_of(steps, kind, name_of(names, i), key)?;
                max_steps = max_steps.max(steps.len());
                for (j, v) in steps.iter().enumerate() {
                    let Some(v) = v else { continue };
                    for k in 0..v.len() {
                        indices.extend_from_slice(&[i as i64, j as i64, k as i64]);
                    }
                    extend(&mut out, v.as_vref(), 0..v.len());
                    max_len = max_len.max(v.len());
                }
            }
            let n = (indices.len() / 3) as i64;
            Ok((
                Parsed::Sparse {
                    indices: Tensor::from_vec(indices, [n, 3].as_slice()).map_err(bad)?,
                    values: to_tensor(out, &[n])?,
                    dense_shape: Tensor::vector(&[batch, max_steps as i64, max_len as i64]),
                },
                None,
            ))
        }
        FeatureSpec::Ragged {
            dtype,
            value_key,
            partitions,
            row_splits_dtype,
        } => {
            if !partitions.is_empty() || value_key.as_deref().is_some_and(|k| k != key) {
                return Err(RecordsError::invalid(
                    "tensorcast: RaggedFeature partitions and value_key are not supported in sequence features",
                ));
            }
            let kind = kind_of(*dtype)?;
            let mut out = empty_values(kind);
            let mut outer = vec![0i64];
            let mut inner = vec![0i64];
            for (i, steps) in col.iter().enumerate() {
                let steps = match steps {
                    Some(s) => steps_of(s, kind, name_of(names, i), key)?,
                    None => Vec::new(),
                };
                for v in &steps {
                    let n = v.map_or(0, |v| v.len());
                    if let Some(v) = v {
                        extend(&mut out, v.as_vref(), 0..n);
                    }
                    inner.push(inner.last().copied().unwrap_or(0) + n as i64);
                }
                outer.push(outer.last().copied().unwrap_or(0) + steps.len() as i64);
            }
            let splits = |s: Vec<i64>| -> Result<Tensor> {
                let len = s.len() as i64;
                let t = if *row_splits_dtype == DataType::INT32 {
                    Tensor::from_vec(
                        s.into_iter().map(|x| x as i32).collect::<Vec<_>>(),
                        [len].as_slice(),
                    )
                } else {
                    Tensor::from_vec(s, [len].as_slice())
                };
                t.map_err(|e| RecordsError::invalid(e.to_string()))
            };
            let count = out.len() as i64;
            Ok((
                Parsed::Ragged {
                    flat_values: to_tensor(out, &[count])?,
                    row_splits: vec![splits(outer)?, splits(inner)?],
                },
                None,
            ))
        }
        FeatureSpec::FixedLen { .. } => Err(RecordsError::invalid(
            "a FixedLenFeature cannot be a sequence feature (use FixedLenSequenceFeature)",
        )),
    }
}
