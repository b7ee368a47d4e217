//! What every data-movement op shares: reading index inputs (`int32`/`int64` tensors, as
//! TensorFlow's kernels read them), TensorFlow's texts for the errors every op can meet (no
//! kernel for a dtype, an output too large to allocate), and shape helpers.

use tensorcast_core::{Code, DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

/// `DT_FLOAT`: a dtype as TensorFlow's `NodeDef` attrs print it.
pub(crate) fn dt(d: DataType) -> String {
    d.proto_name().unwrap_or_else(|| d.number().to_string())
}

/// TensorFlow's `NOT_FOUND` error for a dtype its CPU kernels do not register: the first line
/// of its text, `Could not find device for node: {{node Op}} = Op[attrs]` (TensorFlow then lists
/// every registered kernel, which tensorcast leaves out).
pub(crate) fn no_kernel(op: &'static str, attrs: &str) -> Error {
    Error::Op {
        op,
        code: Code::NotFound,
        message: format!("Could not find device for node: {{{{node {op}}}}} = {op}[{attrs}]"),
    }
}

/// TensorFlow's `RESOURCE_EXHAUSTED` text for an output that cannot be allocated.
pub(crate) fn oom(op: &'static str, dtype: DataType, dims: &[i64]) -> Error {
    Error::Op {
        op,
        code: Code::ResourceExhausted,
        message: format!(
            "OOM when allocating tensor with shape{} and type {} on \
             /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu",
            dims_text(dims),
            dtype.name()
        ),
    }
}

/// `[2,3]`, as TensorFlow prints a shape (and a list of dims or indices: `[-1,4]`).
pub(crate) fn dims_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// `[2,?]`, as TensorFlow prints a partial shape (`?` for an unknown rank).
pub(crate) fn partial_text(s: &PartialTensorShape) -> String {
    match s.dims() {
        None => "?".to_string(),
        Some(d) => {
            let parts: Vec<String> = d
                .iter()
                .map(|&x| {
                    if x < 0 {
                        "?".to_string()
                    } else {
                        x.to_string()
                    }
                })
                .collect();
            format!("[{}]", parts.join(","))
        }
    }
}

/// `op`'s `INVALID_ARGUMENT` error with `message`.
pub(crate) fn invalid(op: &'static str, message: impl Into<String>) -> Error {
    Error::invalid_argument(op, message)
}

/// The values of an index input (`int32` or `int64`, or the other integer types an op
/// allows), widened to `i64`. Other dtypes are TensorFlow's type-list error for `attr`.
pub(crate) fn index_values(
    op: &'static str,
    attr: &'static str,
    t: &Tensor,
    allowed: &'static [DataType],
) -> Result<Vec<i64>> {
    if !allowed.contains(&t.dtype()) {
        return Err(Error::NotInTypeList {
            op,
            attr,
            dtype: t.dtype(),
            allowed,
        });
    }
    let n = t.num_elements();
    if n == 0 {
        return Ok(Vec::new());
    }
    Ok(match t.dtype() {
        DataType::INT32 => t.as_slice::<i32>()?.iter().map(|&v| i64::from(v)).collect(),
        DataType::INT64 => t.as_slice::<i64>()?.to_vec(),
        DataType::INT16 => t.as_slice::<i16>()?.iter().map(|&v| i64::from(v)).collect(),
        DataType::INT8 => t.as_slice::<i8>()?.iter().map(|&v| i64::from(v)).collect(),
        DataType::UINT8 => t.as_slice::<u8>()?.iter().map(|&v| i64::from(v)).collect(),
        DataType::UINT16 => t.as_slice::<u16>()?.iter().map(|&v| i64::from(v)).collect(),
        other => {
            return Err(Error::NotInTypeList {
                op,
                attr,
                dtype: other,
                allowed,
            })
        }
    })
}

/// `int32` and `int64`: the index types of most ops.
pub(crate) const INT32_64: &[DataType] = &[DataType::INT32, DataType::INT64];

/// A shape from dims already checked to be non-negative, or TensorFlow's error when their
/// product overflows (`Shape [..] would have more than 2**63 - 1 elements`).
pub(crate) fn shape_of(op: &'static str, dims: &[i64]) -> Result<TensorShape> {
    let mut total: i64 = 1;
    for &d in dims {
        if d < 0 {
            return Err(invalid(op, format!("Dimension {d} must be >= 0")));
        }
        total = match total.checked_mul(d) {
            Some(t) => t,
            None => {
                return Err(invalid(
                    op,
                    format!(
                        "Shape {} would have more than 2**63 - 1 elements",
                        dims_text(dims)
                    ),
                ))
            }
        };
    }
    TensorShape::new(dims).map_err(|_| {
        invalid(
            op,
            format!(
                "Shape {} would have more than 2**63 - 1 elements",
                dims_text(dims)
            ),
        )
    })
}

/// An axis in `[-rank, rank)` made non-negative, or `None`.
pub(crate) fn canonical_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        None
    } else if axis < 0 {
        Some((axis + r) as usize)
    } else {
        Some(axis as usize)
    }
}

/// The rank of an op's output that is the rank of `input` and the row count of a per-dim
/// operand (`Pad`'s paddings, `Slice`'s begin, of shape `rows_shape`): `None` when neither
/// tells it; TensorFlow's rank error when they disagree.
pub(crate) fn rank_of_input_and_rows(
    op: &'static str,
    input: &PartialTensorShape,
    rows_shape: &PartialTensorShape,
) -> Result<Option<usize>> {
    let rows = rows_shape
        .dims()
        .and_then(|d| d.first().copied())
        .filter(|&v| v >= 0);
    Ok(match (input.rank(), rows) {
        (Some(r), Some(n)) if r as i64 != n => {
            return Err(invalid(
                op,
                format!("Shape must be rank {n} but is rank {r}"),
            ))
        }
        (Some(r), _) => Some(r),
        (None, Some(n)) => Some(n as usize),
        (None, None) => None,
    })
}

/// A partial shape from its dims (`-1` unknown); `None` for an unknown rank.
pub(crate) fn partial(dims: Option<Vec<i64>>) -> Result<PartialTensorShape> {
    match dims {
        None => Ok(PartialTensorShape::unknown_rank()),
        Some(d) => PartialTensorShape::new(&d),
    }
}
