//! The op registry: each op beyond the graph layer's own (`Const`, `Placeholder`, `Identity`,
//! the element-wise binary ops, ...) is one [`Entry`] here - its TensorFlow `OpDef` (generated
//! from TensorFlow's registry into `ops.spec` as `REGISTER_OP` spec lines, parsed once by
//! `spec.rs`), its shape function and its kernel - the way TensorFlow's `REGISTER_OP` +
//! `REGISTER_KERNEL_BUILDER` pair does. Every stage reaches these ops through `Op::Reg`, so
//! adding one is one entry (and its name in `OPS` of `gen_op_defs.py`).
//!
//! Shape functions see partial shapes and the values known at graph time
//! ([`ShapeCtx`]); kernels see the node's attrs and its input tensors ([`KernelCtx`]) and
//! return every output. An entry marked `fold` is evaluated at graph time on known integer
//! inputs (constant folding of small shape arithmetic).

mod array;
mod checkpoint;
mod control_flow;
mod graph_ops;
mod math;
pub(crate) mod nn;
pub(crate) mod opdef;
mod parse_example;
pub(crate) mod run;
mod spec;
mod tensor_list;
mod variables;

pub(crate) use control_flow::Flow;
pub(crate) use run::Run;
pub(crate) use variables::{Functions, Resources};

use std::collections::HashMap;
use std::sync::OnceLock;

use tensorcast_core::{DataType, PartialTensorShape, Tensor};

use crate::attr::{self, Attrs};
use crate::error::{Error, Result};
use crate::registry::opdef::OpDef;

/// A shape function: the output shapes of a node from what is known of its inputs.
pub(crate) type ShapeFn = fn(&ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>>;

/// A kernel: a node's outputs from its input tensors.
pub(crate) type KernelFn = fn(&KernelCtx<'_>, Vec<Tensor>) -> Result<Vec<Tensor>>;

/// One registered op.
#[derive(Debug)]
pub(crate) struct Entry {
    /// TensorFlow's `OpDef`.
    pub(crate) def: &'static OpDef,
    /// Its shape function.
    pub(crate) shape: ShapeFn,
    /// Its kernel (`None`: the op is registered - it imports and infers - but has no kernel).
    pub(crate) kernel: Option<KernelFn>,
    /// Evaluated at graph time when every input's value is known and small.
    pub(crate) fold: bool,
    /// Its outputs' sizes come from values it reads (a `Fill`'s dims, a `Tile`'s multiples):
    /// before its kernel runs, its shape function runs on the actual inputs and what the
    /// outputs would take beyond the inputs' bytes is checked against the run's allocation
    /// limit (`run.rs`).
    pub(crate) sized_by_values: bool,
}

/// Every registry entry, in no particular order.
fn entries() -> &'static [Entry] {
    static ALL: OnceLock<Vec<Entry>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut v = Vec::new();
        v.extend(graph_ops::entries());
        v.extend(array::entries());
        v.extend(nn::entries());
        v.extend(math::entries());
        v.extend(variables::entries());
        v.extend(checkpoint::entries());
        v.extend(parse_example::entries());
        v.extend(control_flow::entries());
        v.extend(tensor_list::entries());
        // TensorFlow's other ops the registry knows the signature of: they import, validate
        // and infer (unknown shapes) as TensorFlow's do, and a run that needs one reports it
        // among the ops without a kernel.
        for def in spec::every_op() {
            if !v.iter().any(|e: &Entry| e.def.name == def.name) {
                v.push(Entry {
                    def,
                    shape: unknown_shapes,
                    kernel: None,
                    fold: false,
                    sized_by_values: false,
                });
            }
        }
        v
    })
}

/// A registry op, by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RegOp(u16);

impl RegOp {
    /// The op registered under `name`.
    pub(crate) fn from_name(name: &str) -> Option<RegOp> {
        static BY_NAME: OnceLock<HashMap<&'static str, u16>> = OnceLock::new();
        let map = BY_NAME.get_or_init(|| {
            entries()
                .iter()
                .enumerate()
                .map(|(i, e)| (e.def.name, u16::try_from(i).unwrap_or(u16::MAX)))
                .collect()
        });
        map.get(name).copied().map(RegOp)
    }

