//! The executor: runs a [`Plan`] - the fed tensors checked and put in their slots, each step's
//! kernel on the values its inputs read (moved out at their last use, so each intermediate is
//! freed after its last consumer), `BroadcastTo` kept lazy where its consumers allow.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_kernels::broadcast::{check_broadcast_to, shape_from_tensor, BroadcastView};
use tensorcast_kernels::elementwise::{binary, Operand};
use tensorcast_kernels::TensorOps;

use super::parallel::Parallel;
use super::{NodeTime, RunStats};
use crate::error::{Error, Result};
use crate::kernels::{self, Kernel};
use crate::plan::{Plan, Read, Step};
use crate::registry::Run;

/// A value flowing along an edge.
#[derive(Clone)]
pub(super) enum Value {
    /// A tensor.
    Dense(Tensor),
    /// `base` broadcast to `shape`, not materialised (the shape boxed: a value is moved along
    /// every edge, and most are dense).
    Lazy {
        base: Tensor,
        shape: Box<TensorShape>,
    },
}

impl Value {
    fn logical_shape(&self) -> TensorShape {
        match self {
            Value::Dense(t) => t.shape().clone(),
            Value::Lazy { shape, .. } => (**shape).clone(),
        }
    }
    /// Elements of the value as its consumers see it.
    pub(super) fn logical_elements(&self) -> i64 {
        match self {
            Value::Dense(t) => t.num_elements(),
            Value::Lazy { shape, .. } => shape.num_elements(),
        }
    }
    /// The value as a tensor: a lazy broadcast is made, once `run`'s allocation limit allows
    /// it (beyond the bytes of its base).
    pub(super) fn materialize(self, run: &Run<'_>) -> Result<Tensor> {
        match self {
            Value::Dense(t) => Ok(t),
            Value::Lazy { base, shape } => {
                run.check_tensor(base.dtype(), shape.dim_sizes(), base.total_bytes() as u64)?;
                tensorcast_kernels::broadcast::broadcast_to(&base, &shape).map_err(|source| {
                    Error::Kernel {
                        node: String::new(),
                        location: Box::default(),
                        source: Box::new(source),
                    }
                })
            }
        }
    }
}

/// What running a step gives: one value (most ops), or every output of a multi-output op.
pub(super) enum Outputs {
    /// Output 0.
    One(Value),
    /// Every output, in order.
    Many(Vec<Tensor>),
}

/// Puts a step's outputs in the slots the plan gave them.
pub(super) fn store(step: &Step, out: Outputs, slots: &mut [Option<Value>]) {
    match out {
        Outputs::One(v) => {
            if let Some(Some(slot)) = step.outputs.first() {
                slots[*slot] = Some(v);
            }
        }
        Outputs::Many(ts) => {
            for (t, slot) in ts.into_iter().zip(&step.outputs) {
                if let Some(slot) = slot {
                    slots[*slot] = Some(Value::Dense(t));
                }
            }
        }
    }
}

/// `base` broadcast to `shape` as a value: the base itself when the shapes agree.
fn lazy(base: Tensor, shape: TensorShape) -> Value {
    if *base.shape() == shape {
        Value::Dense(base)
    } else {
        Value::Lazy {
            base,
            shape: Box::new(shape),
        }
    }
}

/// Checks the fed tensors against the plan (in the caller's order, TensorFlow's messages) and
/// puts them in their slots.
fn feed(plan: &Plan, feeds: Vec<Tensor>, slots: &mut [Option<Value>]) -> Result<()> {
    for (f, t) in plan.feeds.iter().zip(feeds) {
        let name = || format!("{}:{}", f.node.name, f.index);
        if let Some(want) = f.dtype {
            if t.dtype() != want {
                return Err(Error::FeedType {
                    name: name(),
                    actual: t.dtype(),
                    expected: want,
                });
            }
        }
        if let Some(s) = &f.shape {
            if !s.is_compatible_with(&PartialTensorShape::from(t.shape())) {
                return Err(Error::FeedShape {
                    name: name(),
                    actual: t.shape().to_string(),
                    expected: s.debug_string(),
                });
            }
        }
        if f.duplicate {
            return Err(Error::DuplicateFeed(name()));
        }
        for (consumer, index, expected) in &f.consumer_types {
            if t.dtype() != *expected {
                return Err(Error::InputType {
                    index: *index,
                    node: consumer.name.clone(),
                    actual: t.dtype(),
                    source_name: name(),
                    expected: *expected,
                });
            }
        }
        slots[f.slot] = Some(Value::Dense(t));
    }
    Ok(())
}

