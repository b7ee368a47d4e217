//! `ParseExampleV2`: serialized `tf.train.Example`s to tensors, the op `tf.io.parse_example`
//! and `tf.io.parse_single_example` put into a graph (with the `parse-example` feature, on
//! tensorcast-records' parser, which gives TensorFlow's results and error texts).
//!
//! The op's keys and attrs are turned back into the feature specs they came from: a dense key
//! whose `dense_shapes` entry starts with an unknown dim is a `FixedLenSequenceFeature`
//! (`allow_missing`), other dense keys are `FixedLenFeature`s (an empty default means
//! required), sparse keys are `VarLenFeature`s, ragged keys are `RaggedFeature`s of one level
//! (Python adds the partitions). A scalar `serialized` (`parse_single_example`) gives results
//! without the batch dim.

use tensorcast_core::PartialTensorShape;

use super::spec::op_def;
use super::{known, Entry, ShapeCtx};
use crate::attr;
use crate::error::Result;

/// The `dense_shapes` attr: one partial shape per dense key.
fn dense_shapes(attrs: &crate::attr::Attrs) -> Result<Vec<PartialTensorShape>> {
    match attrs.get("dense_shapes").and_then(|v| v.value.as_ref()) {
        Some(tensorcast_proto::attr_value::Value::List(l)) => {
            l.shape.iter().map(attr::partial_shape).collect()
        }
        _ => Ok(Vec::new()),
    }
}

/// Shapes: `[B] + shape` for dense results of a batch (the shape alone for a scalar input), and
/// what is fixed of the sparse and ragged results.
fn shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let batch: Option<Option<i64>> = match c.shape(0).dims() {
        Some([]) => Some(None),
        Some(d) if d.len() == 1 => Some(Some(d[0])),
        _ => None,
    };
    let num_sparse =
        usize::try_from(attr::get_int(c.attrs, "num_sparse").unwrap_or(0)).unwrap_or(0);
    let dense_shapes = dense_shapes(c.attrs)?;
    let num_dense = attr::get_types(c.attrs, "Tdense").map_or(0, |t| t.len());
    let num_ragged = attr::get_types(c.attrs, "ragged_value_types").map_or(0, |t| t.len());
    let rank = batch.map(|b| i64::from(b.is_some()) + 1);
    let mut out = Vec::with_capacity(c.out_types.len());
    out.extend((0..num_sparse).map(|_| rank.map(|r| vec![-1, r])));
    out.extend((0..num_sparse).map(|_| Some(vec![-1])));
    out.extend((0..num_sparse).map(|_| rank.map(|r| vec![r])));
    for i in 0..num_dense {
        let one = dense_shapes.get(i).and_then(|s| s.dims());
        out.push(match (batch, one) {
            (Some(None), s) => s.map(<[i64]>::to_vec),
            (Some(Some(b)), Some(s)) => Some(std::iter::once(b).chain(s.iter().copied()).collect()),
            _ => None,
        });
    }
    out.extend((0..num_ragged).map(|_| Some(vec![-1])));
    out.extend((0..num_ragged).map(|_| match batch {
        Some(Some(b)) if b >= 0 => Some(vec![b + 1]),
        _ => Some(vec![-1]),
    }));
    out.resize(c.out_types.len(), None);
    out.into_iter()
        .map(|d| d.map_or_else(|| Ok(PartialTensorShape::unknown_rank()), |d| known(&d)))
        .collect()
}

#[cfg(feature = "parse-example")]
mod kernel {
    use bytes::Bytes;
    use tensorcast_core::{Code, DataType, TString, Tensor};
    use tensorcast_records::{parse_example, FeatureSpec, Parsed};

    use super::super::{kernel_error, KernelCtx};
    use crate::attr;
    use crate::error::{Error, Result};

    fn invalid(message: String) -> Error {
        kernel_error(tensorcast_core::Error::Op {
            op: "ParseExampleV2",
            code: Code::InvalidArgument,
            message,
        })
    }

