//! `MatMul` and `BatchMatMulV2`, with their shape functions.

use tensorcast_core::dtypes;
use tensorcast_core::{DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::engine::{GemmElement, Geometry};
use super::util::{
    data, dims, enum_name, no_kernel, not_in_type_list, onednn, output, second_input_mismatch,
    try_vec,
};

/// An op's type check and the pieces of TensorFlow's texts for its failures: the type list
/// (in its `OpDef`'s order) and the `OpDef` text around it, the oneDNN op a second input of
/// another type is reported against, and, for the `NotFound` text, the node's bool attrs
/// (the two flags the caller sets, the two `grad_` ones always false) and the CPU kernels
/// TensorFlow 2.21 registers.
struct TypeCheck {
    op: &'static str,
    mkl_op: &'static str,
    allowed: &'static [DataType],
    signature: &'static str,
    before: &'static str,
    after: &'static str,
    flags: [&'static str; 2],
    grads: [&'static str; 2],
    kernels: &'static str,
}

/// `MatMul`'s.
const MAT_MUL: TypeCheck = TypeCheck {
    op: "MatMul",
    mkl_op: "_MklMatMul",
    allowed: dtypes!(
        "bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, uint64, complex64, \
         complex128"
    ),
    signature: "a:T, b:T -> product:T",
    before: "attr=transpose_a:bool,default=false; attr=transpose_b:bool,default=false; ",
    after: "; attr=grad_a:bool,default=false; attr=grad_b:bool,default=false",
    flags: ["transpose_a", "transpose_b"],
    grads: ["grad_a", "grad_b"],
    kernels: "  device='XLA_CPU_JIT'; T in [DT_FLOAT, DT_DOUBLE, DT_INT32, \
DT_COMPLEX64, DT_INT64, DT_BFLOAT16, DT_COMPLEX128, DT_HALF]\n  device='CPU'; T in [DT_INT64]\n  \
device='CPU'; T in [DT_INT32]\n  device='CPU'; T in [DT_INT16]\n  device='CPU'; T in [DT_DOUBLE]\n  \
device='CPU'; T in [DT_FLOAT]\n  device='CPU'; T in [DT_BFLOAT16]\n  device='CPU'; T in [DT_HALF]\n  \
device='CPU'; T in [DT_COMPLEX128]\n  device='CPU'; T in [DT_COMPLEX64]\n",
};

/// `BatchMatMulV2`'s: `MatMul`'s types and `int16`.
const BATCH_MAT_MUL_V2: TypeCheck = TypeCheck {
    op: "BatchMatMulV2",
    mkl_op: "_MklBatchMatMulV2",
    allowed: dtypes!(
        "bfloat16, half, float, double, int16, int32, int64, uint8, uint16, uint32, uint64, complex64, \
         complex128"
    ),
    signature: "x:T, y:T -> output:T",
    before: "",
    after: "; attr=adj_x:bool,default=false; attr=adj_y:bool,default=false; \
            attr=grad_x:bool,default=false; attr=grad_y:bool,default=false",
    flags: ["adj_x", "adj_y"],
    grads: ["grad_x", "grad_y"],
    kernels: "  device='XLA_CPU_JIT'; T in [DT_FLOAT, DT_DOUBLE, DT_INT32, \
DT_UINT8, DT_INT16, DT_COMPLEX64, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_COMPLEX128, DT_HALF, \
DT_UINT32, DT_UINT64]\n  device='CPU'; T in [DT_INT64]\n  device='CPU'; T in [DT_INT32]\n  \
device='CPU'; T in [DT_INT16]\n  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]\n  \
device='CPU'; T in [DT_BFLOAT16]\n  device='CPU'; T in [DT_HALF]\n  \
device='CPU'; T in [DT_COMPLEX128]\n  device='CPU'; T in [DT_COMPLEX64]\n",
};

impl TypeCheck {
    /// Checks the first input's type `a` against the list, the second's `b` against `a`, and
    /// that `a` has a kernel; `flags` are the values of the op's two flags.
    fn check(&self, a: DataType, b: DataType, flags: [bool; 2]) -> Result<()> {
        let op = self.op;
        if !self.allowed.contains(&a) {
            return Err(not_in_type_list(
                op,
                a,
                self.allowed,
                self.signature,
                self.before,
                self.after,
            ));
        }
        if b != a {
            return Err(second_input_mismatch(op, self.mkl_op, a, b));
        }
        let has_kernel = matches!(
            a,
            DataType::BFLOAT16
                | DataType::HALF
                | DataType::FLOAT
                | DataType::DOUBLE
                | DataType::INT16
                | DataType::INT32
                | DataType::INT64
                | DataType::COMPLEX64
                | DataType::COMPLEX128
        );
        if !has_kernel {
            return Err(no_kernel(op, &self.attrs_text(a, flags), self.kernels));
        }
        Ok(())
    }

    /// The node's attrs as the `NotFound` text lists them: sorted by name, as TensorFlow's
    /// `SummarizeAttrs` does (`T=DT_UINT8, adj_x=false, adj_y=true, grad_x=false, ...`).
    fn attrs_text(&self, t: DataType, flags: [bool; 2]) -> String {
        let mut attrs = vec![("T", enum_name(t))];
        attrs.extend(self.flags.into_iter().zip(flags.map(|f| f.to_string())));
        attrs.extend(self.grads.map(|g| (g, false.to_string())));
        attrs.sort();
        let attrs: Vec<String> = attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        attrs.join(", ")
    }
}

fn dim(t: &TensorShape, d: usize) -> usize {
    t.dim_sizes()[d] as usize
}

/// TensorFlow's `{what}: [2,3] vs. [4,5]`, the operands' shapes.
fn two_shapes(op: &'static str, what: &str, a: &TensorShape, b: &TensorShape) -> Error {
    Error::invalid_argument(op, format!("{what}: {} vs. {}", dims(a), dims(b)))
}

/// TensorFlow's `Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]`, then `flags` (the
/// adjoint flags oneDNN's kernels add).
fn size_incompatible(op: &'static str, a: &TensorShape, b: &TensorShape, flags: &str) -> Error {
    Error::invalid_argument(
        op,
        format!(
            "Matrix size-incompatible: In[0]: {}, In[1]: {}{flags}",
            dims(a),
            dims(b)
        ),
    )
}

/// `MatMul`: the matrix product of `a` and `b` (each transposed first when its flag is set;
/// complex operands are not conjugated), TensorFlow's `tf.raw_ops.MatMul`.
///
/// Types: `bfloat16`, `half`, `float`, `double`, `int32`, `int64`, `complex64`, `complex128`
/// (`uint8` ... `uint64` are in the type list without a CPU kernel: TensorFlow's `NotFound`
/// error). `float`, `double` and the complex types run on the `gemm` crate; `half` and
/// `bfloat16` are widened to `float`, multiplied there and rounded once, as TensorFlow does;
/// integers wrap on overflow, as TensorFlow's do.
///
/// Accuracy against TensorFlow 2.21 (which sums in another order): each element `c_ij` of a
/// floating-point result satisfies `|ours - tf| <= 2 * K * eps * sum_p |a_ip| |b_pj|` (`K`
/// the inner dimension, `eps` the machine epsilon of the type, `float`'s for `half` and
/// `bfloat16` before their final rounding, which may then differ by one unit in the last
/// place), asserted over the recorded vectors; integers are exact.
///
/// # Errors
/// TensorFlow's texts: a type outside the list, a second input of another type, no kernel for
/// the type, operands that are not matrices (`In[0] ndims must be >= 2` for `float` and
/// `bfloat16`, whose kernels are oneDNN's; `In[0] and In[1] has different ndims: ...` /
/// `In[0] and In[1] ndims must be == 2: ...` for the others), inner dimensions that differ
/// (`Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]`); an allocation error when the
/// output does not fit in memory.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::linalg::mat_mul;
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2i64, 3].as_slice())?;
/// let b = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], [3i64, 2].as_slice())?;
/// let c = mat_mul(&a, &b, false, false)?;
/// assert_eq!(c.to_vec::<f32>()?, vec![4.0, 5.0, 10.0, 11.0]);
/// let e = mat_mul(&a, &a, false, false).unwrap_err();
/// assert_eq!(e.to_string(), "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn mat_mul(a: &Tensor, b: &Tensor, transpose_a: bool, transpose_b: bool) -> Result<Tensor> {
    const OP: &str = MAT_MUL.op;
    let dtype = a.dtype();
    MAT_MUL.check(dtype, b.dtype(), [transpose_a, transpose_b])?;
    let (sa, sb) = (a.shape(), b.shape());
    if onednn(dtype) {
        for (i, s) in [sa, sb].into_iter().enumerate() {
            if s.rank() != 2 {
                return Err(Error::invalid_argument(
                    OP,
                    format!("In[{i}] ndims must be >= 2"),
                ));
            }
        }
    } else {
        if sa.rank() != sb.rank() {
            return Err(two_shapes(
                OP,
                "In[0] and In[1] has different ndims",
                sa,
                sb,
            ));
        }
        if sa.rank() != 2 {
            return Err(Error::invalid_argument(
                OP,
                format!("In[0] and In[1] ndims must be == 2: {}", sa.rank()),
            ));
        }
    }
    let ka = dim(sa, if transpose_a { 0 } else { 1 });
    let kb = dim(sb, if transpose_b { 1 } else { 0 });
    if ka != kb {
        return Err(size_incompatible(OP, sa, sb, ""));
    }
    let m = dim(sa, if transpose_a { 1 } else { 0 });
    let n = dim(sb, if transpose_b { 0 } else { 1 });
    let g = Geometry {
        m,
        n,
        k: ka,
        trans_a: transpose_a,
        trans_b: transpose_b,
        conj_a: false,
        conj_b: false,
    };
    let shape = TensorShape::new(&[m as i64, n as i64])?;
    run(a, b, shape, &g, &[(0, 0)])
}

