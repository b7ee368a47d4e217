//! Tensors to Arrow arrays and back: element types, flat values, fixed-shape tensor columns.

use std::sync::Arc;

use arrow_array::types::{
    Float16Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type,
    UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, FixedSizeListArray,
    LargeBinaryArray, LargeStringArray, PrimitiveArray, StringArray, StringViewArray,
};
use arrow_buffer::{Buffer, ScalarBuffer};
use arrow_schema::{DataType as ArrowType, Field};
use tensorcast_core::{f16, DataType, Element, TString, Tensor};

use crate::error::{Error, Result};
use crate::meta::TensorType;

/// The Arrow type of a tensorcast dtype's elements: the numeric types as themselves, `bool`
/// as `Boolean`, `string` as `Binary` (TensorFlow's strings are bytes, not text).
///
/// # Errors
/// [`Error::Unsupported`] for dtypes Arrow has no type for (bfloat16, complex, the quantized
/// and float8 types, resources, variants).
pub fn arrow_type(dtype: DataType) -> Result<ArrowType> {
    Ok(match dtype {
        DataType::HALF => ArrowType::Float16,
        DataType::FLOAT => ArrowType::Float32,
        DataType::DOUBLE => ArrowType::Float64,
        DataType::INT8 => ArrowType::Int8,
        DataType::INT16 => ArrowType::Int16,
        DataType::INT32 => ArrowType::Int32,
        DataType::INT64 => ArrowType::Int64,
        DataType::UINT8 => ArrowType::UInt8,
        DataType::UINT16 => ArrowType::UInt16,
        DataType::UINT32 => ArrowType::UInt32,
        DataType::UINT64 => ArrowType::UInt64,
        DataType::BOOL => ArrowType::Boolean,
        DataType::STRING => ArrowType::Binary,
        d => {
            return Err(Error::Unsupported(format!(
                "Arrow has no type for {} elements (cast to float32, int32... first)",
                d.name()
            )))
        }
    })
}

fn numeric<T: arrow_array::ArrowPrimitiveType>(t: &Tensor) -> Result<ArrayRef> {
    let n = t.num_elements() as usize;
    let bytes = if n == 0 { &[][..] } else { t.tensor_data()? };
    let width = std::mem::size_of::<T::Native>();
    let buf = match t.buffer() {
        // Shared, not copied, where Arrow can view it (aligned for its values): the array
        // keeps the tensor's buffer alive.
        Some(b)
            if n > 0
                && b.len() == n * width
                && b.as_ptr().align_offset(std::mem::align_of::<T::Native>()) == 0 =>
        {
            Buffer::from(b.clone().into_bytes())
        }
        _ => Buffer::from_slice_ref(bytes),
    };
    Ok(Arc::new(PrimitiveArray::<T>::new(
        ScalarBuffer::new(buf, 0, n),
        None,
    )))
}

/// The elements of `t`, flattened row-major, as an Arrow array of [`arrow_type`]`(t.dtype())`
/// with no nulls: numbers share the tensor's buffer where it is aligned for them (no copy),
/// otherwise they are copied once into Arrow's aligned buffers.
///
/// # Errors
/// [`Error::Unsupported`] for dtypes Arrow lacks.
pub fn values_array(t: &Tensor) -> Result<ArrayRef> {
    Ok(match t.dtype() {
        DataType::HALF => numeric::<Float16Type>(t)?,
        DataType::FLOAT => numeric::<Float32Type>(t)?,
        DataType::DOUBLE => numeric::<Float64Type>(t)?,
        DataType::INT8 => numeric::<Int8Type>(t)?,
        DataType::INT16 => numeric::<Int16Type>(t)?,
        DataType::INT32 => numeric::<Int32Type>(t)?,
        DataType::INT64 => numeric::<Int64Type>(t)?,
        DataType::UINT8 => numeric::<UInt8Type>(t)?,
        DataType::UINT16 => numeric::<UInt16Type>(t)?,
        DataType::UINT32 => numeric::<UInt32Type>(t)?,
        DataType::UINT64 => numeric::<UInt64Type>(t)?,
        DataType::BOOL => Arc::new(BooleanArray::from(flat::<bool>(t)?.to_vec())),
        DataType::STRING => binary_values(flat::<TString>(t)?, i32::MAX as usize),
        d => {
            arrow_type(d)?;
            unreachable!("arrow_type accepts only the dtypes above")
        }
    })
}

