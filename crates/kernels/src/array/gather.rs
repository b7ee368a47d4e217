//! `GatherV2`.

use std::ops::Range;

use tensorcast_core::{DataType, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{dims_text, dt, index_values, invalid, no_kernel, partial};
use super::engine::{produce, Elem, Kernel, Sink};

/// Unit `r` = (batch `b`, outer `o`, index `i`): the `inner` elements of params at
/// `[b, o, indices[b, i], :]`.
struct GatherKernel {
    indices: Vec<i64>,
    n_idx: usize,
    outer: usize,
    gather_dim: usize,
    inner: usize,
}

impl Kernel for GatherKernel {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        let src = inputs[0];
        for r in units {
            let i = r % self.n_idx;
            let rest = r / self.n_idx;
            let o = rest % self.outer;
            let b = rest / self.outer;
            let g = self.indices[b * self.n_idx + i] as usize;
            let at = ((b * self.outer + o) * self.gather_dim + g) * self.inner;
            sink.slice(&src[at..at + self.inner]);
        }
    }
}

const INDEX_TYPES: &[DataType] = &[DataType::INT16, DataType::INT32, DataType::INT64];
const AXIS_TYPES: &[DataType] = &[DataType::INT32, DataType::INT64];

/// `indices[i,j]`: TensorFlow's `SliceDebugString` of a flat position.
fn position(shape: &[i64], flat: usize) -> String {
    match shape.len() {
        0 => String::new(),
        1 => format!("[{flat}]"),
        _ => {
            let mut idx = vec![0i64; shape.len()];
            let mut r = flat as i64;
            for d in (0..shape.len()).rev() {
                idx[d] = r % shape[d].max(1);
                r /= shape[d].max(1);
            }
            dims_text(&idx)
        }
    }
}

/// TensorFlow's `GatherV2` (`tf.gather`): slices of `params` along `axis` (an `int32`/`int64`
/// scalar) at `indices` (`int16`/`int32`/`int64`), with `batch_dims` leading dims shared by
/// params and indices. Output shape `params[:axis] + indices[batch_dims:] + params[axis+1:]`.
/// Exact bits; every dtype but `int4`/`uint4`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::gather_v2;
/// let p = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[3i64, 2])?;
/// let g = gather_v2(&p, &Tensor::vector(&[2i32, 0]), &Tensor::from(0i32), 0)?;
/// assert_eq!(g.to_vec::<i32>()?, vec![5, 6, 1, 2]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `indices[I] = V is not in [0, D)`, `axis must be scalar`, `Shape must
/// be at least rank R but is rank S`, the batch_dims checks; no kernel (`NOT_FOUND`).
pub fn gather_v2(
    params: &Tensor,
    indices: &Tensor,
    axis: &Tensor,
    batch_dims: i64,
) -> Result<Tensor> {
    const OP: &str = "GatherV2";
    let idx = index_values(OP, "Tindices", indices, INDEX_TYPES)?;
    let ax = index_values(OP, "Taxis", axis, AXIS_TYPES)?;
    if matches!(params.dtype(), DataType::INT4 | DataType::UINT4) {
        return Err(no_kernel(
            OP,
            &format!(
                "Taxis={}, Tindices={}, Tparams={}, batch_dims={batch_dims}",
                dt(axis.dtype()),
                dt(indices.dtype()),
                dt(params.dtype())
            ),
        ));
    }
    if params.dims() == 0 {
        return Err(invalid(OP, "params must be at least 1 dimensional"));
    }
    if axis.dims() != 0 {
        return Err(invalid(OP, "axis must be scalar"));
    }
    let prank = params.dims() as i64;
    let mut a = ax[0];
    at_least_rank_for_axis(a, prank)?;
    if a < 0 {
        a += prank;
    }
    let irank = indices.dims() as i64;
    let mut bd = batch_dims;
    if bd != 0 {
        if bd < -irank || bd > irank {
            return Err(invalid(
                OP,
                format!(
                    "Expected batch_dims in the range [{}, {irank}], but got {bd}",
                    -irank
                ),
            ));
        }
        if bd < 0 {
            bd += irank;
        }
        if bd >= prank {
            return Err(invalid(
                OP,
                format!("batch_dims ({bd}) must be less than rank(params) ({prank})."),
            ));
        }
        if a < bd {
            return Err(invalid(
                OP,
                format!("batch_dims ({bd}) must be less than or equal to axis ({a})."),
            ));
        }
        for i in 0..bd as usize {
            let (p, q) = (
                params.shape().dim_sizes()[i],
                indices.shape().dim_sizes()[i],
            );
            if p != q {
                return Err(invalid(
                    OP,
                    format!("params.shape[{i}]: {p} should be equal to indices.shape[{i}]: {q}"),
                ));
            }
        }
    }
    let (a, bd) = (a as usize, bd as usize);
    let pd = params.shape().dim_sizes();
    let id = indices.shape().dim_sizes();
    let mut out: Vec<i64> = pd[..a].to_vec();
    out.extend_from_slice(&id[bd..]);
    out.extend_from_slice(&pd[a + 1..]);
    let shape = TensorShape::new(&out)?;
    let batch: usize = pd[..bd].iter().map(|&d| d as usize).product();
    let outer: usize = pd[bd..a].iter().map(|&d| d as usize).product();
    let gather_dim = pd[a];
    let inner: usize = pd[a + 1..].iter().map(|&d| d as usize).product();
    let n_idx: usize = id[bd..].iter().map(|&d| d as usize).product();
    if outer > 0 && inner > 0 && batch > 0 {
        if let Some(bad) = idx.iter().position(|&v| v < 0 || v >= gather_dim) {
            return Err(invalid(
                OP,
                format!(
                    "indices{} = {} is not in [0, {gather_dim})",
                    position(id, bad),
                    idx[bad]
                ),
            ));
        }
    }
    if shape.num_elements() == 0 {
        return Tensor::new(params.dtype(), &shape);
    }
    let kernel = GatherKernel {
        indices: idx,
        n_idx,
        outer,
        gather_dim: gather_dim as usize,
        inner,
    };
    produce(OP, params.dtype(), &shape, &[params], inner, &kernel)
}

