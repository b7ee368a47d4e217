//! Activations, unary math, softmax and reductions (`tensorcast_kernels::math`,
//! `tensorcast_kernels::reduce`): each an entry of its OpDef, its shape function and its
//! kernel.

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_kernels::math::{self, UnaryOp};
use tensorcast_kernels::reduce::{self, ArgOp, Reduction};
use tensorcast_kernels::unary as select;

use super::spec::op_def;
use super::{kernel_entry, one, out, same_as_input0, Entry, KernelFn, ShapeCtx};
use crate::attr;
use crate::error::Result;

macro_rules! unary_kernel {
    ($op:expr) => {
        (|_, x| out(math::unary($op, &x[0]))) as KernelFn
    };
}

macro_rules! reduce_kernel {
    ($op:expr) => {
        (|c, x| {
            let keep = attr::get_bool(c.attrs, "keep_dims").unwrap_or(false);
            out(reduce::reduce($op, &x[0], &x[1], keep))
        }) as KernelFn
    };
}

macro_rules! arg_kernel {
    ($op:expr) => {
        (|c, x| {
            let t = attr::get_type(c.attrs, "output_type").unwrap_or(DataType::INT64);
            out(reduce::arg_reduce($op, &x[0], &x[1], t))
        }) as KernelFn
    };
}

fn arg_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    one(reduce::arg_reduce_shape(
        &c.shape(0),
        &c.shape(1),
        c.value(1),
    ))
}

fn reduce_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let keep = attr::get_bool(c.attrs, "keep_dims").unwrap_or(false);
    one(reduce::reduce_shape(&c.shape(0), c.value(1), keep))
}

pub(super) fn entries() -> Vec<Entry> {
    let u = |def, k| kernel_entry(def, same_as_input0, k, false);
    // Integer-valued unary ops fold at graph time (shape arithmetic).
    let folded = |def, k| kernel_entry(def, same_as_input0, k, true);
    let r = |def, k| kernel_entry(def, reduce_shape, k, true);
    let arg = |def, k| kernel_entry(def, arg_shape, k, true);
    vec![
        u(op_def("Relu"), unary_kernel!(UnaryOp::Relu)),
        u(op_def("Relu6"), unary_kernel!(UnaryOp::Relu6)),
        u(op_def("Elu"), unary_kernel!(UnaryOp::Elu)),
        u(op_def("Selu"), unary_kernel!(UnaryOp::Selu)),
        u(op_def("Sigmoid"), unary_kernel!(UnaryOp::Sigmoid)),
        u(op_def("Tanh"), unary_kernel!(UnaryOp::Tanh)),
        u(op_def("Softplus"), unary_kernel!(UnaryOp::Softplus)),
        u(op_def("Exp"), unary_kernel!(UnaryOp::Exp)),
        u(op_def("Log"), unary_kernel!(UnaryOp::Log)),
        u(op_def("Log1p"), unary_kernel!(UnaryOp::Log1p)),
        u(op_def("Sqrt"), unary_kernel!(UnaryOp::Sqrt)),
        u(op_def("Rsqrt"), unary_kernel!(UnaryOp::Rsqrt)),
        u(op_def("Erf"), unary_kernel!(UnaryOp::Erf)),
        u(op_def("Erfc"), unary_kernel!(UnaryOp::Erfc)),
        u(op_def("Floor"), unary_kernel!(UnaryOp::Floor)),
        u(op_def("Ceil"), unary_kernel!(UnaryOp::Ceil)),
        u(op_def("Round"), unary_kernel!(UnaryOp::Round)),
        u(op_def("Reciprocal"), unary_kernel!(UnaryOp::Reciprocal)),
        folded(op_def("Square"), unary_kernel!(UnaryOp::Square)),
        folded(op_def("Neg"), unary_kernel!(UnaryOp::Neg)),
        folded(op_def("Abs"), unary_kernel!(UnaryOp::Abs)),
        folded(op_def("Sign"), unary_kernel!(UnaryOp::Sign)),
        u(op_def("LeakyRelu"), |c, x| {
            let alpha = attr::get_float(c.attrs, "alpha").unwrap_or(0.2);
            out(math::leaky_relu(&x[0], alpha))
        }),
        u(op_def("Softmax"), |_, x| out(math::softmax(&x[0]))),
        u(op_def("LogSoftmax"), |_, x| out(math::log_softmax(&x[0]))),
        kernel_entry(
            op_def("Select"),
            |c| one(select::select_shape(&c.shape(0), &c.shape(1), &c.shape(2))),
            |_, x| out(select::select(&x[0], &x[1], &x[2])),
            true,
        ),
        Entry {
            // Broadcasts its three inputs together: checked against the run's allocation
            // limit before it runs.
            sized_by_values: true,
            ..kernel_entry(
                op_def("SelectV2"),
                |c| {
                    one(select::select_v2_shape(
                        &c.shape(0),
                        &c.shape(1),
                        &c.shape(2),
                    ))
                },
                |_, x| out(select::select_v2(&x[0], &x[1], &x[2])),
                true,
            )
        },
        r(op_def("Sum"), reduce_kernel!(Reduction::Sum)),
        r(op_def("Mean"), reduce_kernel!(Reduction::Mean)),
        r(op_def("Max"), reduce_kernel!(Reduction::Max)),
        r(op_def("Min"), reduce_kernel!(Reduction::Min)),
        r(op_def("Prod"), reduce_kernel!(Reduction::Prod)),
        r(op_def("All"), reduce_kernel!(Reduction::All)),
        r(op_def("Any"), reduce_kernel!(Reduction::Any)),
        arg(op_def("ArgMax"), arg_kernel!(ArgOp::ArgMax)),
        arg(op_def("ArgMin"), arg_kernel!(ArgOp::ArgMin)),
        u(op_def("LogicalNot"), |_, x| out(math::logical_not(&x[0]))),
    ]
}
