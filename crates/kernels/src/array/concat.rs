//! `ConcatV2`, `Pack`, `Unpack`, `Split`, `SplitV`.

use std::ops::Range;

use tensorcast_core::{DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{
    canonical_axis, dt, index_values, invalid, no_kernel, partial, partial_text, INT32_64,
};
use super::engine::{dense_strides, produce, strided, Elem, Kernel, Sink, StridedView};

fn sub_byte(d: DataType) -> bool {
    d == DataType::INT4 || d == DataType::UINT4
}

/// Concatenation of per-input pieces: each unit (an outer index) is input `k`'s
/// `pieces[k]` elements at that index, for every `k` in order.
struct Pieces {
    pieces: Vec<usize>,
}

impl Kernel for Pieces {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        for r in units {
            for (src, &p) in inputs.iter().zip(&self.pieces) {
                if p > 0 {
                    sink.slice(&src[r * p..(r + 1) * p]);
                }
            }
        }
    }
}

/// Joins `values` (same dtype) along `axis` of `out_dims`, input `k` contributing `pieces[k]`
/// elements per outer index.
fn join(
    op: &'static str,
    values: &[&Tensor],
    out_dims: &[i64],
    outer: usize,
    pieces: Vec<usize>,
) -> Result<Tensor> {
    let shape = TensorShape::new(out_dims)?;
    let unit: usize = pieces.iter().sum();
    if unit == 0 || outer == 0 {
        return Tensor::new(values[0].dtype(), &shape);
    }
    let dtype = values[0].dtype();
    produce(op, dtype, &shape, values, unit, &Pieces { pieces })
}

fn same_dtype(op: &'static str, values: &[&Tensor]) -> Result<DataType> {
    let Some(first) = values.first() else {
        return Err(invalid(op, "expected at least one input"));
    };
    for (i, v) in values.iter().enumerate() {
        Error::check_input_type(op, i, first.dtype(), v.dtype())?;
    }
    Ok(first.dtype())
}

/// TensorFlow's `ConcatV2`: `values` joined along `axis` (an `int32`/`int64` scalar or
/// one-element vector, negative counting from the end). Exact bits, every dtype TensorFlow's
/// CPU kernel registers (all but `int4`/`uint4`).
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::concat_v2;
/// let a = Tensor::from_vec(vec![1i32, 2], &[2i64, 1])?;
/// let b = Tensor::from_vec(vec![3i32, 4, 5, 6], &[2i64, 2])?;
/// let c = concat_v2(&[&a, &b], &Tensor::from(-1i32))?;
/// assert_eq!(c.to_vec::<i32>()?, vec![1, 3, 4, 2, 5, 6]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's `ConcatOp : ...` texts (axis range, scalars, ranks, dims); a dtype without a
/// kernel (`NOT_FOUND`).
pub fn concat_v2(values: &[&Tensor], axis: &Tensor) -> Result<Tensor> {
    const OP: &str = "ConcatV2";
    let dtype = same_dtype(OP, values)?;
    let a = index_values(OP, "Tidx", axis, INT32_64)?;
    if sub_byte(dtype) {
        return Err(no_kernel(
            OP,
            &format!(
                "N={}, T={}, Tidx={}",
                values.len(),
                dt(dtype),
                dt(axis.dtype())
            ),
        ));
    }
    if a.len() != 1 {
        return Err(invalid(
            OP,
            format!(
                "Concat dim tensor should be a scalar integer, but got shape {}",
                axis.shape()
            ),
        ));
    }
    let concat_dim = a[0];
    let first = values[0].shape();
    let rank = first.rank();
    if rank == 0 {
        return Err(invalid(
            OP,
            "ConcatOp : Can't concatenate scalars (use tf.stack instead)",
        ));
    }
    let Some(ax) = canonical_axis(concat_dim, rank) else {
        return Err(invalid(
            OP,
            format!(
                "ConcatOp : Expected concatenating dimensions in the range [{}, {rank}), but got {concat_dim}",
                -(rank as i64)
            ),
        ));
    };
    let mut total = 0i64;
    for (i, v) in values.iter().enumerate() {
        let s = v.shape();
        if s.rank() != rank {
            return Err(invalid(
                OP,
                format!(
                    "ConcatOp : Ranks of all input tensors should match: shape[0] = {first} vs. shape[{i}] = {s}"
                ),
            ));
        }
        for j in 0..rank {
            if j != ax && s.dim_sizes()[j] != first.dim_sizes()[j] {
                return Err(invalid(
                    OP,
                    format!(
                        "ConcatOp : Dimension {j} in both shapes must be equal: shape[0] = {first} vs. shape[{i}] = {s}"
                    ),
                ));
            }
        }
        total += s.dim_sizes()[ax];
    }
    let mut out = first.dim_sizes().to_vec();
    out[ax] = total;
    let outer: usize = first.dim_sizes()[..ax]
        .iter()
        .map(|&d| d as usize)
        .product();
    let pieces = values
        .iter()
        .map(|v| {
            v.shape().dim_sizes()[ax..]
                .iter()
                .map(|&d| d as usize)
                .product()
        })
        .collect();
    join(OP, values, &out, outer, pieces)
}

