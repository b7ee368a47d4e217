//! TensorFlow's binary element-wise ops, on one broadcasting engine: `Equal`, `NotEqual`,
//! `Less`, `LessEqual`, `Greater`, `GreaterEqual`, `AddV2`, `Sub`, `Mul`, `Maximum`,
//! `Minimum`.
//!
//! Each is a free function here ([`equal()`], [`add`], ...) and a method on [`Tensor`] (through [`TensorOps`](crate::TensorOps)) and on
//! [`BroadcastView`], and takes tensors or lazy broadcast views ([`broadcast_view`](crate::broadcast::broadcast_view))
//! alike ([`Operand`]): a view is read in place, so only the output is allocated.
//!
//! # Semantics (TensorFlow 2.21 on x86 CPUs)
//! - **Types**: each op's type list, checked on input 0 first (`Value for attr 'T' of bool is not
//!   in the list of allowed values: ...`, with TensorFlow's `NodeDef`/`OpDef` lines), then the
//!   second input must have the same dtype (`cannot compute AddV2 as input #1(zero-based) was
//!   expected to be a float tensor but is a int32 tensor`). `Equal`/`NotEqual` take every type
//!   TensorFlow has a kernel for: numbers, `bool`, `string`, complex and the quantized integers
//!   (compared as integers, except that `qint32`'s `NotEqual` compares them as `float`, as
//!   TensorFlow's does); for the others (float8, int4, ...) TensorFlow's `NotFound` error,
//!   `Could not find device for node: {{node Equal}} = Equal[T=DT_INT4, ...]` with its list of
//!   registered kernels, before shapes are looked at.
//! - **Shapes** broadcast as TensorFlow's `BCast` ([`crate::broadcast::broadcast_shapes`]), size-0
//!   dims and scalars included (`Incompatible shapes: [2,3] vs. [3,2]`). `Equal`/`NotEqual` with
//!   `incompatible_shape_error = false` give a scalar `false`/`true` instead. TensorFlow has
//!   kernels for at most 5 dims once `BCast` has merged neighbouring dims of one kind; beyond,
//!   its `Broadcast between [..] and [..] is not supported yet.` (`Unimplemented`).
//! - **Numbers**: integers wrap; `float`, `double` and complex kernels read subnormals as zero
//!   and flush subnormal results to zero (TensorFlow's DAZ/FTZ); `half` and `bfloat16` compute
//!   in `float` and round once; `Maximum`/`Minimum` propagate NaN; complex numbers are equal
//!   when both parts are; strings compare byte for byte. For `Maximum`/`Minimum` of `0` and
//!   `-0` (equal operands), TensorFlow's vectorised loop returns `y` and its scalar remainder
//!   (the last `n % 8` `float`s, `n % 4` `double`s) returns `x`; so does this. `half` and
//!   `bfloat16` `Maximum`/`Minimum` return the selected operand's own bits (`x` on ties, NaN
//!   payloads and signalling NaNs unchanged), except that `bfloat16`'s vector packets (all but
//!   the last `n % 8`) flush a subnormal result to zero.
//! - **Which NaN**: where both operands of an instruction are NaN, x86 returns the first
//!   (quieted), and TensorFlow's operand order is followed: `x` first, except that with a
//!   single-element operand its vector loop puts that element first in `AddV2`/`Mul` and its
//!   scalar remainder (the last `n % 8` floats, `n % 4` doubles, `n % 4` complex64, `n % 2`
//!   complex128) the other operand; `half`'s `AddV2`/`Mul` put the other operand first
//!   everywhere. A single-element operand means TensorFlow's choice of loop, which looks at
//!   shapes first: same shapes are the plain loop, then a rank-0 `x`, then a rank-0 `y`, then
//!   single elements by count (so `[]` against `[1]` is the scalar-`x` loop). Complex `Mul` is
//!   Eigen's formula in the vector packets and C99's (Annex G, recovering infinities where both
//!   parts come out NaN) in the remainder. A NaN `bfloat16` result is `0x7fc0` in the vector
//!   packets and keeps its sign in the remainder (Eigen's scalar conversion).
//!
//! ```
//! use tensorcast_kernels::elementwise; use tensorcast_core::{Tensor, TensorShape};
//! use tensorcast_kernels::TensorOps;
//! let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &TensorShape::new(&[2, 2])?)?;
//! let row = Tensor::vector(&[10.0f32, 20.0]);
//! assert_eq!(elementwise::add(&x, &row)?.to_vec::<f32>()?, vec![11.0, 22.0, 13.0, 24.0]);
//! assert_eq!(x.less(&row.broadcast_view(x.shape())?)?.to_vec::<bool>()?, vec![true; 4]);
//! let err = elementwise::add(&x, &Tensor::vector(&[1i32])).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but is a int32 tensor"
//! );
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