/// Runs the product over `pairs` into a new tensor of `shape`, on `a`'s element type.
pub(crate) fn run(
    a: &Tensor,
    b: &Tensor,
    shape: TensorShape,
    g: &Geometry,
    pairs: &[(usize, usize)],
) -> Result<Tensor> {
    let dtype = a.dtype();
    tensorcast_core::dispatch!(
        dtype,
        {FLOAT, DOUBLE, HALF, BFLOAT16, COMPLEX64, COMPLEX128, INT16, INT32, INT64} T => {
            let (da, db) = (data::<T>(a)?, data::<T>(b)?);
            output::<T>(dtype, shape, |o| T::batched(&da, &db, o, g, pairs))
        },
        _ => Err(Error::Internal(format!("matmul engine on {}", dtype.name())))
    )
}

/// The broadcast batch dims and the (x, y) batch item each output item reads.
pub(crate) type BatchPairs = (Vec<i64>, Vec<(usize, usize)>);

/// Broadcasts two batch shapes (numpy's rules): the output's batch dims and, for each output
/// batch item in row-major order, the index of the item it reads in each input (`None` when
/// they do not broadcast). `want_pairs` false skips the list (an empty output).
pub(crate) fn broadcast_batch(
    xb: &[i64],
    yb: &[i64],
    want_pairs: bool,
) -> Result<Option<BatchPairs>> {
    let rank = xb.len().max(yb.len());
    let at = |s: &[i64], i: usize| -> i64 {
        let off = rank - s.len();
        if i < off {
            1
        } else {
            s[i - off]
        }
    };
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let (x, y) = (at(xb, i), at(yb, i));
        out.push(if x == y {
            x
        } else if x == 1 {
            y
        } else if y == 1 {
            x
        } else {
            return Ok(None);
        });
    }
    if !want_pairs {
        return Ok(Some((out, Vec::new())));
    }
    let total: usize = out.iter().map(|&d| d as usize).product();
    let mut pairs = try_vec(total, (0usize, 0usize), DataType::INT64)?;
    // Row-major strides of each input's batch dims (0 where broadcast).
    let strides = |s: &[i64]| -> Vec<usize> {
        let mut st = vec![0usize; rank];
        let mut acc = 1usize;
        for i in (0..rank).rev() {
            let d = at(s, i) as usize;
            st[i] = if d == 1 { 0 } else { acc };
            acc *= d;
        }
        st
    };
    let (sx, sy) = (strides(xb), strides(yb));
    let mut idx = vec![0usize; rank];
    for p in pairs.iter_mut() {
        let x: usize = idx.iter().zip(&sx).map(|(i, s)| i * s).sum();
        let y: usize = idx.iter().zip(&sy).map(|(i, s)| i * s).sum();
        *p = (x, y);
        for d in (0..rank).rev() {
            idx[d] += 1;
            if idx[d] < out[d] as usize {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(Some((out, pairs)))
}

/// `BatchMatMulV2`: the matrix product of the last two dims of `x` and `y` (each adjoint, i.e.
/// transposed and conjugated, when its flag is set), over their leading batch dims broadcast
/// together (numpy's rules), TensorFlow's `tf.raw_ops.BatchMatMulV2`.
///
/// Types: `MatMul`'s and `int16`. Accuracy as [`mat_mul`]: `|ours - tf| <= 2 * K * eps *
/// sum_p |x_ip| |y_pj|` per element, asserted over the recorded vectors; integers exact.
///
/// # Errors
/// TensorFlow's texts: a type outside the list, a second input of another type, no kernel,
/// `In[0] ndims must be >= 2: 1`, `In[0] and In[1] must have compatible batch dimensions:
/// [2,2,3] vs. [3,3,5]`, `Matrix size-incompatible: In[0]: [2,2,3], In[1]: [2,4,5]` (the
/// oneDNN kernels of `float` and `bfloat16` add the adjoint flags: ` 0 0`); an allocation
/// error when the output does not fit in memory.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::linalg::batch_mat_mul_v2;
/// // Two 1x2 matrices times one shared 2x1 matrix.
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2i64, 1, 2].as_slice())?;
/// let y = Tensor::from_vec(vec![10.0f32, 1.0], [2i64, 1].as_slice())?;
/// let z = batch_mat_mul_v2(&x, &y, false, false)?;
/// assert_eq!(z.shape().dim_sizes(), &[2, 1, 1]);
/// assert_eq!(z.to_vec::<f32>()?, vec![12.0, 34.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn batch_mat_mul_v2(x: &Tensor, y: &Tensor, adj_x: bool, adj_y: bool) -> Result<Tensor> {
    const OP: &str = BATCH_MAT_MUL_V2.op;
    let dtype = x.dtype();
    BATCH_MAT_MUL_V2.check(dtype, y.dtype(), [adj_x, adj_y])?;
    let (sx, sy) = (x.shape(), y.shape());
    for (i, s) in [sx, sy].into_iter().enumerate() {
        if s.rank() < 2 {
            return Err(Error::invalid_argument(
                OP,
                format!("In[{i}] ndims must be >= 2: {}", s.rank()),
            ));
        }
    }
    let (rx, ry) = (sx.rank(), sy.rank());
    let (xd, yd) = (sx.dim_sizes(), sy.dim_sizes());
    let (xb, yb) = (&xd[..rx - 2], &yd[..ry - 2]);
    let Some((mut out_dims, _)) = broadcast_batch(xb, yb, false)? else {
        return Err(two_shapes(
            OP,
            "In[0] and In[1] must have compatible batch dimensions",
            sx,
            sy,
        ));
    };
    let kx = xd[if adj_x { rx - 2 } else { rx - 1 }];
    let ky = yd[if adj_y { ry - 1 } else { ry - 2 }];
    if kx != ky {
        let flags = if onednn(dtype) {
            format!(" {} {}", u8::from(adj_x), u8::from(adj_y))
        } else {
            String::new()
        };
        return Err(size_incompatible(OP, sx, sy, &flags));
    }
    let m = xd[if adj_x { rx - 1 } else { rx - 2 }];
    let n = yd[if adj_y { ry - 2 } else { ry - 1 }];
    out_dims.extend([m, n]);
    let shape = TensorShape::new(&out_dims)?;
    let complex = matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
    let g = Geometry {
        m: m as usize,
        n: n as usize,
        k: kx as usize,
        trans_a: adj_x,
        trans_b: adj_y,
        conj_a: adj_x && complex,
        conj_b: adj_y && complex,
    };
    if shape.num_elements() == 0 {
        return Tensor::new(dtype, shape);
    }
    let (_, pairs) = broadcast_batch(xb, yb, true)?.unwrap_or_default();
    run(x, y, shape, &g, &pairs)
}