/// Strings as `binary`, or as `large_binary` when their bytes pass `limit` (`binary`'s 32-bit
/// offsets hold at most `i32::MAX` bytes; arrow-rs panics past them).
fn binary_values(strings: &[TString], limit: usize) -> ArrayRef {
    let bytes = strings
        .iter()
        .fold(0usize, |n, s| n.saturating_add(s.as_bytes().len()));
    let values = strings.iter().map(TString::as_bytes);
    if bytes <= limit {
        Arc::new(BinaryArray::from_iter_values(values))
    } else {
        Arc::new(LargeBinaryArray::from_iter_values(values))
    }
}

fn flat<T: Element>(t: &Tensor) -> Result<&[T]> {
    if t.num_elements() == 0 {
        return Ok(&[]);
    }
    Ok(t.as_slice::<T>()?)
}

/// One column for a tensor whose first dimension is the rows: a rank-1 tensor becomes a plain
/// column of its elements, a tensor of rank 2 or more an `arrow.fixed_shape_tensor` column
/// whose rows are tensors of its remaining dimensions (`[n, 28, 28]`: `n` rows of `[28, 28]`).
///
/// # Errors
/// [`Error::Unsupported`] for a scalar (it has no rows) or a dtype Arrow lacks;
/// [`Error::Invalid`] when a row has too many elements for a fixed-size list.
pub fn tensor_column(name: &str, t: &Tensor) -> Result<(Field, ArrayRef)> {
    let dims = t.shape().dim_sizes();
    if dims.is_empty() {
        return Err(Error::Unsupported(format!(
            "tensor '{name}' is a scalar; Arrow columns hold rows, taken from a tensor's first \
             dimension (reshape it to [1])"
        )));
    }
    let values = values_array(t)?;
    if dims.len() == 1 {
        return Ok((Field::new(name, values.data_type().clone(), false), values));
    }
    let tt = TensorType::new(
        values.data_type().clone(),
        dims[1..].iter().map(|&d| d as usize).collect(),
    );
    let field = tt.field(name)?;
    let ArrowType::FixedSizeList(child, size) = field.data_type() else {
        unreachable!("TensorType::field makes a fixed-size list")
    };
    let list = FixedSizeListArray::try_new(child.clone(), *size, values, None)?;
    Ok((field, Arc::new(list)))
}

/// For each element of a tensor in logical order, the flat index of its value in physical
/// (stored) order: logical dimension `i` is physical dimension `perm[i]`.
fn logical_to_physical(shape: &[usize], perm: &[usize]) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let rank = shape.len();
    let mut stride = vec![1usize; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        stride[i] = stride[i + 1] * shape[i + 1];
    }
    let lshape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let lstride: Vec<usize> = perm.iter().map(|&p| stride[p]).collect();
    let mut idx = vec![0usize; rank];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(idx.iter().zip(&lstride).map(|(i, s)| i * s).sum());
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < lshape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// How the rows of a column read back: the element shape and, for a permuted tensor type, the
/// element order.
struct RowLayout {
    /// The shape of one row's tensor (logical).
    shape: Vec<usize>,
    /// Logical-to-physical element indices within a row, when permuted.
    map: Option<Vec<usize>>,
}

fn finish<T: Element + Clone>(values: Vec<T>, rows: usize, layout: &RowLayout) -> Result<Tensor> {
    let values = match &layout.map {
        Some(map) if !map.is_empty() => {
            let k = map.len();
            let mut out = Vec::with_capacity(values.len());
            for r in 0..rows {
                let row = &values[r * k..(r + 1) * k];
                out.extend(map.iter().map(|&i| row[i].clone()));
            }
            out
        }
        _ => values,
    };
    let mut shape = Vec::with_capacity(layout.shape.len() + 1);
    shape.push(rows as i64);
    shape.extend(layout.shape.iter().map(|&d| d as i64));
    Ok(Tensor::from_vec(values, shape)?)
}

fn prim<T: arrow_array::ArrowPrimitiveType>(a: &dyn Array) -> Vec<T::Native> {
    a.as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .map(|p| p.values().to_vec())
        .unwrap_or_default()
}

fn strings<'a>(it: impl Iterator<Item = Option<&'a [u8]>>) -> Vec<TString> {
    it.map(|s| TString::from(s.unwrap_or_default())).collect()
}

