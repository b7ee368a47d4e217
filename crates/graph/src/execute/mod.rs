//! [`Session`]: runs a graph on tensorcast's kernels (`run(feeds, fetches, targets)` with
//! `"op:k"` names, TensorFlow's messages).
//!
//! The first run of a (feeds, fetches, targets) signature builds a plan (`plan.rs`): only the
//! nodes the fetches and targets need, in dependency order, each kernel resolved once, value
//! slots with last-use moves so each intermediate is freed after its last consumer. Later runs
//! of the signature reuse it. With [`SessionOptions::optimize`] on (the default) a
//! `BroadcastTo` whose consumers can read it in place is never materialised: element-wise
//! consumers read the small input through broadcasting, `Cast` and same-size `Bitcast` run on
//! the small input (`Cast(BroadcastTo(x))` = `BroadcastTo(Cast(x))`), chains of `BroadcastTo`
//! and `Identity` collapse, and a `BroadcastTo` to its input's own shape is its input. With
//! [`SessionOptions::parallel`] on (the default) independent branches of big nodes run
//! concurrently (`parallel.rs`). Results and error messages are the same either way; a run-time
//! error carries its node ([`Error::node`]) and TensorFlow's node-context text
//! ([`Error::full_message`]).

mod calls;
pub(crate) mod dataflow;
pub(crate) mod executor;
mod parallel;
#[cfg(feature = "saved-model")]
pub(crate) mod saved_model;

use std::sync::{Arc, Mutex};

use tensorcast_core::Tensor;

use crate::build::graph::{Endpoint, Graph, Node};
use crate::build::operation::Output;
use crate::error::{Error, Result};
use crate::import::functions::Lowered;
use crate::plan::Plan;
use crate::registry::run::Cancellation;
use crate::registry::{Resources, Run};
use parallel::Parallel;

/// Options of a [`Session`].
#[derive(Debug, Clone, Copy)]
pub struct SessionOptions {
    /// Run the optimization passes: constant folding when a run is planned (nodes whose inputs
    /// are all constants are computed once, as grappler folds them) and lazy `BroadcastTo`;
    /// default true.
    pub optimize: bool,
    /// With `optimize`: run chains of `float` element-wise nodes (batch norm's scale and
    /// shift, `BiasAdd`, activations) as one pass over memory each, with the unfused nodes'
    /// bits, and fold a zero `Pad` read only by a `VALID` convolution into the convolution's
    /// `EXPLICIT` padding (same bits, given a finite constant filter); default true.
    pub fuse: bool,
    /// Run independent branches concurrently on the rayon pool when their steps are big enough
    /// (see [`SessionOptions::parallel_min_elements`]); default true. Results and errors are the
    /// same either way; with several failing branches the error is the one of the failing node
    /// that comes first in the run's dependency order (the one a one-at-a-time run reports).
    pub parallel: bool,
    /// A node whose inputs hold at least this many elements in all may run concurrently with
    /// other such nodes; smaller ones run at once on the calling thread. Default 32768.
    pub parallel_min_elements: u64,
    /// The most the constants a run needs may take once decoded, in bytes, all together
    /// (checked from their protos before any is decoded): a GraphDef of a few bytes may not
    /// make a run allocate gigabytes. Default 256 MiB; the CLI sets it from `--max-memory`.
    pub max_constant_bytes: u64,
    /// The most bytes one kernel may allocate beyond the bytes of its inputs when it sizes
    /// what it makes from values it reads: a `Fill`'s dims, a `Range`'s bounds, a `Tile`'s
    /// multiples, a `Pad`'s paddings, a `OneHot`'s depth, a materialised `BroadcastTo`, a
    /// `TensorListReserve`'s element count, the zeros of a `TensorListStack` of unset
    /// elements... (checked before the kernel allocates; a run of a model of a few hundred
    /// bytes may not ask for gigabytes, where TensorFlow aborts or commits memory the machine
    /// may not have). Past it a run fails with [`Error::AllocationLimit`]. Default 4 GiB; the
    /// CLI sets it from `--max-memory`.
    pub max_allocation_bytes: u64,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            optimize: true,
            fuse: true,
            parallel: true,
            parallel_min_elements: 1 << 15,
            max_constant_bytes: DEFAULT_MAX_CONSTANT_BYTES,
            max_allocation_bytes: DEFAULT_MAX_ALLOCATION_BYTES,
        }
    }
}

