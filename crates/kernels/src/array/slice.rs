//! `Slice` and `StridedSlice`: views of the input (its buffer shared when the result is one
//! dense run), copied through the strided engine otherwise (negative strides included).

use tensorcast_core::{DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{
    dims_text, dt, index_values, invalid, no_kernel, partial, rank_of_input_and_rows, INT32_64,
};
use super::engine::{dense_strides, strided, StridedView};

/// Dtypes TensorFlow's CPU `Slice` and `StridedSlice` have no kernel for.
fn refused(d: DataType) -> bool {
    matches!(
        d,
        DataType::QINT16 | DataType::QUINT16 | DataType::INT4 | DataType::UINT4
    )
}

fn same_index_type(op: &'static str, first: &Tensor, rest: &[(usize, &Tensor)]) -> Result<()> {
    for &(i, t) in rest {
        Error::check_input_type(op, i, first.dtype(), t.dtype())?;
    }
    Ok(())
}

/// TensorFlow's `Slice`: the block of `input` from `begin` of extent `size` (`int32`/`int64`
/// vectors of the input's rank; a size of -1 takes the rest of the axis). Shares the input's
/// buffer when the block is one dense run. Every dtype but `qint16`, `quint16`, `int4`, `uint4`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::slice;
/// let x = Tensor::from_vec((0..12).collect::<Vec<i32>>(), &[3i64, 4])?;
/// let y = slice(&x, &Tensor::vector(&[1i32, 1]), &Tensor::vector(&[2i32, -1]))?;
/// assert_eq!(y.to_vec::<i32>()?, vec![5, 6, 7, 9, 10, 11]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `Expected begin and size arguments to be 1-D tensors of size R, but got
/// shapes [..] and [..] instead.`, `Expected begin[i] in [0, D], but got B`, `Expected size[i]
/// in [0, D-B], but got S`; mismatched index dtypes; no kernel (`NOT_FOUND`).
pub fn slice(input: &Tensor, begin: &Tensor, size: &Tensor) -> Result<Tensor> {
    const OP: &str = "Slice";
    let b = index_values(OP, "Index", begin, INT32_64)?;
    same_index_type(OP, begin, &[(2, size)])?;
    let s = index_values(OP, "Index", size, INT32_64)?;
    if refused(input.dtype()) {
        return Err(no_kernel(
            OP,
            &format!("Index={}, T={}", dt(begin.dtype()), dt(input.dtype())),
        ));
    }
    let rank = input.dims();
    if begin.dims() != 1 || size.dims() != 1 || b.len() != rank || s.len() != rank {
        return Err(invalid(
            OP,
            format!(
                "Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes {} and {} instead.",
                begin.shape(),
                size.shape()
            ),
        ));
    }
    let dims = input.shape().dim_sizes();
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let (bi, mut si) = (b[i], s[i]);
        if si == -1 {
            si = dims[i] - bi;
        }
        if dims[i] == 0 {
            if bi != 0 || si != 0 {
                return Err(invalid(
                    OP,
                    format!(
                        "Expected begin[{i}] == 0 (got {bi}) and size[{i}] == 0 (got {si}) when input.dim_size({i}) == 0"
                    ),
                ));
            }
        } else {
            if !(0 <= bi && bi <= dims[i]) {
                return Err(invalid(
                    OP,
                    format!("Expected begin[{i}] in [0, {}], but got {bi}", dims[i]),
                ));
            }
            if !(0 <= si && si <= dims[i] - bi) {
                return Err(invalid(
                    OP,
                    format!("Expected size[{i}] in [0, {}], but got {si}", dims[i] - bi),
                ));
            }
        }
        out.push(si);
    }
    let in_dims = input.shape().dims_usize();
    let st = dense_strides(&in_dims);
    let offset: usize = if out.contains(&0) {
        0
    } else {
        (0..rank).map(|i| b[i] as usize * st[i] as usize).sum()
    };
    let out_u: Vec<usize> = out.iter().map(|&d| d as usize).collect();
    let shape = TensorShape::new(&out)?;
    strided(OP, input, &shape, &StridedView::new(&out_u, &st, offset))
}

