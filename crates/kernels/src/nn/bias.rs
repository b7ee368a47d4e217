//! `BiasAdd`, with its shape function.

use rayon::prelude::*;
use tensorcast_core::{
    bf16, f16, Complex32, Complex64, DataType, Element, Error, PartialTensorShape, Result, Tensor,
};

use crate::linalg::util::{data, dims, not_in_type_list, output};

const TYPES: &[DataType] = crate::type_lists::NUMBER_TYPES;

/// Addition as TensorFlow's `BiasAdd` kernels do it: wrapping for integers, in `float` then
/// rounded for the half types.
trait BiasElement: Element + Copy + Send + Sync {
    fn add(self, b: Self) -> Self;
}
macro_rules! bias_int {
    ($($t:ty),*) => {$(impl BiasElement for $t { fn add(self, b: Self) -> Self { self.wrapping_add(b) } })*};
}
bias_int!(i8, i16, i32, i64, u8, u16, u32, u64);
macro_rules! bias_plain {
    ($($t:ty),*) => {$(impl BiasElement for $t { fn add(self, b: Self) -> Self { self + b } })*};
}
bias_plain!(f32, f64, Complex32, Complex64);
impl BiasElement for f16 {
    fn add(self, b: Self) -> Self {
        f16::from_f32(self.to_f32() + b.to_f32())
    }
}
impl BiasElement for bf16 {
    fn add(self, b: Self) -> Self {
        bf16::from_f32(self.to_f32() + b.to_f32())
    }
}

/// `BiasAdd`: `value + bias` along the channel dimension (the last for `data_format` NHWC,
/// dimension 1 for NCHW), TensorFlow's `tf.raw_ops.BiasAdd`; exact (one addition per
/// element, as TensorFlow's).
///
/// # Errors
/// TensorFlow's texts: the type list (quantized types are in it without a kernel here:
/// `Unimplemented`), `Input tensor must be at least 2D: [3]`, `Biases must be 1D: [1,3]`,
/// `Must provide as many biases as the last dimension of the input tensor: [4] vs. [2,3]`, a
/// `data_format` other than NHWC and NCHW; allocation errors.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::bias_add;
/// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], [2i64, 2].as_slice())?;
/// let b = Tensor::vector(&[10i32, 20]);
/// assert_eq!(bias_add(&x, &b, "NHWC")?.to_vec::<i32>()?, vec![11, 22, 13, 24]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn bias_add(value: &Tensor, bias: &Tensor, data_format: &str) -> Result<Tensor> {
    const OP: &str = "BiasAdd";
    let dtype = value.dtype();
    if !TYPES.contains(&dtype) {
        return Err(not_in_type_list(
            OP,
            dtype,
            TYPES,
            "value:T, bias:T -> output:T",
            "",
            "; attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]",
        ));
    }
    Error::check_input_type(OP, 1, dtype, bias.dtype())?;
    let nchw = match data_format {
        "NHWC" => false,
        "NCHW" => true,
        other => {
            return Err(Error::invalid_argument(
                OP,
                format!("Invalid data format: {other}"),
            ))
        }
    };
    let (vs, bs) = (value.shape(), bias.shape());
    if vs.rank() < 2 {
        return Err(Error::invalid_argument(
            OP,
            format!("Input tensor must be at least 2D: {}", dims(vs)),
        ));
    }
    if bs.rank() != 1 {
        return Err(Error::invalid_argument(
            OP,
            format!("Biases must be 1D: {}", dims(bs)),
        ));
    }
    let d = vs.dim_sizes();
    let c_axis = if nchw { 1 } else { d.len() - 1 };
    if d[c_axis] != bs.dim_sizes()[0] {
        let which = if nchw { "channel" } else { "last" };
        return Err(Error::invalid_argument(
            OP,
            format!(
                "Must provide as many biases as the {which} dimension of the input tensor: {} vs. {}",
                dims(bs),
                dims(vs)
            ),
        ));
    }
    let c = d[c_axis] as usize;
    let inner: usize = d[c_axis + 1..].iter().map(|&x| x as usize).product();
    fn go<T: BiasElement>(value: &Tensor, bias: &Tensor, c: usize, inner: usize) -> Result<Tensor> {
        let (x, b) = (data::<T>(value)?, data::<T>(bias)?);
        output::<T>(T::DTYPE, value.shape().clone(), |out| {
            let run = c * inner;
            if run == 0 {
                return Ok(());
            }
            let add = |(o, xs): (&mut [T], &[T])| {
                if inner == 1 {
                    for ((o, &x), &b) in o.iter_mut().zip(xs).zip(b.iter()) {
                        *o = x.add(b);
                    }
                } else {
                    for ((oc, xc), &b) in o.chunks_mut(inner).zip(xs.chunks(inner)).zip(b.iter()) {
                        for (o, &x) in oc.iter_mut().zip(xc) {
                            *o = x.add(b);
                        }
                    }
                }
            };
            if out.len() >= 1 << 16 {
                let per = run * ((1 << 14) / run).max(1);
                out.par_chunks_mut(per)
                    .zip(x.par_chunks(per))
                    .for_each(|(o, xs)| {
                        o.chunks_mut(run).zip(xs.chunks(run)).for_each(add);
                    });
            } else {
                out.chunks_mut(run).zip(x.chunks(run)).for_each(add);
            }
            Ok(())
        })
    }
    match dtype {
        DataType::FLOAT => go::<f32>(value, bias, c, inner),
        DataType::DOUBLE => go::<f64>(value, bias, c, inner),
        DataType::HALF => go::<f16>(value, bias, c, inner),
        DataType::BFLOAT16 => go::<bf16>(value, bias, c, inner),
        DataType::INT8 => go::<i8>(value, bias, c, inner),
        DataType::INT16 => go::<i16>(value, bias, c, inner),
        DataType::INT32 => go::<i32>(value, bias, c, inner),
        DataType::INT64 => go::<i64>(value, bias, c, inner),
        DataType::UINT8 => go::<u8>(value, bias, c, inner),
        DataType::UINT16 => go::<u16>(value, bias, c, inner),
        DataType::UINT32 => go::<u32>(value, bias, c, inner),
        DataType::UINT64 => go::<u64>(value, bias, c, inner),
        DataType::COMPLEX64 => go::<Complex32>(value, bias, c, inner),
        DataType::COMPLEX128 => go::<Complex64>(value, bias, c, inner),
        other => Err(Error::Op {
            op: OP,
            code: tensorcast_core::Code::Unimplemented,
            message: format!(
                "BiasAdd on {} is not implemented by tensorcast",
                other.name()
            ),
        }),
    }
}

