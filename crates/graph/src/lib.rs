//! TensorFlow's graph layer for tensorcast: build graphs as TensorFlow's C++ client API does,
//! write them as `GraphDef`s TensorFlow loads byte for byte, read TensorFlow's, and run them.
//!
//! # Design
//!
//! * **C++ semantics, Rust errors.** [`Scope`] follows TensorFlow's C++ `Scope`: the same naming
//!   rule (case-sensitive, `Const`, `Const_1`, the collision loop, sub-scopes sharing the
//!   parent's name map), implicit constants named `Const/Const`, defaults written into every
//!   node, control inputs sorted by name. Every op constructor returns a `Result` with
//!   TensorFlow's graph-time message, and the scope also keeps TensorFlow's sticky status, so
//!   code ported from C++ can check [`Scope::ok`] once at the end.
//! * **Shape inference at build time**, over partial shapes (unknown dims, unknown rank), with
//!   the constant and partial-value propagation (`Const`, `Shape`, `Cast`, `Identity`, small
//!   constant subgraphs) that decides `BroadcastTo`'s and `Reshape`'s output.
//! * **Byte-identical GraphDefs.** [`Graph::to_graph_def_bytes`] is TensorFlow's deterministic
//!   serialization (attrs sorted, fields in tag order, `versions { producer: 2474 }`, the Python
//!   form without `library`).
//! * **Import validates as TensorFlow does** ([`import_graph_def`]): names, duplicates, unknown
//!   inputs, output indices, control-input order, versions, attrs, input dtypes, shape
//!   functions, cycles. Unknown attrs are kept; an op tensorcast does not know imports and is
//!   reported when a run needs it.
//! * **Sessions** ([`Session`]) run only what the fetches need, free each value after its last
//!   use, and keep `BroadcastTo` lazy for element-wise consumers (TensorFlow documents that a
//!   broadcast in a graph may be fused into the operation that consumes it).
//! * **Control flow, two ways.** A run that needs TensorFlow 1's loop and conditional ops
//!   (`Enter`, `Exit`, `Merge`, `Switch`, `NextIteration`, `LoopCond`) goes to a *dynamic
//!   dataflow executor* (`execute/dataflow.rs`) instead of the static plan: nodes get
//!   TensorFlow's frames at plan time, and at run time each frame has instances and numbered
//!   iterations holding pending counts and input values; the untaken side of a `Switch` is a
//!   dead tensor that propagates as TensorFlow's executor propagates it (a `Merge` fires on its
//!   first live input), `is_constant` `Enter`s reach every iteration, and fetching a dead tensor
//!   fails with TensorFlow's `Retval[i] does not have value`. The dynamic executor was chosen
//!   over rewriting loops into `While`-style sub-plans because TF1 graphs need not be
//!   well-structured (conds inside loops, loops inside untaken branches, exits fetched
//!   directly), and frames reproduce TensorFlow's semantics for all of them; graphs without
//!   those ops never see it and keep the static plan and its speed. Import accepts the cycles
//!   loops make (a `NextIteration` into a `Merge`) and refuses any other cycle with
//!   TensorFlow's `N nodes in a cycle`. TensorFlow 2's functional ops (`While`,
//!   `StatelessWhile`, `If`, `StatelessIf`, `Case`, `StatelessCase`) call functions of the graph's library: each function
//!   is compiled once into a session of its own (its body inlined and planned, on the caller's
//!   variables) and that plan runs per iteration or branch (`execute/calls.rs`). TensorLists are
//!   scalar `variant` tensors encoded as TensorFlow encodes them (`registry/tensor_list.rs`).
//!
//! # Adding an op
//!
//! Each op tensorcast registers is a variant of one enum (`Op`, in `registry/opdef.rs`), parsed once from
//! a node's type string when the node is made; every stage - attr finalisation (the op's
//! `OpDef` row in `OPS`), shape inference (`infer/shape_fns.rs`), graph-time values
//! (`infer/values.rs`), the session's kernels (`kernels.rs`) and the rewrite pass -
//! matches on it with no wildcard, so a stage that forgets a new op does not compile. An
//! element-wise binary op needs no variant of its own: it is a `BinaryOp` of the core crate (its
//! kernel and type list) plus its `binary!` row in `OPS`, and every stage handles it as
//! `Op::Binary`. Function calls (`PartitionedCall`, `StatefulPartitionedCall`) are not ops here:
//! a session inlines them (`import/functions.rs`) before it plans. Control-flow ops are registry
//! entries too (`registry/control_flow.rs`); what `Enter` ... `Merge` do beyond their identity
//! kernels is the dataflow executor's.
//!
//! # TensorFlow's C++ and Java names and ours
//!
//! | C++ (`tensorflow::ops`) | Java (`org.tensorflow.op`) | tensorcast |
//! |---|---|---|
//! | `Scope::NewRootScope()` | `Ops.create()` / `Scope` | [`Scope::new_root_scope`] |
//! | `scope.NewSubScope("x")` | `scope.withSubScope("x")` | [`Scope::new_sub_scope`] |
//! | `scope.WithOpName("x")` | `scope.withName("x")` | [`Scope::with_op_name`] |
//! | `scope.WithControlDependencies(ops)` | `scope.withControlDependencies(ops)` | [`Scope::with_control_dependencies`] |
//! | `scope.ok()`, `scope.status()` | exceptions | [`Scope::ok`], [`Scope::status`] (and each op's `Result`) |
//! | `ops::Bitcast(scope, input, type)` | `Bitcast.create(scope, input, type)` | [`ops::Bitcast::new`] |
//! | `ops::BroadcastTo(scope, input, shape)` | `BroadcastTo.create(scope, input, shape)` | [`ops::BroadcastTo::new`] / [`ops::BroadcastTo::create`] |
//! | `bitcast.operation` | `op` | the `operation` field ([`Operation`]) |
//! | `bitcast.output` / `operator Output()` | `output()` / `asOutput()` | the `output` field, `as_output()`, `From<_> for Output` |
//! | `operator Input()` | `Operand<T>` | `From<_> for` [`Input`] |
//! | `bitcast.node()` | `op.name()`, `op.type()` | `node()` ([`Node`]: name, op type, inputs, attrs, dtypes, shapes) |
//! | `Output::name()` (`"op:0"`) | `output.name()` | [`Output::name`] |
//! | `ClientSession::Run` | `Session.runner()` | [`Session::run`] |
//!
//! # Example: C++'s `ops::Bitcast` and Java's `BroadcastTo.create`, in Rust
//!
//! ```
//! use tensorcast_core::{DataType, Tensor};
//! use tensorcast_graph::ops::{Bitcast, BroadcastTo, Const, Equal, Placeholder};
//! use tensorcast_graph::{Scope, Session};
//!
//! let root = Scope::new_root_scope();
//! // C++: auto b = ops::Bitcast(root, ops::Const(root, {1.0f, 2.0f}), DT_INT32);
//! let c = Const::new(&root, [1.0f32, 2.0])?;
//! let b = Bitcast::new(&root, &c, DataType::INT32)?;
//! assert_eq!(b.node().name(), "Bitcast");
//! assert_eq!(b.output.name(), "Bitcast:0");
//!
//! // Java: BroadcastTo.create(scope, x, shape) - an implicit Const for the shape.
//! let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT)?;
//! let y = BroadcastTo::create(&root, &x, [2i32, 2])?;
//! // The implicit shape constant: sub-scope `Const` is taken by the Const above, so `Const_1`.
//! assert_eq!(y.node().inputs(), ["x", "Const_1/Const"]);
//! assert_eq!(y.as_output().shape().to_string(), "[2,2]");
//! let eq = Equal::new(&root, &y, 1.0f32)?;
//! assert!(root.ok());
//!
//! let session = Session::new(root.graph());
//! let out = session.run(&[("x", Tensor::vector(&[1.0f32, 2.0]))], &[&eq.z.name()], &[])?;
//! assert_eq!(out[0].as_slice::<bool>()?, &[true, false, true, false]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

mod attr;
mod build;
mod error;
mod execute;
mod import;
mod infer;
mod kernels;
mod plan;
mod registry;
mod rewrite;
mod shape;

pub use build::ops;

pub use attr::{summarize as summarize_attr, Attrs};
pub use build::graph::{Graph, Node, GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER};
pub use build::input::Input;
pub use build::operation::{Operation, Output};
pub use build::scope::Scope;
pub use error::{Code, Error, Result};
#[cfg(feature = "saved-model")]
pub use execute::saved_model::SavedModel;
pub use execute::{
    ops_without_kernel, RunStats, Session, SessionOptions, DEFAULT_MAX_CONSTANT_BYTES,
};
pub use import::{import_graph_def, import_graph_def_bytes};
pub use rewrite::{optimize_graph_def, optimize_graph_def_owned};