/// `Slice`'s shape function: the sizes where `size` is known (-1 resolved where `begin` and
/// the dim are known), unknown dims elsewhere.
///
/// # Errors
/// `Shape must be rank R but is rank S`-style rank mismatches, out-of-range begins and sizes.
pub fn slice_shape(
    input: &PartialTensorShape,
    begin_shape: &PartialTensorShape,
    begin: Option<&Tensor>,
    size: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "Slice";
    let Some(rank) = rank_of_input_and_rows(OP, input, begin_shape)? else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let Some(size) = size else {
        return partial(Some(vec![-1; rank]));
    };
    let s = index_values(OP, "Index", size, INT32_64)?;
    let b = begin
        .map(|t| index_values(OP, "Index", t, INT32_64))
        .transpose()?;
    if s.len() != rank {
        return Err(invalid(
            OP,
            format!("Dimension must be {rank} but is {}", s.len()),
        ));
    }
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let dim = input.dims().map_or(-1, |d| d[i]);
        let bi = b.as_ref().map(|b| b[i]);
        if s[i] == -1 {
            out.push(match (bi, dim) {
                (Some(bi), d) if d >= 0 => {
                    if bi > d {
                        return Err(invalid(
                            OP,
                            format!("Expected begin[{i}] in [0, {d}], but got {bi}"),
                        ));
                    }
                    d - bi
                }
                _ => -1,
            });
        } else {
            if s[i] < -1 {
                return Err(invalid(
                    OP,
                    format!("Expected size[{i}] >= -1, but got {}", s[i]),
                ));
            }
            out.push(s[i]);
        }
    }
    partial(Some(out))
}

/// `StridedSlice`'s masks (TensorFlow's attrs of the same names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StridedSliceMasks {
    /// Bit `i`: ignore `begin[i]` (start from the first element in the stride's direction).
    pub begin_mask: i64,
    /// Bit `i`: ignore `end[i]`.
    pub end_mask: i64,
    /// Bit `i`: spec entry `i` is `...` (at most one bit).
    pub ellipsis_mask: i64,
    /// Bit `i`: spec entry `i` inserts an axis of size 1.
    pub new_axis_mask: i64,
    /// Bit `i`: spec entry `i` takes one index and drops the axis.
    pub shrink_axis_mask: i64,
}

fn bit(mask: i64, i: usize) -> bool {
    i < 64 && (mask >> i) & 1 == 1
}

/// Where an output dim of the final shape comes from.
#[derive(Clone, Copy)]
enum Gather {
    Dense(usize),
    NewAxis,
    Shrink,
}

/// The validated slice: per dense (input) axis its start, stride and size, and the final
/// shape (`-1` where unknown, in the shape function).
struct Spec {
    begin: Vec<i64>,
    strides: Vec<i64>,
    processing: Vec<i64>,
    final_dims: Vec<i64>,
}