/// Runs `plan` with `feeds` (one tensor per planned feed, in order) within `run`.
pub(super) fn run(
    plan: &Plan,
    feeds: Vec<Tensor>,
    run: &Run<'_>,
    parallel: Option<&Parallel>,
    stats: &mut RunStats,
    profile: Option<&mut Vec<NodeTime>>,
) -> Result<Vec<Tensor>> {
    let mut slots: Vec<Option<Value>> = (0..plan.num_slots).map(|_| None).collect();
    feed(plan, feeds, &mut slots)?;
    if let Some(d) = &plan.dynamic {
        // Control flow: the dataflow executor, on the fed tensors in feed order.
        let mut fed = Vec::with_capacity(plan.feeds.len());
        for f in &plan.feeds {
            match slots[f.slot].clone() {
                Some(v) => fed.push(v.materialize(run)?),
                None => return Err(Error::Internal("feed missing".into())),
            }
        }
        return super::dataflow::run(d, &fed, run, &mut stats.nodes_run);
    }
    match (parallel, profile) {
        // On a worker of the rayon pool (`in_worker`), so that each kernel's parallel loops
        // start there: called from outside the pool, every loop would hand its work to the
        // pool and sleep until it is done, a round trip through the scheduler per kernel.
        (_, Some(times)) => in_worker(plan, || {
            run_in_order(plan, &mut slots, run, stats, Some(times))
        })?,
        (Some(p), None) if plan.has_parallel_branches && rayon::current_num_threads() > 1 => {
            super::parallel::run(plan, &mut slots, run, p, stats)?
        }
        _ => in_worker(plan, || run_in_order(plan, &mut slots, run, stats, None))?,
    }
    let mut out = Vec::with_capacity(plan.fetches.len());
    for f in &plan.fetches {
        let v = read(&mut slots, f.read)
            .ok_or_else(|| Error::Internal(format!("fetch {} not computed", f.node.name)))?;
        out.push(v.materialize(run).map_err(|e| e.at_node(&f.node))?);
    }
    Ok(out)
}

/// `f` on a worker thread of the rayon pool when `plan` may use the pool (on this thread when
/// it is a worker already, when the pool has a single thread, or when no value of the plan is
/// large enough to be split: the hand-off would cost more than it saves).
fn in_worker<R: Send>(plan: &Plan, f: impl FnOnce() -> R + Send) -> R {
    if !plan.may_use_pool
        || rayon::current_thread_index().is_some()
        || rayon::current_num_threads() < 2
    {
        f()
    } else {
        rayon::scope(|_| f())
    }
}

/// The value in `r`'s slot: moved out at its last read, shared (an `Arc` clone) before.
pub(super) fn read(slots: &mut [Option<Value>], r: Read) -> Option<Value> {
    let slot = slots.get_mut(r.slot)?;
    if r.last {
        slot.take()
    } else {
        slot.clone()
    }
}

