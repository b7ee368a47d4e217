//! Fuzz target body for the linear-algebra and convolution kernels (`tensorcast_kernels::linalg`
//! and `nn`): a random op, random dtypes (any number below 36, the second input often the
//! first's), small random shapes (zeros included), random attrs (strides, dilations, window
//! sizes and explicit paddings from signed bytes, so zero and negative values come up; any
//! length), random bytes for the values; each op's shape function on the same shapes with
//! some dims unknown.
//!
//! Input layout (missing bytes read as 0): the op byte; a flags byte (bit 0/1: transpose or
//! adjoint flags; bit 2: NCHW for BiasAdd; bits 3-4: the padding; bit 5: unknown dims for the
//! shape function); dtype bytes for the two inputs (`% 36`, `255` on the second: the first's);
//! two shapes (rank byte `% 6`, dims `% 7`); three attr lists (length byte `% 9`, values as
//! `i8 % 5`); then the tensors' bytes. Every call must return `Ok` or `Err`, never panic; on
//! success the output's dtype is the input's and a shape function that accepts known shapes
//! agrees with the eager op's output shape.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_kernels::{linalg, nn};

use super::reader::{operand_pair, tensor_over, Reader};

/// The most elements a fuzzed input holds (outputs stay within a few MiB: dims are below 7).
pub const MAX_ELEMENTS: usize = 4096;

impl Reader<'_> {
    fn nn_shape(&mut self) -> Vec<i64> {
        let rank = usize::from(self.byte() % 6);
        (0..rank).map(|_| i64::from(self.byte() % 7)).collect()
    }

    fn nn_list(&mut self) -> Vec<i64> {
        let n = usize::from(self.byte() % 9);
        (0..n).map(|_| i64::from(self.byte() as i8 % 5)).collect()
    }
}

fn partial(dims: &[i64], unknown: bool) -> PartialTensorShape {
    let d: Vec<i64> = dims
        .iter()
        .enumerate()
        .map(|(i, &v)| if unknown && i % 2 == 0 { -1 } else { v })
        .collect();
    PartialTensorShape::new(&d).unwrap_or_else(|_| PartialTensorShape::unknown_rank())
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let op = r.byte() % 8;
    let flags = r.byte();
    let (dx, dy) = r.dtype_pair();
    let (sx, sy) = (r.nn_shape(), r.nn_shape());
    let (l1, l2, l3) = (r.nn_list(), r.nn_list(), r.nn_list());
    let bytes = r.rest();
    let shape = |d: &[i64]| TensorShape::new(d).unwrap_or_default();
    let (x, y) = operand_pair((dx, &shape(&sx)), (dy, &shape(&sy)), bytes, MAX_ELEMENTS);
    let (f0, f1) = (flags & 1 != 0, flags & 2 != 0);
    let padding = [
        nn::Padding::Valid,
        nn::Padding::Same,
        nn::Padding::Explicit,
        nn::Padding::Same,
    ][usize::from((flags >> 3) & 3)];
    let unknown = flags & 32 != 0;
    let (px, py) = (partial(&sx, unknown), partial(&sy, unknown));
    // Strides and windows: the attr lists, with 1s where a list is short.
    let four = |l: &[i64]| -> Vec<i64> {
        if l.len() >= 4 {
            l.to_vec()
        } else {
            vec![
                1,
                l.first().copied().unwrap_or(1),
                l.get(1).copied().unwrap_or(1),
                1,
            ]
        }
    };
    let (strides, dilations) = (four(&l1), four(&l3));
    let conv_attrs = (&strides[..], padding, &l2[..], &dilations[..]);
    let (eager, inferred): (Result<Tensor, _>, Result<PartialTensorShape, _>) = match op {
        0 => (
            linalg::mat_mul(&x, &y, f0, f1),
            linalg::mat_mul_shape(&px, &py, f0, f1),
        ),
        1 => (
            linalg::batch_mat_mul_v2(&x, &y, f0, f1),
            linalg::batch_mat_mul_v2_shape(&px, &py, f0, f1),
        ),
        2 => (
            nn::bias_add(&x, &y, if flags & 4 != 0 { "NCHW" } else { "NHWC" }),
            nn::bias_add_shape(&px, &py),
        ),
        3 => (
            nn::conv2d(&x, &y, conv_attrs),
            nn::conv2d_shape(&px, &py, conv_attrs),
        ),
        4 => (
            nn::depthwise_conv2d_native(&x, &y, conv_attrs),
            nn::depthwise_conv2d_native_shape(&px, &py, conv_attrs),
        ),
        5 => (
            nn::max_pool(&x, &four(&l1), &four(&l2), padding),
            nn::pool_shape(&px, &four(&l1), &four(&l2), padding),
        ),
        6 => (
            nn::avg_pool(&x, &four(&l1), &four(&l2), padding),
            nn::pool_shape(&px, &four(&l1), &four(&l2), padding),
        ),
        _ => {
            let c = sx.last().copied().unwrap_or(0);
            let p = |i: u8| tensor_over(DataType::FLOAT, &shape(&[c]), &[i, 0x3f], 64, true);
            let out = nn::fused_batch_norm_v3(&x, &p(1), &p(2), &p(3), &p(4), 1e-3, "NHWC", false);
            let cs = partial(&[c], false);
            let shapes =
                nn::fused_batch_norm_v3_shape(&px, &[cs.clone(), cs.clone(), cs.clone(), cs]);
            (
                out.map(|mut v| v.swap_remove(0)),
                shapes.map(|mut v| v.swap_remove(0)),
            )
        }
    };
    if let Ok(t) = &eager {
        assert_eq!(t.dtype(), dx, "op {op}: output dtype");
        if !unknown {
            if let Ok(s) = &inferred {
                if let Some(d) = s.dims() {
                    assert_eq!(
                        d,
                        t.shape().dim_sizes(),
                        "op {op}: shape function disagrees"
                    );
                }
            }
        }
    }
}
