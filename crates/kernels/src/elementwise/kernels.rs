//! The one place where a dtype selects its element type and an op its scalar function; the
//! engine ([`super::engine`]) does the rest.

use std::sync::Arc;

use half::{bf16, f16};
use num_complex::Complex;
use tensorcast_buffer::{AllocationAttributes, Allocator};

use super::engine::{self, never, Kernel, Src};
use super::numeric::{
    add32, add64, add_plain32, bf16_to_f32, cdiv32, cdiv64, cdiv_c99_32, cdiv_c99_64, cmul_c99_32,
    cmul_c99_64, cmul_packet32, cmul_packet64, daz32, daz64, div32, div64, eq32, f16_to_f32,
    f32_to_bf16, f32_to_bf16_scalar, f32_to_f16, floor_mod32, floor_mod64, ftz32, indefinite32,
    ipow, max_nan, max_select, min_nan, min_select, mul32, mul64, mul_plain32, pow32, pow64,
    pow_scalar32, sub32, sub64, subnormal32, subnormal64, subnormal_bf16, tiny32, tiny_bf16,
};
use super::{BinaryOp, Operand};
use tensorcast_core::layout::Layout;
use tensorcast_core::{DataType, Element, Tensor, TensorShape};
use tensorcast_core::{Error, Result};

/// SIMD packet lengths of TensorFlow's x86 build (AVX): the remainder of the output that does
/// not fill a packet runs scalar code.
const PACKET_F32: usize = 8;
const PACKET_BF16: usize = 8;
const PACKET_F64: usize = 4;
const PACKET_C64: usize = 4;
const PACKET_C128: usize = 2;

