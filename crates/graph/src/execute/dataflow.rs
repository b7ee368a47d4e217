//! The dataflow executor: runs graphs with TensorFlow 1 control flow (`Enter`, `Exit`, `Merge`,
//! `Switch`, `NextIteration`, `LoopCond`) with TensorFlow's frame semantics. Graphs without those
//! ops keep the static plan (`plan.rs`), which this module does not touch.
//!
//! * **Frames.** At plan time every node gets a static frame, as TensorFlow's
//!   `BuildControlFlowInfo` assigns them (breadth first from the nodes without inputs, which are
//!   in the root frame): an `Enter`'s consumers are in the frame its `frame_name` names (a child
//!   of the `Enter`'s frame), an `Exit`'s in its frame's parent, every other node's in its
//!   inputs' frame. A node whose inputs come from different frames is refused with TensorFlow's
//!   message, before anything runs.
//! * **Instances and iterations.** At run time a frame has one instance per iteration of its
//!   parent that enters it; an instance has iterations numbered from 0. Each iteration holds its
//!   nodes' pending counts and input values. A live `NextIteration` in iteration `i` delivers to
//!   iteration `i + 1` (created on demand); an `Enter` delivers to iteration 0 of its child
//!   instance, or, with `is_constant`, to every iteration, current and future; a live `Exit`
//!   delivers to the iteration of the parent that entered the frame. An iteration is freed once
//!   nothing in it is running and the iterations before it are gone, so a long loop holds a few
//!   iterations at a time.
//! * **Dead tensors.** The untaken output of a `Switch` is dead. A node (other than `Merge`)
//!   with a dead data input or a dead control input does not run, and its outputs are dead. A
//!   `Merge` runs on its first live input once its control inputs are in, and is dead when
//!   every data input it can get in that iteration is dead (in iteration 0 of a loop, the
//!   inputs from `Enter` and other nodes; later, those from `NextIteration` and other nodes). A
//!   dead `NextIteration` ends the loop; an `Exit` that never had a live value in a frame
//!   instance is dead in the parent when the instance ends. Fetching a dead tensor fails with
//!   TensorFlow's `Retval[i] does not have value`; fetching a tensor of a loop frame that was
//!   computed twice, with `Retval[i] has already been set.`
//! * **Scheduling.** One node at a time on the calling thread, from a stack of ready nodes
//!   (the last made ready runs first, so a loop runs iteration after iteration with little
//!   in flight). `parallel_iterations` is honoured in the sense TensorFlow allows - it is an
//!   upper bound on iterations in flight, and this executor never has more than the loop's data
//!   dependencies force.

use std::collections::{HashMap, VecDeque};

use tensorcast_core::{Code, DataType, Tensor};

use super::executor::{run_step, Outputs, Value};
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::plan::dataflow::{Class, DNode, DynPlan, Edge, ROOT};
use crate::registry::Run as RunCtx;

/// One iteration of a frame instance.
struct Iter {
    pending: Vec<u32>,
    /// Non-`Merge`: a dead input arrived; `Merge`: dead data inputs so far.
    dead: Vec<u32>,
    slots: Vec<Option<Value>>,
    /// Nodes ready or running, plus child instances entered from this iteration.
    outstanding: u32,
}

/// A `Merge` that has fired (pending count).
const FIRED: u32 = u32::MAX;

struct Instance {
    frame: u32,
    parent: (u32, u64),
    key: (u32, u32, u64),
    iters: VecDeque<Iter>,
    /// Iteration number of `iters[0]`.
    base: u64,
    pending_enters: u32,
    /// `is_constant` `Enter`s that ran: delivered to every iteration.
    invariants: Vec<(u32, Option<Value>)>,
    /// Exits that were dead at least once, and those that had a live value.
    dead_exits: Vec<u32>,
    live_exits: Vec<u32>,
    /// Ready or running nodes and child instances, over all iterations.
    outstanding: u32,
}

