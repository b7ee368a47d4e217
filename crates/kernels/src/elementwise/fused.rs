//! A chain of `float` element-wise ops run as one pass over memory: the session's fusion of
//! what a model computes after each convolution or matmul (batch norm's scale and shift,
//! `BiasAdd`, an activation such as Keras' hard-swish `x * relu6(x + 3) / 6`).
//!
//! Each block of 1,024 elements goes through every step in L1-sized buffers and only the
//! last step's result is written to memory, instead of one tensor per op. Every step computes
//! exactly what its op's own kernel computes (the same per-element functions: TensorFlow's
//! DAZ/FTZ and NaN rules for `AddV2`, `Sub`, `Mul`, `RealDiv`, [`crate::math::unary`]'s block
//! functions, `BiasAdd`'s plain sum), so a fused chain gives the unfused ops' bits.
//!
//! Constant operands are scalars or vectors along the last dimension; [`FusedChain::run`]
//! declines (returns `None`) an input whose shape does not fit them, and the caller runs the
//! ops one by one (with their own errors) instead.

use std::sync::Arc;

use tensorcast_buffer::simd::vectorized_wide;
use tensorcast_buffer::{cpu_allocator_ref, Writer};
use tensorcast_core::{DataType, Result, Tensor};

use super::numeric::{add32, div32, mul32, sub32};
use super::BinaryOp;
use crate::math::{f32_block, UnaryOp};

/// Elements per block (4 KiB of `float` per step's buffer).
const BLOCK: usize = 1024;
/// Elements from which the chain runs on every core, and the size of each piece.
const PARALLEL_MIN: usize = 1 << 16;
const PIECE: usize = 1 << 15;

