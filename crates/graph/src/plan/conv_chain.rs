//! A fused element-wise chain ([`Kernel::Fused`]) whose input is a `float` `Conv2D` or
//! `DepthwiseConv2dNative` read by that chain alone becomes one kernel,
//! [`Kernel::ConvChain`]: the convolution runs the chain on each block of its output as soon as
//! the block is made (`tensorcast_kernels::nn::conv_with`), while it is in cache, instead of
//! storing the whole output and reading it back. This is what a model computes after each
//! convolution (batch norm's scale and shift, an activation such as hard-swish), and what
//! TensorFlow's grappler remapper and oneDNN do with their fused convolutions.
//!
//! Every element is the convolution's value put through the chain's per-element functions,
//! so the bits are the two kernels'. The pass requires the convolution's output read only by
//! the chain's nodes (not fetched, no control edges on it); at run time an input that is not
//! `float`, or a chain whose vectors do not fit the output depth, runs the two unfused.

use std::collections::HashMap;
use std::sync::Arc;

use tensorcast_core::{DataType, Tensor};
use tensorcast_kernels::nn;

use crate::build::graph::{Endpoint, Node};
use crate::error::{Error, Result};
use crate::kernels::{kernel, Kernel};
use crate::plan::fuse::{Fused, Rewrite};

/// A convolution and the fused chain that reads its output.
#[derive(Debug)]
pub(crate) struct ConvChain {
    /// The convolution's node (its errors name it).
    pub(crate) conv: Arc<Node>,
    /// Its kernel (a registry kernel, whose attrs the fused run reads too).
    pub(crate) conv_kernel: Kernel,
    /// The chain.
    pub(crate) chain: Box<Fused>,
}

impl ConvChain {
    /// The chain of the convolution of `x` by `filter`.
    pub(crate) fn run(&self, x: &Tensor, filter: &Tensor) -> Result<Tensor> {
        let Kernel::Reg { attrs, .. } = &self.conv_kernel else {
            return Err(Error::Internal(
                "a fused convolution without its kernel".into(),
            ));
        };
        let Some(op) = nn::ConvOp::from_name(&self.conv.op) else {
            return Err(Error::Internal(format!(
                "a fused chain after {}, which is not a convolution",
                self.conv.op
            )));
        };
        let f = filter.shape().dim_sizes();
        let depth = match f {
            [_, _, c, m] if op == nn::ConvOp::DepthwiseConv2dNative => c.saturating_mul(*m),
            [_, _, _, c] => *c,
            _ => 0,
        };
        let dims = [1, 1, 1, depth];
        let at_conv = |e: Error| e.at_node(&self.conv);
        if x.dtype() == DataType::FLOAT && self.chain.chain.fits(&dims) {
            crate::registry::nn::conv_format(op.name(), attrs).map_err(at_conv)?;
            let chain = &self.chain.chain;
            let epilogue = |b: &mut [f32]| chain.apply_in_place(b, &dims);
            let args = crate::registry::nn::conv_attrs(attrs);
            let y = nn::conv_with(op, x, filter, args, Some(&epilogue));
            return kernel(y).map_err(at_conv);
        }
        let y = self
            .conv_kernel
            .compute(&[x.clone(), filter.clone()])
            .map_err(at_conv)?;
        self.chain.run(y)
    }
}

/// Turns each fused chain whose input qualifies into a [`Kernel::ConvChain`]; its inputs
/// (returned, by node id, to add to the plan's rewired inputs) become the convolution's (as
/// `rewired`, the passes before, left them). The convolution is then read by nothing.
pub(crate) fn fold_conv_chains(
    g: &Rewrite<'_>,
    kernels: &mut [Option<Kernel>],
    rewired: &HashMap<usize, Vec<Endpoint>>,
) -> HashMap<usize, Vec<Endpoint>> {
    let mut inputs_of = HashMap::new();
    let nodes = g.nodes;
    for &id in g.order {
        let Some(Kernel::Fused(f)) = &kernels[id] else {
            continue;
        };
        let Some([x]) = rewired.get(&id).map(Vec::as_slice) else {
            continue;
        };
        let conv = &nodes[x.node];
        let chain_reads_only = g.readers[conv.id]
            .iter()
            .all(|r| f.parts.iter().any(|p| p.node.id == *r));
        if x.index != 0
            || nn::ConvOp::from_name(&conv.op).is_none()
            || !g.needed[conv.id]
            || g.folded[conv.id]
            || g.pinned[conv.id]
            || !conv.control_inputs.is_empty()
            || conv.inputs.len() != 2
            || conv.output_types.as_slice() != [DataType::FLOAT]
            || !chain_reads_only
            || !matches!(kernels[conv.id], Some(Kernel::Reg { .. }))
        {
            continue;
        }
        let conv_inputs = rewired
            .get(&conv.id)
            .cloned()
            .unwrap_or_else(|| conv.inputs.clone());
        let (Some(conv_kernel), Some(Kernel::Fused(chain))) =
            (kernels[conv.id].take(), kernels[id].take())
        else {
            continue;
        };
        kernels[id] = Some(Kernel::ConvChain(Box::new(ConvChain {
            conv: conv.clone(),
            conv_kernel,
            chain,
        })));
        inputs_of.insert(id, conv_inputs);
    }
    inputs_of
}
