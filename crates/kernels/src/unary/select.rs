//! `Select` (v1: a condition of the inputs' shape, a scalar, or a vector over the first dim)
//! and `SelectV2` (condition, `then` and `else` broadcast together), with their shape
//! functions.
//!
//! Selection moves elements without computing on them, so results are TensorFlow's bit for
//! bit (NaN payloads included), for every dtype TensorFlow's CPU kernels take: the numbers,
//! `bool`, `string` and complex types (quantized, float8 and 4-bit types are TensorFlow's
//! `NotFound` error, as are resources and variants here).

use std::sync::Arc;
use tensorcast_core::dtypes;

use tensorcast_buffer::{cpu_allocator_ref, Allocator};
use tensorcast_core::{DataType, Error, PartialTensorShape, Result, TString, Tensor, TensorShape};

/// The dtypes TensorFlow 2.21's CPU build has `Select`/`SelectV2` kernels for (besides
/// resources and variants, which tensorcast does not select).
fn has_kernel(dtype: DataType) -> bool {
    dtypes!(
        "string, bool, complex128, complex64, double, float, bfloat16, half, int32, int8, uint8, \
         int16, uint16, uint32, int64, uint64"
    )
    .contains(&dtype)
}

/// The checks both ops make on dtypes, in TensorFlow's order: the condition is `bool`, `else`
/// has `then`'s dtype, and a kernel exists for it.
fn check_dtypes(op: &'static str, cond: &Tensor, t: &Tensor, e: &Tensor) -> Result<()> {
    Error::check_input_type(op, 0, DataType::BOOL, cond.dtype())?;
    Error::check_input_type(op, 2, t.dtype(), e.dtype())?;
    if !has_kernel(t.dtype()) {
        return Err(Error::NoKernel {
            op,
            dtype: t.dtype(),
            incompatible_shape_error: None,
        });
    }
    Ok(())
}

/// TensorFlow's `Select`: `then` where `condition` is true, `else` elsewhere. `condition` is a
/// scalar (picking a whole input), a vector over the first dim of `then` (picking rows), or of
/// `then`'s shape; `then` and `else` have the same shape.
///
/// ```
/// use tensorcast_core::{Tensor, TensorShape};
/// use tensorcast_kernels::unary::select;
/// let s = TensorShape::new(&[2, 2])?;
/// let t = Tensor::from_slice(&[1i32, 2, 3, 4], &s)?;
/// let e = Tensor::from_slice(&[5i32, 6, 7, 8], &s)?;
/// let rows = select(&Tensor::vector(&[true, false]), &t, &e)?;
/// assert_eq!(rows.to_vec::<i32>()?, vec![1, 2, 7, 8]);
/// let err = select(&Tensor::vector(&[true]), &t, &e).unwrap_err();
/// assert_eq!(err.to_string(), "Number of batches of 'then' must match size of 'cond', but saw: 2 vs. 1");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: a condition that is not `bool`, `else` of another dtype than `then`
/// (`Error::InputTypeMismatch`), a dtype without a CPU kernel (`Error::NoKernel`), shapes that
/// do not fit (`Error::Op`, invalid argument), allocation failure.
pub fn select(condition: &Tensor, then: &Tensor, r#else: &Tensor) -> Result<Tensor> {
    const OP: &str = "Select";
    let e = r#else;
    check_dtypes(OP, condition, then, e)?;
    let (cs, ts, es) = (condition.shape(), then.shape(), e.shape());
    let same_size = |msg: &mut String| {
        if ts != es {
            *msg =
                format!("'then' and 'else' must have the same size.  but received: {ts} vs. {es}");
            true
        } else {
            false
        }
    };
    let mut msg = String::new();
    let cond_dims: Vec<i64> = if cs.rank() == 0 {
        if same_size(&mut msg) {
            return Err(Error::invalid_argument(OP, msg));
        }
        vec![]
    } else if cs.rank() == 1 && ts.rank() != 1 {
        if ts.rank() == 0 {
            return Err(Error::invalid_argument(
                OP,
                format!("'then' must be at least a vector, but saw shape: {ts}"),
            ));
        }
        let batches = ts.dim_sizes()[0];
        if batches != cs.num_elements() {
            return Err(Error::invalid_argument(
                OP,
                format!(
                    "Number of batches of 'then' must match size of 'cond', but saw: {} vs. {}",
                    batches,
                    cs.num_elements()
                ),
            ));
        }
        if same_size(&mut msg) {
            return Err(Error::invalid_argument(OP, msg));
        }
        // The condition picks rows: read it as [n, 1, 1, ...].
        let mut d = vec![1i64; ts.rank()];
        d[0] = cs.num_elements();
        d
    } else {
        for (i, s) in [(1, ts), (2, es)] {
            if s != cs {
                return Err(Error::invalid_argument(
                    OP,
                    format!(
                        "Inputs to operation {OP} of type {OP} must have the same size and \
                         shape.  Input 0: {cs} != input {i}: {s}"
                    ),
                ));
            }
        }
        cs.dim_sizes().to_vec()
    };
    let out = ts.clone();
    run(cpu_allocator_ref(), condition, &cond_dims, then, e, &out)
}

