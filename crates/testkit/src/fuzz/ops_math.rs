//! Fuzz target body for the unary math ops, reductions and `Einsum`
//! (`tensorcast_kernels::math`, `reduce`, `linalg::einsum`): a random op, random dtypes (any
//! number below 36, the second input often the first's), small random shapes (zeros
//! included), random attrs (alpha, keep_dims, output_type), random axes (any value, any
//! rank), a random einsum equation over a small alphabet (letters, `.`, `,`, `-`, `>`), random
//! bytes for the values; each op's shape function on the same shapes.
//!
//! Input layout (missing bytes read as 0): the op byte; a flags byte; dtype bytes for the two
//! inputs (`% 36`, `255` on the second: the first's); two shapes (rank byte `% 5`, dims `% 5`);
//! an axes list (length byte `% 4`, values `i8 % 6`); the equation (length byte `% 12`, each
//! byte one of `abcd.,->` and `abc` again); then the tensors' bytes. Every call must return
//! `Ok` or `Err`, never panic; dims below 5 and at most 11 equation bytes keep every output
//! under a few MiB. On success a shape function that accepts known shapes agrees with the
//! eager output's shape.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_kernels::linalg;
use tensorcast_kernels::math::{self, UnaryOp};
use tensorcast_kernels::reduce::{self, ArgOp, Reduction};

use super::reader::{operand_pair, Reader};

/// The most elements a fuzzed input holds.
pub const MAX_ELEMENTS: usize = 4096;

const UNARY: [UnaryOp; 22] = UnaryOp::ALL;

const REDUCTIONS: [Reduction; 7] = [
    Reduction::Sum,
    Reduction::Mean,
    Reduction::Max,
    Reduction::Min,
    Reduction::Prod,
    Reduction::All,
    Reduction::Any,
];

impl Reader<'_> {
    fn math_shape(&mut self) -> Vec<i64> {
        let rank = usize::from(self.byte() % 5);
        (0..rank).map(|_| i64::from(self.byte() % 5)).collect()
    }

    fn equation(&mut self) -> String {
        const ALPHABET: &[u8] = b"abcd.,->abc";
        let n = usize::from(self.byte() % 12);
        (0..n)
            .map(|_| char::from(ALPHABET[usize::from(self.byte()) % ALPHABET.len()]))
            .collect()
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let op = r.byte();
    let flags = r.byte();
    let (dx, dy) = r.dtype_pair();
    let (sx, sy) = (r.math_shape(), r.math_shape());
    let n_axes = usize::from(r.byte() % 4);
    let axes: Vec<i32> = (0..n_axes).map(|_| i32::from(r.byte() as i8 % 6)).collect();
    let equation = r.equation();
    let bytes = r.rest();
    let shape = |d: &[i64]| TensorShape::new(d).unwrap_or_default();
    let (x, y) = operand_pair((dx, &shape(&sx)), (dy, &shape(&sy)), bytes, MAX_ELEMENTS);
    let px = PartialTensorShape::new(&sx).unwrap_or_else(|_| PartialTensorShape::unknown_rank());
    let py = PartialTensorShape::new(&sy).unwrap_or_else(|_| PartialTensorShape::unknown_rank());
    let keep = flags & 1 != 0;
    let axis_t = if flags & 2 != 0 {
        Tensor::vector(&axes)
    } else {
        Tensor::scalar_of(axes.first().copied().unwrap_or(0))
    };
    let (eager, inferred): (_, Option<tensorcast_core::Result<PartialTensorShape>>) = match op % 8 {
        0 | 1 => {
            let u = UNARY[usize::from(op / 8) % UNARY.len()];
            (math::unary(u, &x), Some(Ok(px.clone())))
        }
        2 => (
            math::leaky_relu(&x, f32::from(flags as i8) / 16.0),
            Some(Ok(px.clone())),
        ),
        3 => match (op / 8) % 3 {
            0 => (math::softmax(&x), Some(Ok(px.clone()))),
            1 => (math::log_softmax(&x), Some(Ok(px.clone()))),
            _ => (math::logical_not(&x), Some(Ok(px.clone()))),
        },
        4 | 5 => {
            let red = REDUCTIONS[usize::from(op / 8) % REDUCTIONS.len()];
            (
                reduce::reduce(red, &x, &axis_t, keep),
                Some(reduce::reduce_shape(&px, Some(&axis_t), keep)),
            )
        }
        6 => {
            let a = if flags & 4 != 0 {
                ArgOp::ArgMax
            } else {
                ArgOp::ArgMin
            };
            let out_type = [
                DataType::INT64,
                DataType::INT32,
                DataType::INT16,
                DataType::UINT16,
                DataType::FLOAT,
            ][usize::from(op / 8) % 5];
            let dim_shape = PartialTensorShape::new(axis_t.shape().dim_sizes())
                .unwrap_or_else(|_| PartialTensorShape::unknown_rank());
            (
                reduce::arg_reduce(a, &x, &axis_t, out_type),
                Some(reduce::arg_reduce_shape(&px, &dim_shape, Some(&axis_t))),
            )
        }
        _ => {
            let two = flags & 8 != 0;
            let (ins, shapes): (Vec<&Tensor>, Vec<&PartialTensorShape>) = if two {
                (vec![&x, &y], vec![&px, &py])
            } else {
                (vec![&x], vec![&px])
            };
            (
                linalg::einsum(&ins, &equation),
                Some(linalg::einsum_shape(&shapes, &equation)),
            )
        }
    };
    if let (Ok(t), Some(Ok(s))) = (&eager, &inferred) {
        if let Some(d) = s.dims() {
            if d.iter().all(|&v| v >= 0) {
                assert_eq!(
                    d,
                    t.shape().dim_sizes(),
                    "op {op}: shape function disagrees ({equation})"
                );
            }
        }
    }
}