/// Runs the steps one after another in plan order; the first failure stops the run. With
/// `profile`, each step's time is appended to it.
fn run_in_order(
    plan: &Plan,
    slots: &mut [Option<Value>],
    run: &Run<'_>,
    stats: &mut RunStats,
    mut profile: Option<&mut Vec<NodeTime>>,
) -> Result<()> {
    let mut inputs: Vec<Value> = Vec::with_capacity(2);
    for step in &plan.steps {
        run.check_cancelled()?;
        for &r in &step.inputs {
            match read(slots, r) {
                Some(v) => inputs.push(v),
                None => return Err(missing(step)),
            }
        }
        let start = profile.is_some().then(std::time::Instant::now);
        let out = run_step(step, &mut inputs, run)?;
        if let (Some(times), Some(start)) = (profile.as_deref_mut(), start) {
            times.push(NodeTime::of(step, start.elapsed()));
        }
        store(step, out, slots);
    }
    stats.nodes_run += plan.steps.len();
    stats.max_concurrent_nodes = stats
        .max_concurrent_nodes
        .max(usize::from(!plan.steps.is_empty()));
    Ok(())
}

/// The error for an input value that is not there (a bug, reported instead of a panic).
pub(super) fn missing(step: &Step) -> Error {
    Error::Internal(format!("value of {} missing", step.node.name))
}

/// Runs one step on `inputs` (drained) within `run`, with errors attributed to its node.
pub(super) fn run_step(step: &Step, inputs: &mut Vec<Value>, run: &Run<'_>) -> Result<Outputs> {
    if matches!(
        (&step.kernel, inputs.len()),
        (Kernel::Fused(_), 1) | (Kernel::ConvChain(_), 2)
    ) {
        // A fused kernel's errors name the node of it that failed (the convolution or a node
        // of the chain), not the step's.
        let dense: Result<Vec<Tensor>> = inputs
            .drain(..)
            .map(|v| v.materialize(run).map_err(|e| e.at_node(&step.node)))
            .collect();
        return step
            .kernel
            .compute(&dense?)
            .map(|t| Outputs::One(Value::Dense(t)));
    }
    if step.kernel.multi() {
        let dense: Result<Vec<Tensor>> = inputs
            .drain(..)
            .map(|v| match v {
                Value::Dense(t) => Ok(t),
                lazy => lazy.materialize(run),
            })
            .collect();
        return dense
            .and_then(|d| step.kernel.compute_all(d, &step.node.name, run))
            .map(Outputs::Many)
            .map_err(|e| e.at_node(&step.node));
    }
    run_node(step, inputs, run)
        .map(Outputs::One)
        .map_err(|e| e.at_node(&step.node))
}

fn run_node(step: &Step, inputs: &mut Vec<Value>, run: &Run<'_>) -> Result<Value> {
    let may_stay_lazy = step.may_stay_lazy;
    let has_lazy = inputs.iter().any(|v| matches!(v, Value::Lazy { .. }));
    match (&step.kernel, inputs.len()) {
        // Identity forwards its input (moved, not copied).
        (Kernel::Identity, 1) if may_stay_lazy || !has_lazy => {
            return inputs.pop().ok_or_else(|| missing(step));
        }
        (Kernel::Fail(e), _) => {
            inputs.clear();
            return Err(e.clone());
        }
        _ => {}
    }
    if has_lazy || (may_stay_lazy && matches!(step.kernel, Kernel::BroadcastTo)) {
        let lazy = run_lazy(&step.kernel, inputs, may_stay_lazy);
        match lazy {
            Ok(Some(v)) => {
                inputs.clear();
                return Ok(v);
            }
            Ok(None) => {}
            Err(e) => {
                inputs.clear();
                return Err(e);
            }
        }
    }
    let dense = |v: Value| match v {
        Value::Dense(t) => Ok(t),
        lazy => lazy.materialize(run),
    };
    if let (Kernel::BroadcastTo, [Value::Dense(x), Value::Dense(s)]) =
        (&step.kernel, inputs.as_slice())
    {
        // A materialised broadcast: its shape comes from a value.
        if let Ok(target) = shape_from_tensor(s) {
            run.check_tensor(x.dtype(), target.dim_sizes(), x.total_bytes() as u64)
                .inspect_err(|_| inputs.clear())?;
        }
    }
    // The inputs on the stack for the usual arities (no allocation per node).
    let out = match inputs.len() {
        0 => step.kernel.compute(&[]),
        1 => {
            let a = inputs.pop().ok_or_else(|| missing(step))?;
            step.kernel.compute(&[dense(a)?])
        }
        2 => {
            let b = inputs.pop().ok_or_else(|| missing(step))?;
            let a = inputs.pop().ok_or_else(|| missing(step))?;
            let a = dense(a);
            let b = dense(b);
            step.kernel.compute(&[a?, b?])
        }
        _ => {
            let all: Vec<Tensor> = inputs.drain(..).map(dense).collect::<Result<_>>()?;
            step.kernel.compute(&all)
        }
    };
    Ok(Value::Dense(out?))
}

