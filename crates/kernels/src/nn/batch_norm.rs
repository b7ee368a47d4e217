//! `FusedBatchNormV3` for inference (`is_training` false), with its shape function.

use tensorcast_core::{
    bf16, f16, Code, DataType, Element, Error, PartialTensorShape, Result, Tensor, TensorShape,
};

use crate::chunks::for_each_chunk;
use crate::linalg::util::{data, dims, not_in_type_list, output};

const TYPES: &[DataType] = &[DataType::HALF, DataType::BFLOAT16, DataType::FLOAT];

/// `FusedBatchNormV3` with `is_training` false, NHWC: `y = (x - mean) * scale / sqrt(variance
/// + epsilon) + offset` per channel (computed as TensorFlow does, `x * s + (offset - mean * s)`
/// with `s = scale * rsqrt(variance + epsilon)`, in `float` for every `T`), and the five other
/// outputs as TensorFlow 2.21's CPU kernels give them: `batch_mean` and `batch_variance` are
/// `mean` and `variance` (NaN when `x` is empty); for `float` and `bfloat16` (oneDNN kernels)
/// `reserve_space_1`/`_2` repeat them (zeros when `x` is empty) and `reserve_space_3` is an
/// empty float tensor of shape (0); for `half` (Eigen's kernel) `reserve_space_1`/`_2` are shape-(C)
/// tensors TensorFlow leaves uninitialised (zeros here) and `reserve_space_3` is a scalar 0.
///
/// Accuracy: `|ours - tf| <= 4 * eps * (|x * s| + |mean * s| + |offset|)` per element (plus one
/// rounding of `half`/`bfloat16`), asserted over the recorded vectors.
///
/// # Errors
/// TensorFlow's texts: the type list, `input must be 4-dimensional[2,3,4]`, `scale must be
/// 1-dimensional[4,1]`, `scale must have the same number of elements as the channels of x,
/// got 3 and 4` (and the same for offset, mean, variance); parameters that are not `float`;
/// `is_training` true and `data_format` other than NHWC are `Unimplemented` in tensorcast.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::fused_batch_norm_v3;
/// let x = Tensor::from_vec(vec![1.0f32, 3.0], [1i64, 1, 2, 1].as_slice())?;
/// let one = Tensor::vector(&[1.0f32]);
/// let zero = Tensor::vector(&[0.0f32]);
/// let mean = Tensor::vector(&[2.0f32]);
/// let out = fused_batch_norm_v3(&x, &one, &zero, &mean, &one, 0.0, "NHWC", false)?;
/// assert_eq!(out[0].to_vec::<f32>()?, vec![-1.0, 1.0]);
/// assert_eq!(out.len(), 6);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
#[allow(
    clippy::too_many_arguments,
    reason = "the op's five inputs and three attrs"
)]
pub fn fused_batch_norm_v3(
    x: &Tensor,
    scale: &Tensor,
    offset: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    epsilon: f32,
    data_format: &str,
    is_training: bool,
) -> Result<Vec<Tensor>> {
    const OP: &str = "FusedBatchNormV3";
    let dtype = x.dtype();
    if !TYPES.contains(&dtype) {
        return Err(not_in_type_list(
            OP,
            dtype,
            TYPES,
            "x:T, scale:U, offset:U, mean:U, variance:U -> y:T, batch_mean:U, batch_variance:U, \
             reserve_space_1:U, reserve_space_2:U, reserve_space_3:U",
            "",
            "; attr=U:type,allowed=[DT_BFLOAT16, DT_FLOAT]; attr=epsilon:float,default=0.0001; \
             attr=exponential_avg_factor:float,default=1; \
             attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\", \"NDHWC\", \"NCDHW\"]; \
             attr=is_training:bool,default=true",
        ));
    }
    let unimplemented = |m: &str| Error::Op {
        op: OP,
        code: Code::Unimplemented,
        message: m.to_string(),
    };
    if is_training {
        return Err(unimplemented("FusedBatchNormV3 with is_training=true is not implemented by tensorcast (inference only)"));
    }
    if data_format != "NHWC" {
        return Err(unimplemented(
            "FusedBatchNormV3 supports data_format NHWC only in tensorcast",
        ));
    }
    for (i, t) in [scale, offset, mean, variance].into_iter().enumerate() {
        Error::check_input_type(OP, i + 1, DataType::FLOAT, t.dtype())?;
    }
    let xs = x.shape();
    if xs.rank() != 4 {
        return Err(Error::invalid_argument(
            OP,
            format!("input must be 4-dimensional{}", dims(xs)),
        ));
    }
    let names = ["scale", "offset", "mean", "variance"];
    let params = [scale, offset, mean, variance];
    for (name, t) in names.iter().zip(params) {
        if t.shape().rank() != 1 {
            return Err(Error::invalid_argument(
                OP,
                format!("{name} must be 1-dimensional{}", dims(t.shape())),
            ));
        }
    }
    let c = xs.dim_sizes()[3];
    for (name, t) in names.iter().zip(params) {
        if t.num_elements() != c {
            return Err(Error::invalid_argument(
                OP,
                format!("{name} must have the same number of elements as the channels of x, got {} and {c}", t.num_elements()),
            ));
        }
    }
    let (sc, of, mu, var) = (
        data::<f32>(scale)?,
        data::<f32>(offset)?,
        data::<f32>(mean)?,
        data::<f32>(variance)?,
    );
    let s: Vec<f32> = sc
        .iter()
        .zip(var.iter())
        .map(|(&g, &v)| g / (v + epsilon).sqrt())
        .collect();
    let o: Vec<f32> = of
        .iter()
        .zip(mu.iter())
        .zip(&s)
        .map(|((&b, &m), &s)| b - m * s)
        .collect();
    fn go<T: Element + Copy + Send + Sync>(
        x: &Tensor,
        s: &[f32],
        o: &[f32],
        to: fn(T) -> f32,
        from: fn(f32) -> T,
    ) -> Result<Tensor> {
        let xv = data::<T>(x)?;
        let c = s.len();
        output::<T>(T::DTYPE, x.shape().clone(), |out| {
            if c == 0 {
                return Ok(());
            }
            let per = c * ((1 << 14) / c).max(1);
            // One piece of work stays on the caller's thread.
            for_each_chunk(
                out,
                per,
                out.len() > per,
                || (),
                |(), (i, oc)| {
                    let xc = &xv[i * per..][..oc.len()];
                    for (orow, xrow) in oc.chunks_mut(c).zip(xc.chunks(c)) {
                        for (((y, &v), &s), &b) in orow.iter_mut().zip(xrow).zip(s).zip(o) {
                            *y = from(to(v) * s + b);
                        }
                    }
                },
            );
            Ok(())
        })
    }
    let y = match dtype {
        DataType::FLOAT => go::<f32>(x, &s, &o, |v| v, |v| v)?,
        DataType::HALF => go::<f16>(x, &s, &o, f16::to_f32, f16::from_f32)?,
        _ => go::<bf16>(x, &s, &o, bf16::to_f32, bf16::from_f32)?,
    };
    let empty = xs.num_elements() == 0;
    let stat = |t: &Tensor| -> Result<Tensor> {
        if empty {
            Tensor::from_vec(vec![f32::NAN; c as usize], [c].as_slice())
        } else {
            t.deep_copy()
        }
    };
    let (batch_mean, batch_var) = (stat(mean)?, stat(variance)?);
    let cshape = TensorShape::new(&[c])?;
    let (r1, r2, r3) = if dtype == DataType::HALF {
        (
            Tensor::new(DataType::FLOAT, cshape.clone())?,
            Tensor::new(DataType::FLOAT, cshape)?,
            Tensor::scalar_of(0.0f32),
        )
    } else if empty {
        (
            Tensor::new(DataType::FLOAT, cshape.clone())?,
            Tensor::new(DataType::FLOAT, cshape)?,
            Tensor::new(DataType::FLOAT, [0i64].as_slice())?,
        )
    } else {
        (
            mean.deep_copy()?,
            variance.deep_copy()?,
            Tensor::new(DataType::FLOAT, [0i64].as_slice())?,
        )
    };
    Ok(vec![y, batch_mean, batch_var, r1, r2, r3])
}