/// A tensor `[rows] + layout.shape` from the flat, null-free `values` of a column.
fn values_tensor(
    name: &str,
    values: &dyn Array,
    rows: usize,
    layout: &RowLayout,
) -> Result<Tensor> {
    if values.null_count() > 0 {
        return Err(Error::Unsupported(format!(
            "column '{name}' holds nulls, which a tensor cannot hold"
        )));
    }
    let any = values.as_any();
    macro_rules! p {
        ($t:ty) => {
            finish(prim::<$t>(values), rows, layout)
        };
    }
    match values.data_type() {
        ArrowType::Float16 => finish::<f16>(prim::<Float16Type>(values), rows, layout),
        ArrowType::Float32 => p!(Float32Type),
        ArrowType::Float64 => p!(Float64Type),
        ArrowType::Int8 => p!(Int8Type),
        ArrowType::Int16 => p!(Int16Type),
        ArrowType::Int32 => p!(Int32Type),
        ArrowType::Int64 => p!(Int64Type),
        ArrowType::UInt8 => p!(UInt8Type),
        ArrowType::UInt16 => p!(UInt16Type),
        ArrowType::UInt32 => p!(UInt32Type),
        ArrowType::UInt64 => p!(UInt64Type),
        ArrowType::Boolean => {
            let b = any
                .downcast_ref::<BooleanArray>()
                .map(|b| b.values().iter().collect());
            finish::<bool>(b.unwrap_or_default(), rows, layout)
        }
        ArrowType::Binary => {
            let a = any.downcast_ref::<BinaryArray>();
            finish(strings(a.into_iter().flatten()), rows, layout)
        }
        ArrowType::LargeBinary => {
            let a = any.downcast_ref::<LargeBinaryArray>();
            finish(strings(a.into_iter().flatten()), rows, layout)
        }
        ArrowType::BinaryView => {
            let a = any.downcast_ref::<BinaryViewArray>();
            finish(strings(a.into_iter().flatten()), rows, layout)
        }
        ArrowType::Utf8 => {
            let a = any.downcast_ref::<StringArray>();
            let it = a.into_iter().flatten().map(|s| s.map(str::as_bytes));
            finish(strings(it), rows, layout)
        }
        ArrowType::LargeUtf8 => {
            let a = any.downcast_ref::<LargeStringArray>();
            let it = a.into_iter().flatten().map(|s| s.map(str::as_bytes));
            finish(strings(it), rows, layout)
        }
        ArrowType::Utf8View => {
            let a = any.downcast_ref::<StringViewArray>();
            let it = a.into_iter().flatten().map(|s| s.map(str::as_bytes));
            finish(strings(it), rows, layout)
        }
        other => Err(Error::Unsupported(format!(
            "column '{name}': {other} values have no tensor dtype"
        ))),
    }
}

/// Whether `dtype` is a plain (non-nested) Arrow type that [`column_tensor`] reads.
pub(crate) fn is_flat_type(dtype: &ArrowType) -> bool {
    matches!(
        dtype,
        ArrowType::Float16
            | ArrowType::Float32
            | ArrowType::Float64
            | ArrowType::Int8
            | ArrowType::Int16
            | ArrowType::Int32
            | ArrowType::Int64
            | ArrowType::UInt8
            | ArrowType::UInt16
            | ArrowType::UInt32
            | ArrowType::UInt64
            | ArrowType::Boolean
            | ArrowType::Binary
            | ArrowType::LargeBinary
            | ArrowType::BinaryView
            | ArrowType::Utf8
            | ArrowType::LargeUtf8
            | ArrowType::Utf8View
    )
}