    /// Its entry.
    pub(crate) fn entry(self) -> &'static Entry {
        // `RegOp`s are only made from indices of `entries()`.
        &entries()[usize::from(self.0)]
    }

    /// Every registry op.
    #[cfg(test)]
    pub(crate) fn all() -> impl Iterator<Item = RegOp> {
        (0..entries().len()).map(|i| RegOp(i as u16))
    }
}

/// A value known at graph time.
#[derive(Debug, Clone)]
pub(crate) enum Known {
    /// The whole tensor.
    Tensor(Tensor),
    /// A shape-valued int vector with `-1` for entries not known.
    Partial(Vec<i64>),
}

/// What inference knows about one input.
#[derive(Debug, Clone)]
pub(crate) struct InferInput {
    pub(crate) shape: PartialTensorShape,
    pub(crate) value: Option<Known>,
}

/// What a shape function sees.
#[derive(Debug)]
pub(crate) struct ShapeCtx<'a> {
    /// The node's attrs (complete: defaults filled in).
    pub(crate) attrs: &'a Attrs,
    /// Its inputs: partial shapes and values known at graph time.
    pub(crate) inputs: &'a [InferInput],
    /// Its output dtypes.
    pub(crate) out_types: &'a [DataType],
}

#[allow(
    dead_code,
    reason = "helpers of the kernel entries that land with the kernels crate's ops"
)]
impl ShapeCtx<'_> {
    /// Input `i`'s partial shape (unknown when there is no such input).
    pub(crate) fn shape(&self, i: usize) -> PartialTensorShape {
        self.inputs
            .get(i)
            .map_or_else(PartialTensorShape::unknown_rank, |x| x.shape.clone())
    }
    /// Input `i`'s value, when known at graph time.
    pub(crate) fn value(&self, i: usize) -> Option<&Tensor> {
        match self.inputs.get(i)?.value.as_ref()? {
            Known::Tensor(t) => Some(t),
            Known::Partial(_) => None,
        }
    }
    /// Number of data inputs.
    pub(crate) fn num_inputs(&self) -> usize {
        self.inputs.len()
    }
    /// A bool attr.
    pub(crate) fn bool(&self, name: &str) -> bool {
        attr::get_bool(self.attrs, name).unwrap_or(false)
    }
}

/// What a kernel sees.
#[derive(Debug)]
pub(crate) struct KernelCtx<'a> {
    /// The node's name.
    pub(crate) node: &'a str,
    /// The node's attrs.
    pub(crate) attrs: &'a Attrs,
    /// Its output dtypes.
    #[allow(
        dead_code,
        reason = "read by the kernel entries of ops whose output dtype is an attr"
    )]
    pub(crate) out_types: &'a [DataType],
    /// The run: the session's variables, the allocation limit, cancellation, the calls it is
    /// nested in.
    pub(crate) run: &'a Run<'a>,
}

#[allow(
    dead_code,
    reason = "helpers of the kernel entries that land with the kernels crate's ops"
)]
impl KernelCtx<'_> {
    /// A bool attr (false when absent).
    pub(crate) fn bool(&self, name: &str) -> bool {
        attr::get_bool(self.attrs, name).unwrap_or(false)
    }
}

/// A kernel's core error as the graph layer's (attributed to the node by the executor).
pub(crate) fn kernel_error(source: tensorcast_core::Error) -> Error {
    Error::Kernel {
        node: String::new(),
        location: Box::default(),
        source: Box::new(source),
    }
}

/// A shape function's core error as the graph layer's.
pub(crate) fn shape_error(e: tensorcast_core::Error) -> Error {
    Error::InvalidInput(e.to_string())
}

