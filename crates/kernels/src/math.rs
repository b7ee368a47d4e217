//! Activations and unary math on the dtypes TensorFlow 2.21's CPU kernels register: the
//! floating types (`half` and `bfloat16` computed in `float` and rounded once, as TensorFlow's
//! kernels do); `Relu`, `Relu6`, `Square` on the eight integer types, `Neg`, `Abs`, `Sign` on
//! the signed ones, `Round` on `int32`/`int64`; `Exp`, `Log`, `Log1p`, `Neg`, `Reciprocal`,
//! `Rsqrt`, `Sigmoid`, `Sign`, `Sqrt`, `Square`, `Tanh` on `complex64`/`complex128`;
//! `LogicalNot` on `bool`; `Softmax` / `LogSoftmax` over the last axis. Other dtypes get
//! TensorFlow's texts (the type-list error with the op's `OpDef`, or `NotFound` with its
//! registered kernels). Large tensors are split across the cores.
//!
//! TensorFlow's CPU threads flush denormals (FTZ/DAZ): `float`/`double` (and `bfloat16`, via
//! `float`) inputs that are subnormal read as zeros and subnormal results are written as
//! zeros, here too (`Neg`/`Abs` keep them; `Sign` of a subnormal is its magnitude, as
//! TensorFlow's is). Other recorded quirks kept: `Elu`/`Selu` compute `exp(x) - 1` (not
//! `expm1`); `double` `Erf` is NaN once `x * x` overflows; `Round` of `int32`/`int64` gives
//! zeros; `LeakyRelu` rounds `alpha` to `half`/`bfloat16` first; the `float`/`bfloat16`
//! `Softmax` (oneDNN) takes ranks 1 to 5 (`ABORTED` otherwise) and gives a row holding NaN (or
//! `inf - inf`) NaN there and 0 elsewhere.
//!
//! Accuracy against TensorFlow 2.21 (Eigen's and oneDNN's vectorised functions), measured and
//! asserted over `tests/tf_observed/ops_math.jsonl` (special values: NaN, infinities, signed
//! zeros, subnormals, the largest finite values; random ones), in ULPs of the result's type:
//!
//! | op | bound |
//! |---|---|
//! | `Relu`, `Relu6`, `Neg`, `Abs`, `Floor`, `Ceil`, `Round`, `LeakyRelu`, `LogicalNot`; real `Sign`, `Square`, `Sqrt` | exact |
//! | `Exp`, `Reciprocal`, real `Log`, complex `Square` | 1 |
//! | `Rsqrt`, complex `Sign`, `Sqrt` | 2 |
//! | `Erf` | 3 |
//! | `Sigmoid`, `Tanh`, `Log1p` | 4 |
//! | `Erfc` (`float`: a vectorised fit within 3 ULPs of the exact value; 4 measured against TensorFlow), `Softplus` | 5 |
//! | `Softmax` (`float`: 3 measured) | 10 |
//! | complex `Log` | 128 (measured 127, near `|z| = 1`, where `log |z|` cancels) |
//! | `Elu`, `Selu` | `2 * eps * (1 + |tf|)` absolute (`exp(x) - 1` cancels) |
//! | `LogSoftmax` | `4 * eps * (1 + |tf|)` absolute (`x - max - log(sum)` cancels) |
//!
//! A NaN is NaN in both (payload and sign not compared).
//!
//! ```
//! use tensorcast_core::Tensor;
//! use tensorcast_kernels::math::{unary, UnaryOp};
//! let x = Tensor::vector(&[-1.0f32, 0.5, 7.0]);
//! assert_eq!(unary(UnaryOp::Relu6, &x)?.to_vec::<f32>()?, vec![0.0, 0.5, 6.0]);
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use rayon::prelude::*;
use tensorcast_buffer::simd::{vectorized, vectorized_wide};
use tensorcast_buffer::{cpu_allocator_ref, Writer};
use tensorcast_core::x86::daz32;
use tensorcast_core::{Complex32, Complex64, DataType, Error, Result, Tensor};

use crate::chunks::for_each_chunk;
use crate::elementwise::mul32;
use crate::unary::vector;

/// The unary ops of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `max(x, 0)`.
    Relu,
    /// `min(max(x, 0), 6)`.
    Relu6,
    /// `x` if `x > 0`, else `exp(x) - 1`.
    Elu,
    /// `scale * elu(x)` with `alpha`, TensorFlow's constants.
    Selu,
    /// `1 / (1 + exp(-x))`.
    Sigmoid,
    /// `tanh(x)`.
    Tanh,
    /// `log(exp(x) + 1)`.
    Softplus,
    /// `exp(x)`.
    Exp,
    /// `log(x)`.
    Log,
    /// `log(1 + x)`.
    Log1p,
    /// `sqrt(x)`.
    Sqrt,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// `x * x`.
    Square,
    /// `-x`.
    Neg,
    /// `|x|`.
    Abs,
    /// `-1`, `0` or `1` (NaN stays NaN).
    Sign,
    /// The error function.
    Erf,
    /// `1 - erf(x)`.
    Erfc,
    /// Round down.
    Floor,
    /// Round up.
    Ceil,
    /// Round half to even.
    Round,
    /// `1 / x`.
    Reciprocal,
}

