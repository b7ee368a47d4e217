//! `Transpose`.

use tensorcast_core::{DataType, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{dt, index_values, invalid, no_kernel, partial, INT32_64};
use super::engine::{dense_strides, strided, StridedView};

/// Dtypes TensorFlow's CPU `Transpose` has no kernel for.
fn refused(d: DataType) -> bool {
    d.is_quantized() || d == DataType::INT4 || d == DataType::UINT4
}

/// TensorFlow's `Transpose`: `y.shape[i] = x.shape[perm[i]]`, exact bits, every dtype
/// TensorFlow's CPU kernel registers (not the quantized types, `int4`, `uint4`). `perm` is an
/// `int32` or `int64` vector. Shares `x`'s buffer when the permutation moves no data (the
/// identity, or axes of size 1 only); otherwise copies, with a blocked path when the innermost
/// output axis is strided and the next one dense (a 2-D or batched matrix transpose).
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::transpose;
/// let x = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2i64, 3])?;
/// let y = transpose(&x, &Tensor::vector(&[1i32, 0]))?;
/// assert_eq!(y.shape().dim_sizes(), &[3, 2]);
/// assert_eq!(y.to_vec::<i32>()?, vec![1, 4, 2, 5, 3, 6]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `perm must be rank 1, got shape [..]`, `transpose expects a vector of
/// size N. But input(1) is a vector of size M`, `P is out of range [0 .. N)`, `I is missing
/// from {..}.`; a `perm` dtype other than `int32`/`int64` ([`Error::NotInTypeList`](tensorcast_core::Error::NotInTypeList)); a dtype
/// without a kernel (`NOT_FOUND`).
pub fn transpose(x: &Tensor, perm: &Tensor) -> Result<Tensor> {
    const OP: &str = "Transpose";
    let p = index_values(OP, "Tperm", perm, INT32_64)?;
    if refused(x.dtype()) {
        return Err(no_kernel(
            OP,
            &format!("T={}, Tperm={}", dt(x.dtype()), dt(perm.dtype())),
        ));
    }
    if perm.dims() != 1 {
        return Err(invalid(
            OP,
            format!("perm must be rank 1, got shape {}", perm.shape()),
        ));
    }
    let rank = x.dims();
    if p.len() != rank {
        return Err(invalid(
            OP,
            format!(
                "transpose expects a vector of size {rank}. But input(1) is a vector of size {}",
                p.len()
            ),
        ));
    }
    let mut seen = vec![false; rank];
    let mut p = p;
    for d in p.iter_mut() {
        // TensorFlow 2.21 counts negative entries from the end.
        if *d < 0 && *d >= -(rank as i64) {
            *d += rank as i64;
        }
        if *d < 0 || *d >= rank as i64 {
            return Err(invalid(OP, format!("{d} is out of range [0 .. {rank})")));
        }
        seen[*d as usize] = true;
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        let list: Vec<String> = p.iter().map(|v| v.to_string()).collect();
        return Err(invalid(
            OP,
            format!("{missing} is missing from {{{}}}.", list.join(",")),
        ));
    }
    let in_dims = x.shape().dims_usize();
    let in_strides = dense_strides(&in_dims);
    let out_dims: Vec<usize> = p.iter().map(|&d| in_dims[d as usize]).collect();
    let strides: Vec<isize> = p.iter().map(|&d| in_strides[d as usize]).collect();
    let out_i64: Vec<i64> = out_dims.iter().map(|&d| d as i64).collect();
    let shape = TensorShape::new(&out_i64)?;
    strided(OP, x, &shape, &StridedView::new(&out_dims, &strides, 0))
}

/// `Transpose`'s shape function: the permuted shape where `perm` is known; where only the rank
/// is known, unknown dims (or the common dim, when all input dims are equal).
///
/// # Errors
/// TensorFlow's shape-function texts (`perm dim 3 is out of range of input rank 2`, rank
/// mismatches).
pub fn transpose_shape(
    x: &PartialTensorShape,
    perm_shape: &PartialTensorShape,
    perm: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "Transpose";
    if let Some(d) = perm_shape.dims() {
        if d.len() != 1 {
            return Err(invalid(
                OP,
                format!("Shape must be rank 1 but is rank {}", d.len()),
            ));
        }
    }
    let perm_len = perm_shape.dims().map(|d| d[0]).filter(|&d| d >= 0);
    let rank = match (x.rank(), perm_len) {
        (Some(r), Some(p)) if r as i64 != p => {
            return Err(invalid(OP, format!("Dimension must be {r} but is {p}")))
        }
        (Some(r), _) => r,
        (None, Some(p)) => p as usize,
        (None, None) => return Ok(PartialTensorShape::unknown_rank()),
    };
    let Some(perm) = perm else {
        return partial(Some(vec![-1; rank]));
    };
    let p = index_values(OP, "Tperm", perm, INT32_64)?;
    if p.len() != rank {
        return Err(invalid(
            OP,
            format!("Dimension must be {rank} but is {}", p.len()),
        ));
    }
    let mut out = Vec::with_capacity(rank);
    for &i in &p {
        if i < 0 || i >= rank as i64 {
            return Err(invalid(
                OP,
                format!("perm dim {i} is out of range of input rank {rank}"),
            ));
        }
        out.push(x.dims().map_or(-1, |d| d[i as usize]));
    }
    partial(Some(out))
}