mod check;
mod engine;
pub mod equal;
pub mod fused;
mod kernels;
mod numeric;

pub(crate) use numeric::mul32;

use std::sync::Arc;

use tensorcast_buffer::{cpu_allocator_ref, Allocator};

use crate::broadcast::{broadcast_shapes, BroadcastView};
use tensorcast_core::layout::Layout;
use tensorcast_core::Result;
use tensorcast_core::{DataType, Tensor, TensorShape};

/// The largest distance, in ULPs of the element type, between tensorcast's `Pow` of
/// `half`, `bfloat16`, `float` or `double` and TensorFlow 2.21's (the C library's `pow`
/// against Eigen's), as measured on `tests/tf_observed/ops_binary.jsonl` for operands inside
/// the type's normal range (16, on a `double` result near `1e260`; most results are within 2).
/// The special cases are TensorFlow's exactly: `pow(1, y)` and `pow(x, 0)` are 1 for every NaN
/// (signalling ones too), and operands and results subnormal in the computing type (`float` for
/// `half` and `bfloat16`) read and come out as zero, as in TensorFlow's DAZ/FTZ threads.
pub const POW_ULPS: u64 = 16;
/// The largest distance, in ULPs per part, between tensorcast's complex quotient (Eigen's
/// vectorised formula) and TensorFlow's (whose scalar remainder uses the C library's).
pub const COMPLEX_DIV_ULPS: u64 = 2;
/// The largest distance, in ULPs per part, between tensorcast's complex `Pow`
/// (`exp(y * log(x))`) and TensorFlow's.
pub const COMPLEX_POW_ULPS: u64 = 64;

/// The binary element-wise ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `x == y` (bool).
    Equal,
    /// `x != y` (bool).
    NotEqual,
    /// `x < y` (bool).
    Less,
    /// `x <= y` (bool).
    LessEqual,
    /// `x > y` (bool).
    Greater,
    /// `x >= y` (bool).
    GreaterEqual,
    /// `x + y`.
    AddV2,
    /// `x - y`.
    Sub,
    /// `x * y`.
    Mul,
    /// The larger of `x` and `y` (NaN if either is NaN).
    Maximum,
    /// The smaller of `x` and `y` (NaN if either is NaN).
    Minimum,
    /// `x / y` for floating-point and complex types (no integer kernels).
    RealDiv,
    /// `x / y`: integer division rounds toward zero (`Integer division by zero` for a zero
    /// divisor).
    Div,
    /// `floor(x / y)`: integer division rounds toward negative infinity.
    FloorDiv,
    /// `x - floor(x / y) * y`: the remainder with the sign of `y`.
    FloorMod,
    /// `x` to the power `y` (integers to negative powers are an error).
    Pow,
    /// `(x - y) * conj(x - y)`.
    SquaredDifference,
    /// `x && y` of `bool`s.
    LogicalAnd,
    /// `x || y` of `bool`s.
    LogicalOr,
}

impl BinaryOp {
    /// Every op, in the order above.
    pub const ALL: [BinaryOp; 19] = [
        BinaryOp::Equal,
        BinaryOp::NotEqual,
        BinaryOp::Less,
        BinaryOp::LessEqual,
        BinaryOp::Greater,
        BinaryOp::GreaterEqual,
        BinaryOp::AddV2,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::RealDiv,
        BinaryOp::Div,
        BinaryOp::FloorDiv,
        BinaryOp::FloorMod,
        BinaryOp::Pow,
        BinaryOp::SquaredDifference,
        BinaryOp::LogicalAnd,
        BinaryOp::LogicalOr,
    ];

