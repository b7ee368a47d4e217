//! Running independent branches at once: steps whose inputs are ready run concurrently on the
//! rayon pool when they are big enough to pay for it.
//!
//! The run goes in rounds. Ready steps are taken lowest plan index first; a light one (inputs
//! below [`Parallel::min_elements`] elements in all) runs at once on the calling thread, a heavy
//! one waits. When no light step is ready, the heavy ones waiting run together, one rayon task
//! each, and their outputs are stored in plan order. Results are the same as running the plan in
//! order: every kernel sees the same input values.
//!
//! Errors are deterministic: a run reports the error of the failing step that comes first in the
//! plan's order, which is the error the in-order run reports. After a failure at step `p` only
//! steps before `p` still run (one of them may fail and take its place); nothing after it starts.
//! (TensorFlow's executor reports whichever failure it sees first, so with two failing
//! branches its choice can vary from run to run.)

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::executor::{missing, run_step, store, Outputs, Value};
use super::RunStats;
use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::registry::Run;

/// When to run ready steps concurrently.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parallel {
    /// A step whose inputs hold at least this many elements in all runs as its own task.
    pub(crate) min_elements: u64,
}

/// The run's mutable state outside the values.
struct State {
    pending: Vec<usize>,
    uses: Vec<usize>,
    ready: BinaryHeap<Reverse<usize>>,
    /// Steps at or after this index do not start (the first failure's index).
    limit: usize,
    failure: Option<Error>,
}

impl State {
    /// The value in `slot`, moved out at its last counted use.
    fn read(&mut self, slots: &mut [Option<Value>], slot: usize) -> Option<Value> {
        let left = self.uses.get_mut(slot)?;
        *left = left.saturating_sub(1);
        let v = slots.get_mut(slot)?;
        if *left == 0 {
            v.take()
        } else {
            v.clone()
        }
    }

    /// Records step `i`'s outcome: its output stored and its consumers released, or the failure
    /// kept when it is the earliest in plan order so far.
    fn finish(&mut self, plan: &Plan, slots: &mut [Option<Value>], i: usize, r: Result<Outputs>) {
        let step = &plan.steps[i];
        match r {
            Ok(v) => {
                store(step, v, slots);
                for &c in &step.consumers {
                    self.pending[c] -= 1;
                    if self.pending[c] == 0 {
                        self.ready.push(Reverse(c));
                    }
                }
            }
            Err(e) => {
                if i < self.limit {
                    self.limit = i;
                    self.failure = Some(e);
                }
            }
        }
    }
}

fn elements(v: &Value) -> u64 {
    u64::try_from(v.logical_elements()).unwrap_or(0)
}

/// Runs `plan`'s steps, concurrently where it pays; see the module docs.
pub(super) fn run(
    plan: &Plan,
    slots: &mut [Option<Value>],
    run: &Run<'_>,
    p: &Parallel,
    stats: &mut RunStats,
) -> Result<()> {
    let n = plan.steps.len();
    let mut st = State {
        pending: plan.steps.iter().map(|s| s.waits_for).collect(),
        uses: plan.reads.clone(),
        ready: (0..n)
            .filter(|&i| plan.steps[i].waits_for == 0)
            .map(Reverse)
            .collect(),
        limit: n,
        failure: None,
    };
    let mut heavy: Vec<(usize, Vec<Value>)> = Vec::new();
    loop {
        while let Some(Reverse(i)) = st.ready.pop() {
            if i >= st.limit {
                continue;
            }
            if let Err(e) = run.check_cancelled() {
                st.finish(plan, slots, i, Err(e));
                continue;
            }
            let step = &plan.steps[i];
            let mut inputs = Vec::with_capacity(step.inputs.len());
            for r in &step.inputs {
                match st.read(slots, r.slot) {
                    Some(v) => inputs.push(v),
                    None => return Err(missing(step)),
                }
            }
            if inputs.iter().map(elements).sum::<u64>() >= p.min_elements {
                heavy.push((i, inputs));
                continue;
            }
            let r = run_step(step, &mut inputs, run);
            stats.nodes_run += 1;
            stats.max_concurrent_nodes = stats.max_concurrent_nodes.max(1);
            st.finish(plan, slots, i, r);
        }
        heavy.retain(|(i, _)| *i < st.limit);
        if heavy.is_empty() {
            break;
        }
        let mut batch = std::mem::take(&mut heavy);
        batch.sort_unstable_by_key(|(i, _)| *i);
        stats.nodes_run += batch.len();
        let results: Vec<(usize, Result<Outputs>)> = if batch.len() == 1 {
            stats.max_concurrent_nodes = stats.max_concurrent_nodes.max(1);
            batch
                .into_iter()
                .map(|(i, mut inputs)| (i, run_step(&plan.steps[i], &mut inputs, run)))
                .collect()
        } else {
            stats.parallel_rounds += 1;
            let running = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            let results = batch
                .into_par_iter()
                .with_max_len(1)
                .map(|(i, mut inputs)| {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    let r = run_step(&plan.steps[i], &mut inputs, run);
                    running.fetch_sub(1, Ordering::SeqCst);
                    (i, r)
                })
                .collect();
            stats.max_concurrent_nodes =
                stats.max_concurrent_nodes.max(most.load(Ordering::SeqCst));
            results
        };
        // Outcomes apply in plan order (`collect` keeps the batch's order).
        for (i, r) in results {
            st.finish(plan, slots, i, r);
        }
    }
    match st.failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
