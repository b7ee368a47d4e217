//! TensorFlow's `Equal`: element-wise `a == b` with broadcasting, as a `bool` tensor.
//!
//! - Both inputs must have the same dtype; otherwise TensorFlow's message,
//!   `cannot compute Equal as input #1(zero-based) was expected to be a float tensor but is a
//!   int32 tensor`.
//! - The shapes broadcast as TensorFlow's `BCast` does ([`crate::broadcast::broadcast_shapes`]);
//!   otherwise `Incompatible shapes: [3] vs. [2]`.
//! - Floating types compare as IEEE numbers: NaN equals nothing, not even itself, and
//!   `0 == -0`; `half` and `bfloat16` too. Complex numbers are equal when both parts are.
//!   Strings compare byte for byte. `bool`, every integer type.
//! - TensorFlow runs kernels with the SSE flag DAZ (denormals are zero) set, so a subnormal
//!   `float`, `double` or `bfloat16` (compared as `float`) equals zero there, and so it does
//!   here. (`half` subnormals are normal numbers once widened to `float`, so they are not
//!   affected.)
//! - The quantized types compare as their integers (TensorFlow 2.21 has kernels for them).
//!   TensorFlow registers no `Equal` kernel for the float8, float4, int4/int2, resource and
//!   variant types (its `NotFoundError`, "Could not find device for node"); those are an
//!   `Unimplemented` error here.
//!
//! `Equal` runs on the element-wise engine ([`crate::elementwise`]) like the other binary
//! ops; this module keeps its historical path.

pub use super::{equal, equal_with};

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_core::Tensor;

    #[test]
    fn equal_examples_match_tensorflow() -> tensorcast_core::Result<()> {
        let a = Tensor::vector(&[1i32, 2, 3]);
        let b = Tensor::vector(&[0i32, 2, 3]);
        assert_eq!(equal(&a, &b)?.to_vec::<bool>()?, vec![false, true, true]);
        let nan = Tensor::vector(&[f32::NAN, 0.0]);
        let z = Tensor::scalar_of(-0.0f32);
        assert_eq!(equal(&nan, &z)?.to_vec::<bool>()?, vec![false, true]);
        // A subnormal equals zero (DAZ).
        let d = Tensor::vector(&[f32::from_bits(1)]);
        assert_eq!(
            equal(&d, &Tensor::scalar_of(0.0f32))?.to_vec::<bool>()?,
            vec![true]
        );
        let f = Tensor::vector(&[1.0f32]);
        assert_eq!(
            equal(&f, &a).map(|_| ()).map_err(|e| e.to_string()),
            Err(
                "cannot compute Equal as input #1(zero-based) was expected to be a float tensor \
                 but is a int32 tensor"
                    .to_string()
            )
        );
        Ok(())
    }
}