    /// TensorFlow's op name (`AddV2`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Equal => "Equal",
            BinaryOp::NotEqual => "NotEqual",
            BinaryOp::Less => "Less",
            BinaryOp::LessEqual => "LessEqual",
            BinaryOp::Greater => "Greater",
            BinaryOp::GreaterEqual => "GreaterEqual",
            BinaryOp::AddV2 => "AddV2",
            BinaryOp::Sub => "Sub",
            BinaryOp::Mul => "Mul",
            BinaryOp::Maximum => "Maximum",
            BinaryOp::Minimum => "Minimum",
            BinaryOp::RealDiv => "RealDiv",
            BinaryOp::Div => "Div",
            BinaryOp::FloorDiv => "FloorDiv",
            BinaryOp::FloorMod => "FloorMod",
            BinaryOp::Pow => "Pow",
            BinaryOp::SquaredDifference => "SquaredDifference",
            BinaryOp::LogicalAnd => "LogicalAnd",
            BinaryOp::LogicalOr => "LogicalOr",
        }
    }

    /// The op named `name` (TensorFlow's spelling).
    pub fn from_name(name: &str) -> Option<BinaryOp> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    /// True for the ops that return `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Equal
                | BinaryOp::NotEqual
                | BinaryOp::Less
                | BinaryOp::LessEqual
                | BinaryOp::Greater
                | BinaryOp::GreaterEqual
        )
    }

    /// True for the ops whose result does not depend on the order of the inputs.
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinaryOp::Equal
                | BinaryOp::NotEqual
                | BinaryOp::AddV2
                | BinaryOp::Mul
                | BinaryOp::Maximum
                | BinaryOp::Minimum
                | BinaryOp::SquaredDifference
                | BinaryOp::LogicalAnd
                | BinaryOp::LogicalOr
        )
    }

    /// True for `LogicalAnd`/`LogicalOr`, whose inputs are `bool` (no type attr).
    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::LogicalAnd | BinaryOp::LogicalOr)
    }

    /// The dtypes the op accepts (its TensorFlow type list, in registration order); `None` for
    /// `Equal`/`NotEqual`, which accept any type TensorFlow has a kernel for; `[bool]` for
    /// `LogicalAnd`/`LogicalOr`, whose inputs are `bool` tensors (no `T` attr).
    pub const fn allowed_dtypes(self) -> Option<&'static [DataType]> {
        check::allowed(self)
    }

    /// The output dtype for inputs of `dtype`.
    pub fn output_dtype(self, dtype: DataType) -> DataType {
        if self.is_comparison() {
            DataType::BOOL
        } else {
            dtype
        }
    }
}

/// An input of an element-wise op: a tensor, or a lazy broadcast view of one (read in place).
#[derive(Debug, Clone, Copy)]
pub struct Operand<'a> {
    tensor: &'a Tensor,
    shape: &'a TensorShape,
    /// `None` for a dense tensor over its own shape.
    layout: Option<&'a Layout>,
}

impl<'a> Operand<'a> {
    /// The tensor read.
    pub fn tensor(&self) -> &'a Tensor {
        self.tensor
    }

    /// The operand's shape (the view's shape for a view).
    pub fn shape(&self) -> &'a TensorShape {
        self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.tensor.dtype()
    }

    /// True for a tensor read as it is (not through a view).
    fn is_plain(&self) -> bool {
        self.layout.is_none()
    }

    /// The operand's layout read as broadcast to `out`.
    fn layout_over(&self, out: &[usize]) -> Option<Layout> {
        match self.layout {
            Some(l) => l.broadcast_to(out),
            None => Layout::of_shape(self.shape).broadcast_to(out),
        }
    }
}

impl<'a> From<&'a Tensor> for Operand<'a> {
    fn from(t: &'a Tensor) -> Self {
        Operand {
            tensor: t,
            shape: t.shape(),
            layout: None,
        }
    }
}

impl<'a> From<&'a BroadcastView<'a>> for Operand<'a> {
    fn from(v: &'a BroadcastView<'a>) -> Self {
        Operand {
            tensor: v.tensor(),
            shape: v.shape(),
            layout: Some(v.layout()),
        }
    }
}

/// Runs `op` on `x` and `y` (see the module docs). For `Equal`/`NotEqual`,
/// `incompatible_shape_error = false` turns an `Incompatible shapes` error into a scalar
/// `false` (`Equal`) or `true` (`NotEqual`); other ops ignore it.
///
/// # Errors
/// TensorFlow's: a dtype outside the op's type list, inputs of different dtypes,
/// shapes that do not broadcast, more than 5 dims after merging (`Unimplemented`), a dtype
/// TensorFlow has no kernel for (`Unimplemented`), allocation failure.
pub fn binary<'a>(
    op: BinaryOp,
    x: impl Into<Operand<'a>>,
    y: impl Into<Operand<'a>>,
    incompatible_shape_error: bool,
) -> Result<Tensor> {
    binary_in(cpu_allocator_ref(), op, x, y, incompatible_shape_error)
}