impl UnaryOp {
    /// Every op.
    pub const ALL: [UnaryOp; 22] = [
        UnaryOp::Relu,
        UnaryOp::Relu6,
        UnaryOp::Elu,
        UnaryOp::Selu,
        UnaryOp::Sigmoid,
        UnaryOp::Tanh,
        UnaryOp::Softplus,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Log1p,
        UnaryOp::Sqrt,
        UnaryOp::Rsqrt,
        UnaryOp::Square,
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sign,
        UnaryOp::Erf,
        UnaryOp::Erfc,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::Reciprocal,
    ];

    /// The op TensorFlow names `name`.
    ///
    /// ```
    /// use tensorcast_kernels::math::UnaryOp;
    /// assert_eq!(UnaryOp::from_name("Relu6"), Some(UnaryOp::Relu6));
    /// assert_eq!(UnaryOp::from_name("Relu7"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<UnaryOp> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    /// TensorFlow's op name.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Relu => "Relu",
            UnaryOp::Relu6 => "Relu6",
            UnaryOp::Elu => "Elu",
            UnaryOp::Selu => "Selu",
            UnaryOp::Sigmoid => "Sigmoid",
            UnaryOp::Tanh => "Tanh",
            UnaryOp::Softplus => "Softplus",
            UnaryOp::Exp => "Exp",
            UnaryOp::Log => "Log",
            UnaryOp::Log1p => "Log1p",
            UnaryOp::Sqrt => "Sqrt",
            UnaryOp::Rsqrt => "Rsqrt",
            UnaryOp::Square => "Square",
            UnaryOp::Neg => "Neg",
            UnaryOp::Abs => "Abs",
            UnaryOp::Sign => "Sign",
            UnaryOp::Erf => "Erf",
            UnaryOp::Erfc => "Erfc",
            UnaryOp::Floor => "Floor",
            UnaryOp::Ceil => "Ceil",
            UnaryOp::Round => "Round",
            UnaryOp::Reciprocal => "Reciprocal",
        }
    }

    /// True for the ops with a CPU kernel for the integer type `dtype`.
    fn integer(self, dtype: DataType) -> bool {
        let signed = matches!(
            dtype,
            DataType::INT8 | DataType::INT16 | DataType::INT32 | DataType::INT64
        );
        match self {
            UnaryOp::Relu | UnaryOp::Relu6 | UnaryOp::Square => true,
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign => signed,
            UnaryOp::Round => matches!(dtype, DataType::INT32 | DataType::INT64),
            _ => false,
        }
    }

    /// True for the ops with a CPU kernel for `complex64` / `complex128`.
    fn complex(self) -> bool {
        matches!(
            self,
            UnaryOp::Exp
                | UnaryOp::Log
                | UnaryOp::Log1p
                | UnaryOp::Neg
                | UnaryOp::Reciprocal
                | UnaryOp::Rsqrt
                | UnaryOp::Sigmoid
                | UnaryOp::Sign
                | UnaryOp::Sqrt
                | UnaryOp::Square
                | UnaryOp::Tanh
        )
    }
}