/// The default [`SessionOptions::max_allocation_bytes`]: 4 GiB.
pub const DEFAULT_MAX_ALLOCATION_BYTES: u64 = 4 << 30;

/// The default [`SessionOptions::max_constant_bytes`]: 256 MiB.
pub const DEFAULT_MAX_CONSTANT_BYTES: u64 = 1 << 28;

/// What one [`Session::run_with_stats`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Nodes whose kernel ran.
    pub nodes_run: usize,
    /// The most nodes whose kernels were running at the same moment.
    pub max_concurrent_nodes: usize,
    /// Rounds in which two or more nodes were handed to the pool together.
    pub parallel_rounds: usize,
}

/// One node's share of a [`Session::run_profiled`] run.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTime {
    /// The node's name (for a fused chain of element-wise nodes, its last node's).
    pub node: String,
    /// Its op type; a fused chain is `Fused(` its ops, in order, `)`.
    pub op: String,
    /// Wall time of its kernel, in seconds.
    pub seconds: f64,
}

impl NodeTime {
    fn of(step: &crate::plan::Step, took: std::time::Duration) -> Self {
        let op = match &step.kernel {
            crate::kernels::Kernel::Fused(f) => {
                let ops: Vec<&str> = f.parts.iter().map(|p| p.node.op_type()).collect();
                format!("Fused({})", ops.join(","))
            }
            crate::kernels::Kernel::ConvChain(c) => {
                let ops: Vec<&str> = std::iter::once(c.conv.op_type())
                    .chain(c.chain.parts.iter().map(|p| p.node.op_type()))
                    .collect();
                format!("Fused({})", ops.join(","))
            }
            crate::kernels::Kernel::ScaledSoftmax { .. } => "Fused(Mul,Softmax)".to_string(),
            _ => step.node.op_type().to_string(),
        };
        NodeTime {
            node: step.node.name().to_string(),
            op,
            seconds: took.as_secs_f64(),
        }
    }
}

/// The plans built so far, by run signature (at most [`MAX_PLANS`]; then the cache starts over).
#[derive(Default)]
struct PlanCache {
    entries: Vec<CachedPlan>,
}

struct CachedPlan {
    feeds: Vec<String>,
    fetches: Vec<String>,
    targets: Vec<String>,
    plan: Arc<Plan>,
}

const MAX_PLANS: usize = 64;

