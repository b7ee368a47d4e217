//! Fuzz target body for `cast` and `equal`: random dtype numbers (any `i32`: refs, unknown
//! values, invalid, string, quantized, float8...), small random shapes and random bytes.
//!
//! Input layout (every field optional; missing bytes read as 0):
//! - the input dtype, the cast target dtype, and the dtype of `equal`'s second operand, each a
//!   tag byte: `tag % 4 == 3` reads the next 4 bytes as a raw little-endian `i32`; `tag % 4 == 2`
//!   reuses the input's dtype; otherwise the next byte `% 36` is a dtype number, plus 100 (a ref)
//!   when `tag & 0x80` is set;
//! - two shapes, each a rank byte `% 5` and that many dim bytes `% 11`;
//! - the rest: the tensors' bytes (cycled as needed; strings take one byte's worth each).
//!
//! Tensors of more than [`MAX_ELEMENTS`] elements are left unallocated (a shape without data),
//! which the ops must reject with an error. Each op must return `Ok` or `Err`, never panic; on
//! success the invariants below are asserted.

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::broadcast::broadcast_shapes;
use tensorcast_kernels::cast::cast;
use tensorcast_kernels::elementwise::equal::equal;

/// The most elements a fuzzed tensor holds.
pub const MAX_ELEMENTS: usize = 2048;

use super::reader::{tensor_over, Reader};

/// This target's decoding of dtypes and shapes.
impl Reader<'_> {
    fn cast_dtype(&mut self, same: DataType) -> DataType {
        let tag = self.byte();
        match tag % 4 {
            3 => {
                let b = [self.byte(), self.byte(), self.byte(), self.byte()];
                DataType::from_number(i32::from_le_bytes(b))
            }
            2 => same,
            _ => {
                let base = i32::from(self.byte() % 36);
                DataType::from_number(if tag & 0x80 != 0 { base + 100 } else { base })
            }
        }
    }

    fn cast_shape(&mut self) -> TensorShape {
        let rank = usize::from(self.byte() % 5);
        let dims: Vec<i64> = (0..rank).map(|_| i64::from(self.byte() % 11)).collect();
        TensorShape::new(&dims).unwrap_or_default()
    }
}

/// A tensor of `dtype` and `shape` over `bytes` (cycled), or an unallocated one when it is
/// too large or its dtype has no byte form.
fn build(dtype: DataType, shape: &TensorShape, bytes: &[u8]) -> Tensor {
    tensor_over(dtype, shape, bytes, MAX_ELEMENTS, false)
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let src = r.cast_dtype(DataType::FLOAT);
    let dst = r.cast_dtype(src);
    let other = r.cast_dtype(src);
    let shape_a = r.cast_shape();
    let shape_b = r.cast_shape();
    let bytes = r.rest();
    let a = build(src, &shape_a, bytes);
    let b = build(other, &shape_b, bytes.get(1..).unwrap_or(&[]));

    if let Ok(y) = cast(&a, dst) {
        assert_eq!(y.dtype(), dst);
        assert_eq!(y.shape(), a.shape());
        if src == dst && a.buffer().is_some() {
            assert!(y.shares_buffer_with(&a));
        }
        if dst == DataType::BOOL && src != dst && y.num_elements() > 0 {
            // A converted bool output holds only 0 and 1 (the typed view checks every byte;
            // a bool input cast to bool is forwarded as it is).
            assert!(y.to_vec::<bool>().is_ok());
        }
        // Casting back must not panic either.
        let _ = cast(&y, src);
    }

    if let Ok(e) = equal(&a, &b) {
        assert_eq!(e.dtype(), DataType::BOOL);
        assert_eq!(a.dtype(), b.dtype());
        let want = broadcast_shapes(a.shape(), b.shape()).expect("equal succeeded");
        assert_eq!(e.shape(), &want);
        if e.num_elements() > 0 {
            assert!(e.to_vec::<bool>().is_ok());
        }
    }
}