thread_local! {
    /// [`FusedChain::apply_in_place`]'s step buffers, kept between calls.
    static REGS: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An operand of a fused step.
#[derive(Debug, Clone)]
pub enum FusedArg {
    /// The chain's input (`0`) or the result of step `i - 1` (`i`).
    Value(usize),
    /// A scalar constant.
    Scalar(f32),
    /// A constant vector along the last dimension (its length must be the input's last
    /// dimension; the op broadcasts it over the others).
    Channel(Arc<[f32]>),
}

/// One step of a [`FusedChain`].
#[derive(Debug, Clone)]
pub enum FusedStep {
    /// A unary op of [`crate::math::unary`] on a value.
    Unary(UnaryOp, usize),
    /// `AddV2`, `Sub`, `Mul` or `RealDiv` of two operands, at least one a value.
    Binary(BinaryOp, FusedArg, FusedArg),
    /// `BiasAdd` (NHWC) of a value and a bias vector.
    BiasAdd(usize, Arc<[f32]>),
}

/// A validated chain of [`FusedStep`]s over one `float` input.
#[derive(Debug, Clone)]
pub struct FusedChain {
    steps: Vec<FusedStep>,
    /// Each step's vector operands repeated to cover a block from any channel offset (made
    /// once, not per run).
    tiles: Vec<Vec<Vec<f32>>>,
}

/// A step's operand for one block.
#[derive(Clone, Copy)]
enum Src<'a> {
    Slice(&'a [f32]),
    Scalar(f32),
}

impl FusedChain {
    /// The chain of `steps`, or `None` when a step refers to a later value, a binary op is
    /// not one of `AddV2`, `Sub`, `Mul`, `RealDiv`, a binary step has no value operand, or
    /// there are no steps.
    pub fn new(steps: Vec<FusedStep>) -> Option<Self> {
        if steps.is_empty() {
            return None;
        }
        for (i, s) in steps.iter().enumerate() {
            let value_ok = |v: usize| v <= i;
            let ok = match s {
                FusedStep::Unary(_, v) | FusedStep::BiasAdd(v, _) => value_ok(*v),
                FusedStep::Binary(op, a, b) => {
                    let arg_ok = |a: &FusedArg| match a {
                        FusedArg::Value(v) => value_ok(*v),
                        _ => true,
                    };
                    matches!(
                        op,
                        BinaryOp::AddV2 | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::RealDiv
                    ) && arg_ok(a)
                        && arg_ok(b)
                        && (matches!(a, FusedArg::Value(_)) || matches!(b, FusedArg::Value(_)))
                }
            };
            if !ok {
                return None;
            }
        }
        let tile =
            |v: &[f32]| -> Vec<f32> { v.iter().copied().cycle().take(v.len() + BLOCK).collect() };
        let tiles = steps
            .iter()
            .map(|s| match s {
                FusedStep::BiasAdd(_, b) => vec![tile(b)],
                FusedStep::Binary(_, a, b) => [a, b]
                    .iter()
                    .map(|a| match a {
                        FusedArg::Channel(v) => tile(v),
                        _ => Vec::new(),
                    })
                    .collect(),
                FusedStep::Unary(..) => Vec::new(),
            })
            .collect();
        Some(Self { steps, tiles })
    }

    /// The steps.
    pub fn steps(&self) -> &[FusedStep] {
        &self.steps
    }

    /// The chain's result on `x`, or `None` when the chain does not apply as one pass: `x` is
    /// not `float`, or a vector operand's length is not `x`'s last dimension (or `x` has too
    /// few dimensions for it, or for `BiasAdd`'s two). The result has `x`'s shape.
    ///
    /// # Errors
    /// An allocation failure.
    pub fn run(&self, x: &Tensor) -> Option<Result<Tensor>> {
        let dims = x.shape().dim_sizes();
        if x.dtype() != DataType::FLOAT || !self.fits(dims) {
            return None;
        }
        let data = match x.as_slice::<f32>() {
            Ok(d) => d,
            Err(e) => return Some(Err(e)),
        };
        Some(self.compute(x, data, Self::channels(dims)))
    }

    /// Whether the chain applies as one pass to a `float` tensor of shape `dims`: every
    /// vector operand's length is the last dimension (and `BiasAdd`'s input has at least two).
    pub fn fits(&self, dims: &[i64]) -> bool {
        let last = dims.last().copied();
        self.steps.iter().all(|s| {
            let fits = |v: &[f32]| last == Some(v.len() as i64);
            match s {
                FusedStep::Unary(..) => true,
                FusedStep::BiasAdd(_, b) => dims.len() >= 2 && fits(b),
                FusedStep::Binary(_, a, b) => [a, b].iter().all(|a| match a {
                    FusedArg::Channel(v) => fits(v),
                    _ => true,
                }),
            }
        })
    }

    /// The last dimension of `dims` (1 for a scalar), at least 1.
    fn channels(dims: &[i64]) -> usize {
        dims.last().copied().unwrap_or(1).max(1) as usize
    }

    /// The chain applied in place to `data`: elements of a tensor of shape `dims` (which the
    /// chain [`FusedChain::fits`]) from one whose index is a multiple of the last dimension,
    /// such as whole pixels of a convolution's output (its epilogue,
    /// [`crate::nn::Epilogue`]). Each element ends as [`FusedChain::run`] makes it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tensorcast_kernels::elementwise::fused::{FusedArg, FusedChain, FusedStep};
    /// use tensorcast_kernels::elementwise::BinaryOp;
    /// // x * [2, 3] (per channel), then + 1.
    /// let chain = FusedChain::new(vec![
    ///     FusedStep::Binary(BinaryOp::Mul, FusedArg::Value(0), FusedArg::Channel(Arc::from([2.0f32, 3.0]))),
    ///     FusedStep::Binary(BinaryOp::AddV2, FusedArg::Value(1), FusedArg::Scalar(1.0)),
    /// ])
    /// .unwrap();
    /// let mut data = [1.0f32, 1.0, 2.0, 2.0];
    /// chain.apply_in_place(&mut data, &[2, 2]);
    /// assert_eq!(data, [3.0, 4.0, 5.0, 7.0]);
    /// ```
    pub fn apply_in_place(&self, data: &mut [f32], dims: &[i64]) {
        let channels = Self::channels(dims);
        let block = data.len().min(BLOCK);
        if block == 0 {
            return;
        }
        REGS.with_borrow_mut(|regs| {
            regs.resize(self.steps.len() * block, 0.0);
            let last = (self.steps.len() - 1) * block;
            for (k, c) in data.chunks_mut(BLOCK).enumerate() {
                self.block(c, (k * BLOCK) % channels, &self.tiles, regs, block);
                c.copy_from_slice(&regs[last..last + c.len()]);
            }
        });
    }

    fn compute(&self, x: &Tensor, data: &[f32], channels: usize) -> Result<Tensor> {
        let tiles = &self.tiles;
        let body = |w: &mut Writer<'_>, lo: usize, src: &[f32]| {
            // One buffer per step, a block long (or the input's length, when shorter).
            let block = src.len().min(BLOCK);
            let mut regs = vec![0f32; self.steps.len() * block];
            for (k, c) in src.chunks(BLOCK).enumerate() {
                let start = lo + k * BLOCK;
                self.block(c, start % channels, tiles, &mut regs, block);
                let last = self.steps.len() - 1;
                w.put_slice(bytemuck::cast_slice(
                    &regs[last * block..last * block + c.len()],
                ));
            }
        };
        Tensor::from_writer(cpu_allocator_ref(), DataType::FLOAT, x.shape(), |w| {
            // The next op (a convolution, usually) reads the result soon: keep it in cache.
            w.set_streaming(false);
            if data.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
                w.par_chunks(PIECE * 4, |i, cw| {
                    let lo = i * PIECE;
                    body(cw, lo, &data[lo..(lo + PIECE).min(data.len())]);
                });
            } else {
                body(w, 0, data);
            }
        })
    }

    /// Every step on one block of the input (`offset`: the block's first channel), step `i`'s
    /// result into `regs[i * block..]`.
    fn block(
        &self,
        input: &[f32],
        offset: usize,
        tiles: &[Vec<Vec<f32>>],
        regs: &mut [f32],
        block: usize,
    ) {
        let n = input.len();
        for (i, step) in self.steps.iter().enumerate() {
            let (done, rest) = regs.split_at_mut(i * block);
            let out = &mut rest[..n];
            let value = |v: usize| -> &[f32] {
                if v == 0 {
                    input
                } else {
                    &done[(v - 1) * block..(v - 1) * block + n]
                }
            };
            match step {
                FusedStep::Unary(op, v) => f32_block(*op, value(*v), out, true),
                FusedStep::BiasAdd(v, _) => {
                    let (x, b) = (value(*v), &tiles[i][0][offset..offset + n]);
                    vectorized_wide(
                        #[inline(always)]
                        || {
                            for ((o, &x), &b) in out.iter_mut().zip(x).zip(b) {
                                *o = x + b;
                            }
                        },
                    );
                }
                FusedStep::Binary(op, a, b) => {
                    let src = |arg: &FusedArg, j: usize| match arg {
                        FusedArg::Value(v) => Src::Slice(value(*v)),
                        FusedArg::Scalar(s) => Src::Scalar(*s),
                        FusedArg::Channel(_) => Src::Slice(&tiles[i][j][offset..offset + n]),
                    };
                    let (a, b) = (src(a, 0), src(b, 1));
                    match op {
                        BinaryOp::AddV2 => binary(add32, a, b, out),
                        BinaryOp::Sub => binary(sub32, a, b, out),
                        BinaryOp::Mul => binary(mul32, a, b, out),
                        _ => binary(div32, a, b, out),
                    }
                }
            }
        }
    }
}