/// TensorFlow's `SelectV2`: `then` where `condition` is true, `else` elsewhere, the three
/// broadcast together (numpy's rules).
///
/// ```
/// use tensorcast_core::{Tensor, TensorShape};
/// use tensorcast_kernels::unary::select_v2;
/// let c = Tensor::from_slice(&[true, false], &TensorShape::new(&[2, 1])?)?;
/// let z = select_v2(&c, &Tensor::vector(&[1.0f32, 2.0, 3.0]), &Tensor::scalar_of(0.0f32))?;
/// assert_eq!(z.shape().dim_sizes(), &[2, 3]);
/// assert_eq!(z.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// As [`select`]; shapes that do not broadcast are TensorFlow's `condition [..], then [..],
/// and else [..] must be broadcastable`.
pub fn select_v2(condition: &Tensor, then: &Tensor, r#else: &Tensor) -> Result<Tensor> {
    const OP: &str = "SelectV2";
    let e = r#else;
    check_dtypes(OP, condition, then, e)?;
    let (cs, ts, es) = (condition.shape(), then.shape(), e.shape());
    let out = broadcast3([cs.dim_sizes(), ts.dim_sizes(), es.dim_sizes()]).ok_or_else(|| {
        Error::invalid_argument(
            OP,
            format!("condition {cs}, then {ts}, and else {es} must be broadcastable"),
        )
    })?;
    let out = TensorShape::new(&out)?;
    run(
        cpu_allocator_ref(),
        condition,
        cs.dim_sizes(),
        then,
        e,
        &out,
    )
}

/// The numpy broadcast of three shapes, or `None` where a dim differs and is not 1 (a dim of
/// 1 against 0 gives 0).
fn broadcast3(shapes: [&[i64]; 3]) -> Option<Vec<i64>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1i64; rank];
    for s in shapes {
        let off = rank - s.len();
        for (j, &d) in s.iter().enumerate() {
            let o = &mut out[off + j];
            if d == 1 {
                continue;
            }
            if *o == 1 {
                *o = d;
            } else if *o != d {
                return None;
            }
        }
    }
    Some(out)
}

/// The row-major strides of `dims` read over `out` (right-aligned; 0 where the operand's dim
/// is 1 or missing).
fn strides_over(dims: &[i64], out: &[usize]) -> Vec<usize> {
    let rank = out.len();
    let off = rank - dims.len();
    let mut strides = vec![0usize; rank];
    let mut s = 1usize;
    for j in (0..dims.len()).rev() {
        let d = usize::try_from(dims[j]).unwrap_or(0);
        if d != 1 {
            strides[off + j] = s;
        }
        s = s.saturating_mul(d);
    }
    strides
}