/// `ConcatV2`'s shape function: the inputs' dims merged, the axis dims summed (unknown where
/// one is); with the axis unknown, a shape of the common rank with unknown dims.
///
/// # Errors
/// TensorFlow's texts: `Can't concatenate scalars (use tf.stack instead)`, `Shape must be rank
/// R but is rank S`, `Dimension D in both shapes must be equal, but are A and B. Shapes are
/// [..] and [..].`, `Expected concatenating dimensions in the range [-R, R), but got A`.
pub fn concat_v2_shape(
    values: &[&PartialTensorShape],
    axis: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "ConcatV2";
    let mut rank: Option<usize> = None;
    for v in values {
        if let Some(r) = v.rank() {
            if r == 0 {
                return Err(invalid(
                    OP,
                    "Can't concatenate scalars (use tf.stack instead)",
                ));
            }
            if let Some(want) = rank {
                if want != r {
                    return Err(invalid(
                        OP,
                        format!("Shape must be rank {want} but is rank {r}"),
                    ));
                }
            }
            rank = Some(r);
        }
    }
    let Some(rank) = rank else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let Some(axis) = axis else {
        // Unknown axis: the dims can only be merged where they are all known and equal.
        return partial(Some(vec![-1; rank]));
    };
    let a = index_values(OP, "Tidx", axis, INT32_64)?
        .first()
        .copied()
        .unwrap_or(0);
    let Some(ax) = canonical_axis(a, rank) else {
        let need = if a < 0 {
            a.saturating_neg()
        } else {
            a.saturating_add(1)
        };
        return Err(invalid(
            OP,
            format!("Shape must be at least rank {need} but is rank {rank}"),
        ));
    };
    // TensorFlow merges the dims before the axis and those after it as two sub-shapes (its
    // messages name the sub-shapes), and sums the axis dims.
    let mut before: Option<PartialTensorShape> = None;
    let mut after: Option<PartialTensorShape> = None;
    let mut sum: i64 = 0;
    for v in values {
        let Some(d) = v.dims() else {
            sum = -1;
            continue;
        };
        if sum >= 0 {
            sum = if d[ax] < 0 { -1 } else { sum + d[ax] };
        }
        let b = PartialTensorShape::new(&d[..ax])?;
        let f = PartialTensorShape::new(&d[ax + 1..])?;
        before = Some(match before {
            None => b,
            Some(cur) => merge(OP, &cur, &b)?,
        });
        after = Some(match after {
            None => f,
            Some(cur) => merge(OP, &cur, &f)?,
        });
    }
    let mut o: Vec<i64> = match &before {
        Some(b) => b.dims().unwrap_or_default().to_vec(),
        None => vec![-1; ax],
    };
    o.push(sum);
    match &after {
        Some(f) => o.extend_from_slice(f.dims().unwrap_or_default()),
        None => o.extend(std::iter::repeat_n(-1, rank - ax - 1)),
    }
    partial(Some(o))
}