/// The `OpDef` text of each unary op's TensorFlow registration (its type list is what the
/// eager runtime quotes when a dtype is refused), as TensorFlow 2.21 prints it.
const OP_DEFS: &[(&str, &str)] = &[
    (
        "Abs",
        "Op<name=Abs; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64]>",
    ),
    (
        "Ceil",
        "Op<name=Ceil; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Elu",
        "Op<name=Elu; signature=features:T -> activations:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Erf",
        "Op<name=Erf; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Erfc",
        "Op<name=Erfc; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Exp",
        "Op<name=Exp; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Floor",
        "Op<name=Floor; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "LeakyRelu",
        "Op<name=LeakyRelu; signature=features:T -> activations:T; attr=alpha:float,default=0.2; attr=T:type,default=DT_FLOAT,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Log",
        "Op<name=Log; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Log1p",
        "Op<name=Log1p; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "LogSoftmax",
        "Op<name=LogSoftmax; signature=logits:T -> logsoftmax:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Neg",
        "Op<name=Neg; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Reciprocal",
        "Op<name=Reciprocal; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Relu",
        "Op<name=Relu; signature=features:T -> activations:T; attr=T:type,allowed=[DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64, DT_QINT8]>",
    ),
    (
        "Relu6",
        "Op<name=Relu6; signature=features:T -> activations:T; attr=T:type,allowed=[DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8, DT_INT64, DT_BFLOAT16, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64]>",
    ),
    (
        "Round",
        "Op<name=Round; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Rsqrt",
        "Op<name=Rsqrt; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Selu",
        "Op<name=Selu; signature=features:T -> activations:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Sigmoid",
        "Op<name=Sigmoid; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Sign",
        "Op<name=Sign; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Softmax",
        "Op<name=Softmax; signature=logits:T -> softmax:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Softplus",
        "Op<name=Softplus; signature=features:T -> activations:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE]>",
    ),
    (
        "Sqrt",
        "Op<name=Sqrt; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Square",
        "Op<name=Square; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
    (
        "Tanh",
        "Op<name=Tanh; signature=x:T -> y:T; attr=T:type,allowed=[DT_BFLOAT16, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64, DT_COMPLEX128]>",
    ),
];

/// The CPU kernels TensorFlow 2.21 lists in its `NotFound` text for ops whose type list has
/// dtypes without a CPU kernel.
const KERNEL_LISTS: &[(&str, &str)] = &[
    (
        "Reciprocal",
        "  device='XLA_CPU_JIT'; T in [DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT16, DT_INT8, DT_COMPLEX64, DT_INT64, DT_BFLOAT16, DT_COMPLEX128, DT_HALF]\n  device='CPU'; T in [DT_COMPLEX128]\n  device='CPU'; T in [DT_COMPLEX64]\n  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_BFLOAT16]\n  device='CPU'; T in [DT_HALF]\n  device='CPU'; T in [DT_FLOAT]\n",
    ),
    (
        "Round",
        "  device='XLA_CPU_JIT'; T in [DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT16, DT_INT8, DT_COMPLEX64, DT_INT64, DT_BFLOAT16, DT_COMPLEX128, DT_HALF]\n  device='CPU'; T in [DT_INT64]\n  device='CPU'; T in [DT_INT32]\n  device='CPU'; T in [DT_BFLOAT16]\n  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]\n  device='CPU'; T in [DT_HALF]\n",
    ),
];

/// TensorFlow's error for `op` on a dtype it has no CPU kernel for: `NotFound` (with the
/// kernels it registers) when the dtype is in the op's type list, else the type-list error
/// with the op's `OpDef`.
fn type_error(op: &'static str, dtype: DataType) -> Error {
    let def = OP_DEFS
        .iter()
        .find(|(name, _)| *name == op)
        .map_or("", |(_, d)| d);
    let allowed: Vec<&str> = def
        .split("allowed=[")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .map(|list| list.split(", ").collect())
        .unwrap_or_default();
    let enum_name = format!("DT_{}", dtype.name().to_uppercase());
    if allowed.contains(&enum_name.as_str()) {
        let kernels = KERNEL_LISTS
            .iter()
            .find(|(name, _)| *name == op)
            .map_or("", |(_, k)| k);
        return Error::Op {
            op,
            code: tensorcast_core::Code::NotFound,
            message: format!(
                "Could not find device for node: {{{{node {op}}}}} = {op}[T={enum_name}]\nAll kernels registered for op {op}:\n{kernels}"
            ),
        };
    }
    let names: Vec<String> = allowed
        .iter()
        .map(|e| e.trim_start_matches("DT_").to_lowercase())
        .collect();
    Error::invalid_argument(
        op,
        format!(
            "Value for attr 'T' of {} is not in the list of allowed values: {}\n\t; NodeDef: {{{{node {op}}}}}; {def}",
            dtype.name(),
            names.join(", ")
        ),
    )
}

/// TensorFlow's `Selu` constants: `scale` and `scale * alpha`.
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;
const SELU_SCALE_ALPHA: f64 = 1.758_099_340_847_376_9;

/// TensorFlow's CPU threads run with denormals flushed to zero (FTZ and DAZ): a subnormal
/// input reads as a zero of its sign, and a subnormal result is written as one. `Neg` and
/// `Abs` only touch the sign bit and keep subnormals.
fn flush_f64(x: f64) -> f64 {
    if x.is_subnormal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

fn flush_f32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `op` of a `float` or `double` under DAZ/FTZ (`Neg` and `Abs` only move the sign bit).
macro_rules! flushed {
    ($name:ident, $T:ty, $op:ident, $flush:ident) => {
        fn $name(op: UnaryOp, x: $T) -> $T {
            if matches!(op, UnaryOp::Neg | UnaryOp::Abs) {
                return $op(op, x);
            }
            // TensorFlow's `Sign` of a subnormal is its magnitude (recorded).
            if op == UnaryOp::Sign && x.is_subnormal() {
                return x.abs();
            }
            $flush($op(op, $flush(x)))
        }
    };
}
flushed!(f64_flushed, f64, f64_op, flush_f64);
flushed!(f32_flushed, f32, f32_op, flush_f32);

/// `op` of a `float` or `double`, in its own width: the arms both share, after `$first` (arms
/// that must come first) and before `$last` (a catch-all).
macro_rules! float_op {
    ($name:ident($x:ident: $T:ty), $erf:path, $erfc:path, $selu_alpha:expr, $selu:expr,
     [$($first:tt)*], [$($last:tt)*]) => {
        fn $name(op: UnaryOp, $x: $T) -> $T {
            match op {
                $($first)*
                // NaN stays NaN, as Eigen's `max(x, 0)` keeps it.
                UnaryOp::Relu => {
                    if $x < 0.0 {
                        0.0
                    } else {
                        $x
                    }
                }
                UnaryOp::Relu6 => $x.clamp(0.0, 6.0),
                // `exp(x) - 1`, not `expm1`, as TensorFlow's kernels compute it.
                UnaryOp::Elu => {
                    if $x < 0.0 {
                        $x.exp() - 1.0
                    } else {
                        $x
                    }
                }
                UnaryOp::Selu => {
                    if $x < 0.0 {
                        $selu_alpha * ($x.exp() - 1.0)
                    } else {
                        $selu * $x
                    }
                }
                UnaryOp::Sigmoid => 1.0 / (1.0 + (-$x).exp()),
                UnaryOp::Tanh => $x.tanh(),
                UnaryOp::Exp => $x.exp(),
                UnaryOp::Log => $x.ln(),
                UnaryOp::Log1p => $x.ln_1p(),
                UnaryOp::Sqrt => $x.sqrt(),
                UnaryOp::Rsqrt => 1.0 / $x.sqrt(),
                UnaryOp::Square => $x * $x,
                UnaryOp::Neg => -$x,
                UnaryOp::Abs => $x.abs(),
                UnaryOp::Erf => $erf($x),
                UnaryOp::Erfc => $erfc($x),
                UnaryOp::Floor => $x.floor(),
                UnaryOp::Ceil => $x.ceil(),
                UnaryOp::Round => $x.round_ties_even(),
                UnaryOp::Reciprocal => 1.0 / $x,
                $($last)*
            }
        }
    };
}

float_op!(
    f64_op(x: f64),
    libm::erf,
    libm::erfc,
    SELU_SCALE_ALPHA,
    SELU_SCALE,
    [
        UnaryOp::Softplus => {
            if x > 0.0 {
                x + (-x).exp().ln_1p()
            } else {
                x.exp().ln_1p()
            }
        }
        UnaryOp::Sign => {
            if x.is_nan() {
                x
            } else if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        // TensorFlow's double `erf` gives NaN once `x * x` overflows (infinities included).
        UnaryOp::Erf if (x * x).is_infinite() => f64::NAN,
    ],
    []
);

float_op!(
    f32_op(x: f32),
    libm::erff,
    libm::erfcf,
    SELU_SCALE_ALPHA as f32,
    SELU_SCALE as f32,
    [],
    [
        // The rest in double, rounded once.
        other => f64_op(other, f64::from(x)) as f32,
    ]
);

/// An integer op, computed in `i128` (the caller truncates: wrapping, as TensorFlow's).
fn int_op(op: UnaryOp, x: i128) -> i128 {
    match op {
        UnaryOp::Relu => x.max(0),
        UnaryOp::Relu6 => x.clamp(0, 6),
        UnaryOp::Neg => -x,
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sign => x.signum(),
        UnaryOp::Square => x * x,
        // TensorFlow 2.21's CPU `Round` of `int32` / `int64` writes zeros (recorded).
        UnaryOp::Round => 0,
        _ => x,
    }
}

/// A complex op, computed in `complex128` (`complex64` is widened and rounded once).
fn complex_op(op: UnaryOp, z: Complex64) -> Complex64 {
    let one = Complex64::new(1.0, 0.0);
    match op {
        UnaryOp::Exp => z.exp(),
        UnaryOp::Log => z.ln(),
        UnaryOp::Log1p => (one + z).ln(),
        UnaryOp::Neg => -z,
        UnaryOp::Reciprocal => one / z,
        UnaryOp::Rsqrt => one / z.sqrt(),
        UnaryOp::Sigmoid => one / (one + (-z).exp()),
        UnaryOp::Sign => {
            let r = z.norm();
            if r == 0.0 {
                z
            } else {
                z / r
            }
        }
        UnaryOp::Sqrt => z.sqrt(),
        UnaryOp::Square => z * z,
        _ => z.tanh(),
    }
}

/// Applies `f` to every element, on both cores past 64 Ki elements.
fn map<T: Copy + Send + Sync, U: Send>(x: &[T], f: impl Fn(T) -> U + Sync + Send) -> Vec<U> {
    if x.len() >= 1 << 16 {
        x.par_iter().with_min_len(1 << 14).map(|&v| f(v)).collect()
    } else {
        x.iter().map(|&v| f(v)).collect()
    }
}

/// Elements per staging block of [`map_blocks`] (4 KiB of `float`: source, staging block and
/// the stream of output stay in L1).
const BLOCK: usize = 1024;
/// Elements from which [`map_blocks`] splits the work over the rayon pool, and the size of
/// each piece.
const PARALLEL_MIN: usize = 1 << 16;
const PIECE: usize = 1 << 15;

/// A new `dtype` tensor of `shape` whose elements are `kernel(src_block, out_block)` over
/// `x`, a block of [`BLOCK`] elements at a time: each block is computed into an L1-sized
/// staging block and written out from there (streaming stores for large outputs), into memory
/// from the CPU allocator (which reuses freed blocks); on every core past [`PARALLEL_MIN`]
/// elements.
fn map_blocks<S, D>(
    x: &[S],
    dtype: DataType,
    shape: &tensorcast_core::TensorShape,
    kernel: impl Fn(&[S], &mut [D]) + Sync,
) -> Result<Tensor>
where
    S: Copy + Sync,
    D: bytemuck::Pod + Send,
{
    let body = |w: &mut Writer<'_>, src: &[S]| {
        let mut buf = [D::zeroed(); BLOCK];
        for c in src.chunks(BLOCK) {
            let o = &mut buf[..c.len()];
            kernel(c, o);
            w.put_slice(bytemuck::cast_slice(o));
        }
    };
    Tensor::from_writer(cpu_allocator_ref(), dtype, shape, |w| {
        if x.len() >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
            let size = std::mem::size_of::<D>();
            w.par_chunks(PIECE * size, |i, cw| {
                let lo = i * PIECE;
                body(cw, &x[lo..(lo + PIECE).min(x.len())]);
            });
        } else {
            body(w, x);
        }
    })
}

/// `out[i] = f(x[i])` compiled for the CPU's SIMD level: AVX-512 where there is one for the
/// loops bound by computation (`wide`), AVX2 otherwise.
#[inline(always)]
fn each<S: Copy, D>(x: &[S], out: &mut [D], wide: bool, f: impl Fn(S) -> D) {
    // The loop is passed as a closure marked `inline(always)`: a closure bound to a name is
    // compiled on its own where its body is large (`Erfc`'s polynomial), outside the
    // vector-instruction function, that is for SSE2.
    if wide {
        vectorized_wide(
            #[inline(always)]
            || each_plain(x, out, &f),
        )
    } else {
        vectorized(
            #[inline(always)]
            || each_plain(x, out, &f),
        )
    }
}

/// [`each`]'s loop, inlined into the function compiled for the vector instructions.
#[inline(always)]
fn each_plain<S: Copy, D>(x: &[S], out: &mut [D], f: &impl Fn(S) -> D) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

/// `op` over a block of `float`s, with TensorFlow's denormal rules (see [`f32_flushed`]): the
/// op is chosen once per block, and each op's loop is vectorised (the transcendental functions
/// `Exp`, `Tanh`, `Sigmoid` and `Erfc` through [`vector`]; the other libm functions stay
/// calls).
///
/// `wide` compiles every op's loop for AVX-512 where the CPU has it (a caller whose block
/// stays in L1, as a fused chain's does, is bound by computation, not memory); otherwise only
/// the transcendental functions are.
pub(crate) fn f32_block(op: UnaryOp, x: &[f32], out: &mut [f32], wide: bool) {
    // Flush a subnormal input and a subnormal result (DAZ and FTZ).
    macro_rules! flushed {
        ($wide:expr, $f:expr) => {
            each(x, out, $wide || wide, |v: f32| daz32($f(daz32(v))))
        };
    }
    match op {
        UnaryOp::Neg => each(x, out, wide, |v: f32| -v),
        UnaryOp::Abs => each(x, out, wide, f32::abs),
        // TensorFlow's `Sign` of a subnormal is its magnitude (recorded).
        UnaryOp::Sign => each(x, out, wide, |v: f32| {
            if v.is_subnormal() {
                v.abs()
            } else {
                f32_op(UnaryOp::Sign, v)
            }
        }),
        UnaryOp::Exp => flushed!(true, vector::exp32),
        UnaryOp::Tanh => flushed!(true, vector::tanh32),
        UnaryOp::Sigmoid => flushed!(true, vector::sigmoid32),
        UnaryOp::Erfc => flushed!(true, vector::erfc32),
        UnaryOp::Relu => flushed!(false, |v| f32_op(UnaryOp::Relu, v)),
        UnaryOp::Relu6 => flushed!(false, |v| f32_op(UnaryOp::Relu6, v)),
        UnaryOp::Square => flushed!(false, |v| f32_op(UnaryOp::Square, v)),
        UnaryOp::Sqrt => flushed!(false, f32::sqrt),
        UnaryOp::Rsqrt => flushed!(false, |v: f32| 1.0 / v.sqrt()),
        UnaryOp::Reciprocal => flushed!(false, |v: f32| 1.0 / v),
        UnaryOp::Floor => flushed!(false, f32::floor),
        UnaryOp::Ceil => flushed!(false, f32::ceil),
        UnaryOp::Round => flushed!(false, f32::round_ties_even),
        other => {
            for (o, &v) in out.iter_mut().zip(x) {
                *o = f32_flushed(other, v);
            }
        }
    }
}

/// The integer types with CPU kernels.
const STD_INTS: &[DataType] = crate::type_lists::INTEGRAL_TYPES;

macro_rules! int_map {
    ($op:expr, $x:expr, $shape:expr, $t:ty) => {
        Tensor::from_vec(
            map($x.as_slice::<$t>()?, |v| int_op($op, i128::from(v)) as $t),
            $shape,
        )
    };
}

/// [`f32_block`] on a block of `half` or `bfloat16`, widened to `float` and rounded back once.
fn via_f32_block<T>(op: UnaryOp, c: &[T], o: &mut [T])
where
    [T]: HalfFloatSliceExt,
{
    let mut wide = [0f32; BLOCK];
    let wide = &mut wide[..c.len()];
    c.convert_to_f32_slice(wide);
    let mut r = [0f32; BLOCK];
    let r = &mut r[..c.len()];
    f32_block(op, wide, r, false);
    o.convert_from_f32_slice(r);
}

/// `op` on every element of `x`.
///
/// # Errors
/// A dtype the op has no kernel for here (strings, bool, complex; integers except for `Relu`,
/// `Relu6`, `Neg`, `Abs`, `Sign`, `Square`); an allocation failure.
pub fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    let shape = x.shape().clone();
    match x.dtype() {
        DataType::FLOAT => map_blocks(x.as_slice::<f32>()?, DataType::FLOAT, &shape, |c, o| {
            f32_block(op, c, o, false)
        }),
        DataType::DOUBLE => map_blocks(x.as_slice::<f64>()?, DataType::DOUBLE, &shape, |c, o| {
            for (o, &v) in o.iter_mut().zip(c) {
                *o = f64_flushed(op, v);
            }
        }),
        // Computed in `float` and rounded once, as TensorFlow's kernels do.
        DataType::HALF => map_blocks(x.as_slice::<f16>()?, DataType::HALF, &shape, |c, o| {
            via_f32_block(op, c, o)
        }),
        DataType::BFLOAT16 => {
            map_blocks(x.as_slice::<bf16>()?, DataType::BFLOAT16, &shape, |c, o| {
                via_f32_block(op, c, o)
            })
        }
        d if STD_INTS.contains(&d) && op.integer(d) => match d {
            DataType::INT8 => int_map!(op, x, shape, i8),
            DataType::INT16 => int_map!(op, x, shape, i16),
            DataType::INT32 => int_map!(op, x, shape, i32),
            DataType::INT64 => int_map!(op, x, shape, i64),
            DataType::UINT8 => int_map!(op, x, shape, u8),
            DataType::UINT16 => int_map!(op, x, shape, u16),
            DataType::UINT32 => int_map!(op, x, shape, u32),
            _ => int_map!(op, x, shape, u64),
        },
        DataType::COMPLEX64 if op.complex() => Tensor::from_vec(
            map(x.as_slice::<Complex32>()?, |v| {
                let z = complex_op(op, Complex64::new(f64::from(v.re), f64::from(v.im)));
                Complex32::new(z.re as f32, z.im as f32)
            }),
            shape,
        ),
        DataType::COMPLEX128 if op.complex() => Tensor::from_vec(
            map(x.as_slice::<Complex64>()?, |v| complex_op(op, v)),
            shape,
        ),
        d => Err(type_error(op.name(), d)),
    }
}