/// `FusedBatchNormV3`'s shape function (NHWC): output 0 is `x`'s shape with its channel dim
/// merged with the parameters'; outputs 1-4 are `[C]`; output 5 (`reserve_space_3`) is of
/// unknown shape.
///
/// # Errors
/// `Shape must be rank 4 but is rank 3`; `Shape must be rank 1 but is rank 2` (a parameter);
/// `Dimensions must be equal, but are 3 and 4`.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::nn::fused_batch_norm_v3_shape;
/// let x = PartialTensorShape::unknown_rank();
/// let c = PartialTensorShape::new(&[4])?;
/// let out = fused_batch_norm_v3_shape(&x, &[c.clone(), c.clone(), c.clone(), c])?;
/// assert_eq!(out[0].dims(), Some(&[-1i64, -1, -1, 4][..]));
/// assert_eq!(out[5].dims(), None);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn fused_batch_norm_v3_shape(
    x: &PartialTensorShape,
    params: &[PartialTensorShape; 4],
) -> Result<Vec<PartialTensorShape>> {
    let mut d = match x.dims() {
        None => vec![-1i64; 4],
        Some(v) if v.len() == 4 => v.to_vec(),
        Some(v) => {
            return Err(Error::invalid_argument(
                "shape",
                format!("Shape must be rank 4 but is rank {}", v.len()),
            ))
        }
    };
    let mut c = d[3];
    for p in params {
        let pc = match p.dims() {
            None => -1,
            Some([v]) => *v,
            Some(v) => {
                return Err(Error::invalid_argument(
                    "shape",
                    format!("Shape must be rank 1 but is rank {}", v.len()),
                ))
            }
        };
        if c >= 0 && pc >= 0 && c != pc {
            return Err(Error::invalid_argument(
                "shape",
                format!("Dimensions must be equal, but are {c} and {pc}"),
            ));
        }
        if c < 0 {
            c = pc;
        }
    }
    d[3] = c;
    let v = PartialTensorShape::new(&[c])?;
    Ok(vec![
        PartialTensorShape::new(&d)?,
        v.clone(),
        v.clone(),
        v.clone(),
        v,
        PartialTensorShape::unknown_rank(),
    ])
}