/// The lazy paths; `None` when the node must run on materialised inputs.
fn run_lazy(kernel: &Kernel, inputs: &[Value], may_stay_lazy: bool) -> Result<Option<Value>> {
    let out = match (kernel, inputs) {
        (Kernel::BroadcastTo, [x, s]) if may_stay_lazy => {
            let Value::Dense(s) = s else { return Ok(None) };
            let valid = s.dims() == 1 && matches!(s.dtype(), DataType::INT32 | DataType::INT64);
            let Some(target) = valid.then(|| shape_from_tensor(s).ok()).flatten() else {
                return Ok(None);
            };
            if check_broadcast_to(&x.logical_shape(), &target).is_err() {
                return Ok(None);
            }
            match x {
                Value::Dense(b) | Value::Lazy { base: b, .. } => lazy(b.clone(), target),
            }
        }
        // Shape reads a lazy broadcast's shape, never its values.
        (&Kernel::Shape { out_type }, [Value::Lazy { shape, .. }]) => {
            Value::Dense(kernels::shape_vector(shape, out_type)?)
        }
        (Kernel::Cast { dst, truncate }, [Value::Lazy { base, shape }]) if may_stay_lazy => {
            lazy(kernels::cast(base, *dst, *truncate)?, (**shape).clone())
        }
        (&Kernel::Bitcast { dst }, [Value::Lazy { base, shape }]) if may_stay_lazy => {
            if dst.size() != base.dtype().size() || base.dtype().size() == 0 {
                return Ok(None);
            }
            let b = tensorcast_kernels::bitcast::bitcast(base, dst).map_err(|source| {
                Error::Kernel {
                    node: String::new(),
                    location: Box::default(),
                    source: Box::new(source),
                }
            })?;
            lazy(b, (**shape).clone())
        }
        (
            &Kernel::Binary {
                op: bop,
                incompatible_shape_error: ise,
            },
            [a, b],
        ) => {
            // The consumer reads each lazy input in place, as a stride-0 broadcast view.
            let k = |r: tensorcast_core::Result<Tensor>| {
                r.map_err(|source| Error::Kernel {
                    node: String::new(),
                    location: Box::default(),
                    source: Box::new(source),
                })
            };
            fn view(v: &Value) -> tensorcast_core::Result<Option<BroadcastView<'_>>> {
                match v {
                    Value::Dense(_) => Ok(None),
                    Value::Lazy { base, shape } => base.broadcast_view(shape).map(Some),
                }
            }
            let (va, vb) = (view(a), view(b));
            let (va, vb) = match (va, vb) {
                (Ok(va), Ok(vb)) => (va, vb),
                _ => return Ok(None),
            };
            let dense = |v: &Value| match v {
                Value::Dense(t) | Value::Lazy { base: t, .. } => t.clone(),
            };
            let (ta, tb) = (dense(a), dense(b));
            let oa: Operand<'_> = va
                .as_ref()
                .map_or_else(|| Operand::from(&ta), Operand::from);
            let ob: Operand<'_> = vb
                .as_ref()
                .map_or_else(|| Operand::from(&tb), Operand::from);
            Value::Dense(k(binary(bop, oa, ob, ise))?)
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}
