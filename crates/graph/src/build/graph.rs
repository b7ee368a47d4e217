//! [`Graph`] (a shared, growing list of nodes), [`Node`] (one node as built: its `NodeDef` parts,
//! output dtypes and inferred shapes), and the GraphDef export.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_proto::{
    node_def::ExperimentalDebugInfo, FullTypeDef, GraphDef, NodeDef, VersionDef,
};

use crate::attr::Attrs;
use crate::build::finalize::{finalize, InputInfo, Mode};
use crate::build::operation::Operation;
use crate::error::{Error, Result};
use crate::infer::{infer, InferInput, Known};
use crate::registry::opdef::Op;

/// TensorFlow 2.21's `TF_GRAPH_DEF_VERSION`, written as `versions.producer`.
pub const GRAPH_DEF_VERSION: i32 = 2474;
/// TensorFlow 2.21's `TF_GRAPH_DEF_VERSION_MIN_CONSUMER`.
pub const GRAPH_DEF_VERSION_MIN_CONSUMER: i32 = 0;

/// One end of an edge: output `index` of node `node` (an id in the graph).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Endpoint {
    pub(crate) node: usize,
    pub(crate) index: usize,
}

/// One node of a graph, as built: immutable once added.
///
/// TensorFlow's `Node`: name, op type, inputs, attrs (with every default written in), output
/// dtypes and the shapes graph-time inference found.
#[derive(Debug, Clone)]
pub struct Node {
    pub(crate) id: usize,
    pub(crate) name: String,
    pub(crate) op: String,
    pub(crate) inputs: Vec<Endpoint>,
    pub(crate) control_inputs: Vec<usize>,
    pub(crate) input_names: Vec<String>,
    pub(crate) device: String,
    pub(crate) attrs: Attrs,
    pub(crate) output_types: Vec<DataType>,
    pub(crate) output_shapes: Vec<PartialTensorShape>,
    pub(crate) output_values: Vec<Option<Known>>,
    /// Boxed, as the rare fields they are: a node is a few hundred bytes.
    pub(crate) experimental_type: Option<Box<FullTypeDef>>,
    pub(crate) debug_info: Option<Box<ExperimentalDebugInfo>>,
    /// The op, parsed once (`None` for an op tensorcast does not register).
    pub(crate) kind: Option<Op>,
}

impl Node {
    /// The node's id in its graph (creation order).
    pub fn id(&self) -> usize {
        self.id
    }
    /// The node's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The op type (`type_string()` in TensorFlow).
    pub fn op_type(&self) -> &str {
        &self.op
    }
    /// The inputs as a `NodeDef` lists them: `x`, `x:1`, then `^ctrl` sorted by name.
    pub fn inputs(&self) -> &[String] {
        &self.input_names
    }
    /// Number of data inputs.
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }
    /// The requested device (empty when unset).
    pub fn requested_device(&self) -> &str {
        &self.device
    }
    /// All attrs, sorted by name, defaults included.
    pub fn attrs(&self) -> &Attrs {
        &self.attrs
    }
    /// Number of outputs (0 for an op tensorcast does not know).
    pub fn num_outputs(&self) -> usize {
        self.output_types.len()
    }
    /// The dtype of output `i`.
    pub fn output_type(&self, i: usize) -> Option<DataType> {
        self.output_types.get(i).copied()
    }
    /// All output dtypes.
    pub fn output_types(&self) -> &[DataType] {
        &self.output_types
    }
    /// The inferred (partial) shape of output `i`.
    pub fn output_shape(&self, i: usize) -> Option<PartialTensorShape> {
        self.output_shapes.get(i).cloned()
    }
    /// True when tensorcast has a registration for the op (it does for every node built through a
    /// [`Scope`](crate::Scope); an imported node may name an op it does not know).
    pub fn is_registered(&self) -> bool {
        self.kind.is_some()
    }
    /// The node as a `NodeDef`.
    pub fn to_node_def(&self) -> NodeDef {
        NodeDef {
            name: self.name.clone(),
            op: self.op.clone(),
            input: self.input_names.clone(),
            device: self.device.clone(),
            attr: self.attrs.clone(),
            experimental_debug_info: self.debug_info.as_deref().cloned(),
            experimental_type: self.experimental_type.as_deref().cloned(),
        }
    }
}

