//! Ops that read or change only the shape, or build a tensor from a value: `Squeeze`,
//! `ExpandDims`, `Size`, `Rank`, `ShapeN`, `ZerosLike`, `OnesLike`, `Fill`.

use std::ops::Range;
use tensorcast_core::dtypes;

use tensorcast_core::{dispatch, DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{
    canonical_axis, dt, index_values, invalid, no_kernel, partial, shape_of, INT32_64,
};
use super::engine::{produce, Elem, Kernel, Sink};

/// TensorFlow's `Squeeze`: `input` without its size-1 axes (all of them when `axis` is empty,
/// else those listed, negative counting from the end). Shares the input's buffer. Every dtype.
///
/// ```
/// use tensorcast_core::{DataType, Tensor};
/// use tensorcast_kernels::array::squeeze;
/// let x = Tensor::new(DataType::FLOAT, &[1i64, 2, 1])?;
/// assert_eq!(squeeze(&x, &[])?.shape().dim_sizes(), &[2]);
/// assert_eq!(squeeze(&x, &[-1])?.shape().dim_sizes(), &[1, 2]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `Tried to squeeze dim index A for tensor with R dimensions.`, `Can not squeeze dim[A],
/// expected a dimension of 1, got S`.
pub fn squeeze(input: &Tensor, axis: &[i64]) -> Result<Tensor> {
    let dims = squeeze_dims("Squeeze", input.shape().dim_sizes(), axis, true)?;
    input.reshape(TensorShape::new(&dims)?)
}

fn squeeze_dims(op: &'static str, d: &[i64], axis: &[i64], eager: bool) -> Result<Vec<i64>> {
    let rank = d.len();
    let mut wanted = vec![false; rank];
    for (k, &a) in axis.iter().enumerate() {
        let Some(i) = canonical_axis(a, rank) else {
            return Err(invalid(
                op,
                if eager {
                    format!("Tried to squeeze dim index {a} for tensor with {rank} dimensions.")
                } else {
                    format!("squeeze_dims[{k}] not in [-{rank},{rank}).")
                },
            ));
        };
        wanted[i] = true;
    }
    let mut out = Vec::with_capacity(rank);
    for (i, &s) in d.iter().enumerate() {
        if axis.is_empty() {
            if s != 1 {
                out.push(s);
            }
        } else if wanted[i] {
            if s >= 0 && s != 1 {
                return Err(invalid(
                    op,
                    format!("Can not squeeze dim[{i}], expected a dimension of 1, got {s}"),
                ));
            }
        } else {
            out.push(s);
        }
    }
    Ok(out)
}

/// `Squeeze`'s shape function (an unknown dim is kept unless listed in `axis`; with an
/// unknown rank the result's rank is unknown).
///
/// # Errors
/// As [`squeeze`].
pub fn squeeze_shape(input: &PartialTensorShape, axis: &[i64]) -> Result<PartialTensorShape> {
    let Some(d) = input.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    if axis.is_empty() && d.contains(&-1) {
        return Ok(PartialTensorShape::unknown_rank());
    }
    partial(Some(squeeze_dims("Squeeze", d, axis, false)?))
}

/// TensorFlow's `ExpandDims`: `input` with a size-1 axis inserted at `axis` (a one-element
/// `int32`/`int64` tensor in `[-R-1, R]`). Shares the input's buffer. Every dtype.
///
/// # Errors
/// `'dim' must be a tensor with a single value`, `Tried to expand dim index A for tensor with
/// R dimensions.`
pub fn expand_dims(input: &Tensor, axis: &Tensor) -> Result<Tensor> {
    let dims = expand_dims_of("ExpandDims", input.shape().dim_sizes(), axis)?;
    input.reshape(TensorShape::new(&dims)?)
}

fn expand_dims_of(op: &'static str, d: &[i64], axis: &Tensor) -> Result<Vec<i64>> {
    let a = index_values(op, "Tdim", axis, INT32_64)?;
    if a.len() != 1 {
        return Err(invalid(op, "'dim' must be a tensor with a single value"));
    }
    let rank = d.len() as i64;
    let a = a[0];
    if a < -1 - rank || a > rank {
        return Err(invalid(
            op,
            format!("Tried to expand dim index {a} for tensor with {rank} dimensions."),
        ));
    }
    let at = if a < 0 { a + rank + 1 } else { a } as usize;
    let mut out = d.to_vec();
    out.insert(at, 1);
    Ok(out)
}

/// `ExpandDims`' shape function.
///
/// # Errors
/// As [`expand_dims`].
pub fn expand_dims_shape(
    input: &PartialTensorShape,
    axis: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    let (Some(d), Some(axis)) = (input.dims(), axis) else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let a = index_values("ExpandDims", "Tdim", axis, INT32_64)?;
    let rank = d.len() as i64;
    if let Some(&v) = a.first() {
        if v < -1 - rank || v > rank {
            return Err(invalid(
                "ExpandDims",
                format!("dim {v} not in the interval [{}, {rank}].", -1 - rank),
            ));
        }
    }
    partial(Some(expand_dims_of("ExpandDims", d, axis)?))
}

fn out_type_check(op: &'static str, out_type: DataType) -> Result<()> {
    if !INT32_64.contains(&out_type) {
        return Err(Error::NotInTypeList {
            op,
            attr: "out_type",
            dtype: out_type,
            allowed: INT32_64,
        });
    }
    Ok(())
}

fn int_scalar(op: &'static str, v: i64, out_type: DataType) -> Result<Tensor> {
    if out_type == DataType::INT32 {
        let v = i32::try_from(v).map_err(|_| {
            invalid(
                op,
                "Number of elements was larger than representable by 32-bit output type",
            )
        })?;
        Ok(Tensor::from(v))
    } else {
        Ok(Tensor::from(v))
    }
}

/// TensorFlow's `Size`: the element count of `input` as an `out_type` (`int32` or `int64`)
/// scalar.
///
/// # Errors
/// `out_type` not `int32`/`int64` ([`Error::NotInTypeList`](tensorcast_core::Error::NotInTypeList)); a count beyond `int32`.
pub fn size(input: &Tensor, out_type: DataType) -> Result<Tensor> {
    out_type_check("Size", out_type)?;
    int_scalar("Size", input.num_elements(), out_type)
}

/// `Size`'s shape function: a scalar.
pub fn size_shape() -> PartialTensorShape {
    PartialTensorShape::from(&TensorShape::scalar())
}

/// TensorFlow's `Rank`: the rank of `input` as an `int32` scalar.
pub fn rank(input: &Tensor) -> Tensor {
    Tensor::from(input.dims() as i32)
}

/// `Rank`'s shape function: a scalar.
pub fn rank_shape() -> PartialTensorShape {
    PartialTensorShape::from(&TensorShape::scalar())
}

/// TensorFlow's `ShapeN`: the shape of each input as an `out_type` (`int32`/`int64`) vector.
///
/// # Errors
/// `out_type` not `int32`/`int64`; a dim beyond `int32` for `int32`.
pub fn shape_n(inputs: &[&Tensor], out_type: DataType) -> Result<Vec<Tensor>> {
    out_type_check("ShapeN", out_type)?;
    inputs
        .iter()
        .map(|t| {
            let d = t.shape().dim_sizes();
            if out_type == DataType::INT32 {
                let v: Vec<i32> = d
                    .iter()
                    .map(|&x| {
                        i32::try_from(x).map_err(|_| {
                            invalid(
                                "ShapeN",
                                format!("Shape output type is 32-bit  but dim 0 is {x}"),
                            )
                        })
                    })
                    .collect::<Result<_>>()?;
                Ok(Tensor::vector(&v))
            } else {
                Ok(Tensor::vector(d))
            }
        })
        .collect()
}

/// `ShapeN`'s shape function: a vector of each input's rank (unknown length for an unknown
/// rank).
///
/// # Errors
/// Never in practice (building the partial shapes).
pub fn shape_n_shape(inputs: &[&PartialTensorShape]) -> Result<Vec<PartialTensorShape>> {
    inputs
        .iter()
        .map(|s| partial(Some(vec![s.rank().map_or(-1, |r| r as i64)])))
        .collect()
}

/// A fill of input 0's single element.
struct FillKernel;

impl Kernel for FillKernel {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        sink.fill(&inputs[0][0], units.len());
    }
}

