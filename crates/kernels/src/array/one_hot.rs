//! `OneHot`.

use std::ops::Range;
use tensorcast_core::dtypes;

use tensorcast_core::{DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{index_values, invalid, partial};
use super::engine::{check_output, produce, Elem, Kernel, Sink};

const INDEX_TYPES: &[DataType] = dtypes!("uint8, int8, int32, int64");

/// Unit = one prefix index: `depth * suffix` elements, `on` where the index equals the depth
/// position, `off` elsewhere (inputs: `[on, off]`).
struct OneHotKernel {
    indices: Vec<i64>,
    depth: usize,
    suffix: usize,
}

impl Kernel for OneHotKernel {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        let (on, off) = (&inputs[0][0], &inputs[1][0]);
        for p in units {
            let idx = &self.indices[p * self.suffix..(p + 1) * self.suffix];
            if self.suffix == 1 {
                let i = idx[0];
                if i >= 0 && (i as usize) < self.depth {
                    sink.fill(off, i as usize);
                    sink.fill(on, 1);
                    sink.fill(off, self.depth - i as usize - 1);
                } else {
                    sink.fill(off, self.depth);
                }
                continue;
            }
            for d in 0..self.depth as i64 {
                for &i in idx {
                    sink.fill(if i == d { on } else { off }, 1);
                }
            }
        }
    }
}

/// TensorFlow's `OneHot`: for each of `indices` (`uint8`, `int8`, `int32`, `int64`) a vector
/// of `depth` (an `int32` scalar) elements, `on_value` at the index and `off_value` elsewhere
/// (an index outside `[0, depth)` gives all `off_value`), inserted at `axis` (-1: last).
/// `on_value`/`off_value` are scalars of any dtype (strings included); exact bits.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::one_hot;
/// let t = one_hot(&Tensor::vector(&[1i32, -1]), &Tensor::from(3i32), &Tensor::from(5u8), &Tensor::from(0u8), -1)?;
/// assert_eq!(t.to_vec::<u8>()?, vec![0, 5, 0, 0, 0, 0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `Expected axis to be -1 or between [0, R).  But received: A`, `depth
/// must be a scalar, but got: [..]`, `on_value must be a scalar, but got: [..]`, `depth must
/// be non-negative, got: D`; mismatched or disallowed dtypes.
pub fn one_hot(
    indices: &Tensor,
    depth: &Tensor,
    on_value: &Tensor,
    off_value: &Tensor,
    axis: i64,
) -> Result<Tensor> {
    const OP: &str = "OneHot";
    let idx = index_values(OP, "TI", indices, INDEX_TYPES)?;
    Error::check_input_type(OP, 1, DataType::INT32, depth.dtype())?;
    Error::check_input_type(OP, 3, on_value.dtype(), off_value.dtype())?;
    let id = indices.shape().dim_sizes();
    let out_rank = id.len() as i64 + 1;
    if !(axis == -1 || (0..out_rank).contains(&axis)) {
        return Err(invalid(
            OP,
            format!("Expected axis to be -1 or between [0, {out_rank}).  But received: {axis}"),
        ));
    }
    for (name, t) in [
        ("depth", depth),
        ("on_value", on_value),
        ("off_value", off_value),
    ] {
        if t.dims() != 0 {
            return Err(invalid(
                OP,
                format!("{name} must be a scalar, but got: {}", t.shape()),
            ));
        }
    }
    let d = i64::from(depth.as_slice::<i32>()?[0]);
    if d < 0 {
        return Err(invalid(OP, format!("depth must be non-negative, got: {d}")));
    }
    let ax = if axis == -1 { id.len() } else { axis as usize };
    let mut out = id.to_vec();
    out.insert(ax, d);
    check_output(OP, on_value.dtype(), &out)?;
    let shape = TensorShape::new(&out)?;
    let suffix: usize = id[ax..].iter().map(|&v| v as usize).product();
    let prefix: usize = id[..ax].iter().map(|&v| v as usize).product();
    if shape.num_elements() == 0 {
        return Tensor::new(on_value.dtype(), &shape);
    }
    let kernel = OneHotKernel {
        indices: idx,
        depth: d as usize,
        suffix,
    };
    let _ = prefix;
    produce(
        OP,
        on_value.dtype(),
        &shape,
        &[on_value, off_value],
        d as usize * suffix,
        &kernel,
    )
}

/// `OneHot`'s shape function: `depth` (or an unknown dim) inserted at `axis`.
///
/// # Errors
/// `Expected axis to be -1 or between [0, R).  But received: A`.
pub fn one_hot_shape(
    indices: &PartialTensorShape,
    depth: Option<&Tensor>,
    axis: i64,
) -> Result<PartialTensorShape> {
    let Some(id) = indices.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    if axis < -1 {
        return Err(invalid("OneHot", "axis must be >= -1"));
    }
    let d = match depth {
        Some(t) => index_values("OneHot", "depth", t, &[DataType::INT32])?
            .first()
            .copied()
            .unwrap_or(-1),
        None => -1,
    };
    // TensorFlow's shape function takes the sub-shapes `[0, axis)` and `[axis, rank)`; an axis
    // beyond the rank gives an empty front and the whole shape behind (the kernel refuses it).
    let ax = if axis == -1 {
        id.len()
    } else if axis as usize > id.len() {
        0
    } else {
        axis as usize
    };
    let mut out = id.to_vec();
    out.insert(ax, d);
    partial(Some(out))
}