    fn strings<'t>(t: &'t Tensor, what: &str) -> Result<&'t [TString]> {
        t.as_slice::<TString>()
            .map_err(|_| invalid(format!("{what} must be a string tensor")))
    }

    fn keys(t: &Tensor, what: &str) -> Result<Vec<String>> {
        if t.dims() > 1 {
            return Err(invalid(format!(
                "Expected {what} to be a vector, got shape: {}",
                t.shape()
            )));
        }
        Ok(strings(t, what)?
            .iter()
            .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
            .collect())
    }

    fn types(c: &KernelCtx<'_>, name: &str) -> Vec<DataType> {
        attr::get_types(c.attrs, name).unwrap_or_default()
    }

    /// Drops the leading batch dim of size 1 (a scalar `serialized`).
    fn unbatch(t: Tensor) -> Result<Tensor> {
        let dims = t.shape().dim_sizes()[1..].to_vec();
        t.reshape(dims.as_slice()).map_err(kernel_error)
    }

    /// Drops the first column of `[n, rank]` sparse indices.
    fn drop_first_column(t: &Tensor) -> Result<Tensor> {
        let d = t.shape().dim_sizes();
        let (n, rank) = (d[0] as usize, d[1] as usize);
        let v = t.as_slice::<i64>().map_err(kernel_error)?;
        let mut out = Vec::with_capacity(n * rank.saturating_sub(1));
        for row in v.chunks(rank.max(1)) {
            out.extend_from_slice(&row[1..]);
        }
        Tensor::from_vec(out, [n as i64, rank as i64 - 1].as_slice()).map_err(kernel_error)
    }

    pub(super) fn run(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
        let serialized = &inputs[0];
        let scalar = match serialized.dims() {
            0 => true,
            1 => false,
            _ => {
                return Err(invalid(format!(
                    "Expected serialized to be a scalar or vector, got shape: {}",
                    serialized.shape()
                )))
            }
        };
        let batch: Vec<Bytes> = strings(serialized, "serialized")?
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect();
        let names = keys(&inputs[1], "names")?;
        if !names.is_empty() && names.len() != batch.len() {
            return Err(invalid(format!(
                "Expected len(names) == len(serialized), but got: {} vs. {}",
                names.len(),
                batch.len()
            )));
        }
        let sparse_keys = keys(&inputs[2], "sparse_keys")?;
        let dense_keys = keys(&inputs[3], "dense_keys")?;
        let ragged_keys = keys(&inputs[4], "ragged_keys")?;
        let defaults = &inputs[5..];
        let (sparse_types, dense_types) = (types(c, "sparse_types"), types(c, "Tdense"));
        let (ragged_types, split_types) = (
            types(c, "ragged_value_types"),
            types(c, "ragged_split_types"),
        );
        let dense_shapes = super::dense_shapes(c.attrs)?;
        let counts = [
            (
                "sparse_keys",
                sparse_keys.len(),
                "num_sparse",
                sparse_types.len(),
            ),
            (
                "dense_keys",
                dense_keys.len(),
                "len(dense_defaults)",
                defaults.len(),
            ),
            (
                "dense_keys",
                dense_keys.len(),
                "len(dense_shapes)",
                dense_shapes.len(),
            ),
            (
                "ragged_keys",
                ragged_keys.len(),
                "len(ragged_value_types)",
                ragged_types.len(),
            ),
            (
                "ragged_keys",
                ragged_keys.len(),
                "len(ragged_split_types)",
                split_types.len(),
            ),
        ];
        for (a, n, b, m) in counts {
            if n != m {
                return Err(invalid(format!(
                    "Expected len({a}) == {b}, but got {n} vs. {m}"
                )));
            }
        }
        let mut specs: Vec<(String, FeatureSpec)> = Vec::new();
        for (k, &dtype) in sparse_keys.iter().zip(&sparse_types) {
            specs.push((k.clone(), FeatureSpec::VarLen { dtype }));
        }
        for (i, k) in dense_keys.iter().enumerate() {
            let dtype = dense_types.get(i).copied().unwrap_or(DataType::FLOAT);
            let Some(dims) = dense_shapes[i].dims().map(<[i64]>::to_vec) else {
                return Err(invalid(format!(
                    "dense_shapes[{i}] for key {k} must have a known rank"
                )));
            };
            let default = (defaults[i].num_elements() > 0).then(|| defaults[i].clone());
            let spec = if dims.first() == Some(&-1) {
                FeatureSpec::FixedLenSequence {
                    shape: dims[1..].to_vec(),
                    dtype,
                    allow_missing: true,
                    default_value: default,
                }
            } else {
                if let Some(d) = dims.iter().position(|&d| d < 0) {
                    return Err(invalid(format!(
                        "dense_shapes[{i}] has unknown dim {d}: only the first dim of a variable-length feature may be unknown"
                    )));
                }
                FeatureSpec::FixedLen {
                    shape: dims,
                    dtype,
                    default_value: default,
                }
            };
            specs.push((k.clone(), spec));
        }
        for (i, k) in ragged_keys.iter().enumerate() {
            specs.push((
                k.clone(),
                FeatureSpec::Ragged {
                    dtype: ragged_types[i],
                    value_key: Some(k.clone()),
                    partitions: Vec::new(),
                    row_splits_dtype: split_types[i],
                },
            ));
        }
        let batch = if scalar {
            &batch[..1.min(batch.len())]
        } else {
            &batch[..]
        };
        let names = (!names.is_empty()).then_some(names.as_slice());
        let parsed = parse_example(batch, names, &specs).map_err(|e| {
            kernel_error(tensorcast_core::Error::Op {
                op: "ParseExampleV2",
                code: Code::InvalidArgument,
                message: e.to_string(),
            })
        })?;
        let n_sparse = sparse_keys.len();
        let (mut ind, mut val, mut shp) = (Vec::new(), Vec::new(), Vec::new());
        let (mut dense, mut rvals, mut rsplits) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (_, p)) in parsed.into_iter().enumerate() {
            match p {
                Parsed::Sparse {
                    indices,
                    values,
                    dense_shape,
                } => {
                    if scalar {
                        ind.push(drop_first_column(&indices)?);
                        let d = dense_shape.as_slice::<i64>().map_err(kernel_error)?;
                        shp.push(
                            Tensor::from_vec(d[1..].to_vec(), [d.len() as i64 - 1].as_slice())
                                .map_err(kernel_error)?,
                        );
                    } else {
                        ind.push(indices);
                        shp.push(dense_shape);
                    }
                    val.push(values);
                }
                Parsed::Dense(t) => dense.push(if scalar { unbatch(t)? } else { t }),
                Parsed::Ragged {
                    flat_values,
                    row_splits,
                } => {
                    rvals.push(flat_values);
                    let dtype = split_types[i - n_sparse - dense_keys.len()];
                    rsplits.push(match row_splits.into_iter().next() {
                        Some(s) if !scalar => s,
                        // A single example's ragged feature has no batch dim: no splits.
                        _ => Tensor::empty(dtype),
                    });
                }
            }
        }
        let mut out = ind;
        out.extend(val);
        out.extend(shp);
        out.extend(dense);
        out.extend(rvals);
        out.extend(rsplits);
        Ok(out)
    }
}

pub(super) fn entries() -> Vec<Entry> {
    vec![Entry {
        def: op_def("ParseExampleV2"),
        shape,
        #[cfg(feature = "parse-example")]
        kernel: Some(kernel::run),
        #[cfg(not(feature = "parse-example"))]
        kernel: None,
        fold: false,
        sized_by_values: false,
    }]
}
