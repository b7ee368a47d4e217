//! A run's plan, built once per (feeds, fetches, targets) signature and cached by the session (as
//! TensorFlow caches an executor per signature): the nodes to run in a fixed dependency order,
//! each with its resolved kernel, the value slots its inputs read (and whether that read is the
//! value's last use, so it is moved out rather than shared), and the slot its output goes to.
//! Running a plan formats no names, hashes nothing and reads no attrs.

pub(crate) mod conv_chain;
pub(crate) mod dataflow;
mod fold;
pub(crate) mod fuse;
pub(crate) mod order;
mod pad;
mod softmax;

use std::collections::HashMap;
use std::sync::Arc;

use tensorcast_core::{DataType, PartialTensorShape};

use crate::attr;
use crate::build::graph::{Endpoint, Node};
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel};
use crate::registry::opdef::{Op, OpDef};
use crate::registry::Flow;
use dataflow::DynPlan;

/// One read of a value slot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Read {
    /// The slot read.
    pub(crate) slot: usize,
    /// True when no later step or fetch (in plan order) reads the slot: the value is moved out.
    pub(crate) last: bool,
}

/// One node to run.
#[derive(Debug)]
pub(crate) struct Step {
    /// The node (its name attributes errors).
    pub(crate) node: Arc<Node>,
    /// What running it computes.
    pub(crate) kernel: Kernel,
    /// Its data inputs, in order.
    pub(crate) inputs: Vec<Read>,
    /// The slot of each output something reads, by output index.
    pub(crate) outputs: Vec<Option<usize>>,
    /// Every consumer reads lazy values and nothing fetches the output: a `BroadcastTo` may
    /// stay unmaterialised.
    pub(crate) may_stay_lazy: bool,
    /// The steps that wait for this one (data and control edges; by step index).
    pub(crate) consumers: Vec<usize>,
    /// How many steps this one waits for.
    pub(crate) waits_for: usize,
}

/// One fed tensor, checked on every run.
#[derive(Debug)]
pub(crate) struct Feed {
    /// The slot the tensor goes to.
    pub(crate) slot: usize,
    /// The node fed and the output index (for messages).
    pub(crate) node: Arc<Node>,
    /// The output index.
    pub(crate) index: usize,
    /// The dtype the graph's tensor has, when known.
    pub(crate) dtype: Option<DataType>,
    /// The (partial) shape it has, when known.
    pub(crate) shape: Option<PartialTensorShape>,
    /// The same tensor was fed earlier in the list.
    pub(crate) duplicate: bool,
    /// Where the graph does not know the fed tensor's dtype (its producer's op is unknown
    /// here), the dtype each consumer that runs expects: (consumer, input index, dtype).
    pub(crate) consumer_types: Vec<(Arc<Node>, usize, DataType)>,
}

/// One fetched tensor.
#[derive(Debug)]
pub(crate) struct Fetch {
    /// The slot read.
    pub(crate) read: Read,
    /// The node that produced it (attributes a failed materialisation).
    pub(crate) node: Arc<Node>,
}

/// The optimization passes a plan is built with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Passes {
    /// Constant folding and lazy `BroadcastTo`.
    pub(crate) fold: bool,
    /// Element-wise fusion (`fuse`) and zero padding folded into convolutions (`pad`).
    pub(crate) fuse: bool,
}

/// The plan of one run signature.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) feeds: Vec<Feed>,
    pub(crate) steps: Vec<Step>,
    pub(crate) fetches: Vec<Fetch>,
    /// Number of value slots.
    pub(crate) num_slots: usize,
    /// Reads of each slot (steps and fetches), for runs that count uses instead of following
    /// the plan's order.
    pub(crate) reads: Vec<usize>,
    /// Two steps that are not `Const`s or placeholders can be ready at the same time: running
    /// ready steps concurrently may pay.
    pub(crate) has_parallel_branches: bool,
    /// A step makes a value that may be large enough for its kernel to split it across the
    /// rayon pool (see [`may_use_pool`]): the run then starts on a worker of the pool.
    pub(crate) may_use_pool: bool,
    /// The run needs TF1 control flow: the dataflow executor runs it (`steps` and `fetches`
    /// are empty; `feeds` still checks the fed tensors).
    pub(crate) dynamic: Option<Box<DynPlan>>,
}