/// `LeakyRelu`: `x` if `x > 0`, else `alpha * x`.
///
/// # Errors
/// A dtype other than `float`, `double`, `half`, `bfloat16`.
pub fn leaky_relu(x: &Tensor, alpha: f32) -> Result<Tensor> {
    let shape = x.shape().clone();
    let f = |v: f32, a: f32| {
        let v = flush_f32(v);
        flush_f32(if v > 0.0 { v } else { a * v })
    };
    match x.dtype() {
        DataType::FLOAT => Tensor::from_vec(map(x.as_slice::<f32>()?, |v| f(v, alpha)), shape),
        DataType::DOUBLE => {
            let a = f64::from(alpha);
            Tensor::from_vec(
                map(x.as_slice::<f64>()?, |v| {
                    let v = flush_f64(v);
                    flush_f64(if v > 0.0 { v } else { a * v })
                }),
                shape,
            )
        }
        // `alpha` is first rounded to the type, as TensorFlow's kernel casts it.
        DataType::HALF => {
            let a = f16::from_f32(alpha).to_f32();
            Tensor::from_vec(
                map(x.as_slice::<f16>()?, |v| f16::from_f32(f(v.to_f32(), a))),
                shape,
            )
        }
        DataType::BFLOAT16 => {
            let a = bf16::from_f32(alpha).to_f32();
            Tensor::from_vec(
                map(x.as_slice::<bf16>()?, |v| bf16::from_f32(f(v.to_f32(), a))),
                shape,
            )
        }
        d => Err(type_error("LeakyRelu", d)),
    }
}