/// TensorFlow's `Pack` (`tf.stack`): `values` (same shape and dtype) stacked along a new axis
/// `axis` in `[-(R+1), R+1)`. Every dtype but `int4`/`uint4`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::pack;
/// let a = Tensor::vector(&[1.0f32, 2.0]);
/// let b = Tensor::vector(&[3.0f32, 4.0]);
/// assert_eq!(pack(&[&a, &b], 1)?.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `axis = A not in [-R, R)`, `Shapes of all inputs must match:
/// values[0].shape = [..] != values[i].shape = [..]`; no kernel (`NOT_FOUND`).
pub fn pack(values: &[&Tensor], axis: i64) -> Result<Tensor> {
    const OP: &str = "Pack";
    let dtype = same_dtype(OP, values)?;
    if sub_byte(dtype) {
        return Err(no_kernel(
            OP,
            &format!("N={}, T={}, axis={axis}", values.len(), dt(dtype)),
        ));
    }
    let first = values[0].shape();
    let expanded = first.rank() + 1;
    let Some(ax) = canonical_axis(axis, expanded) else {
        return Err(invalid(
            OP,
            format!("axis = {axis} not in [{}, {expanded})", -(expanded as i64)),
        ));
    };
    for (i, v) in values.iter().enumerate() {
        if v.shape() != first {
            return Err(invalid(
                OP,
                format!(
                    "Shapes of all inputs must match: values[0].shape = {first} != values[{i}].shape = {}",
                    v.shape()
                ),
            ));
        }
    }
    let mut out = first.dim_sizes().to_vec();
    out.insert(ax, values.len() as i64);
    let outer: usize = first.dim_sizes()[..ax]
        .iter()
        .map(|&d| d as usize)
        .product();
    let piece: usize = first.dim_sizes()[ax..]
        .iter()
        .map(|&d| d as usize)
        .product();
    join(OP, values, &out, outer, vec![piece; values.len()])
}

/// `Pack`'s shape function: the inputs' shapes merged, with `values.len()` inserted at `axis`.
///
/// # Errors
/// `Shapes must be equal rank, but are R and S`, `Dimension D in both shapes must be equal,
/// but are A and B. Shapes are [..] and [..].`, `Invalid axis: A; must be in [-R, R)`.
pub fn pack_shape(values: &[&PartialTensorShape], axis: i64) -> Result<PartialTensorShape> {
    const OP: &str = "Pack";
    let mut cur = PartialTensorShape::unknown_rank();
    for (i, v) in values.iter().enumerate() {
        cur = merge(OP, &cur, v).map_err(|e| {
            invalid(
                OP,
                format!(
                    "{e}\n\tFrom merging shape {} with other shapes.",
                    i.saturating_sub(1)
                ),
            )
        })?;
    }
    let Some(d) = cur.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let expanded = d.len() + 1;
    let Some(ax) = canonical_axis(axis, expanded) else {
        return Err(invalid(
            OP,
            format!(
                "Invalid axis: {axis}; must be in [{},{expanded})",
                -(expanded as i64)
            ),
        ));
    };
    let mut o = d.to_vec();
    o.insert(ax, values.len() as i64);
    partial(Some(o))
}

/// TensorFlow's `Merge` of two partial shapes, with its texts.
pub(crate) fn merge(
    op: &'static str,
    a: &PartialTensorShape,
    b: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    let (Some(x), Some(y)) = (a.dims(), b.dims()) else {
        return Ok(if a.rank().is_some() {
            a.clone()
        } else {
            b.clone()
        });
    };
    if x.len() != y.len() {
        return Err(invalid(
            op,
            format!(
                "Shapes must be equal rank, but are {} and {}",
                x.len(),
                y.len()
            ),
        ));
    }
    let mut o = x.to_vec();
    for j in 0..x.len() {
        match (x[j], y[j]) {
            (p, q) if p >= 0 && q >= 0 && p != q => {
                return Err(invalid(
                    op,
                    format!(
                        "Dimension {j} in both shapes must be equal, but are {p} and {q}. Shapes are {} and {}.",
                        partial_text(a),
                        partial_text(b)
                    ),
                ))
            }
            (p, q) if p < 0 => o[j] = q,
            _ => {}
        }
    }
    partial(Some(o))
}

