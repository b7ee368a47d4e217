//! Helpers the linear-algebra and convolution kernels share: typed access to inputs whatever
//! their address, fallible scratch vectors, and TensorFlow's texts for a dtype an op's type
//! list refuses or that has no CPU kernel.

use std::borrow::Cow;

use tensorcast_core::{Code, DataType, Element, Error, Result, Tensor, TensorShape};

/// Whether TensorFlow's CPU build runs `dtype` through its oneDNN kernels (`_MklMatMul`,
/// `_MklNativeConv2D`, `_MklNativeAvgPool`, ...), whose checks and error texts differ from
/// Eigen's.
pub(crate) fn onednn(dtype: DataType) -> bool {
    dtype == DataType::FLOAT || dtype == DataType::BFLOAT16
}

/// TensorFlow's error for a second input whose dtype differs from the first's: the oneDNN
/// kernel (`mkl`) names it where `expected` runs on oneDNN, else the op.
pub(crate) fn second_input_mismatch(
    op: &'static str,
    mkl: &'static str,
    expected: DataType,
    actual: DataType,
) -> Error {
    Error::InputTypeMismatch {
        op: if onednn(expected) { mkl } else { op },
        index: 1,
        expected,
        actual,
    }
}

/// The elements of `t` as a slice: borrowed when its buffer is aligned for `T`, else copied.
pub(crate) fn data<T: Element + Clone>(t: &Tensor) -> Result<Cow<'_, [T]>> {
    if t.num_elements() == 0 {
        return Ok(Cow::Owned(Vec::new()));
    }
    match t.as_slice::<T>() {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(Error::Misaligned { .. }) => Ok(Cow::Owned(t.unaligned_flat::<T>()?.to_vec())),
        Err(e) => Err(e),
    }
}

/// An output tensor of `dtype` and `shape` that `f` fills: `f` must write every element, as
/// they start zeroed or with an earlier tensor's stale values ([`Tensor::for_overwrite`]: no
/// zero fill first, the cost TensorFlow's kernels do not pay either). An output over the
/// data-movement ops' limit (1 TiB) is refused
/// before the allocator is asked, and one the allocator cannot give is TensorFlow's
/// `RESOURCE_EXHAUSTED` text (`OOM when allocating tensor with shape[...] and type float on
/// ... by allocator mklcpu`), never an abort.
pub(crate) fn output<T: Element>(
    dtype: DataType,
    shape: TensorShape,
    f: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<Tensor> {
    // TensorFlow's kernels fail in `allocate_output`, whose message names no op.
    const OP: &str = "allocate_output";
    crate::array::check_output(OP, dtype, shape.dim_sizes())?;
    let dims = shape.dim_sizes().to_vec();
    let mut out = Tensor::for_overwrite(dtype, shape).map_err(|e| match e {
        Error::Alloc(_) | Error::OutOfMemory { .. } => crate::array::oom(OP, dtype, &dims),
        e => e,
    })?;
    if out.num_elements() > 0 {
        f(out.as_mut_slice::<T>()?)?;
    }
    Ok(out)
}

/// A vector of `n` copies of `v`, its memory reserved fallibly.
pub(crate) fn try_vec<T: Clone>(n: usize, v: T, dtype: DataType) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        dtype,
        elements: n as u64,
    })?;
    out.resize(n, v);
    Ok(out)
}

/// `TensorShape::DebugString`'s dims: `[2,3]`.
pub(crate) fn dims(shape: &TensorShape) -> String {
    crate::array::common::dims_text(shape.dim_sizes())
}

/// What TensorFlow's eager runtime says of a dtype an op's `T` does not accept: the first
/// line, then the `NodeDef` and the `OpDef` (`before` the `T` attr and `after` it, as the op
/// registers them).
pub(crate) fn not_in_type_list(
    op: &'static str,
    dtype: DataType,
    allowed: &[DataType],
    signature: &str,
    before: &str,
    after: &str,
) -> Error {
    let names: Vec<String> = allowed.iter().map(|d| d.name()).collect();
    let enums: Vec<String> = allowed
        .iter()
        .map(|d| format!("DT_{}", d.name().to_uppercase()))
        .collect();
    Error::invalid_argument(
        op,
        format!(
            "Value for attr 'T' of {} is not in the list of allowed values: {}\n\t; NodeDef: \
             {{{{node {op}}}}}; Op<name={op}; signature={signature}; {before}attr=T:type,allowed=[{}]{after}>",
            dtype.name(),
            names.join(", "),
            enums.join(", ")
        ),
    )
}

/// TensorFlow's `NotFound` error for a dtype in an op's type list without a CPU kernel:
/// the node with its attrs (`attrs`, sorted as TensorFlow prints them, `T` first) and the
/// kernels registered for the op (`registered`, one line each, as TensorFlow lists them).
pub(crate) fn no_kernel(op: &'static str, attrs: &str, registered: &str) -> Error {
    Error::Op {
        op,
        code: Code::NotFound,
        message: format!(
            "Could not find device for node: {{{{node {op}}}}} = {op}[{attrs}]\nAll kernels \
             registered for op {op}:\n{registered}"
        ),
    }
}

/// `DT_FLOAT`-style enum name of a dtype.
pub(crate) fn enum_name(dtype: DataType) -> String {
    format!("DT_{}", dtype.name().to_uppercase())
}