/// Calls `f(c, t, e)` with the element indices of the condition, `then` and `else` for every
/// output element in row-major order.
fn for_each_index(out: &[usize], strides: [&[usize]; 3], mut f: impl FnMut(usize, usize, usize)) {
    let n: usize = out.iter().product();
    if n == 0 {
        return;
    }
    let rank = out.len();
    if rank == 0 {
        f(0, 0, 0);
        return;
    }
    let inner = out[rank - 1];
    let (sc, st, se) = (
        strides[0][rank - 1],
        strides[1][rank - 1],
        strides[2][rank - 1],
    );
    let mut index = vec![0usize; rank];
    let mut base = [0usize; 3];
    for _ in 0..n / inner {
        for k in 0..inner {
            f(base[0] + k * sc, base[1] + k * st, base[2] + k * se);
        }
        // Odometer over the outer dims.
        for d in (0..rank - 1).rev() {
            index[d] += 1;
            for (b, s) in base.iter_mut().zip(strides) {
                *b += s[d];
            }
            if index[d] < out[d] {
                break;
            }
            for (b, s) in base.iter_mut().zip(strides) {
                *b -= s[d] * out[d];
            }
            index[d] = 0;
        }
    }
}

/// The selection over the output shape `out`, the condition read with dims `cond_dims`
/// (broadcast to `out`; its elements in row-major order).
fn run(
    allocator: &Arc<dyn Allocator>,
    cond: &Tensor,
    cond_dims: &[i64],
    then: &Tensor,
    e: &Tensor,
    out: &TensorShape,
) -> Result<Tensor> {
    let dtype = then.dtype();
    let out_dims = out.dims_usize();
    let sc = strides_over(cond_dims, &out_dims);
    let st = strides_over(then.shape().dim_sizes(), &out_dims);
    let se = strides_over(e.shape().dim_sizes(), &out_dims);
    let strides = [sc.as_slice(), st.as_slice(), se.as_slice()];
    let n = out.num_elements_usize();
    let c = cond.tensor_data()?;
    if dtype == DataType::STRING {
        let (ts, es) = (then.as_slice::<TString>()?, e.as_slice::<TString>()?);
        let mut v: Vec<TString> = Vec::new();
        v.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
            dtype,
            elements: n as u64,
        })?;
        for_each_index(&out_dims, strides, |ci, ti, ei| {
            v.push(if c[ci] != 0 {
                ts[ti].clone()
            } else {
                es[ei].clone()
            });
        });
        return Tensor::from_vec(v, out);
    }
    let size = dtype.size();
    let (tb, eb) = (then.tensor_data()?, e.tensor_data()?);
    Tensor::from_writer(allocator, dtype, out, |w| {
        // Stage a block of elements at a time (a small fixed buffer).
        const BLOCK: usize = 16 << 10;
        let mut stage: Vec<u8> = Vec::with_capacity(BLOCK.min(n * size));
        for_each_index(&out_dims, strides, |ci, ti, ei| {
            let src = if c[ci] != 0 {
                &tb[ti * size..(ti + 1) * size]
            } else {
                &eb[ei * size..(ei + 1) * size]
            };
            stage.extend_from_slice(src);
            if stage.len() + size > BLOCK {
                w.put_slice(&stage);
                stage.clear();
            }
        });
        w.put_slice(&stage);
    })
}