impl Instance {
    /// Iteration `it` of the instance.
    #[inline]
    fn iter(&mut self, it: u64) -> Result<&mut Iter> {
        self.iter_and_counts(it).map(|(iter, _, _)| iter)
    }

    /// Iteration `it` with the instance's dead exits and outstanding count beside it: what the
    /// end of a delivery (`settle`) needs at once, from the one lookup.
    #[inline]
    fn iter_and_counts(&mut self, it: u64) -> Result<(&mut Iter, &mut Vec<u32>, &mut u32)> {
        // An `it` before `base` wraps to an index past the end.
        match self.iters.get_mut(it.wrapping_sub(self.base) as usize) {
            Some(iter) => Ok((iter, &mut self.dead_exits, &mut self.outstanding)),
            None => Err(iteration_error(it < self.base)),
        }
    }
}

/// The error of a lookup of an iteration that is gone (`before`: freed) or not yet made.
#[cold]
fn iteration_error(before: bool) -> Error {
    Error::Internal(
        if before {
            "iteration gone"
        } else {
            "iteration missing"
        }
        .into(),
    )
}

/// The error of a lookup of a frame instance that has ended.
#[cold]
fn instance_error() -> Error {
    Error::Internal("frame instance gone".into())
}

/// A node as a delivery sees it: its index in its frame, its first input slot, whether it is a
/// `Merge` (and how many dead data inputs make it dead in this iteration) or an `Exit`, its
/// input count.
#[derive(Clone, Copy)]
struct Target {
    local: usize,
    base: usize,
    is_merge: bool,
    is_exit: bool,
    expected: u32,
    num_inputs: usize,
}

enum Fetched {
    Unset,
    Dead,
    Live(Value),
}

struct Run<'a> {
    plan: &'a DynPlan,
    ctx: &'a RunCtx<'a>,
    feeds: &'a [Tensor],
    instances: Vec<Option<Instance>>,
    free: Vec<u32>,
    by_key: HashMap<(u32, u32, u64), u32>,
    ready: Vec<(u32, u32, u64, bool)>,
    fetched: Vec<Fetched>,
    nodes_run: usize,
    /// Freed iterations, by static frame, reused by the next iteration of that frame (a loop
    /// allocates nothing per iteration once it runs).
    pool: Vec<Vec<Iter>>,
    /// The input list a kernel runs on, kept between nodes (no allocation per node).
    scratch: Vec<Value>,
}

/// Runs `plan`; `feeds` by feed index. Returns the fetched tensors.
pub(crate) fn run(
    plan: &DynPlan,
    feeds: &[Tensor],
    ctx: &RunCtx<'_>,
    nodes_run: &mut usize,
) -> Result<Vec<Tensor>> {
    let mut r = Run {
        plan,
        ctx,
        feeds,
        instances: Vec::new(),
        free: Vec::new(),
        by_key: HashMap::new(),
        ready: Vec::new(),
        fetched: plan.fetches.iter().map(|_| Fetched::Unset).collect(),
        nodes_run: 0,
        pool: plan.frames.iter().map(|_| Vec::new()).collect(),
        scratch: Vec::new(),
    };
    let root_iter = r.new_iter(ROOT);
    r.instances.push(Some(Instance {
        frame: ROOT,
        parent: (0, 0),
        key: (ROOT, 0, 0),
        iters: VecDeque::from([root_iter]),
        base: 0,
        pending_enters: 0,
        invariants: Vec::new(),
        dead_exits: Vec::new(),
        live_exits: Vec::new(),
        outstanding: 0,
    }));
    let starts = plan.roots.iter().chain(&plan.frames[ROOT as usize].starts);
    for &l in starts.rev() {
        r.make_ready(l, 0, 0, false)?;
    }
    while let Some((l, inst, it, dead)) = r.ready.pop() {
        // A loop that never ends stops when its run is cancelled.
        ctx.check_cancelled()?;
        r.process(l, inst, it, dead)?;
    }
    *nodes_run += r.nodes_run;
    // The first fetch without a value, in TensorFlow's (sorted) numbering.
    let dead = r
        .fetched
        .iter()
        .zip(&plan.fetches)
        .zip(&plan.retvals)
        .filter(|((f, p), _)| p.2.is_none() && !matches!(f, Fetched::Live(_)))
        .map(|(_, r)| r.0)
        .min();
    if let Some(i) = dead {
        return Err(Error::DeadFetch(i));
    }
    let mut out = Vec::with_capacity(plan.fetches.len());
    for (i, f) in r.fetched.into_iter().enumerate() {
        let (node, _, fed) = &plan.fetches[i];
        out.push(match (f, fed) {
            (_, Some(k)) => feeds[*k].clone(),
            (Fetched::Live(v), None) => v.materialize(ctx).map_err(|e| e.at_node(node))?,
            // Never computed (a graph that stops before reaching it) or dead.
            (Fetched::Dead | Fetched::Unset, None) => {
                return Err(Error::DeadFetch(plan.retvals[i].0))
            }
        });
    }
    Ok(out)
}