pub(crate) struct GraphData {
    pub(crate) nodes: Vec<Arc<Node>>,
    pub(crate) by_name: HashMap<String, usize>,
    pub(crate) versions: VersionDef,
    /// What the graph may still keep of values known at graph time, in bytes.
    pub(crate) value_budget: u64,
    /// The imported GraphDef's function library, encoded, kept verbatim for export.
    pub(crate) library: Option<bytes::Bytes>,
    /// The imported GraphDef's debug info, encoded, kept verbatim for export.
    pub(crate) debug_info: Option<bytes::Bytes>,
}

/// A dataflow graph: nodes in creation order. Cloning shares it (as scopes built from one root do).
#[derive(Clone)]
pub struct Graph {
    pub(crate) inner: Arc<RwLock<GraphData>>,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph({} nodes)", self.read().nodes.len())
    }
}

impl Default for Graph {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything needed to add one node.
pub(crate) struct NodeSpec {
    pub(crate) name: String,
    pub(crate) op: String,
    pub(crate) inputs: Vec<Endpoint>,
    pub(crate) control_inputs: Vec<usize>,
    pub(crate) device: String,
    pub(crate) attrs: Attrs,
    pub(crate) experimental_type: Option<FullTypeDef>,
    pub(crate) debug_info: Option<ExperimentalDebugInfo>,
}

/// `PRODUCT[SHAPE_TENSOR[INT32|INT64]]`, the full type TensorFlow gives a `Shape` node.
fn shape_full_type(out_type: DataType) -> FullTypeDef {
    let leaf = FullTypeDef {
        type_id: if out_type == DataType::INT64 {
            208
        } else {
            207
        },
        ..Default::default()
    };
    let shape_tensor = FullTypeDef {
        type_id: 1005,
        args: vec![leaf],
        attr: None,
    };
    FullTypeDef {
        type_id: 3,
        args: vec![shape_tensor],
        attr: None,
    }
}

/// Builds a node: finalize attrs, infer shapes and values. `lookup` resolves producers.
pub(crate) fn make_node<'a>(
    id: usize,
    spec: NodeSpec,
    mode: Mode,
    producer_version: i32,
    budget: &mut u64,
    lookup: impl Fn(usize) -> Option<&'a Node>,
) -> Result<Node> {
    let NodeSpec {
        name,
        op,
        inputs,
        control_inputs,
        device,
        mut attrs,
        experimental_type,
        debug_info,
    } = spec;
    let mut infos = Vec::with_capacity(inputs.len());
    let mut infer_inputs = Vec::with_capacity(inputs.len());
    for ep in &inputs {
        // A loop's back edge (`NextIteration` into `Merge`) comes from a node imported after
        // this one: nothing is known of it yet (checked once it exists).
        let Some(p) = lookup(ep.node) else {
            if mode == Mode::Import {
                infos.push(InputInfo {
                    dtype: None,
                    source: String::new(),
                });
                infer_inputs.push(InferInput {
                    shape: PartialTensorShape::unknown_rank(),
                    value: None,
                });
                continue;
            }
            return Err(Error::Internal(format!("no node {}", ep.node)));
        };
        if p.kind.is_some() && ep.index >= p.output_types.len() {
            return Err(Error::InvalidOutput {
                node: name,
                index: i64::try_from(ep.index).unwrap_or(i64::MAX),
                source_node: p.name.clone(),
                num_outputs: p.output_types.len(),
            });
        }
        let dtype = p.output_types.get(ep.index).copied();
        infos.push(InputInfo {
            dtype,
            source: format!("{}:{}", p.name, ep.index),
        });
        infer_inputs.push(InferInput {
            shape: p
                .output_shapes
                .get(ep.index)
                .cloned()
                .unwrap_or_else(PartialTensorShape::unknown_rank),
            value: p.output_values.get(ep.index).cloned().unwrap_or(None),
        });
    }
    let mut input_names: Vec<String> = Vec::with_capacity(inputs.len() + control_inputs.len());
    for ep in &inputs {
        let Some(p) = lookup(ep.node).map(|n| n.name.as_str()) else {
            // A back edge, named once its producer is built.
            input_names.push(String::new());
            continue;
        };
        input_names.push(if ep.index == 0 {
            p.to_string()
        } else {
            format!("{p}:{}", ep.index)
        });
    }
    let mut controls: Vec<(String, usize)> = control_inputs
        .iter()
        .map(|&c| (lookup(c).map(|n| n.name.clone()).unwrap_or_default(), c))
        .collect();
    controls.sort();
    controls.dedup();
    input_names.extend(controls.iter().map(|(n, _)| format!("^{n}")));
    let control_inputs = controls.into_iter().map(|(_, c)| c).collect();

    let kind = Op::from_name(&op);
    let (output_types, inferred, experimental_type) = match kind {
        Some(k) => {
            let def = k.def();
            let output_types = finalize(def, &name, &mut attrs, &infos, mode)?;
            let inferred = infer(
                k,
                &attrs,
                &infer_inputs,
                &output_types,
                producer_version,
                budget,
            )?;
            let ft = match (experimental_type, k, mode) {
                (Some(ft), _, _) => Some(ft),
                (None, Op::Shape, Mode::Build) => Some(shape_full_type(output_types[0])),
                (None, _, _) => None,
            };
            (output_types, inferred, ft)
        }
        None if mode == Mode::Import => (Vec::new(), Default::default(), experimental_type),
        None => return Err(Error::OpNotRegistered(op)),
    };
    Ok(Node {
        id,
        name,
        op,
        inputs,
        control_inputs,
        input_names,
        device,
        attrs,
        output_types,
        output_shapes: inferred.shapes,
        output_values: inferred.values,
        experimental_type: experimental_type.map(Box::new),
        debug_info: debug_info.map(Box::new),
        kind,
    })
}

