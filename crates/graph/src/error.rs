//! The graph layer's error type: one variant per failure, `Display` printing TensorFlow's text.

use tensorcast_core::DataType;

pub use tensorcast_core::Code;

/// `DT_FLOAT`-style name of a dtype, as TensorFlow's attr messages print it.
pub(crate) fn enum_name(dtype: DataType) -> String {
    dtype
        .proto_name()
        .unwrap_or_else(|| format!("unknown dtype enum ({})", dtype.number()))
}

/// `N ops have no kernel in tensorcast: A (3 nodes), B (1 node)`.
fn missing_kernels_message(ops: &[(String, usize)]) -> String {
    let list: Vec<String> = ops
        .iter()
        .map(|(op, n)| format!("{op} ({n} node{})", if *n == 1 { "" } else { "s" }))
        .collect();
    format!(
        "{} op{} this run needs {} no kernel in tensorcast: {}",
        ops.len(),
        if ops.len() == 1 { "" } else { "s" },
        if ops.len() == 1 { "has" } else { "have" },
        list.join(", ")
    )
}

fn names(list: &[DataType]) -> String {
    list.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
}

/// An error from building, importing or running a graph.
///
/// `Display` prints TensorFlow's message (for construction errors, the part before TensorFlow's
/// node-context suffix; the node is in the variant's fields where it matters); [`Error::code`]
/// gives TensorFlow's status code.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- shape functions -------------------------------------------------------------------
    /// Two dims that must agree do not (`Merge`, broadcasting).
    #[error("Dimensions must be equal, but are {0} and {1}")]
    DimensionsMustBeEqual(i64, i64),
    /// `WithRank`.
    #[error("Shape must be rank {expected} but is rank {actual}")]
    RankMustBe {
        /// The rank required.
        expected: usize,
        /// The rank found.
        actual: usize,
    },
    /// `WithRankAtLeast`.
    #[error("Shape must be at least rank {expected} but is rank {actual}")]
    RankAtLeast {
        /// The lowest rank allowed.
        expected: usize,
        /// The rank found.
        actual: usize,
    },
    /// `WithRankAtMost`.
    #[error("Shape must be at most rank {expected} but is rank {actual}")]
    RankAtMost {
        /// The highest rank allowed.
        expected: usize,
        /// The rank found.
        actual: usize,
    },
    /// `Divide(.., evenly)`.
    #[error("Dimension size must be evenly divisible by {divisor} but is {value}")]
    NotEvenlyDivisible {
        /// The divisor.
        divisor: i64,
        /// The dimension that is not a multiple of it.
        value: i64,
    },
    /// A shape tensor holds a value below -1.
    #[error("Invalid value in tensor used for shape: {0}")]
    InvalidShapeValue(i64),
    /// A shape tensor is neither int32 nor int64.
    #[error("Input tensor must be int32 or int64, but was {}", .0.name())]
    ShapeTensorType(DataType),
    /// Reshape's element counts differ.
    #[error("Cannot reshape a tensor with {input_elements} elements to shape {shape} ({output_elements} elements)")]
    CannotReshape {
        /// Elements of the input.
        input_elements: i64,
        /// The requested shape (`?` for unknown dims).
        shape: String,
        /// Elements of the requested shape.
        output_elements: i64,
    },
    /// Bitcast to a wider type whose last dim does not match the size ratio.
    #[error("Cannot bitcast from {} to {} due to shape. {last} does not match {ratio}", .from.number(), .to.number())]
    BitcastShape {
        /// The input dtype.
        from: DataType,
        /// The output dtype.
        to: DataType,
        /// The input's last dim.
        last: i64,
        /// The ratio of the sizes.
        ratio: i64,
    },
    /// A Const value's shape has unknown dims.
    #[error("Shape {0} is not fully defined")]
    ShapeNotFullyDefined(String),
    // ---- attrs and node building -----------------------------------------------------------
    /// A type attr outside the op's allowed list.
    #[error("Value for attr '{attr}' of {} is not in the list of allowed values: {}", .dtype.name(), names(.allowed))]
    NotInAllowedList {
        /// The attr.
        attr: String,
        /// Its value.
        dtype: DataType,
        /// The allowed types, in the OpDef's order.
        allowed: Vec<DataType>,
    },
    /// Required attrs are missing (TensorFlow names them all, sorted: `NodeDef missing attrs
    /// 'padding', 'strides' from ...`).
    #[error("NodeDef missing attr{} '{}' from {op_summary}", if .attrs.len() > 1 { "s" } else { "" }, .attrs.join("', '"))]
    MissingAttr {
        /// The attrs, sorted.
        attrs: Vec<String>,
        /// TensorFlow's `SummarizeOpDef` of the op.
        op_summary: String,
    },
    /// Two inputs imply different values of one type attr.
    #[error("Inconsistent values for attr '{attr}' {} vs. {}", enum_name(*.first), enum_name(*.second))]
    InconsistentAttr {
        /// The attr.
        attr: String,
        /// The value implied first.
        first: DataType,
        /// The contradicting value.
        second: DataType,
    },
    /// An attr holds a value of the wrong kind.
    #[error("AttrValue had value with type '{actual}' when '{expected}' expected")]
    AttrKind {
        /// The attr.
        attr: String,
        /// The kind the OpDef declares.
        expected: &'static str,
        /// The kind found.
        actual: &'static str,
    },
    /// The op has no registration in tensorcast (TensorFlow: NotFound at import).
    #[error("Op type not registered '{0}' in binary running on tensorcast. Make sure the Op and Kernel are registered in the binary running in this process.")]
    OpNotRegistered(String),
    /// Wrong number of data inputs for the op.
    #[error("NodeDef expected inputs '{expected}' do not match {actual} inputs specified; {op_summary}; NodeDef: {{{{node {node}}}}}")]
    InputCount {
        /// The node.
        node: String,
        /// The OpDef's input types, `, `-joined.
        expected: String,
        /// Inputs given.
        actual: usize,
        /// `SummarizeOpDef`.
        op_summary: String,
    },
    /// An input's dtype contradicts the node's attrs (import).
    #[error("Input {index} of node {node} was passed {} from {source_name} incompatible with expected {}.", .actual.name(), .expected.name())]
    InputType {
        /// The input position.
        index: usize,
        /// The node.
        node: String,
        /// The dtype the producer gives.
        actual: DataType,
        /// The producer's output (`x:0`).
        source_name: String,
        /// The dtype the node expects.
        expected: DataType,
    },
    #[error("Node '{0}' does not specify an operation")]
    /// An imported node with an empty op type.
    NoOperation(String),
    /// An attr value TensorFlow's `ValidateAttrValue` refuses (a dtype enum that does not exist,
    /// a reference dtype), with TensorFlow's node and op context.
    #[error("{message}\n\t for attr '{attr}'\n\t; NodeDef: {{{{node {node}}}}}; {op_summary}")]
    InvalidAttrValue {
        /// What is wrong with the value.
        message: String,
        /// The attr.
        attr: String,
        /// The node.
        node: String,
        /// The op's `OpDef` summary.
        op_summary: String,
    },
    /// An attr value outside what the op allows (a string not in its list, an int or list
    /// below its minimum), with TensorFlow's node and op context.
    #[error("{message}\n\t; NodeDef: {{{{node {node}}}}}; {op_summary}")]
    AttrNotAllowed {
        /// What is wrong with the value.
        message: String,
        /// The node.
        node: String,
        /// The op's `OpDef` summary.
        op_summary: String,
    },
    /// An imported GraphDef whose producer version is older than any TensorFlow reads.
    #[error("GraphDef producer version {producer} below min producer {min} supported by TensorFlow 2.21.0.  Please regenerate your graph.")]
    ProducerTooOld {
        /// The GraphDef's `versions.producer`.
        producer: i32,
        /// TensorFlow's `TF_GRAPH_DEF_VERSION_MIN_PRODUCER`.
        min: i32,
    },
    /// An operation of another graph used where an operation of this graph is needed (a
    /// control dependency, colocation, an input).
    #[error("Operation {0} belongs to another graph")]
    ForeignOperation(String),
    /// Constant values a run (or a graph's inference) would decode exceed the budget set.
    #[error("the constants this run needs hold {needed} bytes, more than the limit of {limit} bytes set for constant values (SessionOptions::max_constant_bytes)")]
    ConstantBudget {
        /// Bytes the constants would take once decoded.
        needed: u64,
        /// The limit.
        limit: u64,
    },
    /// Ops a run needs that have no kernel here, each with how many nodes use it.
    #[error("{}", missing_kernels_message(.0))]
    MissingKernels(Vec<(String, usize)>),
    /// A function call that cannot be inlined (a function the library lacks, a list
    /// argument, a polymorphic body, calls nested without end).
    #[error("{0}")]
    Function(String),
    /// A node name is already in the graph (TensorFlow's C API).
    #[error("Duplicate node name in graph: '{0}'")]
    DuplicateNodeName(String),
    /// An `Input` value could not become a tensor.
    #[error("{0}")]
    InvalidInput(String),
    /// A SavedModel that cannot be loaded or a signature call that does not fit it.
    #[error("{0}")]
    SavedModel(String),
    /// A single-use scope was used twice, or a scope method was misused.
    #[error("{0}")]
    Scope(String),
    /// An `Output` from another graph was used.
    #[error("Output {0} belongs to another graph")]
    ForeignOutput(String),
    // ---- import ----------------------------------------------------------------------------
    /// A node name with characters TensorFlow does not allow.
    #[error("Node '{0}': Node name contains invalid characters")]
    InvalidNodeName(String),
    /// Two nodes of a GraphDef share a name.
    #[error("Node '{0}' is not unique")]
    NodeNotUnique(String),
    /// An input names a node the GraphDef does not have.
    #[error("Node '{node}': Unknown input node '{input}'")]
    UnknownInput {
        /// The consuming node.
        node: String,
        /// The input as written.
        input: String,
    },
    /// An input names an output index the producer does not have.
    #[error("Node '{node}': Connecting to invalid output {index} of source node {source_node} which has {num_outputs} outputs.")]
    InvalidOutput {
        /// The consuming node.
        node: String,
        /// The index asked for.
        index: i64,
        /// The producer.
        source_node: String,
        /// Its number of outputs.
        num_outputs: usize,
    },
    /// A control input is listed before a data input.
    #[error("Node '{0}': Control dependencies must come after regular dependencies")]
    ControlBeforeData(String),
    /// The graph has a cycle.
    #[error("{0} nodes in a cycle")]
    Cycle(usize),
    /// The GraphDef needs a newer consumer.
    #[error("GraphDef min consumer version {min_consumer} above current version {current} for TensorFlow 2.21.0.  Please upgrade TensorFlow.")]
    MinConsumer {
        /// The GraphDef's `min_consumer`.
        min_consumer: i32,
        /// Our version (2474).
        current: i32,
    },
    /// The GraphDef lists our version as a bad consumer.
    #[error("GraphDef disallows consumer version {0}.  Please upgrade TensorFlow: this version is likely buggy.")]
    BadConsumer(i32),
    /// The GraphDef bytes do not parse.
    #[error("Invalid GraphDef: {0}")]
    Decode(String),
    // ---- running ---------------------------------------------------------------------------
    /// A fetch or feed names a tensor the graph does not have.
    #[error("The name '{name}' refers to a Tensor which does not exist. The operation, '{op}', does not exist in the graph.")]
    UnknownTensor {
        /// The name as given.
        name: String,
        /// The op part of it.
        op: String,
    },
    /// A fetch or feed names an output index the op does not have.
    #[error("The name '{name}' refers to a Tensor which does not exist. The operation, '{op}', exists but only has {num_outputs} outputs.")]
    NoSuchOutput {
        /// The name as given.
        name: String,
        /// The op part of it.
        op: String,
        /// The op's number of outputs.
        num_outputs: usize,
    },
    /// A fetch or feed name that is not `op` or `op:index` (`a:b:0`, `x:-1`, `x:`), with the
    /// message of TensorFlow's Python client.
    #[error("The name '{0}' looks a like a Tensor name, but is not a valid one. Tensor names must be of the form \"<op_name>:<output_index>\".")]
    BadTensorName(String),
    /// A target names an op the graph does not have.
    #[error("The name '{0}' refers to an Operation not in the graph.")]
    UnknownOperation(String),
    /// A placeholder needed by the run was not fed.
    #[error("You must feed a value for placeholder tensor '{name}' with dtype {}{}", .dtype.name(), .shape.as_deref().map(|s| format!(" and shape {s}")).unwrap_or_default())]
    MissingFeed {
        /// The placeholder.
        name: String,
        /// TensorFlow's node context for it (see [`Error::full_message`]); empty until known.
        location: Box<str>,
        /// Its dtype.
        dtype: DataType,
        /// Its shape, when the rank is known.
        shape: Option<String>,
    },
    /// A fed tensor's dtype differs from the tensor it replaces.
    #[error("Cannot feed value of dtype {} for Tensor {name}, which has dtype {}", .actual.name(), .expected.name())]
    FeedType {
        /// The fed tensor name.
        name: String,
        /// The dtype fed.
        actual: DataType,
        /// The dtype of the graph's tensor.
        expected: DataType,
    },
    /// A fed tensor's shape is incompatible with the tensor it replaces.
    #[error("Cannot feed value of shape {actual} for Tensor {name}, which has shape {expected}")]
    FeedShape {
        /// The fed tensor name.
        name: String,
        /// The shape fed.
        actual: String,
        /// The graph's (partial) shape.
        expected: String,
    },
    /// The same tensor is fed twice.
    #[error("Tensor {0} fed more than once.")]
    DuplicateFeed(String),
    /// A Const node's value is not the dtype its `dtype` attr says.
    #[error("Type mismatch between value ({}) and dtype ({})", .value.name(), .dtype.name())]
    ConstTypeMismatch {
        /// The Const node.
        node: String,
        /// TensorFlow's node context for it (see [`Error::full_message`]); empty until known.
        location: Box<str>,
        /// The dtype of the value.
        value: DataType,
        /// The `dtype` attr.
        dtype: DataType,
    },
    /// An op tensorcast knows but has no kernel for (yet).
    #[error("No OpKernel was registered to support Op '{op}' used by {{{{node {node}}}}}")]
    NoKernel {
        /// The op type.
        op: String,
        /// The node.
        node: String,
        /// TensorFlow's node context for it; empty until known (not appended by
        /// [`Error::full_message`]: the message names the node already).
        location: Box<str>,
    },
    /// A kernel failed at run time; `Display` is the kernel's message.
    #[error("{source}")]
    Kernel {
        /// The node that failed.
        node: String,
        /// TensorFlow's node context for it (see [`Error::full_message`]); empty until known.
        location: Box<str>,
        /// The kernel's error.
        source: Box<tensorcast_core::Error>,
    },
    /// A proto that is not valid: a TensorProto that does not decode, a shape (an attr, a list
    /// item) that is not a valid partial shape - with TensorFlow's message.
    #[error("{0}")]
    Proto(#[from] tensorcast_proto::ProtoError),
    /// Control flow that does not form valid frames (TensorFlow's `InvalidArgument` texts:
    /// inputs from different frames, an `Exit` without its `Enter`, ...).
    #[error("{0}")]
    ControlFlow(String),
    /// A fetched tensor that the run left without a value (a dead tensor: the untaken side of
    /// a `Switch`, or anything computed from it); the index is the fetch's among the run's
    /// fetches sorted by name, as TensorFlow's session numbers them.
    #[error("Retval[{0}] does not have value")]
    DeadFetch(usize),
    /// A fetched tensor inside a loop frame, computed more than once (`node`: the
    /// `_retval_<op>_<output>_<index>` node TensorFlow's session fetches it through).
    #[error("Retval[{index}] has already been set.")]
    FetchSetTwice {
        /// The fetch's index among the run's fetches sorted by name.
        index: usize,
        /// The fetching node TensorFlow names.
        node: String,
    },
    /// The run was cancelled (its [`Cancellation`](crate::Cancellation) was set) before it
    /// finished: TensorFlow's text for a cancelled `Session::Run`.
    #[error("Run call was cancelled")]
    Cancelled,
    /// A kernel would allocate more, beyond the bytes of its inputs, than the run allows
    /// ([`SessionOptions::max_allocation_bytes`](crate::SessionOptions::max_allocation_bytes)):
    /// a size read from a value (a `Fill`'s dims, a `Range`'s bounds, a `TensorListReserve`'s
    /// element count) may not make a run of a few bytes of graph allocate gigabytes.
    #[error("{what} takes {bytes} bytes, more than the {limit} bytes a kernel may allocate beyond its inputs (SessionOptions::max_allocation_bytes)")]
    AllocationLimit {
        /// The node.
        node: String,
        /// TensorFlow's node context for it (see [`Error::full_message`]); empty until known.
        location: Box<str>,
        /// What would be allocated: TensorFlow's OOM text for a tensor (`OOM when allocating
        /// tensor with shape[...] and type float ...`), or the op's own words.
        what: String,
        /// The bytes it takes beyond the inputs' (saturating).
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A broken internal invariant (a bug in tensorcast, reported instead of a panic).
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// TensorFlow's status code for this error.
    pub fn code(&self) -> Code {
        match self {
            Error::OpNotRegistered(_) | Error::UnknownOperation(_) => Code::NotFound,
            Error::NoKernel { .. } | Error::MissingKernels(_) => Code::NotFound,
            Error::ConstantBudget { .. } | Error::AllocationLimit { .. } => Code::ResourceExhausted,
            Error::Cancelled => Code::Cancelled,
            Error::Kernel { source, .. } => source.code(),
            Error::Internal(_) | Error::FetchSetTwice { .. } => Code::Internal,
            _ => Code::InvalidArgument,
        }
    }

    /// The node a run-time error happened in, if it names one.
    pub fn node(&self) -> Option<&str> {
        match self {
            Error::Kernel { node, .. }
            | Error::NoKernel { node, .. }
            | Error::ConstTypeMismatch { node, .. }
            | Error::MissingFeed { name: node, .. }
            | Error::AllocationLimit { node, .. }
            | Error::FetchSetTwice { node, .. } => Some(node),
            _ => None,
        }
    }

    /// TensorFlow's full run-time text: the message (`Display`, what the conformance vectors
    /// record) followed by the node-context suffix TensorFlow's executor appends to an error of
    /// a node it ran, `"\n\t [[{{node NAME}}]]"` - or, for a node whose
    /// `experimental_debug_info` lists original node names, those names (each with its
    /// `{{function_node F}}` when it has a function name) as TensorFlow's
    /// `FormatNodeDefForError` writes them. This is the text of the status that TensorFlow's C
    /// API `TF_SessionRun` returns; Python's `Session.run` further prefixes
    /// `"Graph execution error:\n\n"` and a `Detected at node` traceback. Errors that do not
    /// come from running a node (unknown names, feed checks) have no suffix, and neither has
    /// [`Error::NoKernel`], whose message names the node already.
    pub fn full_message(&self) -> String {
        match self {
            Error::Kernel { location, .. }
            | Error::ConstTypeMismatch { location, .. }
            | Error::MissingFeed { location, .. }
            | Error::AllocationLimit { location, .. }
                if !location.is_empty() =>
            {
                format!("{self}\n\t [[{location}]]")
            }
            Error::FetchSetTwice { node, .. } => format!("{self}\n\t [[{{{{node {node}}}}}]]"),
            _ => self.to_string(),
        }
    }
}

/// Result with the graph [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