/// [`softmax_rows`] of `float` rows (each element mapped by `pre` first), written into `out`:
/// each row by [`softmax_row_f32`] with its exponents in a buffer of the worker's own, compiled
/// for the widest vectors the CPU has (the same bits at every level: the only fused
/// multiply-adds are `mul_add`s, exact everywhere). Rows go to both cores in blocks of at
/// least 16 Ki elements.
fn softmax_rows_f32(
    x: &[f32],
    out: &mut [f32],
    width: usize,
    log: bool,
    onednn: bool,
    pre: impl Fn(f32) -> f32 + Sync,
) {
    let width = width.max(1);
    let min_rows = (16 << 10) / width + 1;
    // Pieces of `min_rows` rows; one piece stays on the caller's thread.
    let piece = width * min_rows;
    let parallel = x.len() > piece;
    let new_e = || vec![0.0f32; width];
    for_each_chunk(out, piece, parallel, new_e, |e, (i, oc)| {
        let xc = &x[i * piece..][..oc.len()];
        for (o, row) in oc.chunks_mut(width).zip(xc.chunks(width)) {
            vectorized_wide(
                #[inline(always)]
                || softmax_row_f32(row, o, e, log, onednn, &pre),
            )
        }
    });
}

/// One row of [`softmax_rows_f32`], inlined into its caller so that it is compiled for the
/// caller's vector instructions. `x - max` in `float` (as TensorFlow's kernels subtract), its
/// exponential in `float` ([`vector::exp32_fast`], 16 lanes to a vector), the sum and the
/// quotients in `double`. `pre` maps each element of the row first (the identity, or a fused
/// `Mul` by a scalar: [`softmax_of_scaled`]).
#[inline(always)]
fn softmax_row_f32(
    row: &[f32],
    o: &mut [f32],
    e: &mut [f32],
    log: bool,
    onednn: bool,
    pre: &impl Fn(f32) -> f32,
) {
    // The row's maximum in sixteen lanes (one vector), then across them: `max` skips NaN and
    // is otherwise exact, so the order changes nothing (a zero's sign, the one thing it could
    // pick differently, does not change `x - max` for any `x` but a zero, whose exponent is 1
    // either way). A single running maximum is a chain of dependent instructions, four cycles
    // an element.
    let mut top = [f32::NEG_INFINITY; 16];
    let mut chunks = row.chunks_exact(16);
    for c in &mut chunks {
        for (t, &v) in top.iter_mut().zip(c) {
            *t = t.max(pre(v));
        }
    }
    let mf = chunks
        .remainder()
        .iter()
        .map(|&v| pre(v))
        .chain(top)
        .fold(f32::NEG_INFINITY, f32::max);
    let m = f64::from(mf);
    // An exponent that is NaN is +inf under oneDNN (see `softmax_rows`) and NaN otherwise.
    let nan = if onednn { f32::INFINITY } else { f32::NAN };
    let exp = |v: f32| softmax_exp(pre(v), mf, nan);
    // The exponents and their sum in one pass: sixteen partial sums (lane `i` adds elements
    // `i`, `i + 16`, ...: one vector of exponents, two of `double`s), then added in order.
    let mut lanes = [0.0f64; 16];
    let mut es = e.chunks_exact_mut(16);
    let mut xs = row.chunks_exact(16);
    for (ec, xc) in (&mut es).zip(&mut xs) {
        // Whole arrays of sixteen, so that the compiler keeps them in registers (not
        // `array::from_fn`, which may be compiled on its own, outside the vector-instruction
        // function).
        let mut ex = [0.0f32; 16];
        for (d, &v) in ex.iter_mut().zip(xc) {
            *d = exp(v);
        }
        ec.copy_from_slice(&ex);
        for (l, &v) in lanes.iter_mut().zip(&ex) {
            *l += f64::from(v);
        }
    }
    let mut tail = 0.0f64;
    for (e, &v) in es.into_remainder().iter_mut().zip(xs.remainder()) {
        *e = exp(v);
        tail += f64::from(*e);
    }
    let sum = lanes.iter().sum::<f64>() + tail;
    if log {
        let ls = sum.ln();
        for (o, &v) in o.iter_mut().zip(row) {
            *o = (f64::from(pre(v)) - m - ls) as f32;
        }
    } else {
        let r = 1.0 / sum;
        for (o, &e) in o.iter_mut().zip(e.iter()) {
            *o = (f64::from(e) * r) as f32;
        }
    }
}

