//! Record batches of tensors and of parsed Examples, and tensors back from record batches.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, GenericListArray, RecordBatch, RecordBatchOptions};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType as ArrowType, Field, Schema};
use tensorcast_core::{DataType, Tensor};
use tensorcast_records::Parsed;

use crate::convert::{column_tensor, tensor_column, values_array};
use crate::error::{Error, Result};

fn batch(fields: Vec<Field>, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &options,
    )?)
}

/// A record batch with one column per tensor, the rows taken from the tensors' first
/// dimension (see [`tensor_column`]): `x` `[n, 28, 28]` float32 and `y` `[n]` int64 give `n`
/// rows of an `arrow.fixed_shape_tensor<float, [28, 28]>` column and an `int64` column.
///
/// # Errors
/// [`Error::Invalid`] when the tensors' first dimensions differ; [`Error::Unsupported`] for a
/// scalar or a dtype Arrow lacks.
pub fn tensors_to_batch<'a>(
    tensors: impl IntoIterator<Item = (&'a str, &'a Tensor)>,
) -> Result<RecordBatch> {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    let mut rows: Option<(usize, String)> = None;
    for (name, t) in tensors {
        let (f, a) = tensor_column(name, t)?;
        match &rows {
            Some((n, first)) if *n != a.len() => {
                return Err(Error::Invalid(format!(
                    "the columns of an Arrow table have one row count, taken from each \
                     tensor's first dimension: '{first}' has {n} rows and '{name}' has {}",
                    a.len()
                )))
            }
            Some(_) => {}
            None => rows = Some((a.len(), name.to_string())),
        }
        fields.push(f);
        columns.push(a);
    }
    batch(fields, columns, rows.map_or(0, |r| r.0))
}

fn i64_values(t: &Tensor, what: &str) -> Result<Vec<i64>> {
    Ok(match t.dtype() {
        DataType::INT64 => t.as_slice::<i64>().map(<[i64]>::to_vec).unwrap_or_default(),
        DataType::INT32 => t
            .as_slice::<i32>()
            .map(|s| s.iter().map(|&x| x as i64).collect())
            .unwrap_or_default(),
        d => {
            return Err(Error::Invalid(format!(
                "{what} are {}, not int32 or int64",
                d.name()
            )))
        }
    })
}

/// A list array over `values` with `splits` (monotonic, from 0 to `values.len()`).
fn list(name: &str, values: ArrayRef, splits: &[i64]) -> Result<ArrayRef> {
    let bad = || Error::Invalid(format!("feature '{name}': bad row splits"));
    if splits.first() != Some(&0)
        || splits.last().copied() != Some(values.len() as i64)
        || splits.windows(2).any(|w| w[0] > w[1])
    {
        return Err(bad());
    }
    let field = Arc::new(Field::new("item", values.data_type().clone(), false));
    if values.len() <= i32::MAX as usize {
        let offsets: Vec<i32> = splits.iter().map(|&s| s as i32).collect();
        Ok(Arc::new(GenericListArray::<i32>::try_new(
            field,
            OffsetBuffer::new(offsets.into()),
            values,
            None,
        )?))
    } else {
        Ok(Arc::new(GenericListArray::<i64>::try_new(
            field,
            OffsetBuffer::new(splits.to_vec().into()),
            values,
            None,
        )?))
    }
}

/// The column of one parsed feature and its row count.
fn parsed_column(name: &str, p: &Parsed) -> Result<(Field, ArrayRef)> {
    match p {
        Parsed::Dense(t) => tensor_column(name, t),
        Parsed::Sparse {
            indices,
            values,
            dense_shape,
        } => {
            let shape = i64_values(dense_shape, "dense_shape values")?;
            if shape.len() != 2 {
                return Err(Error::Unsupported(format!(
                    "feature '{name}': a sparse result of rank {} (VarLenFeature gives rank 2)",
                    shape.len()
                )));
            }
            let rows = usize::try_from(shape[0])
                .map_err(|_| Error::Invalid(format!("feature '{name}': bad dense_shape")))?;
            let idx = i64_values(indices, "indices")?;
            let n = values.num_elements() as usize;
            if idx.len() != 2 * n {
                return Err(Error::Invalid(format!(
                    "feature '{name}': {} indices for {n} values",
                    idx.len() / 2
                )));
            }
            // Rows of a VarLenFeature's result come in order: count the values of each.
            let mut splits = vec![0i64; rows + 1];
            let mut last = 0i64;
            for pair in idx.chunks_exact(2) {
                let r = pair[0];
                if r < last || r >= rows as i64 {
                    return Err(Error::Invalid(format!(
                        "feature '{name}': sparse indices out of row order"
                    )));
                }
                last = r;
                splits[r as usize + 1] += 1;
            }
            for i in 0..rows {
                splits[i + 1] += splits[i];
            }
            let a = list(name, values_array(values)?, &splits)?;
            Ok((Field::new(name, a.data_type().clone(), false), a))
        }
        Parsed::Ragged {
            flat_values,
            row_splits,
        } => {
            if flat_values.dims() != 1 {
                return Err(Error::Unsupported(format!(
                    "feature '{name}': ragged flat values of rank {}",
                    flat_values.dims()
                )));
            }
            if row_splits.is_empty() {
                return Err(Error::Invalid(format!("feature '{name}': no row splits")));
            }
            let mut a = values_array(flat_values)?;
            for s in row_splits.iter().rev() {
                a = list(name, a, &i64_values(s, "row splits")?)?;
            }
            Ok((Field::new(name, a.data_type().clone(), false), a))
        }
    }
}