impl PlanCache {
    fn get(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Option<Arc<Plan>> {
        self.entries
            .iter()
            .find(|c| {
                c.feeds
                    .iter()
                    .map(String::as_str)
                    .eq(feeds.iter().map(|(n, _)| *n))
                    && c.fetches
                        .iter()
                        .map(String::as_str)
                        .eq(fetches.iter().copied())
                    && c.targets
                        .iter()
                        .map(String::as_str)
                        .eq(targets.iter().copied())
            })
            .map(|c| c.plan.clone())
    }
}

/// Runs a graph. Cheap to create; holds a handle to the graph (nodes added later are runnable).
///
/// The first run of each (feeds, fetches, targets) signature builds a plan of the nodes to run
/// - pruned, ordered, kernels resolved (a `Const` decoded once), value slots assigned - which
///   later runs of the same signature reuse, as TensorFlow's `DirectSession` caches an executor
///   per signature. Clones of a session share its plans.
///
/// Threads: kernels with enough work split it across rayon's pool (the global one, or the
/// pool of the thread that runs the session), small ones run on the calling thread. A thread
/// outside the pool that starts a split kernel hands it to the pool and sleeps until it is
/// done, a wake-up and a sleep per kernel (tens of microseconds on a virtual machine). For
/// the lowest latency on graphs of small ops, make the thread that runs the session one of
/// the pool's, as `tensorcast graph run` and `graph bench` do (with two threads or more: a
/// pool whose only thread is yours never runs what other threads queue while yours waits):
///
/// ```
/// // At start-up, on the thread that will call `Session::run`.
/// let _ = rayon::ThreadPoolBuilder::new().use_current_thread().build_global();
/// ```
#[derive(Clone)]
pub struct Session {
    graph: Graph,
    options: SessionOptions,
    plans: Arc<Mutex<PlanCache>>,
    /// The graph with its function calls inlined (built when a run first needs it, for the
    /// graph as it had this many nodes).
    lowered: Arc<Mutex<LoweredCache>>,
    /// The session's resource variables (`VarHandleOp` / `ReadVariableOp` / `AssignVariableOp`).
    resources: Arc<Resources>,
    /// The graph's function library as `While`/`If`/`Case` call it (built when a run first
    /// needs it; `None` in the sessions of compiled functions, which use their caller's).
    functions: Option<Arc<Mutex<Option<Arc<calls::FunctionLibrary>>>>>,
}

/// The lowered graph of a session, for the node count it was built at (`None`: the graph
/// calls no function).
type LoweredCache = Option<(usize, Option<Arc<Lowered>>)>;

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("graph", &self.graph)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `graph` with default options.
    pub fn new(graph: &Graph) -> Session {
        Session::with_options(graph, SessionOptions::default())
    }

    /// A session with `options`.
    pub fn with_options(graph: &Graph, options: SessionOptions) -> Session {
        Session {
            graph: graph.clone(),
            options,
            plans: Arc::default(),
            lowered: Arc::default(),
            resources: Arc::default(),
            functions: Some(Arc::default()),
        }
    }

    /// The session of a compiled function: its caller's variables and functions.
    pub(crate) fn for_function(
        graph: &Graph,
        options: SessionOptions,
        resources: Arc<Resources>,
    ) -> Session {
        Session {
            graph: graph.clone(),
            options,
            plans: Arc::default(),
            lowered: Arc::default(),
            resources,
            functions: None,
        }
    }

    /// Makes the graph's function library the one its calls run (when it has one).
    fn attach_functions(&self) -> Result<()> {
        let Some(slot) = &self.functions else {
            return Ok(());
        };
        let Some(bytes) = self.graph.function_library_bytes() else {
            return Ok(());
        };
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if slot.as_ref().is_some_and(|l| *l.bytes() == bytes) {
            return Ok(());
        }
        let lib = Arc::new(calls::FunctionLibrary::new(
            bytes,
            self.resources.clone(),
            self.options,
        )?);
        let weak: std::sync::Weak<dyn crate::registry::Functions> = {
            let dyn_lib: Arc<dyn crate::registry::Functions> = lib.clone();
            Arc::downgrade(&dyn_lib)
        };
        self.resources.set_functions(weak);
        *slot = Some(lib);
        Ok(())
    }

    /// Sets the value of the resource variable `name` (a `VarHandleOp`'s `shared_name`, or its
    /// node name when that is empty; `container/name` for a container other than the default),
    /// as `AssignVariableOp` would: what restoring a checkpoint into the session does.
    pub fn assign_variable(&self, name: &str, value: Tensor) {
        self.resources.set(name, value);
    }

    /// The value of the resource variable `name`, if it has one.
    pub fn variable(&self, name: &str) -> Option<Tensor> {
        self.resources.get(name)
    }

    /// Number of resource variables with a value.
    pub fn num_variables(&self) -> usize {
        self.resources.len()
    }