impl Graph {
    /// An empty graph (`versions { producer: 2474 }`).
    pub fn new() -> Self {
        Graph {
            inner: Arc::new(RwLock::new(GraphData {
                nodes: Vec::new(),
                by_name: HashMap::new(),
                versions: VersionDef {
                    producer: GRAPH_DEF_VERSION,
                    ..Default::default()
                },
                value_budget: crate::kernels::VALUE_BUDGET_BYTES,
                library: None,
                debug_info: None,
            })),
        }
    }

    pub(crate) fn read(&self) -> RwLockReadGuard<'_, GraphData> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, GraphData> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// True if both handles refer to the same graph.
    pub fn same_graph(&self, other: &Graph) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Adds a node built through a scope.
    pub(crate) fn add_node(&self, spec: NodeSpec) -> Result<Operation> {
        if !valid_node_name(&spec.name) {
            return Err(Error::InvalidNodeName(spec.name));
        }
        let mut g = self.write();
        if g.by_name.contains_key(&spec.name) {
            return Err(Error::DuplicateNodeName(spec.name));
        }
        let id = g.nodes.len();
        let producer = g.versions.producer;
        let mut budget = g.value_budget;
        let node = {
            let nodes = &g.nodes;
            make_node(id, spec, Mode::Build, producer, &mut budget, |i| {
                nodes.get(i).map(|n| n.as_ref())
            })?
        };
        g.value_budget = budget;
        g.by_name.insert(node.name.clone(), id);
        g.nodes.push(Arc::new(node));
        drop(g);
        Ok(Operation {
            graph: self.clone(),
            id,
        })
    }