/// [`binary`] with the output's memory from `allocator` (the only allocation of the data's
/// size the op makes: inputs, views included, are read in place).
///
/// # Errors
/// As [`binary`].
pub fn binary_in<'a>(
    allocator: &Arc<dyn Allocator>,
    op: BinaryOp,
    x: impl Into<Operand<'a>>,
    y: impl Into<Operand<'a>>,
    incompatible_shape_error: bool,
) -> Result<Tensor> {
    let (x, y) = (x.into(), y.into());
    check::dtypes(op, x.dtype(), y.dtype())?;
    check::kernel(op, x.dtype(), incompatible_shape_error)?;
    let (xs, ys) = (x.shape(), y.shape());
    // Same shapes (the common case, and the one where per-call costs show) need no broadcast
    // planning: the output has the operands' shape, borrowed rather than rebuilt.
    let same = xs == ys;
    // Two scalars (a loop's counter and bound, its accumulator): one element, no planning.
    if same && xs.rank() == 0 && x.is_plain() && y.is_plain() {
        if let Some(one) = kernels::scalar(op, x.tensor(), y.tensor()) {
            return one.to_tensor(allocator, xs);
        }
    }
    let broadcast;
    let out = if same {
        xs
    } else {
        match broadcast_shapes(xs, ys) {
            Ok(s) => {
                broadcast = s;
                &broadcast
            }
            Err(_)
                if !incompatible_shape_error
                    && matches!(op, BinaryOp::Equal | BinaryOp::NotEqual) =>
            {
                return Tensor::from_vec(vec![op == BinaryOp::NotEqual], TensorShape::scalar());
            }
            Err(_) => return Err(check::incompatible(op, xs, ys)),
        }
    };
    // TensorFlow's kernels: same shapes or a scalar operand are handled directly; otherwise
    // `BCast` must reduce the problem to at most 5 dims (unless the output is empty).
    if !same
        && xs.rank() > 0
        && ys.rank() > 0
        && out.num_elements() > 0
        && check::bcast_dims(xs.dim_sizes(), ys.dim_sizes()) > 5
    {
        return Err(check::too_many_dims(xs, ys));
    }
    if out.num_elements() > 0 {
        kernels::check_integer_operands(op, y.dtype(), y.tensor())?;
    }
    let mut a = kernels::Ready::new(&x, out, same)?;
    let mut b = kernels::Ready::new(&y, out, same)?;
    // TensorFlow's choice of loop, in its order: same shapes, then a rank-0 `x` ("scalar op
    // tensor"), a rank-0 `y`, then single elements by count (so `[]` against `[1]` is the
    // scalar-`x` loop, but `[1]` against `[1,1]` the scalar-`y` one).
    let (nx, ny) = (xs.num_elements(), ys.num_elements());
    let scalar = if same {
        kernels::Scalar::Neither
    } else if xs.rank() == 0 {
        kernels::Scalar::X
    } else if ys.rank() == 0 || ny == 1 {
        kernels::Scalar::Y
    } else if nx == 1 {
        kernels::Scalar::X
    } else {
        kernels::Scalar::Neither
    };
    kernels::compute(allocator, op, x.dtype(), scalar, &mut a, &mut b, out)
}