    /// Feeds `feeds` (`"x:0"` or `"x"` names), runs what `fetches` and `targets` need, and
    /// returns the fetched tensors in order. A fetch without `:k` means output 0.
    ///
    /// # Errors
    /// TensorFlow's messages: unknown names, a placeholder not fed, a fed dtype or shape that
    /// does not fit, and any kernel's error (with [`Error::node`] naming the node and
    /// [`Error::full_message`] giving TensorFlow's text with the node-context suffix).
    pub fn run(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Vec<Tensor>> {
        self.run_with_stats(feeds, fetches, targets)
            .map(|(out, _)| out)
    }

    /// [`Session::run`], also returning what the run did (nodes run, how many ran at once).
    ///
    /// # Errors
    /// As [`Session::run`].
    pub fn run_with_stats(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<(Vec<Tensor>, RunStats)> {
        let run = Run::new(&self.resources, self.options.max_allocation_bytes, None);
        self.run_in(feeds, fetches, targets, &run)
    }

    /// [`Session::run`] that stops with [`Error::Cancelled`] (`Run call was cancelled`) once
    /// `cancel` is set (from another thread: a Ctrl-C handler, a timeout). The flag is read
    /// before each node, each iteration of a loop and each function call, so a run that never
    /// ends (a `While` whose condition stays true) stops too; one long kernel finishes first.
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// use tensorcast_graph::ops::{AddV2, Placeholder};
    /// use tensorcast_graph::{Cancellation, Error, Scope, Session};
    /// let s = Scope::new_root_scope();
    /// let x = Placeholder::new(&s.with_op_name("x"), DataType::FLOAT)?;
    /// AddV2::new(&s.with_op_name("y"), &x, &x)?;
    /// let session = Session::new(s.graph());
    /// let cancel = Cancellation::new();
    /// let x = Tensor::scalar_of(1.0f32);
    /// assert!(session.run_cancellable(&[("x", x.clone())], &["y"], &[], &cancel).is_ok());
    /// cancel.cancel();
    /// let e = session.run_cancellable(&[("x", x)], &["y"], &[], &cancel).unwrap_err();
    /// assert_eq!(e, Error::Cancelled);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Session::run`], and [`Error::Cancelled`].
    pub fn run_cancellable(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
        cancel: &Cancellation,
    ) -> Result<Vec<Tensor>> {
        let run = Run::new(
            &self.resources,
            self.options.max_allocation_bytes,
            Some(cancel),
        );
        self.run_in(feeds, fetches, targets, &run)
            .map(|(out, _)| out)
    }

    /// Runs within `run` (a top-level run's context, or a function call's inside its caller's
    /// run).
    pub(crate) fn run_in(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
        run: &Run<'_>,
    ) -> Result<(Vec<Tensor>, RunStats)> {
        run.check_cancelled()?;
        let plan = self.plan(feeds, fetches, targets)?;
        let tensors: Vec<Tensor> = feeds.iter().map(|(_, t)| t.clone()).collect();
        let parallel = Parallel {
            min_elements: self.options.parallel_min_elements,
        };
        let mut stats = RunStats::default();
        let out = executor::run(
            &plan,
            tensors,
            run,
            self.options.parallel.then_some(&parallel),
            &mut stats,
            None,
        )?;
        Ok((out, stats))
    }

    /// The session's variables (a compiled function's run uses its caller's).
    pub(crate) fn resources(&self) -> &Resources {
        &self.resources
    }

    /// [`Session::run`] with each node timed (TensorFlow's `benchmark_model
    /// --show_summary` figures): the nodes run one at a time in plan order, and the time of
    /// each kernel is returned in that order. Nodes the plan does not run (fed placeholders,
    /// subgraphs folded into constants, nodes joined into a fused chain, which is listed
    /// once under its last node) are not listed. A graph with control flow runs on the dataflow
    /// executor, which does not time its nodes: its list is empty.
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// use tensorcast_graph::ops::{AddV2, Placeholder};
    /// use tensorcast_graph::{Scope, Session};
    /// let s = Scope::new_root_scope();
    /// let x = Placeholder::new(&s.with_op_name("x"), DataType::FLOAT)?;
    /// AddV2::new(&s.with_op_name("y"), &x, &x)?;
    /// let session = Session::new(s.graph());
    /// let (out, times) = session.run_profiled(&[("x", Tensor::vector(&[2.0f32]))], &["y"], &[])?;
    /// assert_eq!(out[0].to_vec::<f32>()?, vec![4.0]);
    /// assert_eq!(times.len(), 1);
    /// assert_eq!((times[0].node.as_str(), times[0].op.as_str()), ("y", "AddV2"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// As [`Session::run`].
    pub fn run_profiled(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<(Vec<Tensor>, Vec<NodeTime>)> {
        let plan = self.plan(feeds, fetches, targets)?;
        let tensors: Vec<Tensor> = feeds.iter().map(|(_, t)| t.clone()).collect();
        let mut times = Vec::with_capacity(plan.steps.len());
        let run = Run::new(&self.resources, self.options.max_allocation_bytes, None);
        let out = executor::run(
            &plan,
            tensors,
            &run,
            None,
            &mut RunStats::default(),
            Some(&mut times),
        )?;
        Ok((out, times))
    }

    /// The plan of a signature: cached, or built (and cached) from the graph as it is now.
    fn plan(
        &self,
        feeds: &[(&str, Tensor)],
        fetches: &[&str],
        targets: &[&str],
    ) -> Result<Arc<Plan>> {
        let mut cache = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(feeds, fetches, targets) {
            return Ok(p);
        }
        self.attach_functions()?;
        // A graph that calls functions runs as its lowered form (calls inlined); names of
        // call outputs are mapped to what the functions return.
        let lowered = self.lowered()?;
        let graph = lowered.as_ref().map_or(&self.graph, |l| &l.graph);
        let name_of = |name: &str| -> String {
            lowered
                .as_ref()
                .map_or_else(|| name.to_string(), |l| l.resolve(name))
        };
        let g = graph.read();
        let nodes = g.nodes.clone();
        let by_name = |name: &str| g.by_name.get(name).copied();
        let mut feed_eps = Vec::with_capacity(feeds.len());
        for (name, _) in feeds {
            feed_eps.push(resolve(&nodes, &by_name, &name_of(name))?);
        }
        let mut fetch_eps = Vec::with_capacity(fetches.len());
        for name in fetches {
            fetch_eps.push(resolve(&nodes, &by_name, &name_of(name))?);
        }
        let mut target_ids = Vec::with_capacity(targets.len());
        for name in targets {
            let op = crate::parse_tensor_name(name).node;
            target_ids.push(by_name(op).ok_or_else(|| Error::UnknownOperation(op.to_string()))?);
        }
        drop(g);
        let plan = Arc::new(Plan::build(
            &nodes,
            &feed_eps,
            &fetch_eps,
            &target_ids,
            crate::plan::Passes {
                fold: self.options.optimize,
                fuse: self.options.optimize && self.options.fuse,
            },
            self.options.max_constant_bytes,
            self.graph.function_library_bytes().as_ref(),
        )?);
        if cache.entries.len() >= MAX_PLANS {
            cache.entries.clear();
        }
        cache.entries.push(CachedPlan {
            feeds: feeds.iter().map(|(n, _)| n.to_string()).collect(),
            fetches: fetches.iter().map(|n| n.to_string()).collect(),
            targets: targets.iter().map(|n| n.to_string()).collect(),
            plan: plan.clone(),
        });
        Ok(plan)
    }

    /// The graph with its calls inlined, when it has calls (cached for the graph's node count).
    fn lowered(&self) -> Result<Option<Arc<Lowered>>> {
        let mut cache = self.lowered.lock().unwrap_or_else(|e| e.into_inner());
        let count = self.graph.num_nodes();
        if let Some((n, l)) = &*cache {
            if *n == count {
                return Ok(l.clone());
            }
        }
        let l = crate::import::functions::lower(&self.graph)?.map(Arc::new);
        *cache = Some((count, l.clone()));
        Ok(l)
    }

    /// [`Session::run`] with [`Output`] handles instead of names.
    ///
    /// # Errors
    /// As [`Session::run`].
    pub fn run_outputs(
        &self,
        feeds: &[(&Output, Tensor)],
        fetches: &[&Output],
    ) -> Result<Vec<Tensor>> {
        if let Some(o) = feeds
            .iter()
            .map(|(o, _)| *o)
            .chain(fetches.iter().copied())
            .find(|o| !o.op().graph().same_graph(&self.graph))
        {
            return Err(Error::ForeignOutput(o.name()));
        }
        let names: Vec<String> = feeds.iter().map(|(o, _)| o.name()).collect();
        let feed: Vec<(&str, Tensor)> = names
            .iter()
            .zip(feeds)
            .map(|(n, (_, t))| (n.as_str(), t.clone()))
            .collect();
        let fetch_names: Vec<String> = fetches.iter().map(|o| o.name()).collect();
        let fetch: Vec<&str> = fetch_names.iter().map(String::as_str).collect();
        self.run(&feed, &fetch, &[])
    }
}

/// The ops of `graph` that have no kernel in tensorcast, each with how many nodes use it,
/// sorted by op name - what a run of the whole graph would report before running anything.
/// Function calls count the nodes of the bodies they run (the graph is lowered first), and so do
/// the functions that `While`, `If`, `Case` (and their stateless forms) call, with the functions
/// those call in turn, through the graph's library (each function's nodes counted once).
///
/// # Errors
/// As lowering a graph with function calls (a call to a function the library lacks...), or a
/// library that does not decode.
pub fn ops_without_kernel(graph: &Graph) -> Result<Vec<(String, usize)>> {
    let lowered = crate::import::functions::lower(graph)?;
    let g = lowered.as_ref().map_or(graph, |l| &l.graph);
    let nodes = g.nodes();
    let library = graph.function_library_bytes();
    let mut missing = crate::import::functions::ops_without_kernel_in_functions(
        library.as_ref(),
        nodes
            .iter()
            .flat_map(|n| crate::import::functions::called_functions(n.attrs.values())),
    )?;
    for n in &nodes {
        if !crate::kernels::Kernel::available(n.kind) {
            *missing.entry(n.op.clone()).or_default() += 1;
        }
    }
    Ok(missing.into_iter().collect())
}

/// `"op:k"` / `"op"` to an endpoint, with TensorFlow's messages.
fn resolve(
    nodes: &[std::sync::Arc<Node>],
    by_name: &impl Fn(&str) -> Option<usize>,
    name: &str,
) -> Result<Endpoint> {
    let tid = crate::parse_tensor_name(name);
    if tid.is_control() && name.starts_with('^') {
        // A control name (`^op`) names no tensor; Python's client looks it up as an op name.
        return Err(Error::UnknownOperation(name.to_string()));
    }
    let op = tid.node;
    let has_index = op.len() < name.len();
    // Python's client (whose messages these are) takes `op` or `op:index` only: no colon in the
    // op part, digits after the one colon.
    if op.contains(':') || (!has_index && name.contains(':')) {
        return Err(Error::BadTensorName(name.to_string()));
    }
    let shown = if has_index {
        name.to_string()
    } else {
        format!("{op}:0")
    };
    // An index past `i32` (which TensorFlow's parser truncates) is past every op's outputs.
    let index = match name[op.len()..].strip_prefix(':').map(str::parse::<u64>) {
        Some(Ok(k)) if u64::try_from(tid.index).ok() == Some(k) => {
            usize::try_from(k).unwrap_or(usize::MAX)
        }
        Some(_) => usize::MAX,
        None => 0,
    };
    let Some(id) = by_name(op) else {
        return Err(Error::UnknownTensor {
            name: shown,
            op: op.to_string(),
        });
    };
    let n = &nodes[id];
    if (n.kind.is_some() && index >= n.output_types.len()) || index == usize::MAX {
        return Err(Error::NoSuchOutput {
            name: shown,
            op: op.to_string(),
            num_outputs: n.output_types.len(),
        });
    }
    Ok(Endpoint { node: id, index })
}