/// A softmax exponent, `exp(v - max)` (`nan` where that is NaN): a function of its own so
/// that it is always inlined into the vector-instruction function.
#[inline(always)]
fn softmax_exp(v: f32, max: f32, nan: f32) -> f32 {
    let d = v - max;
    if d.is_nan() {
        nan
    } else {
        vector::exp32_fast(d)
    }
}

/// Softmax (or log-softmax) of each row over the last axis, in `f64` for `double` and `f32`
/// otherwise: `exp(x - max) / sum`, as TensorFlow's kernel computes it.
///
/// With `onednn` (TensorFlow's `float` and `bfloat16` `Softmax`, on oneDNN), an exponent that
/// is NaN (a NaN input, or `inf - inf`) counts as `+inf`, as oneDNN's clamped `exp` gives: the
/// row's other elements become 0 and those NaN.
fn softmax_rows(x: &[f64], width: usize, log: bool, onednn: bool) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    out.par_chunks_mut(width.max(1))
        .zip(x.par_chunks(width.max(1)))
        .for_each(|(o, row)| {
            let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let e = |v: f64| {
                let d = v - m;
                if onednn && d.is_nan() {
                    f64::INFINITY
                } else {
                    d.exp()
                }
            };
            if onednn {
                let sum: f64 = row.iter().map(|&v| e(v)).sum();
                for (o, &v) in o.iter_mut().zip(row) {
                    *o = e(v) / sum;
                }
                return;
            }
            let sum: f64 = row.iter().map(|&v| (v - m).exp()).sum();
            for (o, &v) in o.iter_mut().zip(row) {
                *o = if log {
                    v - m - sum.ln()
                } else {
                    (v - m).exp() / sum
                };
            }
        });
    out
}