/// `a * b` of two widened `bfloat16`s in `float` with DAZ and FTZ: the product of two 8-bit
/// significands is exact in `float`, so a plain flush of the result is exact (NaN bits are
/// left to the hardware: the packets' conversion makes every NaN `0x7fc0` anyway).
#[inline(always)]
fn mul_bf16(a: f32, b: f32) -> f32 {
    ftz32(daz32(a) * daz32(b))
}

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
/// The ops `bfloat16` and `half` compute by widening to `float` (`div_pow_16!`).
const fn widened_in_f32(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::RealDiv
            | BinaryOp::Div
            | BinaryOp::FloorDiv
            | BinaryOp::FloorMod
            | BinaryOp::Pow
            | BinaryOp::SquaredDifference
    )
}

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
    // Arithmetic with a shortcut: the plain hardware `x $op y` is TensorFlow's `$exact(x, y)`
    // unless an operand is subnormal (`$sub`), the result is (`$edge`), or a NaN is in: a
    // condition reduced in lanes of `$M` (the width of `$T`'s bits).
    macro_rules! shortcut {
        ($T:ty, $M:ty, $exact:ident, $op:tt, $sub:ident, $edge:ident) => {{
            let f = |x: &$T, y: &$T| -> $T { $exact(*x, *y) };
            go!(
                $T,
                $T,
                dtype,
                f,
                f,
                0,
                |x: &$T, y: &$T| -> $T { *x $op *y },
                |x: &$T, y: &$T, r: &$T| -> $M {
                    <$M>::from($sub(*x) | $sub(*y) | $edge(*r) | x.is_nan() | y.is_nan())
                }
            )
        }};
    }
    // `AddV2`/`Mul` of floats with a single-element operand: the operand order of the
    // vectorised loop for all but the last `n % $packet` elements, the other order for those.
    macro_rules! ordered {
        ($T:ty, $f:ident, $packet:expr) => {{
            let tail = n % $packet;
            let plain = |x: &$T, y: &$T| $f(*x, *y);
            let swapped = |x: &$T, y: &$T| $f(*y, *x);
            if scalar == Scalar::Y {
                go!($T, $T, dtype, swapped, plain, tail)
            } else {
                go!($T, $T, dtype, plain, swapped, tail)
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
                _ => unreachable_arith(op),
            }
        }};
    }
    // Integers. Divisors were checked for zeros and exponents for negative values before
    // (`check_integer_operands`), so division cannot trap; `MIN / -1` wraps to `MIN` (and its
    // remainder is 0), as TensorFlow computes `-MIN / 1` there. `$signed` selects the floor
    // rules for signed types (an unsigned quotient or remainder is already floored).
    macro_rules! int {
        ($T:ty, $signed:tt) => {
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
                // (A zero divisor never gets here; 0 keeps the closures panic-free regardless.)
                BinaryOp::Div => same!($T, |x, y| if *y == 0 { 0 } else { x.wrapping_div(*y) }),
                BinaryOp::FloorDiv => int!(@floor_div $T, $signed),
                BinaryOp::FloorMod => int!(@floor_mod $T, $signed),
                BinaryOp::Pow => int!(@pow $T, $signed),
                BinaryOp::SquaredDifference => same!($T, |x, y| {
                    let d = x.wrapping_sub(*y);
                    d.wrapping_mul(d)
                }),
                BinaryOp::RealDiv | BinaryOp::LogicalAnd | BinaryOp::LogicalOr => {
                    unreachable_arith(op)
                }
            }
        };
        (@floor_div $T:ty, true) => {
            same!($T, |x, y| {
                if *y == 0 {
                    return 0;
                }
                let z = x.wrapping_div(*y);
                if z.wrapping_mul(*y) != *x && ((*x < 0) != (*y < 0)) {
                    z.wrapping_sub(1)
                } else {
                    z
                }
            })
        };
        (@floor_div $T:ty, false) => {
            same!($T, |x, y| if *y == 0 { 0 } else { x.wrapping_div(*y) })
        };
        (@floor_mod $T:ty, true) => {
            same!($T, |x, y| {
                if *y == 0 {
                    return 0;
                }
                let t = x.wrapping_rem(*y);
                if t != 0 && ((*y < 0) != (t < 0)) {
                    t.wrapping_add(*y)
                } else {
                    t
                }
            })
        };
        (@floor_mod $T:ty, false) => {
            same!($T, |x, y| if *y == 0 { 0 } else { x.wrapping_rem(*y) })
        };
        (@pow $T:ty, $signed:tt) => {
            same!($T, |x, y| ipow(*x, u64::try_from(*y).unwrap_or(0)))
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
    // `bfloat16` AddV2 / Sub / Mul through `float` (with DAZ/FTZ): the packets' rounding of
    // `$main` (every NaN `0x7fc0`) for all but the last `n % 8` elements, and for those the
    // scalar conversion of `$tail` (a NaN keeps its sign; an invalid operation's NaN is
    // negative, x86's), with a single-element `x` second when `$commutes` (as `ordered!`).
    // With `shortcut`, blocks of the packets' part without subnormal operands or tiny results
    // skip DAZ/FTZ.
    macro_rules! bf16_arith {
        ($main:ident, $tail:ident, $commutes:expr $(, $shortcut:ident)?) => {{
            let main = |x: &bf16, y: &bf16| f32_to_bf16($main(bf16_to_f32(*x), bf16_to_f32(*y)));
            let swap = $commutes && scalar == Scalar::X;
            let tail = move |x: &bf16, y: &bf16| {
                let (a, b) = (bf16_to_f32(*x), bf16_to_f32(*y));
                let (a, b) = if swap { (b, a) } else { (a, b) };
                f32_to_bf16_scalar(indefinite32(a, b, $tail(a, b)))
            };
            bf16_arith!(@go main, tail $(, $shortcut)?)
        }};
        (@go $main:ident, $tail:ident) => {
            go!(bf16, bf16, dtype, $main, $tail, n % PACKET_BF16)
        };
        (@go $main:ident, $tail:ident, shortcut) => {
            go!(
                bf16,
                bf16,
                dtype,
                $main,
                $tail,
                n % PACKET_BF16,
                |x: &bf16, y: &bf16| f32_to_bf16(bf16_to_f32(*x) * bf16_to_f32(*y)),
                |x: &bf16, y: &bf16, r: &bf16| {
                    u16::from(subnormal_bf16(*x) | subnormal_bf16(*y) | tiny_bf16(*r))
                }
            )
        };
    }
    // `half` AddV2 / Mul through `float`: with a single-element `x`, the other operand comes
    // first (which of two NaNs comes out; recorded from TensorFlow 2.21 in elementwise_extra).
    macro_rules! half_commuting {
        ($f:ident) => {{
            let wide = |v: &f16| f16_to_f32(*v);
            if scalar == Scalar::X {
                same!(f16, |x, y| f32_to_f16($f(wide(y), wide(x))))
            } else {
                same!(f16, |x, y| f32_to_f16($f(wide(x), wide(y))))
            }
        }};
    }
    // Maximum / Minimum: `$e` computes one element from `$a`/`$b`, given whether the op is
    // Maximum (`$max`) and whether the element is in TensorFlow's vector packets (`$vector`,
    // all but the last `n % $packet` elements); both are constants in each loop.
    macro_rules! max_min {
        ($T:ty, $packet:expr, |$a:ident, $b:ident, $max:ident, $vector:ident| $e:expr) => {{
            let tail = n % $packet;
            let f = |$a: &$T, $b: &$T, $max: bool, $vector: bool| -> $T { $e };
            match op {
                BinaryOp::Maximum => go!(
                    $T,
                    $T,
                    dtype,
                    |a: &$T, b: &$T| f(a, b, true, true),
                    |a: &$T, b: &$T| f(a, b, true, false),
                    tail
                ),
                _ => go!(
                    $T,
                    $T,
                    dtype,
                    |a: &$T, b: &$T| f(a, b, false, true),
                    |a: &$T, b: &$T| f(a, b, false, false),
                    tail
                ),
            }
        }};
    }
    // Maximum / Minimum of floats: NaN propagates; TensorFlow's vector loop returns `y` for
    // equal operands (`0` and `-0`), its scalar remainder `x`.
    macro_rules! maxmin_float {
        ($T:ty, $packet:expr, |$x:ident| $w:expr) => {
            max_min!($T, $packet, |a, b, max, vector| {
                let (x, y) = (wide!($T, a, $x, $w), wide!($T, b, $x, $w));
                if max {
                    max_nan(x, y, !vector)
                } else {
                    min_nan(x, y, !vector)
                }
            })
        };
    }
    // Maximum / Minimum of `half` / `bfloat16`: the selected operand's own bits (NaNs
    // included; see `max_select`), `x` on ties everywhere; in `bfloat16`'s packets a
    // subnormal result is flushed to zero (`$flush`), as the packets compute in `float` with
    // DAZ.
    macro_rules! select_16 {
        ($T:ty, $packet:expr, |$x:ident| $w:expr, |$r:ident| $flush:expr) => {{
            let wide = |$x: $T| $w;
            let flush = |$r: $T| $flush;
            max_min!($T, $packet, |a, b, max, vector| {
                let r = if max {
                    max_select(*a, *b, wide)
                } else {
                    min_select(*a, *b, wide)
                };
                if vector {
                    flush(r)
                } else {
                    r
                }
            })
        }};
    }

    // Complex of `$R` parts: the sum's operand order as for floats; the product is Eigen's
    // formula in the vector packets and C99's (`__mulsc3`) in the scalar remainder; equality
    // compares both parts under DAZ.
    macro_rules! complex {
        ($R:ty, $add:ident, $sub:ident, $packet_mul:ident, $c99_mul:ident, $div:ident, $c99_div:ident, $daz:ident, $packet:expr) => {{
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
                // Eigen's scaled quotient (`pdiv_complex`) in the vector packets, the C
                // runtime's in the remainder; see the op docs for the bound.
                BinaryOp::RealDiv | BinaryOp::Div => go!(
                    C,
                    C,
                    dtype,
                    |x: &C, y: &C| $div(*x, *y),
                    |x: &C, y: &C| $c99_div(*x, *y),
                    tail
                ),
                // `exp(y * log(x))`; see the op docs for the bound.
                BinaryOp::Pow => same!(C, |x, y| {
                    if x.re == 0.0 && x.im == 0.0 && y.re == 0.0 && y.im == 0.0 {
                        C::new(1.0, 0.0)
                    } else {
                        x.powc(*y)
                    }
                }),
                // `d * conj(d)` of `d = x - y`: the product as `Mul`'s.
                BinaryOp::SquaredDifference => {
                    let d = |x: &C, y: &C| C::new($sub(x.re, y.re), $sub(x.im, y.im));
                    go!(
                        C,
                        C,
                        dtype,
                        |x: &C, y: &C| {
                            let v = d(x, y);
                            $packet_mul(v, v.conj(), false)
                        },
                        |x: &C, y: &C| {
                            let v = d(x, y);
                            $c99_mul(v, v.conj())
                        },
                        tail
                    )
                }
                _ => eq_only!(C, |v| ($daz(v.re), $daz(v.im))),
            }
        }};
    }
    // `half` / `bfloat16` ops computed in `float` by `$f` and rounded once: `bfloat16`'s
    // vector packets (all but the last `n % 8` elements) convert with `f32_to_bf16` (every NaN
    // `0x7fc0`), its scalar remainder with `f32_to_bf16_scalar`.
    macro_rules! via_f32 {
        (bf16, $f:expr) => {{
            let f = $f;
            go!(
                bf16,
                bf16,
                dtype,
                move |x: &bf16, y: &bf16| f32_to_bf16(f(bf16_to_f32(*x), bf16_to_f32(*y))),
                move |x: &bf16, y: &bf16| f32_to_bf16_scalar(f(bf16_to_f32(*x), bf16_to_f32(*y))),
                n % PACKET_BF16
            )
        }};
        (f16, $f:expr) => {{
            let f = $f;
            same!(f16, |x, y| f32_to_f16(f(f16_to_f32(*x), f16_to_f32(*y))))
        }};
        (@scalar bf16, $f:expr) => {{
            let f = $f;
            same!(bf16, |x, y| f32_to_bf16_scalar(f(
                bf16_to_f32(*x),
                bf16_to_f32(*y)
            )))
        }};
        (@scalar f16, $f:expr) => {
            via_f32!(f16, $f)
        };
    }
    // The division family, `Pow` and `SquaredDifference` of `half` / `bfloat16`: each
    // operation in `float`, the result rounded back after every operation (Eigen's `half` and
    // `bfloat16` arithmetic).
    macro_rules! div_pow_16 {
        ($T:ident, $round:expr) => {{
            let round = $round;
            match op {
                BinaryOp::RealDiv | BinaryOp::Div => via_f32!($T, |a: f32, b: f32| div32(a, b)),
                // The quotient is rounded to the type before the floor.
                BinaryOp::FloorDiv => {
                    via_f32!($T, move |a: f32, b: f32| round(div32(a, b)).floor())
                }
                // `FloorMod` and `Pow` have no vector packets: scalar code everywhere.
                BinaryOp::FloorMod => via_f32!(@scalar $T, |a: f32, b: f32| floor_mod32(a, b)),
                BinaryOp::Pow => via_f32!(@scalar $T, |a: f32, b: f32| pow_scalar32(a, b)),
                _ => via_f32!($T, move |a: f32, b: f32| {
                    let d = round(sub32(a, b));
                    mul32(d, d)
                }),
            }
        }};
    }

    // The ops whose `float` and `double` kernels differ in width only.
    macro_rules! float_rest {
        ($T:ty, $packet:expr, ($daz:ident, $div:ident, $floor_mod:ident, $pow:ident, $sub:ident, $mul:ident)) => {
            match op {
                BinaryOp::Maximum | BinaryOp::Minimum => maxmin_float!($T, $packet, |v| $daz(v)),
                BinaryOp::RealDiv | BinaryOp::Div => same!($T, |x, y| $div(*x, *y)),
                BinaryOp::FloorDiv => same!($T, |x, y| $div(*x, *y).floor()),
                BinaryOp::FloorMod => same!($T, |x, y| $floor_mod(*x, *y)),
                BinaryOp::Pow => same!($T, |x, y| $pow(*x, *y)),
                BinaryOp::SquaredDifference => same!($T, |x, y| {
                    let d = $sub(*x, *y);
                    $mul(d, d)
                }),
                _ => compare_float!($T, |v| $daz(v)),
            }
        };
    }

    match dtype {
        DataType::FLOAT => match op {
            // The plain sum, difference or product is TensorFlow's unless an operand or the
            // result is subnormal (DAZ/FTZ), a result is at the edge of the normal range
            // (FTZ after rounding), or NaNs meet (whose NaN comes out).
            BinaryOp::AddV2 if scalar != Scalar::Neither => ordered!(f32, add32, PACKET_F32),
            BinaryOp::Mul if scalar != Scalar::Neither => ordered!(f32, mul32, PACKET_F32),
            BinaryOp::AddV2 => shortcut!(f32, u32, add32, +, subnormal32, subnormal32),
            BinaryOp::Sub => shortcut!(f32, u32, sub32, -, subnormal32, subnormal32),
            BinaryOp::Mul => shortcut!(f32, u32, mul32, *, subnormal32, tiny32),
            // Equality under DAZ: equal, or both zero or subnormal (NaN is neither).
            BinaryOp::Equal => cmp!(f32, |x, y| eq32(*x, *y)),
            BinaryOp::NotEqual => cmp!(f32, |x, y| !eq32(*x, *y)),
            _ => float_rest!(
                f32,
                PACKET_F32,
                (daz32, div32, floor_mod32, pow32, sub32, mul32)
            ),
        },
        DataType::DOUBLE => match op {
            BinaryOp::AddV2 if scalar != Scalar::Neither => ordered!(f64, add64, PACKET_F64),
            BinaryOp::Mul if scalar != Scalar::Neither => ordered!(f64, mul64, PACKET_F64),
            BinaryOp::AddV2 => shortcut!(f64, u64, add64, +, subnormal64, subnormal64),
            BinaryOp::Sub => shortcut!(f64, u64, sub64, -, subnormal64, subnormal64),
            BinaryOp::Mul => same!(f64, |x, y| mul64(*x, *y)),
            _ => float_rest!(
                f64,
                PACKET_F64,
                (daz64, div64, floor_mod64, pow64, sub64, mul64)
            ),
        },
        // bfloat16 widens to float exactly (its subnormals are float subnormals: DAZ), and a
        // product of two 8-bit significands is exact in float, so plain FTZ is exact. A NaN
        // result is `0x7fc0` in the 8-element packets and keeps its sign in the scalar
        // remainder, whose operand order is float's (see `ordered!`).
        DataType::BFLOAT16 => match op {
            BinaryOp::AddV2 => bf16_arith!(add32, add32, true),
            BinaryOp::Sub => bf16_arith!(sub32, sub32, false),
            BinaryOp::Mul => bf16_arith!(mul_bf16, mul32, true, shortcut),
            BinaryOp::Maximum | BinaryOp::Minimum => select_16!(
                bf16,
                PACKET_BF16,
                |v| daz32(bf16_to_f32(v)),
                |r| if subnormal_bf16(r) {
                    bf16::from_bits(r.to_bits() & 0x8000)
                } else {
                    r
                }
            ),
            op if widened_in_f32(op) => {
                div_pow_16!(bf16, |v: f32| bf16_to_f32(f32_to_bf16_scalar(v)))
            }
            _ => compare_float!(bf16, |v| daz32(bf16_to_f32(v))),
        },
        // half widens to float exactly and its values are never float subnormals, nor are
        // their sums and products (other than zero).
        DataType::HALF => match op {
            BinaryOp::AddV2 => half_commuting!(add_plain32),
            BinaryOp::Sub => same!(f16, |x, y| f32_to_f16(f16_to_f32(*x) - f16_to_f32(*y))),
            BinaryOp::Mul => half_commuting!(mul_plain32),
            BinaryOp::Maximum | BinaryOp::Minimum => {
                select_16!(f16, usize::MAX, |v| f16_to_f32(v), |r| r)
            }
            op if widened_in_f32(op) => {
                div_pow_16!(f16, |v: f32| f16_to_f32(f32_to_f16(v)))
            }
            _ => compare_float!(f16, |v| f16_to_f32(v)),
        },
        DataType::COMPLEX64 => complex!(
            f32,
            add32,
            sub32,
            cmul_packet32,
            cmul_c99_32,
            cdiv32,
            cdiv_c99_32,
            daz32,
            PACKET_C64
        ),
        DataType::COMPLEX128 => complex!(
            f64,
            add64,
            sub64,
            cmul_packet64,
            cmul_c99_64,
            cdiv64,
            cdiv_c99_64,
            daz64,
            PACKET_C128
        ),
        // The integers every op takes (wrapping arithmetic); the quantized types compare as
        // their integers; `bool` and `string` compare for equality only.
        _ => {
            // qint32's NotEqual compares the values as `float` (TensorFlow 2.21: 16777217 and
            // 16777216 are not unequal there); its Equal, and every other quantized type's
            // comparison, are exact.
            if dtype == DataType::QINT32 && op == BinaryOp::NotEqual {
                type Q = tensorcast_core::types::QInt32;
                return cmp!(Q, |x, y| x.0 as f32 != y.0 as f32);
            }
            if dtype == DataType::BOOL && op.is_logical() {
                return match op {
                    BinaryOp::LogicalAnd => cmp!(bool, |x, y| *x & *y),
                    _ => cmp!(bool, |x, y| *x | *y),
                };
            }
            tensorcast_core::dispatch!(dtype, {INT8, INT16, INT32, INT64} T => int!(T, true),
            _ => tensorcast_core::dispatch!(dtype, {UINT8, UINT16, UINT32, UINT64} T => int!(T, false),
            _ => tensorcast_core::dispatch!(dtype, [quantized] T => eq_only!(T, |v| v.0),
                _ => tensorcast_core::dispatch!(dtype, {BOOL, STRING} T => eq_only!(T, |v| v),
                    _ => Err(Error::Internal(format!(
                        "no {} kernel for {} (check::kernel lets no such dtype through)",
                        op.name(),
                        dtype.name()
                    )))))))
        }
    }
}

