//! The plan of a run with TensorFlow 1 control flow (`Enter`, `Exit`, `Merge`, `Switch`,
//! `NextIteration`, `LoopCond`): every needed node with its static frame, its pending count, its
//! input slots and where each output goes, built once per run signature. The dataflow executor
//! (`execute/dataflow.rs`) runs it.
//!
//! Frames are assigned as TensorFlow's `BuildControlFlowInfo` assigns them (breadth first from
//! the nodes without inputs, which are in the root frame): an `Enter`'s consumers are in the
//! frame its `frame_name` names (a child of the `Enter`'s frame), an `Exit`'s in its frame's
//! parent, every other node's in its inputs' frame. A node whose inputs come from different
//! frames is refused with TensorFlow's message, before anything runs.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::attr;
use crate::build::graph::{Endpoint, Node};
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::plan::Step;
use crate::registry::Flow;

/// What a node is to the executor.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Class {
    /// Runs its kernel.
    Normal,
    /// `Enter` into static frame `child`.
    Enter {
        child: u32,
        constant: bool,
    },
    Exit,
    NextIteration,
    Switch,
    Merge,
}

/// Where one output goes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Edge {
    /// Data input `slot` of node `dst`.
    Data { dst: u32, slot: u32 },
    /// Fetch `i`.
    Fetch(u32),
}

#[derive(Debug)]
pub(crate) struct DNode {
    pub(crate) step: Step,
    pub(crate) class: Class,
    /// Its static frame.
    pub(crate) frame: u32,
    /// Its index among its frame's nodes (pending counts).
    pub(crate) local: u32,
    /// Its first input slot among its frame's slots.
    pub(crate) in_base: u32,
    /// Its data input count (the node's, kept here: every delivery reads it).
    pub(crate) num_inputs: u32,
    /// A `Normal` node whose run gives its one input back (`Identity`, `LoopCond`): the
    /// executor passes a dense input on without running the kernel.
    pub(crate) forwards: bool,
    /// `Merge`: data inputs it can get in iteration 0, and in later iterations.
    pub(crate) merge_first: u32,
    pub(crate) merge_later: u32,
    /// Per output, where it goes.
    pub(crate) outs: Vec<Vec<Edge>>,
    /// Nodes waiting for it by control edges.
    pub(crate) ctrl_outs: Vec<u32>,
}

#[derive(Debug)]
pub(crate) struct StaticFrame {
    pub(crate) name: String,
    pub(crate) parent: u32,
    /// Nodes of the frame.
    pub(crate) num_nodes: u32,
    /// Input slots of the frame's nodes.
    pub(crate) num_slots: u32,
    /// Initial pending counts of its nodes, by local index.
    pub(crate) pending: Vec<u32>,
    /// `Enter` nodes that feed it (an instance is complete when all have run).
    pub(crate) enters: u32,
    /// Fed tensors its nodes read: (slot, feed index).
    pub(crate) fed: Vec<(u32, u32)>,
    /// Nodes ready as soon as an iteration exists (a `Merge` with a fed input, other inputs,
    /// and no control inputs).
    pub(crate) starts: Vec<u32>,
}

impl StaticFrame {
    /// A frame without nodes yet.
    fn new(name: String, parent: u32) -> Self {
        Self {
            name,
            parent,
            num_nodes: 0,
            num_slots: 0,
            pending: Vec::new(),
            enters: 0,
            fed: Vec::new(),
            starts: Vec::new(),
        }
    }
}

/// The plan of a run with control flow.
#[derive(Debug)]
pub(crate) struct DynPlan {
    pub(crate) nodes: Vec<DNode>,
    pub(crate) frames: Vec<StaticFrame>,
    /// Nodes of the root frame ready at the start (nothing to wait for), run first to last.
    pub(crate) roots: Vec<u32>,
    /// The fetched nodes, whether each is in the root frame, and the feed it reads if it is
    /// a fed tensor.
    pub(crate) fetches: Vec<(Arc<Node>, bool, Option<usize>)>,
    /// Per fetch, TensorFlow's name for it in errors: its index among the fetches sorted by
    /// name (`Retval[i]`) and the `_retval_<op>_<output>_<i>` node.
    pub(crate) retvals: Vec<(usize, String)>,
}

pub(crate) const ROOT: u32 = 0;

fn flow_error(msg: String) -> Error {
    Error::ControlFlow(msg)
}