fn softmax_any(x: &Tensor, log: bool) -> Result<Tensor> {
    let op = if log { "LogSoftmax" } else { "Softmax" };
    // TensorFlow's `float` and `bfloat16` `Softmax` run on oneDNN, which takes ranks 1 to 5.
    let onednn = !log && matches!(x.dtype(), DataType::FLOAT | DataType::BFLOAT16);
    if onednn && (x.dims() < 1 || x.dims() > 5) {
        return Err(Error::Op {
            op,
            code: tensorcast_core::Code::Aborted,
            message: "Input dims must be <= 5 and >=1".to_string(),
        });
    }
    if x.dims() < 1 && is_floating(x.dtype()) {
        return Err(Error::invalid_argument(
            op,
            format!("logits must have >= 1 dimension, got {}", x.shape()),
        ));
    }
    let width = x.shape().dim_sizes().last().copied().unwrap_or(1) as usize;
    let shape = x.shape().clone();
    match x.dtype() {
        DataType::DOUBLE => {
            Tensor::from_vec(softmax_rows(x.as_slice::<f64>()?, width, log, false), shape)
        }
        DataType::FLOAT => softmax_f32(
            x,
            log,
            onednn,
            #[inline(always)]
            |v| v,
        ),
        DataType::HALF => {
            let v: Vec<f64> = x.as_slice::<f16>()?.iter().map(|a| a.to_f64()).collect();
            let r = softmax_rows(&v, width, log, false);
            Tensor::from_vec(
                r.into_iter().map(f16::from_f64).collect::<Vec<f16>>(),
                shape,
            )
        }
        DataType::BFLOAT16 => {
            let v: Vec<f64> = x.as_slice::<bf16>()?.iter().map(|a| a.to_f64()).collect();
            let r = softmax_rows(&v, width, log, onednn);
            Tensor::from_vec(
                r.into_iter().map(bf16::from_f64).collect::<Vec<bf16>>(),
                shape,
            )
        }
        d => Err(type_error(op, d)),
    }
}

