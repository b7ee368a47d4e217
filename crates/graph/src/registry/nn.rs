//! Linear algebra, convolution, pooling and normalisation (`tensorcast_kernels::linalg`,
//! `tensorcast_kernels::nn`): each an entry of its OpDef, its shape function and its kernel.

use tensorcast_core::{Code, PartialTensorShape};
use tensorcast_kernels::linalg;
use tensorcast_kernels::nn::{self, Padding};

use super::spec::op_def;
use super::{
    kernel_entry, kernel_error, one, out, shape_error, Entry, KernelFn, ShapeCtx, ShapeFn,
};
use crate::attr::{self, Attrs};
use crate::error::Result;
use crate::registry::opdef::OpDef;

fn ints<'a>(a: &'a Attrs, name: &str) -> &'a [i64] {
    attr::get_ints(a, name).unwrap_or_default()
}

fn string(a: &Attrs, name: &str) -> String {
    String::from_utf8_lossy(attr::get_string(a, name).unwrap_or_default()).into_owned()
}

fn padding(a: &Attrs) -> Padding {
    // The OpDef's allowed values were checked when the node was made.
    Padding::from_name(&string(a, "padding")).unwrap_or(Padding::Valid)
}

/// TensorFlow's CPU kernels take NHWC only.
fn nhwc(op: &'static str, a: &Attrs, message: impl FnOnce(&str) -> String) -> Result<()> {
    let f = string(a, "data_format");
    if f.is_empty() || f == "NHWC" {
        return Ok(());
    }
    Err(kernel_error(tensorcast_core::Error::Op {
        op,
        code: Code::InvalidArgument,
        message: message(&f),
    }))
}

pub(crate) fn conv_format(op: &'static str, a: &Attrs) -> Result<()> {
    nhwc(op, a, |f| {
        format!("The {op} op currently only supports the NHWC tensor format on the CPU. The op was given the format: {f}")
    })
}

fn pool_format(op: &'static str, a: &Attrs) -> Result<()> {
    nhwc(op, a, |_| {
        format!("Default {op}ingOp only supports NHWC on device type CPU")
    })
}

fn entry(def: &'static OpDef, shape: ShapeFn, kernel: KernelFn) -> Entry {
    kernel_entry(def, shape, kernel, false)
}

/// The entry of an op whose shape function and kernel both take inputs 0 and 1 and the same
/// values read from the node's attrs (`$args` gives them, bound to `$v`s: a tuple, or one
/// value); the kernel first runs `$check`.
macro_rules! two_inputs {
    ($op:literal, $shape:path, $kernel:path, $args:ident => ($($v:ident),*) $(, $check:ident)?) => {
        entry(
            op_def($op),
            |c| {
                #[allow(unused_parens, reason = "one value is bound as `(v)`")]
                let ($($v),*) = $args(c.attrs);
                one($shape(&c.shape(0), &c.shape(1), $($v),*))
            },
            |c, x| {
                $($check($op, c.attrs)?;)?
                #[allow(unused_parens, reason = "one value is bound as `(v)`")]
                let ($($v),*) = $args(c.attrs);
                out($kernel(&x[0], &x[1], $($v),*))
            },
        )
    };
}

/// A convolution's window attrs: strides, padding, explicit paddings, dilations.
pub(crate) fn conv_attrs(a: &Attrs) -> nn::ConvAttrs<'_> {
    (
        ints(a, "strides"),
        padding(a),
        ints(a, "explicit_paddings"),
        ints(a, "dilations"),
    )
}

fn mat_mul_args(a: &Attrs) -> (bool, bool) {
    (bool_attr(a, "transpose_a"), bool_attr(a, "transpose_b"))
}

fn batch_mat_mul_args(a: &Attrs) -> (bool, bool) {
    (bool_attr(a, "adj_x"), bool_attr(a, "adj_y"))
}

/// A pooling op's window attrs: ksize, strides, padding.
fn pool_attrs(a: &Attrs) -> (&[i64], &[i64], Padding) {
    (ints(a, "ksize"), ints(a, "strides"), padding(a))
}

fn pool_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let (ksize, strides, pad) = pool_attrs(c.attrs);
    one(nn::pool_shape(&c.shape(0), ksize, strides, pad))
}

fn bool_attr(a: &Attrs, name: &str) -> bool {
    attr::get_bool(a, name).unwrap_or(false)
}

fn batch_norm_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let params = [c.shape(1), c.shape(2), c.shape(3), c.shape(4)];
    nn::fused_batch_norm_v3_shape(&c.shape(0), &params).map_err(shape_error)
}

pub(super) fn entries() -> Vec<Entry> {
    vec![
        two_inputs!("MatMul", linalg::mat_mul_shape, linalg::mat_mul, mat_mul_args => (ta, tb)),
        two_inputs!(
            "BatchMatMulV2",
            linalg::batch_mat_mul_v2_shape,
            linalg::batch_mat_mul_v2,
            batch_mat_mul_args => (adj_x, adj_y)
        ),
        Entry {
            // Its output multiplies its inputs' dims (an outer product): checked against the
            // run's allocation limit before it runs.
            sized_by_values: true,
            ..entry(
                op_def("Einsum"),
                |c| {
                    let shapes: Vec<_> = (0..c.num_inputs()).map(|i| c.shape(i)).collect();
                    let refs: Vec<_> = shapes.iter().collect();
                    one(linalg::einsum_shape(&refs, &string(c.attrs, "equation")))
                },
                |c, x| {
                    let refs: Vec<_> = x.iter().collect();
                    out(linalg::einsum(&refs, &string(c.attrs, "equation")))
                },
            )
        },
        entry(
            op_def("BiasAdd"),
            |c| one(nn::bias_add_shape(&c.shape(0), &c.shape(1))),
            |c, x| out(nn::bias_add(&x[0], &x[1], &string(c.attrs, "data_format"))),
        ),
        two_inputs!("Conv2D", nn::conv2d_shape, nn::conv2d, conv_attrs => (attrs), conv_format),
        two_inputs!(
            "DepthwiseConv2dNative",
            nn::depthwise_conv2d_native_shape,
            nn::depthwise_conv2d_native,
            conv_attrs => (attrs),
            conv_format
        ),
        entry(op_def("MaxPool"), pool_shape, |c, x| {
            pool_format("MaxPool", c.attrs)?;
            let (ksize, strides, pad) = pool_attrs(c.attrs);
            out(nn::max_pool(&x[0], ksize, strides, pad))
        }),
        entry(op_def("AvgPool"), pool_shape, |c, x| {
            pool_format("AvgPool", c.attrs)?;
            let (ksize, strides, pad) = pool_attrs(c.attrs);
            out(nn::avg_pool(&x[0], ksize, strides, pad))
        }),
        entry(op_def("FusedBatchNormV3"), batch_norm_shape, |c, x| {
            nn::fused_batch_norm_v3(
                &x[0],
                &x[1],
                &x[2],
                &x[3],
                &x[4],
                attr::get_float(c.attrs, "epsilon").unwrap_or(1e-4),
                &string(c.attrs, "data_format"),
                bool_attr(c.attrs, "is_training"),
            )
            .map_err(kernel_error)
        }),
    ]
}
