//! A `Softmax` of a `Mul` by a scalar constant (attention's scaled scores, `Softmax(scores *
//! 1/sqrt(d))`) runs as one kernel, [`Kernel::ScaledSoftmax`]
//! (`tensorcast_kernels::math::softmax_of_scaled`): the product is made element by element as
//! each row is read, not stored as a tensor and read back. The bits are the two kernels'.
//!
//! The pass requires: `float`, the `Mul`'s other operand a scalar constant without NaN (which
//! NaN a product keeps depends on its operands' order, kept as `scale_first`, but a NaN
//! constant is left to the unfused kernels as the element-wise fusion leaves it), the `Mul`
//! read by that `Softmax` alone (not fetched, no control edges on either node).

use std::collections::HashMap;

use tensorcast_core::DataType;
use tensorcast_kernels::elementwise::BinaryOp;

use crate::build::graph::Endpoint;
use crate::kernels::Kernel;
use crate::plan::fuse::Rewrite;

/// Turns each qualifying `Softmax` into a [`Kernel::ScaledSoftmax`] whose input (returned, by
/// node id, to add to the plan's rewired inputs) is the `Mul`'s other operand. The `Mul` is
/// then read by nothing.
pub(crate) fn fold_scaled_softmax(
    g: &Rewrite<'_>,
    kernels: &mut [Option<Kernel>],
) -> HashMap<usize, Vec<Endpoint>> {
    let mut inputs_of = HashMap::new();
    let nodes = g.nodes;
    for &id in g.order {
        let softmax = &nodes[id];
        if !g.needed[id]
            || g.folded[id]
            || softmax.op != "Softmax"
            || softmax.inputs.len() != 1
            || !softmax.control_inputs.is_empty()
            || softmax.output_types.as_slice() != [DataType::FLOAT]
            || !matches!(kernels[id], Some(Kernel::Reg { .. }))
        {
            continue;
        }
        let x = softmax.inputs[0];
        let mul = &nodes[x.node];
        if !g.feeds_only(&x, id)
            || mul.inputs.len() != 2
            || !matches!(
                kernels[mul.id],
                Some(Kernel::Binary {
                    op: BinaryOp::Mul,
                    ..
                })
            )
        {
            continue;
        }
        let scalar = |ep: &Endpoint| {
            Rewrite::constant(ep, kernels)
                .filter(|t| t.dtype() == DataType::FLOAT && t.shape().rank() == 0)
                .and_then(|t| t.as_slice::<f32>().ok()?.first().copied())
                .filter(|v| !v.is_nan())
        };
        let (value, scale, scale_first) = match (scalar(&mul.inputs[0]), scalar(&mul.inputs[1])) {
            (None, Some(s)) => (mul.inputs[0], s, false),
            (Some(s), None) => (mul.inputs[1], s, true),
            _ => continue,
        };
        kernels[id] = Some(Kernel::ScaledSoftmax { scale, scale_first });
        inputs_of.insert(id, vec![value]);
    }
    inputs_of
}