/// `Softmax` over the last axis.
///
/// # Errors
/// A scalar (`logits must have >= 1 dimension`); a dtype other than the floating ones.
pub fn softmax(x: &Tensor) -> Result<Tensor> {
    softmax_any(x, false)
}

/// `Softmax(Mul(x, scale))` of a `float` `x` (with `scale_first`, `Mul(scale, x)`: the order
/// decides which NaN the product keeps) in one pass: each element is multiplied as `Mul`'s
/// kernel multiplies it (TensorFlow's denormal rules) as its row is read, so the result has
/// the two kernels' bits without the product's tensor. The session runs a `Softmax` of a
/// `Mul` by a scalar constant this way (attention's scaled scores).
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::elementwise::{binary, BinaryOp};
/// use tensorcast_kernels::math::{softmax, softmax_of_scaled};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, -1.0, 0.5, 8.0], [2i64, 3].as_slice())?;
/// let scale = Tensor::scalar_of(0.35f32);
/// let both = softmax_of_scaled(&x, 0.35, false)?;
/// let apart = softmax(&binary(BinaryOp::Mul, &x, &scale, true)?)?;
/// assert_eq!(both.as_slice::<f32>()?, apart.as_slice::<f32>()?);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// As [`softmax`], and a dtype other than `float`.
pub fn softmax_of_scaled(x: &Tensor, scale: f32, scale_first: bool) -> Result<Tensor> {
    if x.dtype() != DataType::FLOAT {
        return Err(type_error("Softmax", x.dtype()));
    }
    if x.dims() < 1 || x.dims() > 5 {
        // The unfused ops' error (the product has `x`'s shape).
        return softmax(x);
    }
    if scale_first {
        softmax_f32(
            x,
            false,
            true,
            #[inline(always)]
            |v| mul32(scale, v),
        )
    } else {
        softmax_f32(
            x,
            false,
            true,
            #[inline(always)]
            |v| mul32(v, scale),
        )
    }
}

/// [`softmax_rows_f32`] of a `float` tensor of rank 1 or more, into a new tensor.
fn softmax_f32(
    x: &Tensor,
    log: bool,
    onednn: bool,
    pre: impl Fn(f32) -> f32 + Sync,
) -> Result<Tensor> {
    let width = x.shape().dim_sizes().last().copied().unwrap_or(1) as usize;
    // Every element is written below: a reused block need not be zeroed first.
    let mut out = Tensor::for_overwrite(DataType::FLOAT, x.shape().clone())?;
    if out.num_elements() > 0 {
        softmax_rows_f32(
            x.as_slice::<f32>()?,
            out.as_mut_slice()?,
            width,
            log,
            onednn,
            pre,
        );
    }
    Ok(out)
}

/// `LogSoftmax` over the last axis.
///
/// # Errors
/// As [`softmax`].
pub fn log_softmax(x: &Tensor) -> Result<Tensor> {
    softmax_any(x, true)
}

fn is_floating(d: DataType) -> bool {
    matches!(
        d,
        DataType::FLOAT | DataType::DOUBLE | DataType::HALF | DataType::BFLOAT16
    )
}

/// `LogicalNot` of a `bool` tensor.
///
/// # Errors
/// Another dtype: TensorFlow's `cannot compute LogicalNot as input #0(zero-based) was expected
/// to be a bool tensor but is a float tensor`.
pub fn logical_not(x: &Tensor) -> Result<Tensor> {
    Error::check_input_type("LogicalNot", 0, DataType::BOOL, x.dtype())?;
    Tensor::from_vec(map(x.as_slice::<bool>()?, |v| !v), x.shape().clone())
}