/// TensorFlow's `ValidateStridedSliceOp`: the sparse spec (`begin`, `end`, `strides` of length
/// `n`, with the masks) made dense over `input` (dims `-1` unknown), then each axis resolved.
fn validate(
    input: &[i64],
    n: usize,
    begin: Option<&[i64]>,
    end: Option<&[i64]>,
    strides: &[i64],
    m: StridedSliceMasks,
) -> Result<Spec> {
    const OP: &str = "StridedSlice";
    if m.ellipsis_mask.count_ones() > 1 && (0..n).filter(|&i| bit(m.ellipsis_mask, i)).count() > 1 {
        return Err(invalid(OP, "Multiple ellipses in slice spec not allowed"));
    }
    // Sparse spec: an implicit ellipsis at the end when there is none.
    let mut ellipsis_seen = false;
    let mut new_after_ellipsis = 0usize;
    for i in 0..n {
        if ellipsis_seen && bit(m.new_axis_mask, i) {
            new_after_ellipsis += 1;
        }
        if bit(m.ellipsis_mask, i) {
            ellipsis_seen = true;
        }
    }
    let mut sparse_n = n;
    let mut ellipsis_at: Option<usize> = (0..n).find(|&i| bit(m.ellipsis_mask, i));
    if !ellipsis_seen {
        ellipsis_at = Some(n);
        sparse_n = n + 1;
    }
    let dims = input.len();
    let mut d_begin = vec![0i64; dims];
    let mut d_end = vec![0i64; dims];
    let mut d_strides = vec![1i64; dims];
    let mut d_bm = vec![false; dims];
    let mut d_em = vec![false; dims];
    let mut d_shrink = vec![false; dims];
    let mut gather: Vec<Gather> = Vec::new();
    let mut full = 0usize;
    for i in 0..sparse_n {
        if Some(i) == ellipsis_at {
            let next = (dims as i64 - (sparse_n as i64 - i as i64) + 1 + new_after_ellipsis as i64)
                .clamp(0, dims as i64)
                .max(full as i64) as usize;
            while full < next {
                d_bm[full] = true;
                d_em[full] = true;
                gather.push(Gather::Dense(full));
                full += 1;
            }
        } else if bit(m.new_axis_mask, i) {
            gather.push(Gather::NewAxis);
        } else {
            if full == dims {
                return Err(invalid(
                    OP,
                    format!(
                        "Index out of range using input dim {full}; input has only {dims} dims"
                    ),
                ));
            }
            if let Some(b) = begin {
                d_begin[full] = b[i];
            }
            if let Some(e) = end {
                d_end[full] = e[i];
            }
            d_strides[full] = strides[i];
            d_bm[full] = bit(m.begin_mask, i);
            d_em[full] = bit(m.end_mask, i);
            if bit(m.shrink_axis_mask, i) {
                gather.push(Gather::Shrink);
                d_shrink[full] = true;
            } else {
                gather.push(Gather::Dense(full));
            }
            full += 1;
        }
    }
    let valid = begin.is_some() && end.is_some();
    let mut processing = Vec::with_capacity(dims);
    for i in 0..dims {
        let (mut b, mut e, s) = (d_begin[i], d_end[i], d_strides[i]);
        if s == 0 {
            return Err(invalid(OP, format!("strides[{i}] must be non-zero")));
        }
        let dim = input[i];
        let shrink = d_shrink[i];
        if shrink && s <= 0 {
            return Err(invalid(OP, "only stride 1 allowed on non-range indexing."));
        }
        if dim == -1 {
            processing.push(if shrink { 1 } else { -1 });
            continue;
        }
        let masks = [d_bm[i], d_em[i]];
        let range = if s > 0 { [0, dim] } else { [-1, dim - 1] };
        let canonical = |x: i64, c: usize| -> i64 {
            if masks[c] {
                if s > 0 {
                    range[c]
                } else {
                    range[(c + 1) & 1]
                }
            } else {
                let fwd = if x < 0 { dim + x } else { x };
                fwd.clamp(range[0], range[1])
            }
        };
        if valid {
            if shrink {
                let fwd = if b < 0 { dim + b } else { b };
                b = fwd;
                e = b + 1;
                if fwd < 0 || fwd >= dim {
                    return Err(invalid(
                        OP,
                        format!("slice index {fwd} of dimension {i} out of bounds."),
                    ));
                }
            } else {
                b = canonical(b, 0);
                e = canonical(e, 1);
            }
            d_begin[i] = b;
        }
        let both_masked = masks[0] && masks[1];
        let interval = if valid {
            Some(e - b)
        } else if shrink {
            Some(1)
        } else if both_masked {
            Some(if s < 0 { -dim } else { dim })
        } else {
            None
        };
        processing.push(match interval {
            Some(len) => {
                if len == 0 || ((len < 0) != (s < 0)) {
                    0
                } else {
                    len / s + i64::from(len % s != 0)
                }
            }
            None => -1,
        });
    }
    let final_dims = gather
        .iter()
        .filter_map(|g| match g {
            Gather::Dense(i) => Some(processing[*i]),
            Gather::NewAxis => Some(1),
            Gather::Shrink => None,
        })
        .collect();
    Ok(Spec {
        begin: d_begin,
        strides: d_strides,
        processing,
        final_dims,
    })
}

