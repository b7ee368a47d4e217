//! Activations, unary math, softmax and reductions (`tensorcast_kernels::math`,
//! `tensorcast_kernels::reduce`): each an entry of its OpDef, its shape function and its
//! kernel.

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_kernels::math::{self, UnaryOp};
use tensorcast_kernels::reduce::{self, ArgOp, Reduction};
use tensorcast_kernels::unary as select;

use super::{defs, kernel_entry, one, out, same_as_input0, Entry, KernelFn, ShapeCtx};
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
    let r = |def, k| kernel_entry(def, reduce_shape, k, true);
    vec![
        u(&defs::RELU, unary_kernel!(UnaryOp::Relu)),
        u(&defs::RELU6, unary_kernel!(UnaryOp::Relu6)),
        u(&defs::ELU, unary_kernel!(UnaryOp::Elu)),
        u(&defs::SELU, unary_kernel!(UnaryOp::Selu)),
        u(&defs::SIGMOID, unary_kernel!(UnaryOp::Sigmoid)),
        u(&defs::TANH, unary_kernel!(UnaryOp::Tanh)),
        u(&defs::SOFTPLUS, unary_kernel!(UnaryOp::Softplus)),
        u(&defs::EXP, unary_kernel!(UnaryOp::Exp)),
        u(&defs::LOG, unary_kernel!(UnaryOp::Log)),
        u(&defs::LOG1P, unary_kernel!(UnaryOp::Log1p)),
        u(&defs::SQRT, unary_kernel!(UnaryOp::Sqrt)),
        u(&defs::RSQRT, unary_kernel!(UnaryOp::Rsqrt)),
        u(&defs::ERF, unary_kernel!(UnaryOp::Erf)),
        u(&defs::ERFC, unary_kernel!(UnaryOp::Erfc)),
        u(&defs::FLOOR, unary_kernel!(UnaryOp::Floor)),
        u(&defs::CEIL, unary_kernel!(UnaryOp::Ceil)),
        u(&defs::ROUND, unary_kernel!(UnaryOp::Round)),
        u(&defs::RECIPROCAL, unary_kernel!(UnaryOp::Reciprocal)),
        // Integer-valued ones fold at graph time (shape arithmetic).
        kernel_entry(
            &defs::SQUARE,
            same_as_input0,
            unary_kernel!(UnaryOp::Square),
            true,
        ),
        kernel_entry(
            &defs::NEG,
            same_as_input0,
            unary_kernel!(UnaryOp::Neg),
            true,
        ),
        kernel_entry(
            &defs::ABS,
            same_as_input0,
            unary_kernel!(UnaryOp::Abs),
            true,
        ),
        kernel_entry(
            &defs::SIGN,
            same_as_input0,
            unary_kernel!(UnaryOp::Sign),
            true,
        ),
        u(&defs::LEAKY_RELU, |c, x| {
            let alpha = attr::get_float(c.attrs, "alpha").unwrap_or(0.2);
            out(math::leaky_relu(&x[0], alpha))
        }),
        u(&defs::SOFTMAX, |_, x| out(math::softmax(&x[0]))),
        u(&defs::LOG_SOFTMAX, |_, x| out(math::log_softmax(&x[0]))),
        kernel_entry(
            &defs::SELECT,
            |c| one(select::select_shape(&c.shape(0), &c.shape(1), &c.shape(2))),
            |_, x| out(select::select(&x[0], &x[1], &x[2])),
            true,
        ),
        kernel_entry(
            &defs::SELECT_V2,
            |c| {
                one(select::select_v2_shape(
                    &c.shape(0),
                    &c.shape(1),
                    &c.shape(2),
                ))
            },
            |_, x| out(select::select_v2(&x[0], &x[1], &x[2])),
            true,
        ),
        r(&defs::SUM, reduce_kernel!(Reduction::Sum)),
        r(&defs::MEAN, reduce_kernel!(Reduction::Mean)),
        r(&defs::MAX, reduce_kernel!(Reduction::Max)),
        r(&defs::MIN, reduce_kernel!(Reduction::Min)),
        r(&defs::PROD, reduce_kernel!(Reduction::Prod)),
        r(&defs::ALL, reduce_kernel!(Reduction::All)),
        r(&defs::ANY, reduce_kernel!(Reduction::Any)),
        kernel_entry(&defs::ARG_MAX, arg_shape, arg_kernel!(ArgOp::ArgMax), true),
        kernel_entry(&defs::ARG_MIN, arg_shape, arg_kernel!(ArgOp::ArgMin), true),
        u(&defs::LOGICAL_NOT, |_, x| out(math::logical_not(&x[0]))),
    ]
}
