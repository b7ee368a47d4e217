//! Zero padding folded into the convolution that reads it: `Pad(x, paddings)` feeding a
//! `Conv2D` or `DepthwiseConv2dNative` with `VALID` padding becomes the convolution of `x`
//! with `EXPLICIT` padding (`explicit_paddings` = the `Pad`'s height and width amounts), so the
//! padded copy of `x` is never made. Keras emits the pair for every stride-2 depthwise
//! convolution of MobileNet (`ZeroPadding2D` then `DepthwiseConv2D(padding="valid")`).
//!
//! The result is the same bits: a padded tap contributes `0 * w`, a signed zero, which leaves
//! any sum unchanged (and a sum that starts at `+0` stays `+0`), so skipping it or adding it
//! agrees - when every filter value is finite, which the pass requires (`0 * inf` is NaN).
//! The pass also requires: constant paddings and filter, `float` or `double`, NHWC, no
//! padding of the batch or channel axes, the `Pad` read by that convolution alone (not
//! fetched, no control edges on either node).

use std::collections::HashMap;

use tensorcast_core::{DataType, Tensor};
use tensorcast_proto::attr_value::{ListValue, Value};
use tensorcast_proto::AttrValue;

use crate::attr;
use crate::build::graph::Endpoint;
use crate::kernels::Kernel;
use crate::plan::fuse::Rewrite;

/// The `[4, 2]` int32/int64 paddings as `[top, bottom, left, right]`, when only the height and
/// width are padded, by non-negative amounts.
fn spatial_paddings(t: &Tensor) -> Option<[i64; 4]> {
    if t.shape().dim_sizes() != [4, 2] {
        return None;
    }
    let v: Vec<i64> = match t.dtype() {
        DataType::INT32 => t
            .as_slice::<i32>()
            .ok()?
            .iter()
            .map(|&x| x.into())
            .collect(),
        DataType::INT64 => t.as_slice::<i64>().ok()?.to_vec(),
        _ => return None,
    };
    let ok = v[0] == 0 && v[1] == 0 && v[6] == 0 && v[7] == 0 && v[2..6].iter().all(|&p| p >= 0);
    ok.then(|| [v[2], v[3], v[4], v[5]])
}

/// A filter whose every value is finite.
fn finite_filter(t: &Tensor) -> bool {
    match t.dtype() {
        DataType::FLOAT => t
            .as_slice::<f32>()
            .is_ok_and(|v| v.iter().all(|x| x.is_finite())),
        DataType::DOUBLE => t
            .as_slice::<f64>()
            .is_ok_and(|v| v.iter().all(|x| x.is_finite())),
        _ => false,
    }
}

/// Folds each qualifying `Pad` into its convolution: the convolution's kernel gets `EXPLICIT`
/// padding, and its inputs (returned, by node id, to add to the plan's rewired inputs) become
/// the `Pad`'s input and the filter. The `Pad` is then read by nothing.
pub(crate) fn fold_pads(
    g: &Rewrite<'_>,
    kernels: &mut [Option<Kernel>],
) -> HashMap<usize, Vec<Endpoint>> {
    let mut inputs_of = HashMap::new();
    let (nodes, folded) = (g.nodes, g.folded);
    for &id in g.order {
        let conv = &nodes[id];
        if !g.needed[id]
            || folded[id]
            || tensorcast_kernels::nn::ConvOp::from_name(&conv.op).is_none()
            || conv.inputs.len() != 2
            || !conv.control_inputs.is_empty()
        {
            continue;
        }
        let Some(Kernel::Reg { attrs, .. }) = &kernels[id] else {
            continue;
        };
        let format = attr::get_string(attrs, "data_format").unwrap_or(b"NHWC");
        if format != b"NHWC" || attr::get_string(attrs, "padding") != Some(b"VALID") {
            continue;
        }
        let (x, filter) = (conv.inputs[0], conv.inputs[1]);
        let pad = &nodes[x.node];
        if pad.op != "Pad"
            || !g.feeds_only(&x, id)
            || pad.inputs.len() != 2
            || !matches!(kernels[pad.id], Some(Kernel::Reg { .. }))
        {
            continue;
        }
        let Some(amounts) = Rewrite::constant(&pad.inputs[1], kernels).and_then(spatial_paddings)
        else {
            continue;
        };
        if !Rewrite::constant(&filter, kernels).is_some_and(finite_filter) {
            continue;
        }
        let Some(Kernel::Reg { attrs, .. }) = &mut kernels[id] else {
            continue;
        };
        let [top, bottom, left, right] = amounts;
        attrs.insert(
            "padding".into(),
            AttrValue {
                value: Some(Value::S(bytes::Bytes::from_static(b"EXPLICIT"))),
            },
        );
        attrs.insert(
            "explicit_paddings".into(),
            AttrValue {
                value: Some(Value::List(Box::new(ListValue {
                    i: vec![0, 0, top, bottom, left, right, 0, 0],
                    ..Default::default()
                }))),
            },
        );
        inputs_of.insert(id, vec![pad.inputs[0], filter]);
    }
    inputs_of
}