/// `Select`'s shape function (TensorFlow's): `then` and `else` merge; a condition of unknown
/// rank, or a scalar one, gives their shape; a vector condition must match their first dim
/// (or, for scalar inputs, be a scalar); any other condition merges with them.
///
/// ```
/// use tensorcast_core::PartialTensorShape as P;
/// use tensorcast_kernels::unary::select_shape;
/// let s = select_shape(&P::new(&[-1])?, &P::new(&[-1, 2])?, &P::new(&[3, -1])?)?;
/// assert_eq!(s, P::new(&[3, 2])?);
/// let err = select_shape(&P::new(&[2])?, &P::new(&[3, 2])?, &P::new(&[3, 2])?).unwrap_err();
/// assert_eq!(err.to_string(), "Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are [2] and [3].");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's shape-function texts (`Shapes must be equal rank, but are 1 and 2`,
/// `Dimension 0 in both shapes must be equal, ...`), without the node tail.
pub fn select_shape(
    condition: &PartialTensorShape,
    then: &PartialTensorShape,
    r#else: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    const OP: &str = "Select";
    let data = merge(OP, then, r#else)?;
    let (Some(cond_dims), Some(data_dims)) = (condition.dims(), data.dims()) else {
        return Ok(data);
    };
    match cond_dims.len() {
        0 => Ok(data),
        1 if !data_dims.is_empty() => {
            merge(OP, condition, &PartialTensorShape::new(&[data_dims[0]])?)?;
            Ok(data)
        }
        _ => merge(OP, &data, condition),
    }
}

/// `SelectV2`'s shape function (TensorFlow's): `then` and `else` broadcast, then the condition
/// with their result, as the binary ops' broadcasting shape function.
///
/// ```
/// use tensorcast_core::PartialTensorShape as P;
/// use tensorcast_kernels::unary::select_v2_shape;
/// let s = select_v2_shape(&P::new(&[3, 1])?, &P::new(&[1, 4])?, &P::new(&[-1, 4])?)?;
/// assert_eq!(s, P::new(&[3, 4])?);
/// assert_eq!(select_v2_shape(&P::unknown_rank(), &P::new(&[2])?, &P::new(&[2])?)?, P::unknown_rank());
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `Dimensions must be equal, but are 3 and 2` where known dims differ and neither is 1.
pub fn select_v2_shape(
    condition: &PartialTensorShape,
    then: &PartialTensorShape,
    r#else: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    let other = broadcast_partial("SelectV2", then, r#else)?;
    broadcast_partial("SelectV2", condition, &other)
}

/// TensorFlow's `InferenceContext::Merge` of two shapes, with its messages.
fn merge(
    op: &'static str,
    a: &PartialTensorShape,
    b: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    let (Some(x), Some(y)) = (a.dims(), b.dims()) else {
        return Ok(if a.dims().is_none() { b } else { a }.clone());
    };
    if x.len() != y.len() {
        return Err(Error::invalid_argument(
            op,
            format!(
                "Shapes must be equal rank, but are {} and {}",
                x.len(),
                y.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(x.len());
    for (i, (&p, &q)) in x.iter().zip(y).enumerate() {
        if p >= 0 && q >= 0 && p != q {
            return Err(Error::invalid_argument(
                op,
                format!(
                    "Dimension {i} in both shapes must be equal, but are {p} and {q}. Shapes \
                     are {a} and {b}."
                ),
            ));
        }
        out.push(if p >= 0 { p } else { q });
    }
    PartialTensorShape::new(&out)
}

/// TensorFlow's `BroadcastBinaryOpOutputShapeFnHelper` (with `incompatible_shape_error`).
fn broadcast_partial(
    op: &'static str,
    a: &PartialTensorShape,
    b: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    let (Some(x), Some(y)) = (a.dims(), b.dims()) else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let rank = x.len().max(y.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let dx = if i < rank - x.len() {
            1
        } else {
            x[i - (rank - x.len())]
        };
        let y_is_one = i < rank - y.len();
        let dy = if y_is_one { 1 } else { y[i - (rank - y.len())] };
        let d = if dx < 0 || dy < 0 {
            if dx > 1 {
                dx
            } else if dy > 1 || dx == 1 {
                dy
            } else if dy == 1 {
                dx
            } else {
                -1
            }
        } else if dx == 1 || dy == 1 {
            if dx == 1 && !y_is_one {
                dy
            } else {
                dx
            }
        } else if dx != dy {
            return Err(Error::invalid_argument(
                op,
                format!("Dimensions must be equal, but are {dx} and {dy}"),
            ));
        } else {
            dx
        };
        out.push(d);
    }
    PartialTensorShape::new(&out)
}