impl Plan {
    /// Prunes `nodes` to what `fetches` and `targets` need (stopping at fed tensors), resolves
    /// the kernels, folds constants (`optimize`: see `fold`), orders the rest (Kahn's
    /// algorithm with a stack, iteratively: deep graphs need no stack) and assigns value slots.
    pub(crate) fn build(
        nodes: &[Arc<Node>],
        feeds: &[Endpoint],
        fetches: &[Endpoint],
        targets: &[usize],
        passes: Passes,
        max_constant_bytes: u64,
        library: Option<&bytes::Bytes>,
    ) -> Result<Plan> {
        let mut slot_of: HashMap<Endpoint, usize> = HashMap::new();
        let new_slot = |ep: Endpoint, slot_of: &mut HashMap<Endpoint, usize>| {
            let n = slot_of.len();
            *slot_of.entry(ep).or_insert(n)
        };
        let mut fed: HashMap<Endpoint, ()> = HashMap::new();
        let mut plan_feeds = Vec::with_capacity(feeds.len());
        for &ep in feeds {
            let n = &nodes[ep.node];
            plan_feeds.push(Feed {
                slot: new_slot(ep, &mut slot_of),
                node: n.clone(),
                index: ep.index,
                dtype: n.output_types.get(ep.index).copied(),
                shape: n.output_shapes.get(ep.index).cloned(),
                duplicate: fed.insert(ep, ()).is_some(),
                consumer_types: Vec::new(),
            });
        }
        let is_fed = |ep: &Endpoint| fed.contains_key(ep);
        let mut cuts = Cuts::none(nodes.len());
        let mut needed = needed_nodes(nodes, &is_fed, fetches, targets, &cuts);
        // Before anything is decoded or run: every op the run needs has a kernel - its own
        // nodes' and those of the functions they call (`While`, `If`, ... bodies, through the
        // library), all missing ones named in one error - and the constants it needs fit the
        // budget.
        let mut missing = crate::import::functions::ops_without_kernel_in_functions(
            library,
            nodes
                .iter()
                .filter(|n| needed[n.id])
                .flat_map(|n| crate::import::functions::called_functions(n.attrs.values())),
        )?;
        let mut constant_bytes: u64 = 0;
        for n in nodes.iter().filter(|n| needed[n.id]) {
            if !Kernel::available(n.kind) {
                *missing.entry(n.op.clone()).or_default() += 1;
            } else if n.kind == Some(Op::Const) {
                constant_bytes = constant_bytes.saturating_add(kernels::const_bytes(&n.attrs));
            }
        }
        if !missing.is_empty() {
            return Err(Error::MissingKernels(missing.into_iter().collect()));
        }
        if constant_bytes > max_constant_bytes {
            return Err(Error::ConstantBudget {
                needed: constant_bytes,
                limit: max_constant_bytes,
            });
        }
        // A fed tensor whose dtype the graph does not know is checked against what its
        // consumers expect.
        for f in plan_feeds.iter_mut().filter(|f| f.dtype.is_none()) {
            let ep = Endpoint {
                node: f.node.id,
                index: f.index,
            };
            for n in nodes.iter().filter(|n| needed[n.id]) {
                for (pos, _) in n.inputs.iter().enumerate().filter(|(_, i)| **i == ep) {
                    if let Some(d) = expected_input_type(n, pos) {
                        f.consumer_types.push((n.clone(), pos, d));
                    }
                }
            }
        }
        // TF1 control flow (cycles, dead tensors): the dataflow executor's plan.
        if nodes
            .iter()
            .any(|n| needed[n.id] && Flow::of(n.kind).is_some())
        {
            let mut fed_index: HashMap<Endpoint, usize> = HashMap::new();
            for (i, &ep) in feeds.iter().enumerate() {
                fed_index.entry(ep).or_insert(i);
            }
            let dynamic = DynPlan::build(nodes, &needed, &fed_index, fetches, |n| {
                resolve_kernel(n, max_constant_bytes)
            })?;
            let num_slots = slot_of.len();
            return Ok(Plan {
                feeds: plan_feeds,
                steps: Vec::new(),
                fetches: Vec::new(),
                num_slots,
                reads: vec![0; num_slots],
                has_parallel_branches: false,
                may_use_pool: true,
                dynamic: Some(Box::new(dynamic)),
            });
        }
        let mut kernels: Vec<Option<Kernel>> = (0..nodes.len()).map(|_| None).collect();
        for (id, n) in nodes.iter().enumerate().filter(|(id, _)| needed[*id]) {
            kernels[id] = Some(resolve_kernel(n, max_constant_bytes));
        }
        // Constant folding: what depends on constants alone is computed once, here; what
        // only folded nodes read is no longer needed.
        let optimize = passes.fold;
        if optimize {
            let (pending, consumers) = edges(nodes, &needed, &is_fed, &cuts);
            let ready: Vec<usize> = (0..nodes.len())
                .rev()
                .filter(|&i| needed[i] && pending[i] == 0)
                .collect();
            let order = crate::plan::order::kahn(ready, pending, &consumers);
            let budget = max_constant_bytes.saturating_sub(constant_bytes);
            cuts.folded = fold::fold(nodes, &order, &is_fed, &mut kernels, budget);
            // Element-wise chains, on the graph as folding left it (its constants known).
            if passes.fuse {
                let g = fuse::Rewrite::new(nodes, &order, &needed, &cuts.folded, fetches, targets);
                let mut rewired = fuse::fuse(&g, &mut kernels);
                // Zero padding read by a convolution alone: folded into it.
                rewired.extend(pad::fold_pads(&g, &mut kernels));
                // A `Softmax` of a `Mul` by a scalar: one kernel.
                rewired.extend(softmax::fold_scaled_softmax(&g, &mut kernels));
                // A chain reading a convolution alone: run on the convolution's output blocks.
                let convs = conv_chain::fold_conv_chains(&g, &mut kernels, &rewired);
                rewired.extend(convs);
                cuts.fused_inputs = rewired;
            }
            if cuts.folded.contains(&true) || !cuts.fused_inputs.is_empty() {
                needed = needed_nodes(nodes, &is_fed, fetches, targets, &cuts);
                for (k, &n) in kernels.iter_mut().zip(&needed) {
                    if !n {
                        *k = None;
                    }
                }
            }
        }
        let folded = &cuts.folded;
        // Kahn's order.
        let (pending, consumers) = edges(nodes, &needed, &is_fed, &cuts);
        let mut lazy_ok = vec![true; nodes.len()];
        for (id, n) in nodes.iter().enumerate().filter(|(id, _)| needed[*id]) {
            let reads_lazy = kernels[id].as_ref().is_some_and(Kernel::reads_lazy);
            if !reads_lazy && !folded[id] {
                for ep in node_edges(n, &cuts).0 {
                    lazy_ok[ep.node] = false;
                }
            }
        }
        for ep in fetches {
            lazy_ok[ep.node] = false;
        }
        let mut ready: Vec<usize> = (0..nodes.len())
            .filter(|&i| needed[i] && pending[i] == 0)
            .collect();
        ready.reverse();
        let order = crate::plan::order::kahn(ready, pending, &consumers);
        let mut step_of = vec![usize::MAX; nodes.len()];
        for (i, &id) in order.iter().enumerate() {
            step_of[id] = i;
        }
        // Slots: fed tensors first (above), then every output something reads.
        let mut steps = Vec::with_capacity(order.len());
        for &id in &order {
            let n = &nodes[id];
            let (data, control) = node_edges(n, &cuts);
            let inputs = data
                .iter()
                .map(|&ep| Read {
                    slot: new_slot(ep, &mut slot_of),
                    last: false,
                })
                .collect();
            let mut step_consumers: Vec<usize> = consumers[id]
                .iter()
                .map(|&c| step_of[c])
                .filter(|&c| c != usize::MAX)
                .collect();
            step_consumers.sort_unstable();
            let waits_for = data.iter().filter(|ep| !is_fed(ep)).count() + control.len();
            steps.push(Step {
                node: n.clone(),
                kernel: kernels[id]
                    .take()
                    .ok_or_else(|| Error::Internal(format!("{} not resolved", n.name)))?,
                inputs,
                outputs: Vec::new(),
                may_stay_lazy: optimize && lazy_ok[id],
                consumers: step_consumers,
                waits_for,
            });
        }
        let mut plan_fetches = Vec::with_capacity(fetches.len());
        for &ep in fetches {
            plan_fetches.push(Fetch {
                read: Read {
                    slot: new_slot(ep, &mut slot_of),
                    last: false,
                },
                node: nodes[ep.node].clone(),
            });
        }
        for s in &mut steps {
            let n = s.node.output_types.len().max(1);
            s.outputs = (0..n)
                .map(|index| {
                    slot_of
                        .get(&Endpoint {
                            node: s.node.id,
                            index,
                        })
                        .copied()
                })
                .collect();
            while s.outputs.last() == Some(&None) {
                s.outputs.pop();
            }
        }
        // Last uses, in plan order (fetches read after every step).
        let num_slots = slot_of.len();
        let mut reads = vec![0usize; num_slots];
        let mut seen = vec![false; num_slots];
        for f in plan_fetches.iter_mut().rev() {
            reads[f.read.slot] += 1;
            f.read.last = !std::mem::replace(&mut seen[f.read.slot], true);
        }
        for s in steps.iter_mut().rev() {
            for r in s.inputs.iter_mut().rev() {
                reads[r.slot] += 1;
                r.last = !std::mem::replace(&mut seen[r.slot], true);
            }
        }
        let has_parallel_branches = has_parallel_branches(&steps);
        let may_use_pool = may_use_pool(&steps);
        Ok(Plan {
            feeds: plan_feeds,
            steps,
            fetches: plan_fetches,
            num_slots,
            reads,
            has_parallel_branches,
            may_use_pool,
            dynamic: None,
        })
    }
}