/// The `i`-th slice of `value` along `axis` (that axis dropped): a view of the input's buffer
/// when it is one dense run.
fn take(
    op: &'static str,
    value: &Tensor,
    axis: usize,
    range: Range<i64>,
    keep: bool,
) -> Result<Tensor> {
    let dims = value.shape().dims_usize();
    let strides = dense_strides(&dims);
    let mut out = dims.clone();
    out[axis] = (range.end - range.start) as usize;
    let offset = range.start as usize * strides[axis] as usize;
    let view = StridedView::new(&out, &strides, offset);
    let mut shape_dims: Vec<i64> = out.iter().map(|&d| d as i64).collect();
    if !keep {
        shape_dims.remove(axis);
    }
    strided(op, value, &TensorShape::new(&shape_dims)?, &view)
}

/// TensorFlow's `Unpack` (`tf.unstack`): the `num` slices of `value` along `axis`. Slices that
/// are dense runs of the input (axis 0, or only size-1 axes before it) share its buffer.
/// Every dtype but the quantized ones and `int4`/`uint4`.
///
/// # Errors
/// `axis = A not in [-R, R)`, `Input shape axis A must equal N, got shape [..]`; no kernel
/// (`NOT_FOUND`).
pub fn unpack(value: &Tensor, num: i64, axis: i64) -> Result<Vec<Tensor>> {
    const OP: &str = "Unpack";
    let dtype = value.dtype();
    if dtype.is_quantized() || sub_byte(dtype) {
        return Err(no_kernel(
            OP,
            &format!("T={}, axis={axis}, num={num}", dt(dtype)),
        ));
    }
    let rank = value.dims();
    let Some(ax) = canonical_axis(axis, rank) else {
        return Err(invalid(
            OP,
            format!("axis = {axis} not in [{}, {rank})", -(rank as i64)),
        ));
    };
    if value.shape().dim_sizes()[ax] != num {
        return Err(invalid(
            OP,
            format!(
                "Input shape axis {ax} must equal {num}, got shape {}",
                value.shape()
            ),
        ));
    }
    (0..num)
        .map(|i| take(OP, value, ax, i..i + 1, false))
        .collect()
}

/// `Unpack`'s shape function: `num` outputs of the shape without `axis`.
///
/// # Errors
/// `Invalid axis: A; must be in [-R, R)`, `Dimension must be N but is M`.
pub fn unpack_shape(
    value: &PartialTensorShape,
    num: i64,
    axis: i64,
) -> Result<Vec<PartialTensorShape>> {
    const OP: &str = "Unpack";
    let Some(d) = value.dims() else {
        return Ok(vec![
            PartialTensorShape::unknown_rank();
            num.max(0) as usize
        ]);
    };
    let Some(ax) = canonical_axis(axis, d.len()) else {
        return Err(invalid(
            OP,
            format!(
                "Invalid axis: {axis}; must be in [{},{})",
                -(d.len() as i64),
                d.len()
            ),
        ));
    };
    if d[ax] >= 0 && d[ax] != num {
        return Err(invalid(
            OP,
            format!("Dimension must be {num} but is {}", d[ax]),
        ));
    }
    let mut o = d.to_vec();
    o.remove(ax);
    Ok(vec![partial(Some(o))?; num.max(0) as usize])
}

fn split_dim_error(rank: usize, dim: i64) -> String {
    format!("-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {dim}")
}

