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
//! # Layout: one folder per stage
//!
//! The folders follow a graph through the crate, and each stage uses only the ones before it
//! (checked by grepping each folder's `use crate::` lines; no stage names a later one):
//!
//! | stage | what it holds |
//! |---|---|
//! | `error.rs`, `attr.rs` (leaves) | [`Error`] with TensorFlow's texts; node attrs and their reading |
//! | `registry/` | every op as one entry: `OpDef` (`ops.spec`, generated from TensorFlow's registry as `REGISTER_OP` spec lines, parsed once by `spec.rs`), shape function, kernel, fold flag; the `Op` enum (`opdef.rs`) |
//! | `kernels.rs` (leaf of the run side) | the kernels of the graph layer's own ops (`Const`, `Identity`, the binary ops, ...) |
//! | `infer/` | shape inference and values known at graph time |
//! | `build/` | [`Graph`] and [`Node`], node finalisation (attrs checked and defaulted), [`Scope`], the op classes ([`ops`]), [`Operation`], [`Output`], [`Input`], [`TensorId`] |
//! | `import/` | GraphDef import with TensorFlow's validation (binary; text through the proto crate), function libraries and call inlining |
//! | `plan/` | a run's plan: needed nodes, kernels resolved, value slots; the frames of a TF1 control-flow plan |
//! | `execute/` | [`Session`], the static executor, the dataflow executor, parallel branches, function calls (`While`, `If`, `Case`), [`SavedModel`] |
//! | `rewrite.rs` | [`optimize_graph_def`] |
//!
//! # Adding an op
//!
//! Every stage reaches an op through one value, `Op` (`registry/opdef.rs`), parsed once from a
//! node's type string when the node is made; each stage matches on it with no wildcard, so a
//! stage that forgets an op does not compile. Most ops are `Op::Reg`: one `Entry` of the
//! registry holds all a stage needs - import validation and attr defaults read its `OpDef`,
//! inference calls its shape function (and folds it at graph time when it is marked `fold`),
//! the planner takes its kernel, and an op without a kernel is listed by
//! [`ops_without_kernel`]. Adding an element-wise op end to end is therefore:
//!
//! 1. its kernel, in the kernels crate (a unary op: a `UnaryOp` variant and its function);
//! 2. one registry entry, e.g. `u(op_def("Sin"), unary_kernel!(UnaryOp::Sin))` in
//!    `registry/math.rs` (unary ops keep their input's shape: `same_as_input0`), whose `OpDef`
//!    spec is generated: the op's name goes in `OPS` of `registry/gen_op_defs.py`, which
//!    writes `ops.spec` (a plain table beside it) from TensorFlow's own registry.
//!
//! An element-wise *binary* op is one of the core crate's `BinaryOp`s (its kernel and type
//! list) and its `binary!` row in `OPS` (`registry/opdef.rs`); every stage handles it as
//! `Op::Binary`, with broadcasting. Function calls (`PartitionedCall`,
//! `StatefulPartitionedCall`) are not ops here: a session inlines them (`import/functions.rs`)
//! before it plans. Control-flow ops are registry entries too (`registry/control_flow.rs`);
//! what `Enter` ... `Merge` do beyond their identity kernels is the dataflow executor's.
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

pub use build::ops;

pub use attr::{summarize as summarize_attr, Attrs};
pub use build::graph::{Graph, Node, GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER};
pub use build::input::Input;
pub use build::operation::{Operation, Output};
pub use build::scope::Scope;
pub use build::tensor_id::{parse_tensor_name, TensorId};
pub use error::{Code, Error, Result};
#[cfg(feature = "saved-model")]
pub use execute::saved_model::SavedModel;
pub use execute::{
    ops_without_kernel, NodeTime, RunStats, Session, SessionOptions, DEFAULT_MAX_ALLOCATION_BYTES,
    DEFAULT_MAX_CONSTANT_BYTES,
};
pub use import::{import_graph_def, import_graph_def_bytes};
pub use registry::run::Cancellation;
pub use rewrite::{optimize_graph_def, optimize_graph_def_owned};