/// The tensor of a column: `[rows] + shape` for an `arrow.fixed_shape_tensor` column (its
/// logical shape: a permuted type's elements are reordered as pyarrow's `to_numpy_ndarray`
/// gives them), `[rows]` for a plain column of numbers, booleans or strings (binary and
/// text both become `string`), and `[rows, k1, k2...]` for nested fixed-size lists (Polars'
/// `Array` columns).
///
/// # Errors
/// [`Error::Unsupported`] for nulls and for columns of other types (variable-length lists are
/// read by [`crate::batch_to_tensors`]); [`Error::Invalid`] for bad extension metadata.
pub fn column_tensor(field: &Field, array: &dyn Array) -> Result<Tensor> {
    let name = field.name();
    if array.data_type() != field.data_type() {
        return Err(Error::Invalid(format!(
            "column '{name}': its data is {} and its field says {}",
            array.data_type(),
            field.data_type()
        )));
    }
    if array.null_count() > 0 {
        return Err(Error::Unsupported(format!(
            "column '{name}' holds nulls, which a tensor cannot hold"
        )));
    }
    let rows = array.len();
    if let Some(tt) = TensorType::of_field(field)? {
        let list = array
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .ok_or_else(|| Error::Invalid(format!("column '{name}' is not a fixed-size list")))?;
        let k = tt.list_size()? as usize;
        let values = list.values().slice(0, rows * k);
        let map = tt
            .permutation
            .as_ref()
            .map(|p| logical_to_physical(&tt.shape, p));
        let layout = RowLayout {
            shape: tt.logical_shape(),
            map,
        };
        return values_tensor(name, &values, rows, &layout);
    }
    let mut shape = Vec::new();
    let mut values: ArrayRef = array.slice(0, rows);
    let mut total = rows;
    while let Some(list) = values.as_any().downcast_ref::<FixedSizeListArray>() {
        if list.null_count() > 0 {
            return Err(Error::Unsupported(format!(
                "column '{name}' holds null lists, which a tensor cannot hold"
            )));
        }
        let k = list.value_length() as usize;
        shape.push(k);
        total = total
            .checked_mul(k)
            .ok_or_else(|| Error::Invalid(format!("column '{name}': too many elements")))?;
        let inner = list.values().slice(0, total.min(list.values().len()));
        values = inner;
    }
    if !is_flat_type(values.data_type()) {
        return Err(Error::Unsupported(format!(
            "column '{name}' is {}, which is not a tensor column (numbers, booleans, strings, \
             {} or fixed-size lists of them)",
            field.data_type(),
            crate::FIXED_SHAPE_TENSOR
        )));
    }
    if values.len() != total {
        return Err(Error::Invalid(format!(
            "column '{name}': {} values for {total} elements",
            values.len()
        )));
    }
    values_tensor(name, &values, rows, &RowLayout { shape, map: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_past_binarys_offsets_are_large_binary() {
        let strings: Vec<TString> = ["ab", "cde", ""]
            .iter()
            .map(|s| TString::from(*s))
            .collect();
        let small = binary_values(&strings, 5);
        assert_eq!(small.data_type(), &ArrowType::Binary);
        let large = binary_values(&strings, 4);
        assert_eq!(large.data_type(), &ArrowType::LargeBinary);
        let a = large.as_any().downcast_ref::<LargeBinaryArray>().unwrap();
        assert_eq!(a.value(1), b"cde");
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn permutation_maps_as_numpy_transpose() {
        // physical [2,3], permutation [1,0]: logical [3,2] = physical.T
        assert_eq!(
            logical_to_physical(&[2, 3], &[1, 0]),
            vec![0, 3, 1, 4, 2, 5]
        );
        assert_eq!(
            logical_to_physical(&[2, 3], &[0, 1]),
            vec![0, 1, 2, 3, 4, 5]
        );
        assert_eq!(logical_to_physical(&[], &[]), vec![0]);
    }

    #[test]
    fn tensors_round_trip_through_columns() {
        let t = Tensor::from_vec((0..24).map(|x| x as f32).collect(), [2i64, 3, 4]).unwrap();
        let (f, a) = tensor_column("x", &t).unwrap();
        assert_eq!(column_tensor(&f, &a).unwrap(), t);
        let s = Tensor::from_vec(
            vec![TString::from("a"), TString::from(&b"\xff"[..])],
            [2i64],
        )
        .unwrap();
        let (f, a) = tensor_column("s", &s).unwrap();
        assert_eq!(f.data_type(), &ArrowType::Binary);
        assert_eq!(column_tensor(&f, &a).unwrap(), s);
        let b = Tensor::from_vec(vec![true, false, true, true], [2i64, 2]).unwrap();
        let (f, a) = tensor_column("b", &b).unwrap();
        assert_eq!(column_tensor(&f, &a).unwrap(), b);
        let e = Tensor::from_vec(Vec::<i64>::new(), [0i64, 3]).unwrap();
        let (f, a) = tensor_column("e", &e).unwrap();
        assert_eq!(column_tensor(&f, &a).unwrap(), e);
        let scalar = Tensor::scalar_of(1.0f32);
        assert!(tensor_column("s", &scalar).is_err());
        let bf = Tensor::from_vec(vec![tensorcast_core::bf16::ONE], [1i64]).unwrap();
        assert!(matches!(
            tensor_column("b", &bf),
            Err(Error::Unsupported(_))
        ));
    }
}