/// TensorFlow's `Split`: `value` cut into `num_split` equal parts along `axis` (an `int32`
/// scalar). Parts that are dense runs of the input share its buffer. Every dtype but `qint8`,
/// `qint16`, `quint16`, `qint32`.
///
/// # Errors
/// `split_dim must be a scalar but has rank R`, `-input rank(-R) <= split_dim < input rank
/// (R), but got A`, `Number of ways to split should evenly divide the split dimension, but got
/// split_dim A (size = S) and num_split N`; no kernel (`NOT_FOUND`).
pub fn split(axis: &Tensor, value: &Tensor, num_split: i64) -> Result<Vec<Tensor>> {
    const OP: &str = "Split";
    let dtype = value.dtype();
    if dtype.is_quantized() && dtype != DataType::QUINT8 {
        return Err(no_kernel(
            OP,
            &format!("T={}, num_split={num_split}", dt(dtype)),
        ));
    }
    Error::check_input_type(OP, 0, DataType::INT32, axis.dtype())?;
    if axis.dims() != 0 {
        return Err(invalid(
            OP,
            format!("split_dim must be a scalar but has rank {}", axis.dims()),
        ));
    }
    let a = index_values(OP, "T", axis, INT32_64)?[0];
    let rank = value.dims();
    let Some(ax) = canonical_axis(a, rank) else {
        return Err(invalid(OP, split_dim_error(rank, a)));
    };
    let size = value.shape().dim_sizes()[ax];
    if num_split <= 0 || size % num_split != 0 {
        return Err(invalid(
            OP,
            format!(
                "Number of ways to split should evenly divide the split dimension, but got split_dim {ax} (size = {size}) and num_split {num_split}"
            ),
        ));
    }
    if num_split == 1 {
        return Ok(vec![value.clone()]);
    }
    let part = size / num_split;
    (0..num_split)
        .map(|i| take(OP, value, ax, i * part..(i + 1) * part, true))
        .collect()
}

/// What both splits' shape functions start from: the value's dims and the split axis
/// (`Ok`), or, where the rank or the axis is not known, the `num_split` outputs already
/// (`Err`).
#[allow(
    clippy::type_complexity,
    reason = "one use per split, read where it is matched"
)]
fn split_axis<'a>(
    op: &'static str,
    value: &'a PartialTensorShape,
    axis: Option<&Tensor>,
    num_split: i64,
) -> Result<Result<(&'a [i64], usize), Vec<PartialTensorShape>>> {
    let n = num_split.max(0) as usize;
    let Some(d) = value.dims() else {
        return Ok(Err(vec![PartialTensorShape::unknown_rank(); n]));
    };
    let Some(axis) = axis else {
        return Ok(Err(vec![partial(Some(vec![-1; d.len()]))?; n]));
    };
    let a = index_values(op, "T", axis, INT32_64)?
        .first()
        .copied()
        .unwrap_or(0);
    match canonical_axis(a, d.len()) {
        Some(ax) => Ok(Ok((d, ax))),
        None => Err(invalid(op, axis_range_text(a, d.len()))),
    }
}

/// `Split`'s shape function.
///
/// # Errors
/// `Dimension size must be evenly divisible by N but is S`, an axis out of range.
pub fn split_shape(
    axis: Option<&Tensor>,
    value: &PartialTensorShape,
    num_split: i64,
) -> Result<Vec<PartialTensorShape>> {
    const OP: &str = "Split";
    let n = num_split.max(0) as usize;
    let (d, ax) = match split_axis(OP, value, axis, num_split)? {
        Ok(known) => known,
        Err(unknown) => return Ok(unknown),
    };
    let mut o = d.to_vec();
    if o[ax] >= 0 {
        if num_split <= 0 || o[ax] % num_split != 0 {
            return Err(invalid(
                OP,
                format!(
                    "Dimension size must be evenly divisible by {num_split} but is {}\n\tNumber of ways to split should evenly divide the split dimension",
                    o[ax]
                ),
            ));
        }
        o[ax] /= num_split;
    }
    Ok(vec![partial(Some(o))?; n])
}