/// What the plan reads of the graph's edges: folded nodes read nothing, and a fused chain's
/// last node reads the chain's input alone.
struct Cuts {
    folded: Vec<bool>,
    fused_inputs: HashMap<usize, Vec<Endpoint>>,
}

impl Cuts {
    fn none(n: usize) -> Self {
        Cuts {
            folded: vec![false; n],
            fused_inputs: HashMap::new(),
        }
    }
}

/// A node's data and control inputs as the plan reads them (see [`Cuts`]).
fn node_edges<'a>(n: &'a Node, cuts: &'a Cuts) -> (&'a [Endpoint], &'a [usize]) {
    if cuts.folded[n.id] {
        (&[], &[])
    } else if let Some(inputs) = cuts.fused_inputs.get(&n.id) {
        (inputs, &[])
    } else {
        (&n.inputs, &n.control_inputs)
    }
}

/// The nodes `fetches` and `targets` need, stopping at fed tensors and at folded nodes.
fn needed_nodes(
    nodes: &[Arc<Node>],
    is_fed: &impl Fn(&Endpoint) -> bool,
    fetches: &[Endpoint],
    targets: &[usize],
    cuts: &Cuts,
) -> Vec<bool> {
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = targets.to_vec();
    stack.extend(fetches.iter().filter(|ep| !is_fed(ep)).map(|ep| ep.node));
    while let Some(id) = stack.pop() {
        if needed[id] {
            continue;
        }
        needed[id] = true;
        let (data, control) = node_edges(&nodes[id], cuts);
        stack.extend(data.iter().filter(|ep| !is_fed(ep)).map(|ep| ep.node));
        stack.extend(control.iter().copied());
    }
    needed
}