/// The one element of a binary op on two single elements (see [`scalar`]): its dtype and its
/// little-endian bytes (the first `dtype.size()` of them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct One {
    /// The output dtype.
    pub(crate) dtype: DataType,
    bytes: [u8; 8],
}

impl One {
    fn of<O: bytemuck::Pod>(dtype: DataType, v: O) -> Self {
        let mut bytes = [0u8; 8];
        let b = bytemuck::bytes_of(&v);
        bytes[..b.len()].copy_from_slice(b);
        Self { dtype, bytes }
    }

    /// The element's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.dtype.size()]
    }

    /// Writes the element into `t`'s buffer when `t` is its only holder, writable, and of the
    /// element's dtype and size (TensorFlow's `forward_input`); false (`t` untouched)
    /// otherwise.
    pub(crate) fn write_into(&self, t: &mut Tensor) -> bool {
        if t.dtype() != self.dtype {
            return false;
        }
        match t.tensor_data_mut() {
            Ok(bytes) if bytes.len() == self.bytes().len() => {
                bytes.copy_from_slice(self.bytes());
                true
            }
            _ => false,
        }
    }

    /// A new tensor of shape `out` (one element) from `allocator` holding the element.
    pub(crate) fn to_tensor(
        self,
        allocator: &Arc<dyn Allocator>,
        out: &TensorShape,
    ) -> Result<Tensor> {
        Tensor::from_writer(allocator, self.dtype, out, |w| w.put_slice(self.bytes()))
    }
}