fn filled(op: &'static str, value: &Tensor, shape: &TensorShape) -> Result<Tensor> {
    produce(op, value.dtype(), shape, &[value], 1, &FillKernel)
}

/// TensorFlow's `ZerosLike`: zeros of `x`'s shape and dtype (empty strings for `string`).
/// Every dtype TensorFlow's CPU kernel registers (not the quantized, float8 or 4-bit types).
///
/// # Errors
/// A dtype without a kernel (`NOT_FOUND`); allocation failure (TensorFlow's OOM text).
pub fn zeros_like(x: &Tensor) -> Result<Tensor> {
    let d = x.dtype();
    if d.is_quantized()
        || matches!(
            d,
            DataType::FLOAT8_E4M3FN | DataType::FLOAT8_E5M2 | DataType::INT4 | DataType::UINT4
        )
        || !d.is_known()
    {
        return Err(no_kernel("ZerosLike", &format!("T={}", dt(d))));
    }
    Tensor::new(d, x.shape())
}

const ONES_LIKE_TYPES: &[DataType] = dtypes!(
    "bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64, \
     complex64, complex128, bool"
);

/// TensorFlow's `OnesLike`: ones of `x`'s shape and dtype (`true` for `bool`).
///
/// # Errors
/// A dtype outside `OnesLike`'s type list ([`Error::NotInTypeList`](tensorcast_core::Error::NotInTypeList)).
pub fn ones_like(x: &Tensor) -> Result<Tensor> {
    let d = x.dtype();
    if !ONES_LIKE_TYPES.contains(&d) {
        return Err(Error::NotInTypeList {
            op: "OnesLike",
            attr: "T",
            dtype: d,
            allowed: ONES_LIKE_TYPES,
        });
    }
    let one: Tensor = dispatch!(d, {BFLOAT16, HALF, FLOAT, DOUBLE, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, COMPLEX64, COMPLEX128, BOOL} T => Tensor::scalar_of(<T as One>::one()), _ => return Err(Error::InvalidDtype { dtype: d }));
    filled("OnesLike", &one, x.shape())
}