/// TensorFlow's `StridedSlice` (Python's `x[b:e:s, ..., tf.newaxis, i]`): `begin`, `end` and
/// `strides` (`int32` or `int64` vectors of one length) with the five masks, negative strides
/// and indices, out-of-range bounds clamped as TensorFlow clamps them. The result shares the
/// input's buffer when it is one dense run; otherwise it is copied (exact bits). Every dtype
/// but `qint16`, `quint16`, `int4`, `uint4`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::{strided_slice, StridedSliceMasks};
/// let x = Tensor::vector(&[0i32, 1, 2, 3, 4, 5]);
/// let rev = strided_slice(
///     &x,
///     &Tensor::vector(&[-1i32]),
///     &Tensor::vector(&[0i32]),
///     &Tensor::vector(&[-2i32]),
///     StridedSliceMasks { end_mask: 1, ..Default::default() },
/// )?;
/// assert_eq!(rev.to_vec::<i32>()?, vec![5, 3, 1]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `Expected begin, end, and strides to be 1D equal size tensors, but got
/// shapes [..], [..], and [..] instead.`, `Multiple ellipses in slice spec not allowed`,
/// `strides[i] must be non-zero`, `Index out of range using input dim D; input has only R
/// dims`, `slice index I of dimension D out of bounds.`; no kernel (`NOT_FOUND`).
pub fn strided_slice(
    input: &Tensor,
    begin: &Tensor,
    end: &Tensor,
    strides: &Tensor,
    masks: StridedSliceMasks,
) -> Result<Tensor> {
    const OP: &str = "StridedSlice";
    let b = index_values(OP, "Index", begin, INT32_64)?;
    same_index_type(OP, begin, &[(2, end), (3, strides)])?;
    let e = index_values(OP, "Index", end, INT32_64)?;
    let s = index_values(OP, "Index", strides, INT32_64)?;
    if refused(input.dtype()) {
        return Err(no_kernel(
            OP,
            &format!(
                "Index={}, T={}, begin_mask={}, ellipsis_mask={}, end_mask={}, new_axis_mask={}, shrink_axis_mask={}",
                dt(begin.dtype()),
                dt(input.dtype()),
                masks.begin_mask,
                masks.ellipsis_mask,
                masks.end_mask,
                masks.new_axis_mask,
                masks.shrink_axis_mask
            ),
        ));
    }
    if begin.dims() != 1
        || end.dims() != 1
        || strides.dims() != 1
        || b.len() != e.len()
        || b.len() != s.len()
        // The masks are 32 bits: a spec of 32 entries or more is refused.
        || b.len() >= 32
    {
        return Err(invalid(
            OP,
            format!(
                "Expected begin, end, and strides to be 1D equal size tensors, but got shapes {}, {}, and {} instead.",
                begin.shape(),
                end.shape(),
                strides.shape()
            ),
        ));
    }
    let in_dims = input.shape().dim_sizes();
    let spec = validate(in_dims, b.len(), Some(&b), Some(&e), &s, masks)?;
    let final_shape = TensorShape::new(&spec.final_dims).map_err(|_| {
        invalid(
            OP,
            format!("invalid output shape {}", dims_text(&spec.final_dims)),
        )
    })?;
    let in_u = input.shape().dims_usize();
    let st = dense_strides(&in_u);
    let empty = spec.processing.contains(&0);
    let mut offset: isize = 0;
    let mut vstrides = Vec::with_capacity(in_u.len());
    for (i, &stride) in st.iter().enumerate() {
        if !empty {
            offset += spec.begin[i] as isize * stride;
        }
        vstrides.push(if spec.processing[i] <= 1 {
            0
        } else {
            spec.strides[i] as isize * stride
        });
    }
    let proc_u: Vec<usize> = spec.processing.iter().map(|&d| d as usize).collect();
    strided(
        OP,
        input,
        &final_shape,
        &StridedView::new(&proc_u, &vstrides, if empty { 0 } else { offset as usize }),
    )
}

/// `StridedSlice`'s shape function: TensorFlow's, over partial shapes (an unknown rank, `strides`
/// or spec length gives an unknown shape; unknown `begin`/`end` give unknown dims except where
/// both masks or the shrink bit decide them).
///
/// # Errors
/// As [`strided_slice`].
pub fn strided_slice_shape(
    input: &PartialTensorShape,
    spec_len: Option<usize>,
    begin: Option<&Tensor>,
    end: Option<&Tensor>,
    strides: Option<&Tensor>,
    masks: StridedSliceMasks,
) -> Result<PartialTensorShape> {
    const OP: &str = "StridedSlice";
    let (Some(dims), Some(n), Some(strides)) = (input.dims(), spec_len, strides) else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let s = index_values(OP, "Index", strides, INT32_64)?;
    let b = begin
        .map(|t| index_values(OP, "Index", t, INT32_64))
        .transpose()?;
    let e = end
        .map(|t| index_values(OP, "Index", t, INT32_64))
        .transpose()?;
    if s.len() != n
        || b.as_ref().is_some_and(|b| b.len() != n)
        || e.as_ref().is_some_and(|e| e.len() != n)
    {
        return Err(invalid(
            OP,
            format!("Dimension must be {n} but is {}", s.len()),
        ));
    }
    let spec = validate(dims, n, b.as_deref(), e.as_deref(), &s, masks)?;
    partial(Some(spec.final_dims))
}