/// A record batch of parsed Examples (the output of [`tensorcast_records::parse_example`]),
/// one row per Example and one column per feature:
/// - a `FixedLenFeature` (or `FixedLenSequenceFeature`) of shape `[]` as a plain column, of
///   any other shape as an `arrow.fixed_shape_tensor` column of that shape;
/// - a `VarLenFeature` as a list column (`list<float>`, `list<int64>`, `list<binary>`), each
///   row the Example's values;
/// - a `RaggedFeature` as (nested) list columns, one level per row partition;
/// - strings as `binary` (TensorFlow's strings are bytes).
///
/// ```
/// use bytes::Bytes;
/// use tensorcast_core::DataType;
/// use tensorcast_proto::example::{feature::Kind, Example, Feature, Features, FloatList};
/// use tensorcast_proto::Message;
/// use tensorcast_records::{parse_example, FeatureSpec};
///
/// let example = |v: Vec<f32>| {
///     let mut f = Features::default();
///     let list = Feature { kind: Some(Kind::FloatList(FloatList { value: v })) };
///     f.feature.insert("x".into(), list);
///     Bytes::from(Example { features: Some(f) }.encode_to_vec())
/// };
/// let serialized = vec![example(vec![1.0, 2.0]), example(vec![3.0, 4.0])];
/// let specs = vec![
///     ("x".to_string(), FeatureSpec::FixedLen { shape: vec![2], dtype: DataType::FLOAT, default_value: None }),
///     ("v".to_string(), FeatureSpec::VarLen { dtype: DataType::FLOAT }),
/// ];
/// let parsed = parse_example(&serialized, None, &specs)?;
/// let batch = tensorcast_arrow::parsed_to_batch(&parsed)?;
/// assert_eq!(batch.num_rows(), 2);
/// assert_eq!(batch.schema().field(0).metadata()["ARROW:extension:name"], "arrow.fixed_shape_tensor");
/// use tensorcast_arrow::arrow_schema::DataType as ArrowType;
/// let v = batch.schema().field(1).data_type().clone();
/// assert!(matches!(v, ArrowType::List(f) if f.data_type() == &ArrowType::Float32));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::Invalid`] when the features disagree on the number of rows or a result is
/// malformed; [`Error::Unsupported`] for shapes Arrow cannot hold.
pub fn parsed_to_batch(parsed: &[(String, Parsed)]) -> Result<RecordBatch> {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    let mut rows: Option<(usize, &str)> = None;
    for (name, p) in parsed {
        let (f, a) = parsed_column(name, p)?;
        match rows {
            Some((n, first)) if n != a.len() => {
                return Err(Error::Invalid(format!(
                    "features '{first}' and '{name}' have {n} and {} rows",
                    a.len()
                )))
            }
            Some(_) => {}
            None => rows = Some((a.len(), name)),
        }
        fields.push(f);
        columns.push(a);
    }
    batch(fields, columns, rows.map_or(0, |r| r.0))
}

/// The tensors of a record batch, one per column of a tensor type (see [`column_tensor`]); a
/// (nested) variable-length list column, as [`parsed_to_batch`] writes for `VarLenFeature`s
/// and `RaggedFeature`s, becomes a ragged tensor's parts as the CLI names them:
/// `name.flat_values` and `name.row_splits.0`, `.1`... (int64).
///
/// # Errors
/// [`Error::Unsupported`] for columns of other types or with nulls.
pub fn batch_to_tensors(batch: &RecordBatch) -> Result<Vec<(String, Tensor)>> {
    let schema = batch.schema();
    let mut out = Vec::new();
    for (field, col) in schema.fields().iter().zip(batch.columns()) {
        let name = field.name();
        let is_list = matches!(
            field.data_type(),
            ArrowType::List(_) | ArrowType::LargeList(_)
        ) && crate::meta::TensorType::of_field(field)?.is_none();
        if !is_list {
            out.push((name.clone(), column_tensor(field, col.as_ref())?));
            continue;
        }
        let mut splits = Vec::new();
        let mut a: ArrayRef = col.clone();
        loop {
            if a.null_count() > 0 {
                return Err(Error::Unsupported(format!(
                    "column '{name}' holds null lists, which a tensor cannot hold"
                )));
            }
            let (s, values) = if let Some(l) = a.as_any().downcast_ref::<GenericListArray<i32>>() {
                let o = l.value_offsets();
                let base = o.first().copied().unwrap_or(0);
                let end = o.last().copied().unwrap_or(0);
                let s: Vec<i64> = o.iter().map(|&x| (x - base) as i64).collect();
                (s, l.values().slice(base as usize, (end - base) as usize))
            } else if let Some(l) = a.as_any().downcast_ref::<GenericListArray<i64>>() {
                let o = l.value_offsets();
                let base = o.first().copied().unwrap_or(0);
                let end = o.last().copied().unwrap_or(0);
                let s: Vec<i64> = o.iter().map(|&x| x - base).collect();
                (s, l.values().slice(base as usize, (end - base) as usize))
            } else {
                break;
            };
            let n = s.len() as i64;
            splits.push(Tensor::from_vec(s, [n])?);
            a = values;
        }
        let flat_field = Field::new(name.clone(), a.data_type().clone(), true);
        out.push((
            format!("{name}.flat_values"),
            column_tensor(&flat_field, a.as_ref())?,
        ));
        for (i, s) in splits.into_iter().enumerate() {
            out.push((format!("{name}.row_splits.{i}"), s));
        }
    }
    Ok(out)
}
