//! The one place where a dtype selects its element type and an op its scalar function; the
//! engine ([`super::engine`]) does the rest.

use std::sync::Arc;

use half::{bf16, f16};
use num_complex::Complex;
use tensorcast_buffer::{AllocationAttributes, Allocator};

use super::engine::{self, never, Kernel, Src};
use super::numeric::{
    add32, add64, bf16_to_f32, cmul_c99_32, cmul_c99_64, cmul_packet32, cmul_packet64, daz32,
    daz64, eq32, f16_to_f32, f32_to_bf16, f32_to_f16, ftz32, max_nan, min_nan, mul32, mul64, sub32,
    sub64, subnormal32, subnormal64, subnormal_bf16, tiny32, tiny_bf16,
};
use super::{check, BinaryOp, Operand};
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::{DataType, Element, Tensor, TensorShape};

/// SIMD packet lengths of TensorFlow's x86 build (AVX): the remainder of the output that does
/// not fill a packet runs scalar code.
const PACKET_F32: usize = 8;
const PACKET_F64: usize = 4;
const PACKET_C64: usize = 4;
const PACKET_C128: usize = 2;

/// Which operand, if any, is a single element read against a larger other: TensorFlow then
/// runs its `Right` (`y`) or `Left` (`x`) kernel, whose vectorised loop puts the single element
/// first in the commutative `AddV2`/`Mul` instructions and whose scalar remainder puts the
/// other operand first. That order decides which of two NaNs comes out (recorded from
/// TensorFlow 2.21 in `tests/tf_observed/elementwise_nan_order.jsonl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scalar {
    /// Neither (same shapes, or a broadcast): `x` first everywhere.
    Neither,
    /// `x` is the single element.
    X,
    /// `y` is the single element.
    Y,
}

/// An operand ready for the engine: its tensor (and an aligned copy if it was not aligned for
/// the element type) and its layout over the output (`None` for a dense tensor of the
/// output's shape or a single element: the common cases need no layout work).
pub(crate) struct Ready<'a> {
    tensor: &'a Tensor,
    /// An aligned copy of `tensor`, made only when `tensor` is not aligned for its elements.
    copy: Option<Tensor>,
    layout: Option<Layout>,
}

impl<'a> Ready<'a> {
    /// `op` read over the output shape `out`; `same` says that both operands have `out`'s
    /// shape (so that no shape needs comparing again).
    #[inline]
    pub(crate) fn new(op: &Operand<'a>, out: &TensorShape, same: bool) -> Result<Self> {
        let dense = op.is_plain() && (same || op.shape().num_elements() == 1 || op.shape() == out);
        let layout = if dense {
            None
        } else {
            Some(layout_over(op, out)?)
        };
        Ok(Self {
            tensor: op.tensor(),
            copy: None,
            layout,
        })
    }

    #[inline]
    fn src<T: Element>(&mut self) -> Result<Src<'_, T>> {
        if self.copy.is_none() {
            if let Ok(data) = self.tensor.as_slice::<T>() {
                return Ok(Src {
                    data,
                    layout: self.layout.as_ref(),
                });
            }
            match self.tensor.as_slice::<T>() {
                // A tensor adopted from foreign memory may be unaligned for `T`: read an
                // aligned copy (the only input copy the engine ever makes).
                Err(Error::Misaligned { .. }) => self.copy = Some(self.tensor.deep_copy()?),
                Err(e) => return Err(e),
                Ok(_) => {}
            }
        }
        let t = self.copy.as_ref().unwrap_or(self.tensor);
        Ok(Src {
            data: t.as_slice::<T>()?,
            layout: self.layout.as_ref(),
        })
    }
}

/// The layout of an operand that is a view or a broadcast, over the output shape `out`.
fn layout_over(op: &Operand<'_>, out: &TensorShape) -> Result<Layout> {
    let dims = out.dims_usize();
    op.layout_over(&dims).ok_or_else(|| {
        Error::Internal(format!(
            "operand of shape {} does not broadcast to {out}",
            op.shape()
        ))
    })
}