/// `BiasAdd`'s shape function (NHWC): the value's shape, its last dim merged with the bias's.
///
/// # Errors
/// `Shape must be at least rank 2 but is rank 1`; `Shape must be rank 1 but is rank 2` (the
/// bias); `Dimensions must be equal, but are 3 and 4`.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::nn::bias_add_shape;
/// let v = PartialTensorShape::new(&[-1, 4, 5, -1])?;
/// let b = PartialTensorShape::new(&[3])?;
/// assert_eq!(bias_add_shape(&v, &b)?.dims(), Some(&[-1i64, 4, 5, 3][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn bias_add_shape(
    value: &PartialTensorShape,
    bias: &PartialTensorShape,
) -> Result<PartialTensorShape> {
    let b = match bias.dims() {
        None => -1,
        Some([b]) => *b,
        Some(d) => {
            return Err(Error::invalid_argument(
                "shape",
                format!("Shape must be rank 1 but is rank {}", d.len()),
            ))
        }
    };
    let Some(v) = value.dims() else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    if v.len() < 2 {
        return Err(Error::invalid_argument(
            "shape",
            format!("Shape must be at least rank 2 but is rank {}", v.len()),
        ));
    }
    let mut out = v.to_vec();
    let last = out.len() - 1;
    if out[last] >= 0 && b >= 0 && out[last] != b {
        return Err(Error::invalid_argument(
            "shape",
            format!("Dimensions must be equal, but are {} and {b}", out[last]),
        ));
    }
    if out[last] < 0 {
        out[last] = b;
    }
    PartialTensorShape::new(&out)
}