impl Run<'_> {
    fn new_iter(&mut self, frame: u32) -> Iter {
        let f = &self.plan.frames[frame as usize];
        if let Some(mut it) = self.pool[frame as usize].pop() {
            it.pending.copy_from_slice(&f.pending);
            it.dead.fill(0);
            for &(slot, feed) in &f.fed {
                it.slots[slot as usize] = Some(Value::Dense(self.feeds[feed as usize].clone()));
            }
            it.outstanding = 0;
            return it;
        }
        let mut slots: Vec<Option<Value>> = (0..f.num_slots).map(|_| None).collect();
        for &(slot, feed) in &f.fed {
            slots[slot as usize] = Some(Value::Dense(self.feeds[feed as usize].clone()));
        }
        Iter {
            pending: f.pending.clone(),
            dead: vec![0; f.num_nodes as usize],
            slots,
            outstanding: 0,
        }
    }

    #[inline]
    fn inst(&mut self, i: u32) -> Result<&mut Instance> {
        match self.instances.get_mut(i as usize) {
            Some(Some(inst)) => Ok(inst),
            _ => Err(instance_error()),
        }
    }

    #[inline]
    fn iter(&mut self, i: u32, it: u64) -> Result<&mut Iter> {
        self.inst(i)?.iter(it)
    }

    fn make_ready(&mut self, l: u32, inst: u32, it: u64, dead: bool) -> Result<()> {
        let i = self.inst(inst)?;
        i.outstanding += 1;
        i.iter(it)?.outstanding += 1;
        self.ready.push((l, inst, it, dead));
        Ok(())
    }

    /// What delivering to node `dst` in iteration `it` needs to know of it.
    fn target(&self, dst: u32, it: u64) -> Target {
        let d = &self.plan.nodes[dst as usize];
        Target {
            local: d.local as usize,
            base: d.in_base as usize,
            is_merge: matches!(d.class, Class::Merge),
            is_exit: matches!(d.class, Class::Exit),
            expected: if it == 0 {
                d.merge_first
            } else {
                d.merge_later
            },
            num_inputs: d.num_inputs as usize,
        }
    }

    /// Delivers a data value (`None`: dead) to input `slot` of `dst` in (`inst`, `it`), moving
    /// it out of `v` (a value the node does not take is left there).
    #[inline(always)]
    fn deliver(
        &mut self,
        dst: u32,
        slot: u32,
        inst: u32,
        it: u64,
        v: &mut Option<Value>,
    ) -> Result<()> {
        let t = self.target(dst, it);
        let (iter, dead_exits, outstanding) = self.inst(inst)?.iter_and_counts(it)?;
        let ready = if t.is_merge {
            if iter.pending[t.local] == FIRED {
                return Ok(());
            }
            if v.is_some() {
                iter.slots[t.base + slot as usize] = v.take();
            } else {
                iter.dead[t.local] += 1;
            }
            merge_ready(iter, t.local, t.base, t.num_inputs, t.expected)
        } else {
            if iter.pending[t.local] == 0 {
                // A second value for an input (a malformed loop): ignored.
                return Ok(());
            }
            if v.is_some() {
                iter.slots[t.base + slot as usize] = v.take();
            } else {
                iter.dead[t.local] = 1;
            }
            count_down(iter, t.local)
        };
        if let Some(dead) = settle(ready, dst, &t, iter, dead_exits, outstanding) {
            self.ready.push((dst, inst, it, dead));
        }
        Ok(())
    }

    /// Delivers a control edge (from a dead node when `dead`).
    fn deliver_control(&mut self, dst: u32, inst: u32, it: u64, dead: bool) -> Result<()> {
        let t = self.target(dst, it);
        let (iter, dead_exits, outstanding) = self.inst(inst)?.iter_and_counts(it)?;
        let ready = if t.is_merge {
            if iter.pending[t.local] == FIRED || iter.pending[t.local] == 0 {
                return Ok(());
            }
            iter.pending[t.local] -= 1;
            merge_ready(iter, t.local, t.base, t.num_inputs, t.expected)
        } else {
            if iter.pending[t.local] == 0 {
                return Ok(());
            }
            if dead {
                iter.dead[t.local] = 1;
            }
            count_down(iter, t.local)
        };
        if let Some(dead) = settle(ready, dst, &t, iter, dead_exits, outstanding) {
            self.ready.push((dst, inst, it, dead));
        }
        Ok(())
    }

    /// Sends the one output value (`None`: dead) of node `l` (an `Enter`, an `Exit`) along its
    /// edges into (`inst`, `it`), and its control edges (dead with it).
    fn propagate_one(&mut self, l: u32, inst: u32, it: u64, mut v: Option<Value>) -> Result<()> {
        let dead = v.is_none();
        self.send(l, 0, inst, it, &mut v)?;
        self.send_controls(l, inst, it, dead)
    }

    /// Sends a dead value on every output of node `l` into (`inst`, `it`), and dead control
    /// edges.
    fn propagate_dead(&mut self, l: u32, inst: u32, it: u64) -> Result<()> {
        for o in 0..self.plan.nodes[l as usize].outs.len() {
            self.send(l, o, inst, it, &mut None)?;
        }
        self.send_controls(l, inst, it, true)
    }

    /// Sends output `o` of node `l` (`None`: dead) along its data edges into (`inst`, `it`):
    /// shared with every consumer but the last, moved to the last (out of `v`, which is passed
    /// by reference so that the value is moved once, into its slot).
    fn send(&mut self, l: u32, o: usize, inst: u32, it: u64, v: &mut Option<Value>) -> Result<()> {
        let plan = self.plan;
        let Some((&last, rest)) = plan.nodes[l as usize]
            .outs
            .get(o)
            .and_then(|edges| edges.split_last())
        else {
            return Ok(());
        };
        for &e in rest {
            self.send_edge(e, inst, it, &mut v.clone())?;
        }
        self.send_edge(last, inst, it, v)
    }

    /// Sends `v` along one edge into (`inst`, `it`).
    #[inline]
    fn send_edge(&mut self, e: Edge, inst: u32, it: u64, v: &mut Option<Value>) -> Result<()> {
        match e {
            Edge::Data { dst, slot } => self.deliver(dst, slot, inst, it, v),
            Edge::Fetch(i) => self.fetch(i, v.take()),
        }
    }

    /// Sends node `l`'s control edges into (`inst`, `it`).
    #[inline(always)]
    fn send_controls(&mut self, l: u32, inst: u32, it: u64, dead: bool) -> Result<()> {
        let plan = self.plan;
        let outs = &plan.nodes[l as usize].ctrl_outs;
        // Most nodes have none: no call for them.
        if outs.is_empty() {
            return Ok(());
        }
        self.send_controls_to(outs, inst, it, dead)
    }

    /// Delivers control edges to the nodes `outs` in (`inst`, `it`).
    fn send_controls_to(&mut self, outs: &[u32], inst: u32, it: u64, dead: bool) -> Result<()> {
        for &c in outs {
            self.deliver_control(c, inst, it, dead)?;
        }
        Ok(())
    }

    fn fetch(&mut self, i: u32, v: Option<Value>) -> Result<()> {
        let slot = &mut self.fetched[i as usize];
        let in_root = self.plan.fetches[i as usize].1;
        match (&*slot, v) {
            (Fetched::Live(_), _) if !in_root => {
                let (index, node) = self.plan.retvals[i as usize].clone();
                return Err(Error::FetchSetTwice { index, node });
            }
            (Fetched::Live(_), _) => {}
            (_, Some(v)) => *slot = Fetched::Live(v),
            (_, None) => *slot = Fetched::Dead,
        }
        Ok(())
    }

    /// Runs (or, when `dead`, skips) node `l` of (`inst`, `it`) and sends its outputs on.
    fn process(&mut self, l: u32, inst: u32, it: u64, dead: bool) -> Result<()> {
        let plan = self.plan;
        let d = &plan.nodes[l as usize];
        let (base, n_in) = (d.in_base as usize, d.num_inputs as usize);
        if let (Class::Normal, false) = (d.class, dead) {
            self.nodes_run += 1;
            let ins = &mut self.iter(inst, it)?.slots[base..base + n_in];
            // Forwarding nodes, constants and binary ops on scalars run without a kernel call
            // (the loop body's nodes); the others through `run_step`.
            match forwarded(d, ins).map(Ok).or_else(|| scalar_binary(d, ins)) {
                Some(v) => self.send(l, 0, inst, it, &mut Some(v?))?,
                None => {
                    let mut vals = std::mem::take(&mut self.scratch);
                    vals.clear();
                    for v in &mut self.iter(inst, it)?.slots[base..base + n_in] {
                        vals.push(v.take().ok_or_else(|| missing(d))?);
                    }
                    let out = run_step(&d.step, &mut vals, self.ctx);
                    self.scratch = vals;
                    match out? {
                        Outputs::One(v) => self.send(l, 0, inst, it, &mut Some(v))?,
                        Outputs::Many(ts) => {
                            for (o, t) in ts.into_iter().enumerate() {
                                self.send(l, o, inst, it, &mut Some(Value::Dense(t)))?;
                            }
                        }
                    }
                }
            }
            // A live node's control edges are live, whatever outputs it has.
            self.send_controls(l, inst, it, false)?;
            return self.done_with(inst, it);
        }
        // Inputs taken from the iteration's slots (the node's own, first to last).
        let take = |run: &mut Self, k: usize| -> Result<Option<Value>> {
            Ok(run.iter(inst, it)?.slots[base + k].take())
        };
        match d.class {
            Class::Normal => {
                // Dead (the live case returned above): every output dead.
                for v in &mut self.iter(inst, it)?.slots[base..base + n_in] {
                    *v = None;
                }
                self.propagate_dead(l, inst, it)?;
            }
            Class::Switch => {
                let iter = self.iter(inst, it)?;
                let data = iter.slots[base].take();
                let pred = iter.slots[base + 1].take();
                if dead {
                    self.propagate_dead(l, inst, it)?;
                } else {
                    self.nodes_run += 1;
                    let pred = pred.ok_or_else(|| missing(d))?;
                    let data = data.ok_or_else(|| missing(d))?;
                    let taken = switch_pred(pred, self.ctx).map_err(|e| e.at_node(&d.step.node))?;
                    let port = usize::from(taken);
                    self.send(l, port, inst, it, &mut Some(data))?;
                    self.send(l, 1 - port, inst, it, &mut None)?;
                    self.send_controls(l, inst, it, false)?;
                }
            }
            Class::Merge => {
                let local = d.local as usize;
                let iter = self.iter(inst, it)?;
                iter.pending[local] = FIRED;
                let mut first = None;
                for (k, v) in iter.slots[base..base + n_in].iter_mut().enumerate() {
                    let v = v.take();
                    if first.is_none() {
                        first = v.map(|v| (k, v));
                    }
                }
                if dead {
                    self.propagate_dead(l, inst, it)?;
                } else {
                    self.nodes_run += 1;
                    let (index, v) = first.ok_or_else(|| missing(d))?;
                    self.send(l, 0, inst, it, &mut Some(v))?;
                    // `value_index`, made only when something reads it.
                    if d.outs.get(1).is_some_and(|e| !e.is_empty()) {
                        let index = Value::Dense(Tensor::scalar_of(index as i32));
                        self.send(l, 1, inst, it, &mut Some(index))?;
                    }
                    self.send_controls(l, inst, it, false)?;
                }
            }
            Class::Enter { child, constant } => {
                let v = take(self, 0)?;
                let v = if dead {
                    None
                } else {
                    self.nodes_run += 1;
                    Some(v.ok_or_else(|| missing(d))?)
                };
                let c = self.child_instance(child, inst, it)?;
                let ci = self.inst(c)?;
                ci.pending_enters = ci.pending_enters.saturating_sub(1);
                // The Enter's consumers (data and control) are in the child frame.
                if constant {
                    ci.invariants.push((l, v.clone()));
                    let (b, len) = (ci.base, ci.iters.len() as u64);
                    for i in b..b + len {
                        self.propagate_one(l, c, i, v.clone())?;
                    }
                } else {
                    self.propagate_one(l, c, 0, v)?;
                }
                self.maybe_finish(c)?;
            }
            Class::Exit => {
                let v = take(self, 0)?;
                let i = self.inst(inst)?;
                let parent = i.parent;
                if dead {
                    if !i.dead_exits.contains(&l) {
                        i.dead_exits.push(l);
                    }
                } else {
                    i.live_exits.push(l);
                    self.nodes_run += 1;
                    let v = v.ok_or_else(|| missing(d))?;
                    self.send(l, 0, parent.0, parent.1, &mut Some(v))?;
                    self.send_controls(l, parent.0, parent.1, false)?;
                }
            }
            Class::NextIteration => {
                let v = take(self, 0)?;
                if !dead {
                    self.nodes_run += 1;
                    let v = v.ok_or_else(|| missing(d))?;
                    self.ensure_iteration(inst, it + 1)?;
                    self.send(l, 0, inst, it + 1, &mut Some(v))?;
                    self.send_controls(l, inst, it + 1, false)?;
                }
            }
        }
        self.done_with(inst, it)
    }

    /// The instance of static frame `frame` entered from (`inst`, `it`), created on first use.
    fn child_instance(&mut self, frame: u32, inst: u32, it: u64) -> Result<u32> {
        let key = (frame, inst, it);
        if let Some(&c) = self.by_key.get(&key) {
            return Ok(c);
        }
        let iter0 = self.new_iter(frame);
        let instance = Instance {
            frame,
            parent: (inst, it),
            key,
            iters: VecDeque::from([iter0]),
            base: 0,
            pending_enters: self.plan.frames[frame as usize].enters,
            invariants: Vec::new(),
            dead_exits: Vec::new(),
            live_exits: Vec::new(),
            outstanding: 0,
        };
        let c = match self.free.pop() {
            Some(c) => {
                self.instances[c as usize] = Some(instance);
                c
            }
            None => {
                self.instances.push(Some(instance));
                (self.instances.len() - 1) as u32
            }
        };
        self.by_key.insert(key, c);
        self.inst(inst)?.outstanding += 1;
        self.iter(inst, it)?.outstanding += 1;
        self.start(frame, c, 0)?;
        Ok(c)
    }

    /// Makes iteration `it` of `inst` exist (with the loop invariants delivered).
    fn ensure_iteration(&mut self, inst: u32, it: u64) -> Result<()> {
        let frame = self.inst(inst)?.frame;
        let next = {
            let i = self.inst(inst)?;
            i.base + i.iters.len() as u64
        };
        if it < next {
            return Ok(());
        }
        if it != next {
            return Err(Error::Internal("iteration skipped".into()));
        }
        let iter = self.new_iter(frame);
        let i = self.inst(inst)?;
        i.iters.push_back(iter);
        for k in 0..i.invariants.len() {
            let (l, v) = self.inst(inst)?.invariants[k].clone();
            self.propagate_one(l, inst, it, v)?;
        }
        self.start(frame, inst, it)
    }

    /// Makes ready the nodes of a new iteration that wait for nothing.
    fn start(&mut self, frame: u32, inst: u32, it: u64) -> Result<()> {
        let plan = self.plan;
        for &l in plan.frames[frame as usize].starts.iter().rev() {
            self.make_ready(l, inst, it, false)?;
        }
        Ok(())
    }

    /// Bookkeeping after a node of (`inst`, `it`) ran: frees finished iterations, ends the
    /// instance when it is done.
    #[inline(always)]
    fn done_with(&mut self, inst: u32, it: u64) -> Result<()> {
        let i = self.inst(inst)?;
        i.iter(it)?.outstanding -= 1;
        i.outstanding -= 1;
        // What `free_iterations` and `maybe_finish` would find to do (most nodes: nothing).
        let free = i.iters.len() > 1 && i.iters[0].outstanding == 0;
        let finish = i.outstanding == 0 && i.pending_enters == 0;
        if free {
            self.free_iterations(inst)?;
        }
        if finish {
            self.maybe_finish(inst)?;
        }
        Ok(())
    }

    /// Frees the iterations of `inst` that are done: nothing in them outstanding, the ones
    /// before them gone, a later one started (and, for iteration 0, every `Enter` in).
    fn free_iterations(&mut self, inst: u32) -> Result<()> {
        let i = self
            .instances
            .get_mut(inst as usize)
            .and_then(Option::as_mut)
            .ok_or_else(|| Error::Internal("frame instance gone".into()))?;
        while i.iters.len() > 1
            && i.iters[0].outstanding == 0
            && (i.base > 0 || i.pending_enters == 0)
        {
            if let Some(mut old) = i.iters.pop_front() {
                old.slots.iter_mut().for_each(|s| *s = None);
                self.pool[i.frame as usize].push(old);
            }
            i.base += 1;
        }
        Ok(())
    }

    /// Ends `inst` if every `Enter` into it ran and nothing in it is outstanding: exits that
    /// never had a live value are dead in the parent.
    fn maybe_finish(&mut self, inst: u32) -> Result<()> {
        if inst == 0 {
            return Ok(());
        }
        let i = self.inst(inst)?;
        if i.pending_enters > 0 || i.outstanding > 0 {
            return Ok(());
        }
        let Some(done) = self.instances[inst as usize].take() else {
            return Ok(());
        };
        self.by_key.remove(&done.key);
        self.free.push(inst);
        let (p, pit) = done.parent;
        for &x in &done.dead_exits {
            if !done.live_exits.contains(&x) {
                self.propagate_one(x, p, pit, None)?;
            }
        }
        self.iter(p, pit)?.outstanding -= 1;
        self.inst(p)?.outstanding -= 1;
        self.free_iterations(p)?;
        self.maybe_finish(p)
    }
}