impl DynPlan {
    /// The plan of `needed` nodes (graph ids) of `nodes`, `fed` endpoints (by feed index),
    /// `fetches`. `kernel` resolves a node's kernel.
    pub(crate) fn build(
        nodes: &[Arc<Node>],
        needed: &[bool],
        fed: &HashMap<Endpoint, usize>,
        fetches: &[Endpoint],
        kernel: impl Fn(&Node) -> Kernel,
    ) -> Result<DynPlan> {
        let ids: Vec<usize> = (0..nodes.len()).filter(|&i| needed[i]).collect();
        let mut local_of = vec![u32::MAX; nodes.len()];
        for (l, &id) in ids.iter().enumerate() {
            local_of[id] = l as u32;
        }
        let n = ids.len();
        // Edges between needed nodes (fed endpoints are not edges).
        let mut data_out: Vec<Vec<(usize, u32, u32)>> = vec![Vec::new(); n]; // (output, dst, slot)
        let mut ctrl_out: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut has_inputs = vec![false; n];
        for (l, &id) in ids.iter().enumerate() {
            let node = &nodes[id];
            for (slot, ep) in node.inputs.iter().enumerate() {
                if fed.contains_key(ep) {
                    continue;
                }
                let src = local_of[ep.node];
                if src == u32::MAX {
                    return Err(Error::Internal(format!("{} not planned", node.name)));
                }
                data_out[src as usize].push((ep.index, l as u32, slot as u32));
                has_inputs[l] = true;
            }
            for &c in &node.control_inputs {
                let src = local_of[c];
                if src == u32::MAX {
                    return Err(Error::Internal(format!("{} not planned", node.name)));
                }
                ctrl_out[src as usize].push(l as u32);
                has_inputs[l] = true;
            }
        }
        let flow: Vec<Option<Flow>> = ids.iter().map(|&id| Flow::of(nodes[id].kind)).collect();
        // Static frames, breadth first from the input-less nodes (TensorFlow's order).
        let mut frames = vec![StaticFrame::new(String::new(), ROOT)];
        let mut frame_by_name: HashMap<String, u32> = HashMap::new();
        let mut frame_of = vec![u32::MAX; n];
        let mut assigned_by = vec![u32::MAX; n];
        let mut queue: VecDeque<u32> = VecDeque::new();
        for l in 0..n {
            if !has_inputs[l] {
                frame_of[l] = ROOT;
                queue.push_back(l as u32);
            }
        }
        let name_of = |l: u32| nodes[ids[l as usize]].name.as_str();
        while let Some(src) = queue.pop_front() {
            let s = src as usize;
            let out_frame = match flow[s] {
                Some(Flow::Enter) => {
                    let node = &nodes[ids[s]];
                    let fname = attr::get_string(&node.attrs, "frame_name")
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default();
                    if fname.is_empty() {
                        return Err(flow_error(format!(
                            "The Enter {{{{node {}}}}} must have a frame name.",
                            node.name
                        )));
                    }
                    match frame_by_name.get(&fname) {
                        Some(&f) => {
                            if frames[f as usize].parent != frame_of[s] {
                                return Err(flow_error(format!(
                                    "Invalid loop structure: Mismatched parent frames for \"{fname}\": \"{}\" vs \"{}\".",
                                    frames[frames[f as usize].parent as usize].name,
                                    frames[frame_of[s] as usize].name
                                )));
                            }
                            f
                        }
                        None => {
                            let f = frames.len() as u32;
                            frames.push(StaticFrame::new(fname.clone(), frame_of[s]));
                            frame_by_name.insert(fname, f);
                            f
                        }
                    }
                }
                Some(Flow::Exit) => {
                    if frame_of[s] == ROOT {
                        return Err(flow_error(
                            "Invalid Exit op: Cannot find a corresponding Enter op.".into(),
                        ));
                    }
                    frames[frame_of[s] as usize].parent
                }
                _ => frame_of[s],
            };
            let dsts = data_out[s]
                .iter()
                .map(|&(_, d, _)| d)
                .chain(ctrl_out[s].iter().copied());
            for d in dsts {
                let du = d as usize;
                if frame_of[du] == u32::MAX {
                    frame_of[du] = out_frame;
                    assigned_by[du] = src;
                    queue.push_back(d);
                } else if frame_of[du] != out_frame {
                    return Err(flow_error(format!(
                        "{{{{node {}}}}} has inputs from different frames. The input {{{{node {}}}}} is in frame '{}'. The input {{{{node {}}}}} is in frame '{}'.",
                        name_of(d),
                        name_of(src),
                        frames[out_frame as usize].name,
                        name_of(assigned_by[du]),
                        frames[frame_of[du] as usize].name
                    )));
                }
            }
        }
        // Nodes no root reaches (a loop with no way in) never run; they sit in the root frame.
        for f in &mut frame_of {
            if *f == u32::MAX {
                *f = ROOT;
            }
        }
        // Local indices, slots, pending counts.
        let mut dnodes = Vec::with_capacity(n);
        let mut roots = Vec::new();
        for l in 0..n {
            let node = &nodes[ids[l]];
            let f = frame_of[l] as usize;
            let frame = &mut frames[f];
            let local = frame.num_nodes;
            let in_base = frame.num_slots;
            frame.num_nodes += 1;
            frame.num_slots += node.inputs.len() as u32;
            for (slot, ep) in node.inputs.iter().enumerate() {
                if let Some(&i) = fed.get(ep) {
                    frame.fed.push((in_base + slot as u32, i as u32));
                }
            }
            let not_fed = node.inputs.iter().filter(|ep| !fed.contains_key(ep));
            let class = match flow[l] {
                Some(Flow::Enter) => {
                    let fname = attr::get_string(&node.attrs, "frame_name")
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default();
                    let child = frame_by_name.get(&fname).copied().unwrap_or(ROOT);
                    Class::Enter {
                        child,
                        constant: attr::get_bool(&node.attrs, "is_constant").unwrap_or(false),
                    }
                }
                Some(Flow::Exit) => Class::Exit,
                Some(Flow::NextIteration) => Class::NextIteration,
                Some(Flow::Switch) => Class::Switch,
                Some(Flow::Merge) => Class::Merge,
                Some(Flow::LoopCond) | None => Class::Normal,
            };
            let (pending, merge_first, merge_later) = if matches!(class, Class::Merge) {
                let (mut from_next, mut from_enter, mut other) = (0u32, 0u32, 0u32);
                for ep in not_fed {
                    match flow[local_of[ep.node] as usize] {
                        Some(Flow::NextIteration) => from_next += 1,
                        Some(Flow::Enter) => from_enter += 1,
                        _ => other += 1,
                    }
                }
                let has_fed = node.inputs.len() as u32 > from_next + from_enter + other;
                // (One with no other input is a root already.)
                if has_fed && node.control_inputs.is_empty() && has_inputs[l] {
                    frame.starts.push(l as u32);
                }
                let (first, later) = if from_next > 0 {
                    (from_enter + other, from_next + other)
                } else {
                    let all = from_enter + other;
                    (all, all)
                };
                (node.control_inputs.len() as u32, first, later)
            } else {
                // A node whose inputs are all fed has no edges in: a root of the root frame.
                let pending = (not_fed.count() + node.control_inputs.len()) as u32;
                (pending, 0, 0)
            };
            frame.pending.push(pending);
            if let Class::Enter { child, .. } = class {
                frames[child as usize].enters += 1;
            }
            if f == ROOT as usize && !has_inputs[l] {
                roots.push(l as u32);
            }
            let num_outputs = node.output_types.len().max(1);
            let mut outs: Vec<Vec<Edge>> = vec![Vec::new(); num_outputs];
            for &(index, dst, slot) in &data_out[l] {
                if let Some(o) = outs.get_mut(index) {
                    o.push(Edge::Data { dst, slot });
                }
            }
            let kernel = kernel(node);
            // `LoopCond`'s kernel gives its inputs back (`Reg` with one output).
            let forwards = node.inputs.len() == 1
                && match (&kernel, flow[l]) {
                    (Kernel::Identity, _) => true,
                    (Kernel::Reg { out_types, .. }, Some(Flow::LoopCond)) => out_types.len() == 1,
                    _ => false,
                };
            dnodes.push(DNode {
                step: Step {
                    node: node.clone(),
                    kernel,
                    inputs: Vec::new(),
                    outputs: Vec::new(),
                    may_stay_lazy: false,
                    consumers: Vec::new(),
                    waits_for: 0,
                },
                class,
                frame: f as u32,
                local,
                in_base,
                num_inputs: node.inputs.len() as u32,
                forwards,
                merge_first,
                merge_later,
                outs,
                ctrl_outs: ctrl_out[l].clone(),
            });
        }
        let mut plan_fetches = Vec::with_capacity(fetches.len());
        for (i, ep) in fetches.iter().enumerate() {
            let node = nodes[ep.node].clone();
            if let Some(&f) = fed.get(ep) {
                plan_fetches.push((node, true, Some(f)));
                continue;
            }
            let l = local_of[ep.node] as usize;
            let d = dnodes
                .get_mut(l)
                .ok_or_else(|| Error::Internal(format!("fetch {} not planned", node.name)))?;
            let in_root = d.frame == ROOT;
            match d.outs.get_mut(ep.index) {
                Some(o) => o.push(Edge::Fetch(i as u32)),
                None => {
                    return Err(Error::Internal(format!(
                        "fetch {}:{} not planned",
                        node.name, ep.index
                    )))
                }
            }
            plan_fetches.push((node, in_root, None));
        }
        let names: Vec<String> = fetches
            .iter()
            .map(|ep| format!("{}:{}", nodes[ep.node].name, ep.index))
            .collect();
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort();
        sorted.dedup();
        let retvals = fetches
            .iter()
            .zip(&names)
            .map(|(ep, name)| {
                let i = sorted.binary_search(&name).unwrap_or(0);
                (
                    i,
                    format!("_retval_{}_{}_{i}", nodes[ep.node].name, ep.index),
                )
            })
            .collect();
        Ok(DynPlan {
            retvals,
            nodes: dnodes,
            frames,
            roots,
            fetches: plan_fetches,
        })
    }
}