/// Each needed node's count of inputs to wait for, and each node's consumers (data edges from
/// nodes that are not fed, and control edges).
fn edges(
    nodes: &[Arc<Node>],
    needed: &[bool],
    is_fed: &impl Fn(&Endpoint) -> bool,
    cuts: &Cuts,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut pending = vec![0usize; nodes.len()];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (id, n) in nodes.iter().enumerate().filter(|(id, _)| needed[*id]) {
        let (data, control) = node_edges(n, cuts);
        for ep in data.iter().filter(|ep| !is_fed(ep)) {
            pending[id] += 1;
            consumers[ep.node].push(id);
        }
        for &c in control {
            pending[id] += 1;
            consumers[c].push(id);
        }
    }
    (pending, consumers)
}

/// Elements of a value below which no kernel splits its work across the rayon pool.
const POOL_MIN_ELEMENTS: u64 = 1 << 14;

/// True when a step's output is not known to be small: its shape is not fully known at graph
/// time, or it has [`POOL_MIN_ELEMENTS`] elements or more. A graph of small values (a chain
/// of scalar ops) then runs on the calling thread, without a hand-off to the pool per run.
fn may_use_pool(steps: &[Step]) -> bool {
    steps.iter().any(|s| {
        s.node.output_shapes.iter().any(|shape| {
            shape
                .dims()
                .and_then(|d| {
                    d.iter()
                        .try_fold(1u64, |n, &x| n.checked_mul(u64::try_from(x).ok()?))
                })
                .is_none_or(|n| n >= POOL_MIN_ELEMENTS)
        })
    })
}