    /// The node with id `id`.
    pub(crate) fn node(&self, id: usize) -> Option<Arc<Node>> {
        self.read().nodes.get(id).cloned()
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.read().nodes.len()
    }

    /// The operation named `name`.
    pub fn operation_by_name(&self, name: &str) -> Option<Operation> {
        let id = *self.read().by_name.get(name)?;
        Some(Operation {
            graph: self.clone(),
            id,
        })
    }

    /// Every operation, in creation order.
    pub fn operations(&self) -> Vec<Operation> {
        (0..self.num_nodes())
            .map(|id| Operation {
                graph: self.clone(),
                id,
            })
            .collect()
    }

    /// A snapshot of every node, in creation order.
    pub fn nodes(&self) -> Vec<Arc<Node>> {
        self.read().nodes.clone()
    }

    /// The graph's versions (`producer: 2474` for a graph built here; an imported GraphDef's
    /// versions for a graph imported into an empty one).
    pub fn versions(&self) -> VersionDef {
        self.read().versions.clone()
    }

    /// The graph as a `GraphDef`, in TensorFlow's Python form (no `library` field for a graph
    /// built here; an imported GraphDef's function library and debug info written back as they
    /// were read): serialize it with [`prost::Message::encode_to_vec`] for the bytes
    /// `tf.io.write_graph` writes.
    pub fn to_graph_def(&self) -> GraphDef {
        let g = self.read();
        GraphDef {
            node: g.nodes.iter().map(|n| n.to_node_def()).collect(),
            library: g.library.clone(),
            version: 0,
            versions: Some(g.versions.clone()),
            debug_info: g.debug_info.clone(),
        }
    }

    /// The encoded `FunctionDefLibrary` the graph carries (from an imported GraphDef), if any.
    pub fn function_library_bytes(&self) -> Option<bytes::Bytes> {
        self.read().library.clone()
    }

    /// [`Graph::to_graph_def`] serialized: deterministic, byte-identical to TensorFlow's
    /// `SerializeToString(deterministic=True)` of the same graph.
    pub fn to_graph_def_bytes(&self) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.to_graph_def())
    }
}

impl Error {
    /// The same error, attributed to `node` (for run-time errors that name a node).
    pub(crate) fn at_node(mut self, n: &Node) -> Error {
        match &mut self {
            Error::Kernel { node, location, .. }
            | Error::NoKernel { node, location, .. }
            | Error::AllocationLimit { node, location, .. }
            | Error::ConstTypeMismatch { node, location, .. } => {
                node.clone_from(&n.name);
                *location = node_location(n).into();
            }
            Error::MissingFeed { location, .. } => *location = node_location(n).into(),
            _ => {}
        }
        self
    }
}

/// TensorFlow's `FormatNodeDefForError`: `{{node NAME}}`, or the node's original names from
/// its `experimental_debug_info`, each preceded by `{{function_node F}}` while there are function
/// names. TensorFlow keeps both lists as sorted sets by the time a node runs (observed: they are
/// sorted and deduplicated independently, then paired by position).
pub(crate) fn node_location(n: &Node) -> String {
    fn sorted(v: &[String]) -> Vec<&str> {
        let mut v: Vec<&str> = v.iter().map(String::as_str).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
    match &n.debug_info {
        Some(d) if !d.original_node_names.is_empty() => {
            let names = sorted(&d.original_node_names);
            let funcs = sorted(&d.original_func_names);
            let mut out = String::new();
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if let Some(f) = funcs.get(i) {
                    out.push_str(&format!("{{{{function_node {f}}}}}"));
                }
                out.push_str(&format!("{{{{node {name}}}}}"));
            }
            out
        }
        _ => format!("{{{{node {}}}}}", n.name),
    }
}

/// TensorFlow's node-name rule at import: `[A-Za-z0-9.][A-Za-z0-9_./>-]*`.
pub(crate) fn valid_node_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphanumeric() || first == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '>' | '-'))
}