/// A registry entry with a kernel.
pub(crate) fn kernel_entry(
    def: &'static OpDef,
    shape: ShapeFn,
    kernel: KernelFn,
    fold: bool,
) -> Entry {
    Entry {
        def,
        shape,
        kernel: Some(kernel),
        fold,
        sized_by_values: false,
    }
}

/// The kernel of ops that give their inputs back unchanged, each as the output of its index.
pub(crate) fn forward(_: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    Ok(inputs)
}

/// The entry of a single-output op that forwards its input (`Enter`, `StopGradient`, ...),
/// folded at graph time when `fold`.
pub(crate) fn forwarding(def: &'static OpDef, fold: bool) -> Entry {
    kernel_entry(def, same_as_input0, forward, fold)
}

/// A kernels-crate shape function's single result as the registry's.
pub(crate) fn one(
    s: tensorcast_core::Result<PartialTensorShape>,
) -> Result<Vec<PartialTensorShape>> {
    s.map(|s| vec![s]).map_err(shape_error)
}

/// A kernels-crate shape function's several results as the registry's.
pub(crate) fn many(
    s: tensorcast_core::Result<Vec<PartialTensorShape>>,
) -> Result<Vec<PartialTensorShape>> {
    s.map_err(shape_error)
}

/// A partial shape of known rank from inferred dims (-1: unknown), with core's checks (rank,
/// dims below -1, element count) as a shape function's error.
pub(crate) fn known(dims: &[i64]) -> Result<PartialTensorShape> {
    PartialTensorShape::new(dims).map_err(shape_error)
}

/// A kernels-crate op's single output as a kernel's outputs.
pub(crate) fn out(t: tensorcast_core::Result<Tensor>) -> Result<Vec<Tensor>> {
    t.map(|t| vec![t]).map_err(kernel_error)
}

/// Shape function of ops whose output shapes are not inferred here: all unknown.
pub(crate) fn unknown_shapes(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![PartialTensorShape::unknown_rank(); c.out_types.len()])
}

/// Shape function of ops whose outputs have the shapes of their inputs, one to one.
pub(crate) fn shapes_of_inputs(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok((0..c.out_types.len()).map(|i| c.shape(i)).collect())
}

/// Shape function of single-output ops whose output has input 0's shape.
pub(crate) fn same_as_input0(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![c.shape(0)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::opdef::Op;

    #[test]
    fn every_registry_op_parses_back_and_no_name_is_registered_twice() {
        let mut seen = std::collections::HashSet::new();
        for r in RegOp::all() {
            let name = r.entry().def.name;
            assert!(seen.insert(name), "{name} registered twice");
            assert_eq!(Op::from_name(name), Some(Op::Reg(r)), "{name}");
            assert_eq!(Op::Reg(r).name(), name);
        }
        // The graph layer's own ops are not shadowed by registry entries.
        for own in [
            "Const",
            "Placeholder",
            "Identity",
            "Cast",
            "Shape",
            "Reshape",
            "AddV2",
        ] {
            assert!(!matches!(Op::from_name(own), Some(Op::Reg(_))), "{own}");
        }
    }

    #[test]
    fn generated_summaries_are_tensorflows() {
        let r = RegOp::from_name("Conv2D").map(|r| r.entry().def.summary());
        let s = r.unwrap_or_default();
        assert!(s.starts_with("Op<name=Conv2D; signature=input:T, filter:T -> output:T; attr=T:type,allowed=[DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE, DT_INT32]; attr=strides:list(int); attr=use_cudnn_on_gpu:bool,default=true; attr=padding:string,allowed=[\"SAME\", \"VALID\", \"EXPLICIT\"]; attr=explicit_paddings:list(int),default=[]; attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]; attr=dilations:list(int),default=[1, 1, 1, 1]>"), "{s}");
        let s = RegOp::from_name("ConcatV2")
            .map(|r| r.entry().def.summary())
            .unwrap_or_default();
        assert!(
            s.starts_with(
                "Op<name=ConcatV2; signature=values:N*T, axis:Tidx -> output:T; attr=N:int,min=2"
            ),
            "{s}"
        );
    }
}