fn rank_error(expected: usize, actual: usize) -> Error {
    Error::invalid_argument(
        "shape",
        format!("Shape must be rank {expected} but is rank {actual}"),
    )
}

fn merge_dims(a: i64, b: i64) -> Result<i64> {
    if a >= 0 && b >= 0 && a != b {
        return Err(Error::invalid_argument(
            "shape",
            format!("Dimensions must be equal, but are {a} and {b}"),
        ));
    }
    Ok(if a >= 0 { a } else { b })
}

/// `MatMul`'s shape function: `[m, n]` from the two matrices' partial shapes (unknown dims
/// are -1).
///
/// # Errors
/// `Shape must be rank 2 but is rank 3`; `Dimensions must be equal, but are 3 and 4` (the
/// inner dimensions), TensorFlow's texts without the node suffix.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::linalg::mat_mul_shape;
/// let a = PartialTensorShape::new(&[-1, 3])?;
/// let b = PartialTensorShape::unknown_rank();
/// assert_eq!(mat_mul_shape(&a, &b, false, false)?.dims(), Some(&[-1i64, -1][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn mat_mul_shape(
    a: &PartialTensorShape,
    b: &PartialTensorShape,
    transpose_a: bool,
    transpose_b: bool,
) -> Result<PartialTensorShape> {
    let get = |s: &PartialTensorShape| -> Result<[i64; 2]> {
        match s.dims() {
            None => Ok([-1, -1]),
            Some(d) if d.len() == 2 => Ok([d[0], d[1]]),
            Some(d) => Err(rank_error(2, d.len())),
        }
    };
    let (da, db) = (get(a)?, get(b)?);
    let (ta, tb) = (usize::from(transpose_a), usize::from(transpose_b));
    merge_dims(da[1 - ta], db[tb])?;
    PartialTensorShape::new(&[da[ta], db[1 - tb]])
}