/// `GatherV2`'s shape function.
///
/// # Errors
/// `Shape must be at least rank R but is rank S` for an axis beyond the params' rank.
pub fn gather_v2_shape(
    params: &PartialTensorShape,
    indices: &PartialTensorShape,
    axis: Option<&Tensor>,
    batch_dims: i64,
) -> Result<PartialTensorShape> {
    const OP: &str = "GatherV2";
    let (Some(pd), Some(id)) = (params.dims(), indices.dims()) else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let bd = if batch_dims < 0 {
        batch_dims + id.len() as i64
    } else {
        batch_dims
    }
    .max(0) as usize;
    let Some(axis) = axis else {
        let rank = pd.len() + id.len() - bd.min(id.len()) - 1;
        return partial(Some(vec![-1; rank]));
    };
    let a = index_values(OP, "Taxis", axis, AXIS_TYPES)?
        .first()
        .copied()
        .unwrap_or(0);
    let prank = pd.len() as i64;
    at_least_rank_for_axis(a, prank)?;
    let a = if a < 0 { a + prank } else { a } as usize;
    let mut out: Vec<i64> = pd[..a].to_vec();
    out.extend_from_slice(&id[bd.min(id.len())..]);
    out.extend_from_slice(&pd[a + 1..]);
    partial(Some(out))
}

/// `params` of rank `prank` must have axis `a` (`-prank <= a < prank`), with TensorFlow's
/// message for a rank too small.
fn at_least_rank_for_axis(a: i64, prank: i64) -> Result<()> {
    let min = if a < 0 {
        a.saturating_neg()
    } else {
        a.saturating_add(1)
    };
    if prank < min {
        return Err(invalid(
            "GatherV2",
            format!("Shape must be at least rank {min} but is rank {prank}"),
        ));
    }
    Ok(())
}
