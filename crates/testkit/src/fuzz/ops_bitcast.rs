//! Fuzz target body for the zero-copy ops: `bitcast` and `reinterpret_cast_to` with random
//! dtype numbers (any `i32`: refs, unknown values, invalid), random shapes and random bytes.
//!
//! Input layout (every field optional; missing bytes read as 0):
//! - a dtype for the input and one for the target, each a tag byte: `tag % 4 == 3` reads the
//!   next 4 bytes as a raw little-endian `i32`; otherwise the next byte `% 36` is a dtype
//!   number, plus 100 (a ref) when `tag & 0x80` is set;
//! - a rank byte: `% 6` dims, or up to 300 dims when its top bit is set;
//! - each dim: a tag byte, `% 8 == 7` reads a raw little-endian `i64`, otherwise the next byte
//!   `% 17`;
//! - the rest: the tensor's bytes (repeated as needed).
//!
//! Tensors of at most [`MAX_BYTES`] bytes are allocated with their data; any larger (or
//! unbuildable) valid shape becomes an unallocated tensor, so a shape of 2^62 elements costs no
//! memory while still exercising every shape rule. Each op must return `Ok` or `Err`, never
//! panic; on success the invariants below are asserted.

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::TensorOps;

/// The largest tensor the target allocates, in bytes.
pub const MAX_BYTES: usize = 4096;

use super::reader::Reader;

/// This target's decoding of dtypes and dims.
impl Reader<'_> {
    fn bitcast_dtype(&mut self) -> DataType {
        let tag = self.byte();
        if tag % 4 == 3 {
            DataType::from_number(i32::from_le_bytes(self.array()))
        } else {
            let base = i32::from(self.byte() % 36);
            let n = if tag & 0x80 != 0 { base + 100 } else { base };
            DataType::from_number(n)
        }
    }

    fn bitcast_dims(&mut self) -> Vec<i64> {
        let r = self.byte();
        let rank = if r & 0x80 != 0 {
            usize::from(r & 0x7f) * 300 / 127
        } else {
            usize::from(r % 6)
        };
        (0..rank)
            .map(|_| {
                let tag = self.byte();
                if tag % 8 == 7 {
                    i64::from_le_bytes(self.array())
                } else {
                    i64::from(self.byte() % 17)
                }
            })
            .collect()
    }
}

/// The input tensor the bytes describe, or `None` if the shape itself is invalid.
fn build(dtype: DataType, shape: &TensorShape, bytes: &[u8]) -> Option<Tensor> {
    let n = shape.num_elements_usize();
    // Objects (strings, handles, variants) count as 64 bytes each.
    let per_element = if dtype.can_use_memcpy() {
        dtype.size()
    } else {
        64
    };
    let small = n
        .checked_mul(per_element.max(1))
        .is_some_and(|b| b <= MAX_BYTES);
    if !small || !dtype.is_supported() {
        return Some(Tensor::unallocated(dtype, shape));
    }
    if !dtype.can_use_memcpy() {
        // string, resource, variant: default elements.
        return Tensor::new(dtype, shape).ok();
    }
    let len = n * dtype.size();
    let data: Vec<u8> = if bytes.is_empty() {
        vec![0; len]
    } else {
        bytes.iter().copied().cycle().take(len).collect()
    };
    let buf = tensorcast_core::buffer::Buffer::copy_from_slice(&data).ok()?;
    Tensor::from_buffer(dtype, shape, buf).ok()
}

fn check_result(op: &str, input: &Tensor, dtype: DataType, out: &Tensor) {
    assert_eq!(out.dtype(), dtype, "{op}: dtype");
    let in_bytes = input.num_elements() as u128 * input.dtype().size() as u128;
    let out_bytes = out.num_elements() as u128 * dtype.size() as u128;
    assert_eq!(in_bytes, out_bytes, "{op}: byte count");
    if input.buffer().is_some() {
        assert!(out.shares_buffer_with(input), "{op}: copied");
        assert_eq!(out.data_ptr(), input.data_ptr(), "{op}: moved");
    }
    assert_eq!(
        out.is_initialized(),
        input.is_initialized(),
        "{op}: initialised"
    );
    // Reading the result must not panic either (bool results may hold other bytes).
    let _ = out.tensor_data();
    let _ = out.debug_string(6);
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let in_dtype = r.bitcast_dtype();
    let out_dtype = r.bitcast_dtype();
    let dims = r.bitcast_dims();
    let Ok(shape) = TensorShape::new(&dims) else {
        return;
    };
    let Some(input) = build(in_dtype, &shape, r.rest()) else {
        return;
    };

    if let Ok(out) = input.bitcast(out_dtype) {
        check_result("bitcast", &input, out_dtype, &out);
        // Bitcast back always succeeds and gives the input again.
        let back = out.bitcast(in_dtype).expect("bitcast back");
        assert!(back == input, "bitcast round trip");
    }
    if let Ok(out) = input.reinterpret_cast_to(out_dtype) {
        check_result("reinterpret_cast_to", &input, out_dtype, &out);
        assert_eq!(out.dims(), input.dims(), "reinterpret_cast_to: rank");
        let back = out.reinterpret_cast_to(in_dtype).expect("reinterpret back");
        assert!(back == input, "reinterpret round trip");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_inputs_do_not_panic() {
        run(&[]);
        run(&[0xff; 64]);
        // float -> complex128 on a huge unallocated shape.
        let mut d = vec![0, 1, 0, 18, 2, 7];
        d.extend_from_slice(&(1i64 << 40).to_le_bytes());
        d.extend_from_slice(&[0, 16]);
        run(&d);
        // 300 dims.
        run(&[0, 1, 0, 4, 0xff]);
        // Raw i32 dtypes.
        run(&[3, 0xff, 0xff, 0xff, 0x7f, 3, 0, 0, 0, 0x80, 1, 0, 4]);
    }
}