/// Two single elements, `x` and `y` of the same dtype, for the counters and accumulators of a
/// loop body (`int32`, `int64`, `float`, `double`; the comparisons, `AddV2`, `Sub`, `Mul`,
/// and `Maximum`/`Minimum` of integers): the result computed with the element functions
/// [`compute`] uses for operands of the same shape (so the same bits, NaNs and DAZ/FTZ
/// included), with none of its planning. A graph loop runs a few of these per iteration, where
/// that planning was most of the op's cost. `None` for any other dtype or op, or an operand
/// that is not one element (the caller then runs [`compute`]).
pub(crate) fn scalar(op: BinaryOp, x: &Tensor, y: &Tensor) -> Option<One> {
    /// The comparison `op` of `a` and `b` (`None`: not a comparison).
    fn compare<T: PartialOrd>(op: BinaryOp, a: T, b: T) -> Option<bool> {
        Some(match op {
            BinaryOp::Less => a < b,
            BinaryOp::LessEqual => a <= b,
            BinaryOp::Greater => a > b,
            BinaryOp::GreaterEqual => a >= b,
            _ => return None,
        })
    }
    /// The element of a one-element tensor, from its little-endian bytes (whatever their
    /// alignment).
    fn one<T: bytemuck::Pod>(t: &Tensor) -> Option<T> {
        let bytes = t.tensor_data().ok()?;
        (bytes.len() == std::mem::size_of::<T>()).then(|| bytemuck::pod_read_unaligned(bytes))
    }
    let bool_out = |v: bool| One::of(DataType::BOOL, u8::from(v));
    macro_rules! int {
        ($T:ty, $dt:expr) => {{
            let (a, b) = (one::<$T>(x)?, one::<$T>(y)?);
            Some(match op {
                BinaryOp::Equal => bool_out(a == b),
                BinaryOp::NotEqual => bool_out(a != b),
                BinaryOp::AddV2 => One::of($dt, a.wrapping_add(b)),
                BinaryOp::Sub => One::of($dt, a.wrapping_sub(b)),
                BinaryOp::Mul => One::of($dt, a.wrapping_mul(b)),
                BinaryOp::Maximum => One::of($dt, a.max(b)),
                BinaryOp::Minimum => One::of($dt, a.min(b)),
                _ => bool_out(compare(op, a, b)?),
            })
        }};
    }
    match x.dtype() {
        _ if x.dtype() != y.dtype() => None,
        DataType::INT32 => int!(i32, DataType::INT32),
        DataType::INT64 => int!(i64, DataType::INT64),
        DataType::FLOAT => {
            let (a, b) = (one::<f32>(x)?, one::<f32>(y)?);
            Some(match op {
                BinaryOp::AddV2 => One::of(DataType::FLOAT, add32(a, b)),
                BinaryOp::Sub => One::of(DataType::FLOAT, sub32(a, b)),
                BinaryOp::Mul => One::of(DataType::FLOAT, mul32(a, b)),
                BinaryOp::Equal => bool_out(eq32(a, b)),
                BinaryOp::NotEqual => bool_out(!eq32(a, b)),
                _ => bool_out(compare(op, daz32(a), daz32(b))?),
            })
        }
        DataType::DOUBLE => {
            let (a, b) = (one::<f64>(x)?, one::<f64>(y)?);
            Some(match op {
                BinaryOp::AddV2 => One::of(DataType::DOUBLE, add64(a, b)),
                BinaryOp::Sub => One::of(DataType::DOUBLE, sub64(a, b)),
                BinaryOp::Mul => One::of(DataType::DOUBLE, mul64(a, b)),
                _ => bool_out(compare(op, daz64(a), daz64(b))?),
            })
        }
        _ => None,
    }
}