/// TensorFlow's `SplitV`: `value` cut along `axis` (an `int32` scalar) into parts of
/// `size_splits` (`int32` or `int64`; one entry may be -1, the rest of the axis). Parts that are
/// dense runs share the input's buffer. Every dtype but `qint8`, `qint16`, `quint16`, `qint32`.
///
/// # Errors
/// TensorFlow's texts (`There can only be one -1 in the input.`, `Split size at index I must
/// be >= 0. Got: S`, `Determined shape must either match input shape along split_dim exactly
/// if fully specified, or be less than the size of the input along split_dim if not fully
/// specified.  Got: S`, the split_dim range); an `axis` of another dtype than `int32`
/// ([`Error::InputTypeMismatch`](tensorcast_core::Error::InputTypeMismatch)); no kernel (`NOT_FOUND`).
pub fn split_v(value: &Tensor, size_splits: &Tensor, axis: &Tensor) -> Result<Vec<Tensor>> {
    const OP: &str = "SplitV";
    let dtype = value.dtype();
    let sizes = index_values(OP, "Tlen", size_splits, INT32_64)?;
    if dtype.is_quantized() && dtype != DataType::QUINT8 {
        return Err(no_kernel(
            OP,
            &format!(
                "T={}, Tlen={}, num_split={}",
                dt(dtype),
                dt(size_splits.dtype()),
                sizes.len()
            ),
        ));
    }
    Error::check_input_type(OP, 2, DataType::INT32, axis.dtype())?;
    if axis.num_elements() != 1 {
        return Err(invalid(
            OP,
            "split_dim_tensor must have exactly one element.",
        ));
    }
    let a = index_values(OP, "T", axis, INT32_64)?[0];
    let rank = value.dims();
    let Some(ax) = canonical_axis(a, rank) else {
        return Err(invalid(OP, split_dim_error(rank, a)));
    };
    if size_splits.dims() != 1 {
        return Err(invalid(
            OP,
            format!(
                "size of the split_tensor must be 1-D and have the same elements as outputs got {} -D and {} elements",
                size_splits.dims(),
                sizes.len()
            ),
        ));
    }
    let input = value.shape().dim_sizes()[ax];
    let mut neg: Option<usize> = None;
    let mut determined: i64 = 0;
    for (d, &s) in sizes.iter().enumerate() {
        if s == -1 {
            if neg.is_some() {
                return Err(invalid(OP, "There can only be one -1 in the input."));
            }
            neg = Some(d);
        } else {
            if s < 0 {
                return Err(invalid(
                    OP,
                    format!("Split size at index {d} must be >= 0. Got: {s}"),
                ));
            }
            determined = determined.saturating_add(s);
        }
    }
    let ok = match neg {
        None => determined == input,
        Some(_) => determined <= input,
    };
    if !ok {
        return Err(invalid(
            OP,
            format!(
                "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: {determined}"
            ),
        ));
    }
    let mut start = 0i64;
    let mut out = Vec::with_capacity(sizes.len());
    for (d, &s) in sizes.iter().enumerate() {
        let len = if Some(d) == neg {
            input - determined
        } else {
            s
        };
        if sizes.len() == 1 {
            out.push(value.clone());
        } else {
            out.push(take(OP, value, ax, start..start + len, true)?);
        }
        start += len;
    }
    Ok(out)
}

/// `SplitV`'s shape function: the parts' shapes where the sizes and axis are known.
///
/// # Errors
/// TensorFlow's shape-function texts for sizes that do not add up.
pub fn split_v_shape(
    value: &PartialTensorShape,
    size_splits: Option<&Tensor>,
    axis: Option<&Tensor>,
    num_split: i64,
) -> Result<Vec<PartialTensorShape>> {
    const OP: &str = "SplitV";
    let n = num_split.max(0) as usize;
    let (d, ax) = match split_axis(OP, value, axis, num_split)? {
        Ok(known) => known,
        Err(unknown) => return Ok(unknown),
    };
    let Some(sizes) = size_splits else {
        let mut o = d.to_vec();
        o[ax] = -1;
        return Ok(vec![partial(Some(o))?; n]);
    };
    let sizes = index_values(OP, "Tlen", sizes, INT32_64)?;
    let known: i64 = sizes.iter().filter(|&&s| s != -1).sum();
    let negs = sizes.iter().filter(|&&s| s == -1).count();
    let total = d[ax];
    if negs > 1 {
        return Err(invalid(OP, "size_splits can only have one -1"));
    }
    if total >= 0 && ((negs == 0 && known != total) || (negs == 1 && known > total)) {
        let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
        return Err(invalid(
            OP,
            format!(
                "can't split axis of size {total} into pieces of size [{}]",
                list.join(",")
            ),
        ));
    }
    sizes
        .iter()
        .map(|&s| {
            let mut o = d.to_vec();
            o[ax] = if s == -1 {
                if total >= 0 {
                    total - known
                } else {
                    -1
                }
            } else {
                s
            };
            partial(Some(o))
        })
        .collect()
}

/// The shape functions' text for a split axis out of range.
fn axis_range_text(a: i64, rank: usize) -> String {
    format!("Dimension size, given by scalar input {a} must be in range [-{rank}, {rank})")
}
