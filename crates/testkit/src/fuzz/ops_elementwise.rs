//! Fuzz target body for the binary element-wise ops: a random op, random dtype numbers (any
//! `i32`), small random shapes (many broadcast), random bytes, and optionally the first input
//! read through a lazy broadcast view.
//!
//! Input layout (every field optional; missing bytes read as 0):
//! - the op (`byte % 11`, in [`BinaryOp::ALL`]'s order) and a flags byte (bit 0: read `x`
//!   through a broadcast view to a third shape; bit 1: `incompatible_shape_error = false`);
//! - the dtypes of `x` and `y`, each a tag byte: `tag % 4 == 3` reads the next 4 bytes as a raw
//!   little-endian `i32`; `tag % 4 == 2` gives `y` the dtype of `x`; otherwise the next byte
//!   `% 36` is a dtype number;
//! - three shapes (x, y, the view's target), each a rank byte `% 5` and that many dim bytes
//!   `% 5` (small sizes, so that shapes often broadcast);
//! - the rest: the tensors' bytes (cycled as needed).
//!
//! Each op must return `Ok` or `Err`, never panic; on success its dtype and shape are
//! TensorFlow's, a `bool` result holds only 0 and 1, and the result through a view equals the
//! result on the materialised broadcast.

use tensorcast_core::{DataType, TensorShape};
use tensorcast_kernels::broadcast::broadcast_shapes;
use tensorcast_kernels::elementwise::{binary, BinaryOp};
use tensorcast_kernels::TensorOps;

use super::reader::{operand_pair, Reader};

/// The most elements a fuzzed tensor holds.
pub const MAX_ELEMENTS: usize = 4096;

impl Reader<'_> {
    fn ew_dtype(&mut self, same: DataType) -> DataType {
        let tag = self.byte();
        match tag % 4 {
            3 => DataType::from_number(i32::from_le_bytes(self.array())),
            2 => same,
            _ => DataType::from_number(i32::from(self.byte() % 36)),
        }
    }

    fn ew_shape(&mut self) -> TensorShape {
        let rank = usize::from(self.byte() % 5);
        let dims: Vec<i64> = (0..rank).map(|_| i64::from(self.byte() % 5)).collect();
        TensorShape::new(&dims).unwrap_or_default()
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let op = BinaryOp::ALL[usize::from(r.byte()) % BinaryOp::ALL.len()];
    let flags = r.byte();
    let dx = r.ew_dtype(DataType::FLOAT);
    let dy = r.ew_dtype(dx);
    let (sx, sy, sv) = (r.ew_shape(), r.ew_shape(), r.ew_shape());
    let bytes = r.rest();
    let (x, y) = operand_pair((dx, &sx), (dy, &sy), bytes, MAX_ELEMENTS);
    let shape_error = flags & 2 == 0;

    let (got, x_eff) = if flags & 1 != 0 {
        let Ok(view) = x.broadcast_view(&sv) else {
            return;
        };
        let got = binary(op, &view, &y, shape_error);
        // The same on the materialised broadcast.
        let mat = view.to_tensor();
        if let Ok(m) = &mat {
            let direct = binary(op, m, &y, shape_error);
            assert_eq!(
                got.as_ref().map_err(|e| e.to_string()),
                direct.as_ref().map_err(|e| e.to_string()),
                "{op:?} on a view and on its materialised broadcast"
            );
        }
        (got, mat.ok())
    } else {
        (binary(op, &x, &y, shape_error), Some(x.clone()))
    };
    let Ok(out) = got else {
        return;
    };
    let Some(xe) = x_eff else {
        return;
    };
    assert_eq!(out.dtype(), op.output_dtype(xe.dtype()));
    assert_eq!(xe.dtype(), y.dtype());
    match broadcast_shapes(xe.shape(), y.shape()) {
        Ok(want) => assert_eq!(out.shape(), &want),
        Err(_) => {
            assert!(!shape_error);
            assert_eq!(out.shape(), &TensorShape::scalar());
        }
    }
    if out.dtype() == DataType::BOOL && out.num_elements() > 0 {
        assert!(out.to_vec::<bool>().is_ok());
    }
}