/// The value one in each dtype `OnesLike` takes.
trait One {
    fn one() -> Self;
}
macro_rules! one_num {
    ($($t:ty),*) => { $(impl One for $t { fn one() -> Self { 1 as $t } })* };
}
one_num!(f32, f64, i8, u8, i16, u16, i32, u32, i64, u64);
impl One for bool {
    fn one() -> Self {
        true
    }
}
impl One for tensorcast_core::f16 {
    fn one() -> Self {
        tensorcast_core::f16::ONE
    }
}
impl One for tensorcast_core::bf16 {
    fn one() -> Self {
        tensorcast_core::bf16::ONE
    }
}
impl One for tensorcast_core::Complex32 {
    fn one() -> Self {
        tensorcast_core::Complex32::new(1.0, 0.0)
    }
}
impl One for tensorcast_core::Complex64 {
    fn one() -> Self {
        tensorcast_core::Complex64::new(1.0, 0.0)
    }
}

/// `ZerosLike`/`OnesLike`'s shape function: the input's shape.
pub fn like_shape(x: &PartialTensorShape) -> PartialTensorShape {
    x.clone()
}

/// TensorFlow's `Fill`: a tensor of shape `dims` (an `int32`/`int64` vector) with every element
/// `value` (a scalar). Every dtype TensorFlow's CPU kernel registers (not the float8 types).
/// A shape whose count overflows is TensorFlow's error; one too large to allocate is its OOM
/// text, never an abort.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::fill;
/// let t = fill(&Tensor::vector(&[2i32, 2]), &Tensor::from(7i64))?;
/// assert_eq!(t.to_vec::<i64>()?, vec![7; 4]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `dims must represent a vector, got shape [..]`, `value must represent a scalar, got shape
/// [..]`, `Dimension D must be >= 0`, `Shape [..] would have more than 2**63 - 1 elements`, OOM,
/// no kernel (`NOT_FOUND`).
pub fn fill(dims: &Tensor, value: &Tensor) -> Result<Tensor> {
    const OP: &str = "Fill";
    let d = index_values(OP, "index_type", dims, INT32_64)?;
    if matches!(
        value.dtype(),
        DataType::FLOAT8_E4M3FN | DataType::FLOAT8_E5M2
    ) {
        return Err(no_kernel(
            OP,
            &format!("T={}, index_type={}", dt(value.dtype()), dt(dims.dtype())),
        ));
    }
    if dims.dims() != 1 {
        return Err(invalid(
            OP,
            format!("dims must represent a vector, got shape {}", dims.shape()),
        ));
    }
    if !(value.dims() == 0 || (value.dims() == 1 && value.num_elements() == 1)) {
        return Err(invalid(
            OP,
            format!("value must represent a scalar, got shape {}", value.shape()),
        ));
    }
    let shape = shape_of(OP, &d)?;
    filled(OP, value, &shape)
}

/// `Fill`'s shape function: the shape `dims` holds (unknown dims where `dims` is unknown).
///
/// # Errors
/// `Cannot create a tensor with a negative dimension`-style texts for negative dims.
pub fn fill_shape(
    dims_shape: &PartialTensorShape,
    dims: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "Fill";
    let Some(dims) = dims else {
        return match dims_shape.dims() {
            Some([n]) if *n >= 0 => partial(Some(vec![-1; *n as usize])),
            _ => Ok(PartialTensorShape::unknown_rank()),
        };
    };
    let d = index_values(OP, "index_type", dims, INT32_64)?;
    for &x in &d {
        if x < 0 {
            return Err(invalid(OP, "Fill dimensions must be >= 0"));
        }
    }
    partial(Some(d))
}