/// The end of a delivery to `dst` (`deliver`, `deliver_control`) that left it `ready`
/// (`Some(dead)`): the node goes on the ready stack (returned `Some(dead)`; `make_ready`, on the
/// iteration at hand), except a dead `Exit`, which only notes that it was dead (as `process`
/// would), its input slots cleared: done here, not through the ready stack (a loop's `Exit`s
/// are dead in every iteration but the last). The node that delivered is still running: its
/// `done_with` follows.
#[inline(always)]
fn settle(
    ready: Option<bool>,
    dst: u32,
    t: &Target,
    iter: &mut Iter,
    dead_exits: &mut Vec<u32>,
    outstanding: &mut u32,
) -> Option<bool> {
    match ready {
        Some(true) if t.is_exit => {
            iter.slots[t.base..t.base + t.num_inputs].fill(None);
            if !dead_exits.contains(&dst) {
                dead_exits.push(dst);
            }
            None
        }
        Some(dead) => {
            iter.outstanding += 1;
            *outstanding += 1;
            Some(dead)
        }
        None => None,
    }
}

/// One input of non-`Merge` node `local` in: whether it is now ready (`Some(dead)`).
#[inline(always)]
fn count_down(iter: &mut Iter, local: usize) -> Option<bool> {
    iter.pending[local] -= 1;
    (iter.pending[local] == 0).then_some(iter.dead[local] > 0)
}