/// TensorFlow's `BroadcastBinaryOpOutputShapeFnHelper` over partial dims (-1 unknown).
pub(crate) fn broadcast_partial(x: &[i64], y: &[i64]) -> Result<Vec<i64>> {
    let rank = x.len().max(y.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let (ox, oy) = (rank - x.len(), rank - y.len());
        let dx = if i < ox { 1 } else { x[i - ox] };
        let y_is_one = i < oy;
        let dy = if y_is_one { 1 } else { y[i - oy] };
        out.push(if dx < 0 || dy < 0 {
            // A known dim > 1 wins; a 1 yields to the other; else unknown.
            if dx > 1 || dy == 1 {
                dx
            } else if dy > 1 || dx == 1 {
                dy
            } else {
                -1
            }
        } else if dx == 1 || dy == 1 {
            if dx == 1 && !y_is_one {
                dy
            } else {
                dx
            }
        } else {
            merge_dims(dx, dy)?
        });
    }
    Ok(out)
}

/// `BatchMatMulV2`'s shape function: the broadcast batch dims, then `[m, n]`; an unknown rank
/// on either side gives an unknown rank.
///
/// # Errors
/// `Shape must be at least rank 2 but is rank 1`; `Dimensions must be equal, but are 3 and 4`
/// (inner dimensions, or batch dims that do not broadcast).
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::linalg::batch_mat_mul_v2_shape;
/// let x = PartialTensorShape::new(&[5, 1, 2, 3])?;
/// let y = PartialTensorShape::new(&[7, 3, 4])?;
/// let z = batch_mat_mul_v2_shape(&x, &y, false, false)?;
/// assert_eq!(z.dims(), Some(&[5i64, 7, 2, 4][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn batch_mat_mul_v2_shape(
    x: &PartialTensorShape,
    y: &PartialTensorShape,
    adj_x: bool,
    adj_y: bool,
) -> Result<PartialTensorShape> {
    let at_least = |s: &PartialTensorShape| -> Result<Option<Vec<i64>>> {
        match s.dims() {
            None => Ok(None),
            Some(d) if d.len() >= 2 => Ok(Some(d.to_vec())),
            Some(d) => Err(Error::invalid_argument(
                "shape",
                format!("Shape must be at least rank 2 but is rank {}", d.len()),
            )),
        }
    };
    let (dx, dy) = (at_least(x)?, at_least(y)?);
    let dim =
        |d: &Option<Vec<i64>>, from_end: usize| d.as_ref().map_or(-1, |v| v[v.len() - from_end]);
    merge_dims(
        dim(&dx, if adj_x { 2 } else { 1 }),
        dim(&dy, if adj_y { 1 } else { 2 }),
    )?;
    let (Some(vx), Some(vy)) = (&dx, &dy) else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let mut out = broadcast_partial(&vx[..vx.len() - 2], &vy[..vy.len() - 2])?;
    out.push(dim(&dx, if adj_x { 1 } else { 2 }));
    out.push(dim(&dy, if adj_y { 2 } else { 1 }));
    PartialTensorShape::new(&out)
}