/// TensorFlow's checks on integer operands that its kernels make while computing: a zero
/// divisor in `Div`, `FloorDiv` or `FloorMod` (`Integer division by zero`) and a negative
/// exponent in `Pow` (`Integers to negative integer powers are not allowed`). Called only for
/// a non-empty output, where every element of `y` is read at least once (an empty output
/// computes nothing and fails nothing, as in TensorFlow).
pub(crate) fn check_integer_operands(op: BinaryOp, dtype: DataType, y: &Tensor) -> Result<()> {
    let division = matches!(op, BinaryOp::Div | BinaryOp::FloorDiv | BinaryOp::FloorMod);
    if !(division || op == BinaryOp::Pow) || !dtype.is_integer() {
        return Ok(());
    }
    let bad = tensorcast_core::dispatch!(dtype, {INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64} T => {
        let copy;
        let ys = match y.as_slice::<T>() {
            // Foreign memory unaligned for `T`: scan an aligned copy.
            Err(Error::Misaligned { .. }) => {
                copy = y.deep_copy()?;
                copy.as_slice::<T>()?
            }
            other => other?,
        };
        let zero = T::default();
        if division {
            ys.contains(&zero)
        } else {
            ys.iter().any(|v| *v < zero)
        }
    }, _ => false);
    if !bad {
        return Ok(());
    }
    Err(Error::invalid_argument(
        op.name(),
        if division {
            "Integer division by zero"
        } else {
            "Integers to negative integer powers are not allowed"
        },
    ))
}

/// Comparison ops never reach the arithmetic arms (the type lists keep them apart).
fn unreachable_arith(op: BinaryOp) -> Result<Tensor> {
    Err(Error::Internal(format!(
        "{} reached a comparison kernel",
        op.name()
    )))
}