/// `out[i] = f(a[i], b[i])`, compiled for the CPU's widest vector instructions (a block in L1
/// is bound by computation, not memory).
#[inline(always)]
fn binary(f: impl Fn(f32, f32) -> f32, a: Src<'_>, b: Src<'_>, out: &mut [f32]) {
    vectorized_wide(
        #[inline(always)]
        || match (a, b) {
            (Src::Slice(a), Src::Slice(b)) => {
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    *o = f(x, y);
                }
            }
            (Src::Slice(a), Src::Scalar(y)) => {
                for (o, &x) in out.iter_mut().zip(a) {
                    *o = f(x, y);
                }
            }
            (Src::Scalar(x), Src::Slice(b)) => {
                for (o, &y) in out.iter_mut().zip(b) {
                    *o = f(x, y);
                }
            }
            (Src::Scalar(x), Src::Scalar(y)) => out.fill(f(x, y)),
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::binary as binary_op;
    use crate::math::unary;
    use crate::nn::bias_add;

    fn hard_swish_bn(c: usize) -> (FusedChain, Vec<f32>, Vec<f32>) {
        let scale: Vec<f32> = (0..c).map(|i| 0.5 + i as f32 * 0.25).collect();
        let shift: Vec<f32> = (0..c).map(|i| i as f32 * -0.125).collect();
        let steps = vec![
            FusedStep::Binary(
                BinaryOp::Mul,
                FusedArg::Value(0),
                FusedArg::Channel(scale.clone().into()),
            ),
            FusedStep::Binary(
                BinaryOp::AddV2,
                FusedArg::Value(1),
                FusedArg::Channel(shift.clone().into()),
            ),
            FusedStep::Binary(BinaryOp::AddV2, FusedArg::Value(2), FusedArg::Scalar(3.0)),
            FusedStep::Unary(UnaryOp::Relu6, 3),
            FusedStep::Binary(BinaryOp::RealDiv, FusedArg::Value(4), FusedArg::Scalar(6.0)),
            FusedStep::Binary(BinaryOp::Mul, FusedArg::Value(2), FusedArg::Value(5)),
        ];
        (FusedChain::new(steps).unwrap(), scale, shift)
    }

    fn unfused(x: &Tensor, scale: &[f32], shift: &[f32]) -> Tensor {
        let b = |op, x: &Tensor, y: &Tensor| binary_op(op, x, y, true).unwrap();
        let bn = b(BinaryOp::Mul, x, &Tensor::vector(scale));
        let bn = b(BinaryOp::AddV2, &bn, &Tensor::vector(shift));
        let a = b(BinaryOp::AddV2, &bn, &Tensor::scalar_of(3.0f32));
        let r = unary(UnaryOp::Relu6, &a).unwrap();
        let d = b(BinaryOp::RealDiv, &r, &Tensor::scalar_of(6.0f32));
        b(BinaryOp::Mul, &bn, &d)
    }

    /// Values with every edge the per-element functions handle: NaN, infinities, signed
    /// zeros, subnormals, values near the activation's kinks.
    fn edgy(n: usize) -> Vec<f32> {
        let special = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            1e-40,
            -1e-40,
            f32::MIN_POSITIVE,
            -3.0,
            3.0,
            6.0,
            f32::MAX,
        ];
        (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    special[(i / 7) % special.len()]
                } else {
                    ((i as f32) * 0.618).sin() * 9.0
                }
            })
            .collect()
    }

    #[test]
    fn a_fused_chain_gives_the_unfused_ops_bits() {
        // Small (one block), odd-sized, and large enough for the parallel path, with a
        // channel count that does not divide the block.
        for (n, c) in [
            (0usize, 4usize),
            (6, 3),
            (24 * 7, 7),
            (1 << 17, 24),
            (3 * 5 * 1000, 5),
        ] {
            let n = n / c * c;
            let (chain, scale, shift) = hard_swish_bn(c);
            let x = Tensor::from_vec(edgy(n), [(n / c) as i64, c as i64].as_slice()).unwrap();
            let got = chain.run(&x).unwrap().unwrap();
            let want = unfused(&x, &scale, &shift);
            assert_eq!(got.shape(), want.shape());
            let (g, w) = (
                got.as_slice::<f32>().unwrap(),
                want.as_slice::<f32>().unwrap(),
            );
            for (i, (a, b)) in g.iter().zip(w).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "n={n} c={c} element {i}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn bias_add_and_unary_steps_equal_their_kernels() {
        let c = 10;
        let bias: Vec<f32> = (0..c).map(|i| i as f32 - 4.5).collect();
        let chain = FusedChain::new(vec![
            FusedStep::BiasAdd(0, bias.clone().into()),
            FusedStep::Unary(UnaryOp::Relu, 1),
            FusedStep::Unary(UnaryOp::Sigmoid, 2),
        ])
        .unwrap();
        let x = Tensor::from_vec(edgy(40 * c), [4, 10, c as i64].as_slice()).unwrap();
        let got = chain.run(&x).unwrap().unwrap();
        let r = unary(
            UnaryOp::Relu,
            &bias_add(&x, &Tensor::vector(&bias), "NHWC").unwrap(),
        )
        .unwrap();
        let want = unary(UnaryOp::Sigmoid, &r).unwrap();
        let bits = |t: &Tensor| {
            t.as_slice::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&got), bits(&want));
    }

    #[test]
    fn shapes_that_do_not_fit_are_declined() {
        let (chain, ..) = hard_swish_bn(4);
        // Last dimension 1 (the vector would broadcast it), another length, a scalar, doubles.
        for dims in [&[3i64, 1][..], &[2, 5], &[]] {
            let n: i64 = dims.iter().product();
            let x = Tensor::from_vec(vec![1.0f32; n as usize], dims).unwrap();
            assert!(chain.run(&x).is_none(), "{dims:?}");
        }
        assert!(chain.run(&Tensor::vector(&[1.0f64; 4])).is_none());
        let bias = FusedChain::new(vec![FusedStep::BiasAdd(0, vec![1.0f32].into())]).unwrap();
        assert!(
            bias.run(&Tensor::vector(&[1.0f32])).is_none(),
            "BiasAdd needs rank 2"
        );
        // Invalid chains.
        assert!(FusedChain::new(vec![]).is_none());
        assert!(FusedChain::new(vec![FusedStep::Unary(UnaryOp::Relu, 1)]).is_none());
        let pow = FusedStep::Binary(BinaryOp::Pow, FusedArg::Value(0), FusedArg::Scalar(2.0));
        assert!(FusedChain::new(vec![pow]).is_none());
        let consts = FusedStep::Binary(BinaryOp::Mul, FusedArg::Scalar(1.0), FusedArg::Scalar(2.0));
        assert!(FusedChain::new(vec![consts]).is_none());
    }
}