/// Runs `op` on two operands whose dtypes and shapes were checked, into `out`.
///
/// `scalar`: which operand is a single element read against a larger other (see [`Scalar`]).
pub(crate) fn compute(
    allocator: &Arc<dyn Allocator>,
    op: BinaryOp,
    dtype: DataType,
    scalar: Scalar,
    a: &mut Ready<'_>,
    b: &mut Ready<'_>,
    out: &TensorShape,
) -> Result<Tensor> {
    let n = out.num_elements_usize();
    if n == 0 {
        return Tensor::new_in(
            allocator,
            op.output_dtype(dtype),
            out,
            &AllocationAttributes::default(),
        );
    }

    // Comparisons write `bool` (one byte, 0 or 1); arithmetic writes `T`.
    macro_rules! go {
        ($T:ty, $O:ty, $odt:expr, $main:expr, $tail:expr, $tail_len:expr) => {{
            let main = $main;
            go!($T, $O, $odt, main, $tail, $tail_len, main, never::<$T, $O>)
        }};
        ($T:ty, $O:ty, $odt:expr, $main:expr, $tail:expr, $tail_len:expr, $fast:expr, $special:expr) => {{
            let (sa, sb) = (a.src::<$T>()?, b.src::<$T>()?);
            engine::run::<$T, $O, _, _, _, _, _>(
                allocator,
                sa,
                sb,
                out,
                $odt,
                Kernel {
                    main: $main,
                    tail: $tail,
                    tail_len: $tail_len,
                    fast: $fast,
                    special: $special,
                },
            )
        }};
    }
    // Arithmetic with a shortcut: `$fast` is the plain hardware result, valid unless
    // `$special(x, y, r)`, a condition reduced in lanes of `$M` (the width of `$T`'s bits).
    macro_rules! shortcut {
        ($T:ty, $M:ty, |$x:ident, $y:ident| $e:expr, fast |$fx:ident, $fy:ident| $fe:expr, special |$sx:ident, $sy:ident, $sr:ident| $se:expr) => {{
            let f = |$x: &$T, $y: &$T| -> $T { $e };
            go!(
                $T,
                $T,
                dtype,
                f,
                f,
                0,
                |$fx: &$T, $fy: &$T| -> $T { $fe },
                |$sx: &$T, $sy: &$T, $sr: &$T| -> $M { <$M>::from($se) }
            )
        }};
    }
    // `AddV2`/`Mul` of floats with a single-element operand: the operand order of the
    // vectorised loop for all but the last `n % $packet` elements, the other order for those.
    macro_rules! ordered {
        ($T:ty, $f:ident, $packet:expr) => {{
            let tail = n % $packet;
            if scalar == Scalar::Y {
                go!(
                    $T,
                    $T,
                    dtype,
                    |x: &$T, y: &$T| $f(*y, *x),
                    |x: &$T, y: &$T| $f(*x, *y),
                    tail
                )
            } else {
                go!(
                    $T,
                    $T,
                    dtype,
                    |x: &$T, y: &$T| $f(*x, *y),
                    |x: &$T, y: &$T| $f(*y, *x),
                    tail
                )
            }
        }};
    }
    macro_rules! cmp {
        ($T:ty, |$x:ident, $y:ident| $e:expr) => {{
            let f = |$x: &$T, $y: &$T| u8::from($e);
            go!($T, u8, DataType::BOOL, f, f, 0)
        }};
    }
    macro_rules! same {
        ($T:ty, |$x:ident, $y:ident| $e:expr) => {{
            let f = |$x: &$T, $y: &$T| -> $T { $e };
            go!($T, $T, dtype, f, f, 0)
        }};
    }
    // Equality-only types: Equal / NotEqual with a key function.
    macro_rules! eq_only {
        ($T:ty, |$x:ident| $key:expr) => {{
            match op {
                BinaryOp::Equal => cmp!($T, |a, b| {
                    let $x = a;
                    let ka = $key;
                    let $x = b;
                    ka == $key
                }),
                BinaryOp::NotEqual => cmp!($T, |a, b| {
                    let $x = a;
                    let ka = $key;
                    let $x = b;
                    ka != $key
                }),
                _ => Err(check::no_kernel(op, dtype)),
            }
        }};
    }
    macro_rules! int {
        ($T:ty) => {
            match op {
                BinaryOp::Equal => cmp!($T, |x, y| x == y),
                BinaryOp::NotEqual => cmp!($T, |x, y| x != y),
                BinaryOp::Less => cmp!($T, |x, y| x < y),
                BinaryOp::LessEqual => cmp!($T, |x, y| x <= y),
                BinaryOp::Greater => cmp!($T, |x, y| x > y),
                BinaryOp::GreaterEqual => cmp!($T, |x, y| x >= y),
                BinaryOp::AddV2 => same!($T, |x, y| x.wrapping_add(*y)),
                BinaryOp::Sub => same!($T, |x, y| x.wrapping_sub(*y)),
                BinaryOp::Mul => same!($T, |x, y| x.wrapping_mul(*y)),
                BinaryOp::Maximum => same!($T, |x, y| *x.max(y)),
                BinaryOp::Minimum => same!($T, |x, y| *x.min(y)),
            }
        };
    }
    // Floats: `$w` widens an element to the type the comparison runs in (with DAZ).
    macro_rules! compare_float {
        ($T:ty, |$x:ident| $w:expr) => {
            match op {
                BinaryOp::Equal => cmp!($T, |a, b| wide!($T, a, $x, $w) == wide!($T, b, $x, $w)),
                BinaryOp::NotEqual => {
                    cmp!($T, |a, b| wide!($T, a, $x, $w) != wide!($T, b, $x, $w))
                }
                BinaryOp::Less => cmp!($T, |a, b| wide!($T, a, $x, $w) < wide!($T, b, $x, $w)),
                BinaryOp::LessEqual => {
                    cmp!($T, |a, b| wide!($T, a, $x, $w) <= wide!($T, b, $x, $w))
                }
                BinaryOp::Greater => cmp!($T, |a, b| wide!($T, a, $x, $w) > wide!($T, b, $x, $w)),
                BinaryOp::GreaterEqual => {
                    cmp!($T, |a, b| wide!($T, a, $x, $w) >= wide!($T, b, $x, $w))
                }
                _ => unreachable_arith(op),
            }
        };
    }
    macro_rules! wide {
        ($T:ty, $v:expr, $x:ident, $w:expr) => {{
            let $x: $T = *$v;
            $w
        }};
    }
    // Maximum / Minimum of floats: TensorFlow's vector loop returns `y` for equal operands
    // (`0` and `-0`), its scalar remainder `x`.
    macro_rules! maxmin_float {
        ($T:ty, $packet:expr, |$x:ident| $w:expr, |$r:ident| $back:expr) => {{
            let tail = n % $packet;
            match op {
                BinaryOp::Maximum => go!(
                    $T,
                    $T,
                    dtype,
                    |a: &$T, b: &$T| {
                        let $r = max_nan(wide!($T, a, $x, $w), wide!($T, b, $x, $w), false);
                        $back
                    },
                    |a: &$T, b: &$T| {
                        let $r = max_nan(wide!($T, a, $x, $w), wide!($T, b, $x, $w), true);
                        $back
                    },
                    tail
                ),
                _ => go!(
                    $T,
                    $T,
                    dtype,
                    |a: &$T, b: &$T| {
                        let $r = min_nan(wide!($T, a, $x, $w), wide!($T, b, $x, $w), false);
                        $back
                    },
                    |a: &$T, b: &$T| {
                        let $r = min_nan(wide!($T, a, $x, $w), wide!($T, b, $x, $w), true);
                        $back
                    },
                    tail
                ),
            }
        }};
    }

    // Complex of `$R` parts: the sum's operand order as for floats; the product is Eigen's
    // formula in the vector packets and C99's (`__mulsc3`) in the scalar remainder; equality
    // compares both parts under DAZ.
    macro_rules! complex {
        ($R:ty, $add:ident, $sub:ident, $packet_mul:ident, $c99_mul:ident, $daz:ident, $packet:expr) => {{
            type C = Complex<$R>;
            let add = |x: &C, y: &C| C::new($add(x.re, y.re), $add(x.im, y.im));
            let tail = n % $packet;
            match op {
                BinaryOp::AddV2 => match scalar {
                    Scalar::Neither => go!(C, C, dtype, add, add, 0),
                    Scalar::X => go!(C, C, dtype, add, |x: &C, y: &C| add(y, x), tail),
                    Scalar::Y => go!(C, C, dtype, |x: &C, y: &C| add(y, x), add, tail),
                },
                BinaryOp::Sub => same!(C, |x, y| C::new($sub(x.re, y.re), $sub(x.im, y.im))),
                BinaryOp::Mul => {
                    let swap = scalar == Scalar::X;
                    go!(
                        C,
                        C,
                        dtype,
                        |x: &C, y: &C| $packet_mul(*x, *y, swap),
                        |x: &C, y: &C| $c99_mul(*x, *y),
                        tail
                    )
                }
                _ => eq_only!(C, |v| ($daz(v.re), $daz(v.im))),
            }
        }};
    }

    match dtype {
        DataType::FLOAT => match op {
            // The plain sum, difference or product is TensorFlow's unless an operand or the
            // result is subnormal (DAZ/FTZ), a result is at the edge of the normal range
            // (FTZ after rounding), or NaNs meet (whose NaN comes out).
            BinaryOp::AddV2 if scalar != Scalar::Neither => ordered!(f32, add32, PACKET_F32),
            BinaryOp::Mul if scalar != Scalar::Neither => ordered!(f32, mul32, PACKET_F32),
            BinaryOp::AddV2 => shortcut!(
                f32,
                u32,
                |x, y| add32(*x, *y),
                fast | x,
                y | *x + *y,
                special | x,
                y,
                r | subnormal32(*x) | subnormal32(*y) | subnormal32(*r) | x.is_nan() | y.is_nan()
            ),
            BinaryOp::Sub => shortcut!(
                f32,
                u32,
                |x, y| sub32(*x, *y),
                fast | x,
                y | *x - *y,
                special | x,
                y,
                r | subnormal32(*x) | subnormal32(*y) | subnormal32(*r) | x.is_nan() | y.is_nan()
            ),
            BinaryOp::Mul => shortcut!(
                f32,
                u32,
                |x, y| mul32(*x, *y),
                fast | x,
                y | *x * *y,
                special | x,
                y,
                r | subnormal32(*x) | subnormal32(*y) | tiny32(*r) | x.is_nan() | y.is_nan()
            ),
            // Equality under DAZ: equal, or both zero or subnormal (NaN is neither).
            BinaryOp::Equal => cmp!(f32, |x, y| eq32(*x, *y)),
            BinaryOp::NotEqual => cmp!(f32, |x, y| !eq32(*x, *y)),
            BinaryOp::Maximum | BinaryOp::Minimum => {
                maxmin_float!(f32, PACKET_F32, |v| daz32(v), |r| r)
            }
            _ => compare_float!(f32, |v| daz32(v)),
        },
        DataType::DOUBLE => match op {
            BinaryOp::AddV2 if scalar != Scalar::Neither => ordered!(f64, add64, PACKET_F64),
            BinaryOp::Mul if scalar != Scalar::Neither => ordered!(f64, mul64, PACKET_F64),
            BinaryOp::AddV2 => shortcut!(
                f64,
                u64,
                |x, y| add64(*x, *y),
                fast | x,
                y | *x + *y,
                special | x,
                y,
                r | subnormal64(*x) | subnormal64(*y) | subnormal64(*r) | x.is_nan() | y.is_nan()
            ),
            BinaryOp::Sub => shortcut!(
                f64,
                u64,
                |x, y| sub64(*x, *y),
                fast | x,
                y | *x - *y,
                special | x,
                y,
                r | subnormal64(*x) | subnormal64(*y) | subnormal64(*r) | x.is_nan() | y.is_nan()
            ),
            BinaryOp::Mul => same!(f64, |x, y| mul64(*x, *y)),
            BinaryOp::Maximum | BinaryOp::Minimum => {
                maxmin_float!(f64, PACKET_F64, |v| daz64(v), |r| r)
            }
            _ => compare_float!(f64, |v| daz64(v)),
        },
        // bfloat16 widens to float exactly (its subnormals are float subnormals: DAZ), and a
        // product of two 8-bit significands is exact in float, so plain FTZ is exact.
        DataType::BFLOAT16 => match op {
            BinaryOp::AddV2 => same!(bf16, |x, y| f32_to_bf16(add32(
                bf16_to_f32(*x),
                bf16_to_f32(*y)
            ))),
            BinaryOp::Sub => same!(bf16, |x, y| f32_to_bf16(sub32(
                bf16_to_f32(*x),
                bf16_to_f32(*y)
            ))),
            BinaryOp::Mul => shortcut!(
                bf16,
                u16,
                |x, y| f32_to_bf16(ftz32(daz32(bf16_to_f32(*x)) * daz32(bf16_to_f32(*y)))),
                fast | x,
                y | f32_to_bf16(bf16_to_f32(*x) * bf16_to_f32(*y)),
                special | x,
                y,
                r | subnormal_bf16(*x) | subnormal_bf16(*y) | tiny_bf16(*r)
            ),
            BinaryOp::Maximum | BinaryOp::Minimum => {
                maxmin_float!(
                    bf16,
                    usize::MAX,
                    |v| daz32(bf16_to_f32(v)),
                    |r| f32_to_bf16(r)
                )
            }
            _ => compare_float!(bf16, |v| daz32(bf16_to_f32(v))),
        },
        // half widens to float exactly and its values are never float subnormals, nor are
        // their sums and products (other than zero).
        DataType::HALF => match op {
            BinaryOp::AddV2 => same!(f16, |x, y| f32_to_f16(f16_to_f32(*x) + f16_to_f32(*y))),
            BinaryOp::Sub => same!(f16, |x, y| f32_to_f16(f16_to_f32(*x) - f16_to_f32(*y))),
            BinaryOp::Mul => same!(f16, |x, y| f32_to_f16(f16_to_f32(*x) * f16_to_f32(*y))),
            BinaryOp::Maximum | BinaryOp::Minimum => {
                maxmin_float!(f16, usize::MAX, |v| f16_to_f32(v), |r| f32_to_f16(r))
            }
            _ => compare_float!(f16, |v| f16_to_f32(v)),
        },
        DataType::COMPLEX64 => complex!(
            f32,
            add32,
            sub32,
            cmul_packet32,
            cmul_c99_32,
            daz32,
            PACKET_C64
        ),
        DataType::COMPLEX128 => complex!(
            f64,
            add64,
            sub64,
            cmul_packet64,
            cmul_c99_64,
            daz64,
            PACKET_C128
        ),
        // The integers every op takes (wrapping arithmetic); the quantized types compare as
        // their integers; `bool` and `string` compare for equality only.
        _ => {
            crate::dispatch!(dtype, {INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64} T => int!(T),
            _ => crate::dispatch!(dtype, [quantized] T => eq_only!(T, |v| v.0),
                _ => crate::dispatch!(dtype, {BOOL, STRING} T => eq_only!(T, |v| v),
                    _ => Err(check::no_kernel(op, dtype)))))
        }
    }
}

/// Comparison ops never reach the arithmetic arms (the type lists keep them apart).
fn unreachable_arith(op: BinaryOp) -> Result<Tensor> {
    Err(Error::Internal(format!(
        "{} reached a comparison kernel",
        op.name()
    )))
}
