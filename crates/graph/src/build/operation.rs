//! [`Operation`] (a handle to a node) and [`Output`] (an operation plus an output index).

use std::fmt;
use std::sync::Arc;

use tensorcast_core::{DataType, PartialTensorShape};

use crate::build::graph::{Endpoint, Graph, Node};

/// A node of a graph, as a handle (TensorFlow's `Operation`). Cheap to clone.
#[derive(Clone)]
pub struct Operation {
    pub(crate) graph: Graph,
    pub(crate) id: usize,
}

impl PartialEq for Operation {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.graph.same_graph(&other.graph)
    }
}

impl Eq for Operation {}

impl std::hash::Hash for Operation {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl fmt::Debug for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Operation({})", self.name())
    }
}

impl Operation {
    /// The node behind the handle: name, op type, inputs, attrs, output dtypes and shapes.
    pub fn node(&self) -> Arc<Node> {
        // Nodes are never removed, so an Operation's id always resolves.
        self.graph
            .node(self.id)
            .unwrap_or_else(|| Arc::new(placeholder_node()))
    }
    /// The graph the operation belongs to.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }
    /// The node's name.
    pub fn name(&self) -> String {
        self.node().name.clone()
    }
    /// The op type.
    pub fn op_type(&self) -> String {
        self.node().op.clone()
    }
    /// Number of data inputs.
    pub fn num_inputs(&self) -> usize {
        self.node().inputs.len()
    }
    /// The output feeding data input `i`.
    pub fn input(&self, i: usize) -> Option<Output> {
        let ep = *self.node().inputs.get(i)?;
        Some(Output::from_endpoint(&self.graph, ep))
    }
    /// The control inputs, sorted by name.
    pub fn control_inputs(&self) -> Vec<Operation> {
        self.node()
            .control_inputs
            .iter()
            .map(|&id| Operation {
                graph: self.graph.clone(),
                id,
            })
            .collect()
    }
    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.node().output_types.len()
    }
    /// Output `index` of this operation (not range-checked: a later [`Output::dtype`] is `None`).
    pub fn output(&self, index: usize) -> Output {
        Output {
            op: self.clone(),
            index,
        }
    }
    /// The dtype of output `i`.
    pub fn output_type(&self, i: usize) -> Option<DataType> {
        self.node().output_types.get(i).copied()
    }
}

fn placeholder_node() -> Node {
    Node {
        id: usize::MAX,
        name: String::new(),
        op: String::new(),
        inputs: Vec::new(),
        control_inputs: Vec::new(),
        input_names: Vec::new(),
        device: String::new(),
        attrs: Default::default(),
        output_types: Vec::new(),
        output_shapes: Vec::new(),
        output_values: Vec::new(),
        experimental_type: None,
        debug_info: None,
        kind: None,
    }
}

/// One output of an operation: the symbolic handle of a tensor (TensorFlow's `Output`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Output {
    pub(crate) op: Operation,
    pub(crate) index: usize,
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Output({})", self.name())
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Output {
    pub(crate) fn from_endpoint(graph: &Graph, ep: Endpoint) -> Output {
        Output {
            op: Operation {
                graph: graph.clone(),
                id: ep.node,
            },
            index: ep.index,
        }
    }
    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint {
            node: self.op.id,
            index: self.index,
        }
    }
    /// The operation producing it.
    pub fn op(&self) -> &Operation {
        &self.op
    }
    /// Its node.
    pub fn node(&self) -> Arc<Node> {
        self.op.node()
    }
    /// The output index.
    pub fn index(&self) -> usize {
        self.index
    }
    /// `node:index`, always with the index (`Const:0`).
    pub fn name(&self) -> String {
        format!("{}:{}", self.op.name(), self.index)
    }
    /// Its dtype (`None` for an index the op does not have, or an op tensorcast does not know).
    pub fn dtype(&self) -> Option<DataType> {
        self.op.output_type(self.index)
    }
    /// The shape graph-time inference found (unknown rank when nothing is known).
    pub fn shape(&self) -> PartialTensorShape {
        self.node()
            .output_shape(self.index)
            .unwrap_or_else(PartialTensorShape::unknown_rank)
    }
}

impl From<Operation> for Output {
    /// Output 0 of the operation.
    fn from(op: Operation) -> Self {
        Output { op, index: 0 }
    }
}