/// True when two steps with inputs can be ready at once (simulating the run in waves of every
/// ready step; steps without inputs - constants, failing placeholders - do not count).
fn has_parallel_branches(steps: &[Step]) -> bool {
    let mut pending: Vec<usize> = steps.iter().map(|s| s.waits_for).collect();
    let mut wave: Vec<usize> = (0..steps.len()).filter(|&i| pending[i] == 0).collect();
    while !wave.is_empty() {
        if wave
            .iter()
            .filter(|&&i| !steps[i].inputs.is_empty())
            .count()
            > 1
        {
            return true;
        }
        let mut next = Vec::new();
        for &i in &wave {
            for &c in &steps[i].consumers {
                pending[c] -= 1;
                if pending[c] == 0 {
                    next.push(c);
                }
            }
        }
        wave = next;
    }
    false
}

/// The dtype a registered node expects at data input `pos` (from its op's signature and attrs).
fn expected_input_type(n: &Node, pos: usize) -> Option<DataType> {
    let def = n.kind?.def();
    OpDef::expand(def.inputs, &n.attrs, n.inputs.len())?
        .get(pos)
        .copied()
        .flatten()
}

/// The kernel of `node` (`Fail` with the run-time error for a placeholder, which must be fed,
/// an unregistered op, an op without a kernel and a `Const` whose value does not decode).
fn resolve_kernel(node: &Node, max_constant_bytes: u64) -> Kernel {
    let attrs = &node.attrs;
    let kernel = match node.kind {
        Some(Op::Placeholder) => {
            let dtype = attr::get_type(attrs, "dtype").unwrap_or(DataType::INVALID);
            return Kernel::Fail(Error::MissingFeed {
                name: node.name.clone(),
                location: crate::build::graph::node_location(node).into(),
                dtype,
                shape: node
                    .output_shapes
                    .first()
                    .filter(|s| s.rank().is_some())
                    .map(PartialTensorShape::debug_string),
            });
        }
        None => {
            return Kernel::Fail(Error::OpNotRegistered(node.op.clone()));
        }
        Some(op) => Kernel::for_op(op, attrs, max_constant_bytes),
    };
    match kernel {
        Kernel::Fail(e) => Kernel::Fail(e.at_node(node)),
        k => k,
    }
}