/// Whether a `Merge` is ready (`Some(dead)`) after an arrival: control inputs all in and a
/// live data input present (live), or every data input of the iteration dead (dead).
fn merge_ready(
    iter: &mut Iter,
    local: usize,
    base: usize,
    num_inputs: usize,
    expected: u32,
) -> Option<bool> {
    if iter.pending[local] != 0 {
        return None;
    }
    if iter.slots[base..base + num_inputs]
        .iter()
        .any(Option::is_some)
    {
        iter.pending[local] = FIRED;
        Some(false)
    } else if iter.dead[local] >= expected {
        iter.pending[local] = FIRED;
        Some(true)
    } else {
        None
    }
}

/// What node `d` gives without running its kernel, `ins` being its input slots: its one dense
/// input when it forwards it (`Identity`, `LoopCond`; taken from its slot), a `Const`'s value.
/// `None` (`ins` untouched) for the others, which run their kernel.
fn forwarded(d: &DNode, ins: &mut [Option<Value>]) -> Option<Value> {
    match (&d.step.kernel, ins) {
        (_, [slot @ Some(Value::Dense(_))]) if d.forwards => slot.take(),
        (Kernel::Const(t), []) => Some(Value::Dense(t.clone())),
        _ => None,
    }
}

/// A binary kernel (`AddV2`, `Less`...) on two dense scalar inputs, run on them directly (the
/// kernel may write its result into an input's buffer that nothing else holds). `None` when
/// the kernel is not binary, an input is not a dense scalar or the kernel has no fast path for
/// them: `ins` is then as it was, for the general path.
fn scalar_binary(d: &DNode, ins: &mut [Option<Value>]) -> Option<Result<Value>> {
    let (Kernel::Binary { .. }, [a, b]) = (&d.step.kernel, ins) else {
        return None;
    };
    let scalar = |v: &Option<Value>| matches!(v, Some(Value::Dense(t)) if t.dims() == 0);
    if !(scalar(a) && scalar(b)) {
        return None;
    }
    let (Some(Value::Dense(x)), Some(Value::Dense(y))) = (a.take(), b.take()) else {
        return None;
    };
    match d.step.kernel.compute_scalars(x, y) {
        Ok(out) => Some(out.map(Value::Dense).map_err(|e| e.at_node(&d.step.node))),
        Err((x, y)) => {
            *a = Some(Value::Dense(x));
            *b = Some(Value::Dense(y));
            None
        }
    }
}

/// `Switch`'s predicate: a scalar bool.
fn switch_pred(pred: Value, ctx: &RunCtx<'_>) -> Result<bool> {
    // The usual predicate (`LoopCond`'s scalar), read in place.
    if let Value::Dense(t) = &pred {
        if t.dims() == 0 && t.dtype() == DataType::BOOL {
            if let Ok(&[v]) = t.as_slice::<bool>() {
                return Ok(v);
            }
        }
    }
    let t = pred.materialize(ctx)?;
    if t.dims() != 0 {
        return Err(Error::Kernel {
            node: String::new(),
            location: Box::default(),
            source: Box::new(tensorcast_core::Error::Op {
                op: "Switch",
                code: Code::InvalidArgument,
                message: format!(
                    "The second input must be a scalar, but it has shape {}",
                    t.shape()
                ),
            }),
        });
    }
    if t.dtype() != DataType::BOOL {
        return Err(Error::Internal("Switch predicate is not bool".into()));
    }
    let v = t
        .as_slice::<bool>()
        .map_err(|e| Error::Internal(e.to_string()))?;
    Ok(v[0])
}

fn missing(d: &DNode) -> Error {
    Error::Internal(format!("value of {} missing", d.step.node.name))
}