/// [`binary`] of two scalars (rank-0 tensors) taken by value, for a graph executor's loop
/// body: `Ok` with what [`binary`] gives (errors included) when the fast path of single
/// elements applies (`int32`, `int64`, `float`, `double` and the ops a loop's counter and
/// accumulator use), `Err` with the operands given back otherwise (run [`binary`] then). As
/// TensorFlow's kernels forward an input buffer no other tensor holds (`forward_input`), the
/// result is written into `x`'s or `y`'s buffer when that tensor is its only holder, writable
/// and of the result's dtype; otherwise it is a new tensor from the CPU allocator. (Scalars
/// always broadcast, so `Equal`'s `incompatible_shape_error` plays no part.)
///
/// # Errors
/// As [`binary`] (inside `Ok`).
#[allow(
    clippy::result_large_err,
    reason = "the operands come back by value on a graph executor's per-node path; boxing them \
              would allocate on every call without a fast path"
)]
pub fn binary_scalars(
    op: BinaryOp,
    mut x: Tensor,
    mut y: Tensor,
) -> std::result::Result<Result<Tensor>, (Tensor, Tensor)> {
    // Every op and dtype the fast path computes passes `binary`'s dtype and kernel checks, so
    // none is needed here (the tests compare this with `binary` for every op).
    let one = match (x.dims(), y.dims()) {
        (0, 0) => kernels::scalar(op, &x, &y),
        _ => None,
    };
    let Some(one) = one else {
        return Err((x, y));
    };
    if one.write_into(&mut x) {
        return Ok(Ok(x));
    }
    if one.write_into(&mut y) {
        return Ok(Ok(y));
    }
    Ok(one.to_tensor(cpu_allocator_ref(), &TensorShape::scalar()))
}

/// Calls `$m!` with the list of binary ops that have a named function, a [`BroadcastView`]
/// method and a [`TensorOps`](crate::TensorOps) method: the one list those three are made from.
macro_rules! binary_ops {
    ($m:ident) => {
        $m! {
            /// TensorFlow's `Equal`: `x == y` element by element, broadcasting, as `bool`.
            equal => Equal;
            /// TensorFlow's `NotEqual`: `x != y`, as `bool`.
            not_equal => NotEqual;
            /// TensorFlow's `Less`: `x < y`, as `bool`.
            less => Less;
            /// TensorFlow's `LessEqual`: `x <= y`, as `bool`.
            less_equal => LessEqual;
            /// TensorFlow's `Greater`: `x > y`, as `bool`.
            greater => Greater;
            /// TensorFlow's `GreaterEqual`: `x >= y`, as `bool`.
            greater_equal => GreaterEqual;
            /// TensorFlow's `AddV2`: `x + y` (integers wrap).
            add => AddV2;
            /// TensorFlow's `Sub`: `x - y` (integers wrap).
            sub => Sub;
            /// TensorFlow's `Mul`: `x * y` (integers wrap).
            mul => Mul;
            /// TensorFlow's `Maximum`: the larger of `x` and `y`, NaN if either is NaN.
            maximum => Maximum;
            /// TensorFlow's `Minimum`: the smaller of `x` and `y`, NaN if either is NaN.
            minimum => Minimum;
        }
    };
}
pub(crate) use binary_ops;

macro_rules! functions_and_view_methods {
    ($($(#[$doc:meta])* $f:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            ///
            /// # Errors
            /// See [`binary`].
            pub fn $f<'a>(x: impl Into<Operand<'a>>, y: impl Into<Operand<'a>>) -> Result<Tensor> {
                binary(BinaryOp::$op, x, y, true)
            }
        )*

        impl<'v> BroadcastView<'v> {
            $(
                $(#[$doc])*
                /// (See [`crate::elementwise`]; the view is read in place.)
                ///
                /// # Errors
                /// See [`binary`].
                pub fn $f<'a>(&'a self, other: impl Into<Operand<'a>>) -> Result<Tensor>
                where
                    'v: 'a,
                {
                    binary(BinaryOp::$op, self, other, true)
                }
            )*
        }
    };
}

binary_ops!(functions_and_view_methods);

/// `Equal(x, y, incompatible_shape_error)`: with `false`, shapes that do not broadcast give a
/// scalar `false` instead of an error.
///
/// # Errors
/// See [`binary`].
pub fn equal_with<'a>(
    x: impl Into<Operand<'a>>,
    y: impl Into<Operand<'a>>,
    incompatible_shape_error: bool,
) -> Result<Tensor> {
    binary(BinaryOp::Equal, x, y, incompatible_shape_error)
}

/// `NotEqual(x, y, incompatible_shape_error)`: with `false`, shapes that do not broadcast give
/// a scalar `true` instead of an error.
///
/// # Errors
/// See [`binary`].
pub fn not_equal_with<'a>(
    x: impl Into<Operand<'a>>,
    y: impl Into<Operand<'a>>,
    incompatible_shape_error: bool,
) -> Result<Tensor> {
    binary(BinaryOp::NotEqual, x, y, incompatible_shape_error)
}
