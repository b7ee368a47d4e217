//! TF2 object-based checkpoints: the `TrackableObjectGraph` stored as
//! `_CHECKPOINTABLE_OBJECT_GRAPH`, each saved tensor given an object path.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use tensorcast_proto::trackable_object_graph::trackable_object::{
    ObjectReference, SerializedTensor,
};
use tensorcast_proto::trackable_object_graph::TrackableObject;
use tensorcast_proto::TrackableObjectGraph;

/// A slot variable (an optimizer's per-variable state: Adam's `m` and `v`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotOf {
    /// The checkpoint key of the variable the slot belongs to.
    pub variable_key: String,
    /// The slot's name (`m`, `v`, `momentum`).
    pub slot_name: String,
}

/// A tensor the object graph names: its checkpoint key and where it lives among the objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectTensor {
    /// The bundle key (`model/.../.ATTRIBUTES/VARIABLE_VALUE`).
    pub key: String,
    /// The object path a user knows it by (`model/layer_with_weights-0/kernel`): for a
    /// variable the path of the variable object, for another attribute the object's path and
    /// the attribute name. See [`ObjectGraph`] for which path is chosen.
    pub path: String,
    /// The attribute name (`VARIABLE_VALUE` for variables).
    pub attribute: String,
    /// The node that saves it.
    pub node: usize,
    /// Set when the tensor is an optimizer's slot variable.
    pub slot: Option<SlotOf>,
}

/// A decoded `TrackableObjectGraph`, with an object path for every saved tensor.
///
/// An object is often reachable by several paths: Keras 3 keys a model's weights by the
/// optimizer's list (`optimizer/_trainable_variables/0`), TensorFlow's shortest path, while the
/// model reaches them as `model/.../kernel`. The path given is the one a user expects: the
/// cheapest by (edges through an optimizer, edges through a generic variable list such as
/// `_variables` or `_trainable_variables`, number of edges), ties going to the first found
/// breadth-first. Slot variables not reachable otherwise get TensorFlow's own name
/// `<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>`.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectGraph {
    proto: TrackableObjectGraph,
    paths: Vec<Option<String>>,
    tensors: Vec<ObjectTensor>,
}

/// A path's cost: edges through an optimizer, through a generic variable list, in all.
type Cost = (u32, u32, u32);

const GENERIC_LISTS: &[&str] = &[
    "_variables",
    "_trainable_variables",
    "_non_trainable_variables",
    "_all_variables",
    "variables",
    "trainable_variables",
    "non_trainable_variables",
    "keras_api",
];

/// `trackable_utils.escape_local_name`: `.` becomes `..`, `/` becomes `.S`.
pub fn escape_local_name(name: &str) -> String {
    name.replace('.', "..").replace('/', ".S")
}

/// The inverse of [`escape_local_name`].
pub fn unescape_local_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        if c == '.' {
            match chars.next() {
                Some('.') => out.push('.'),
                Some('S') => out.push('/'),
                Some(o) => {
                    out.push('.');
                    out.push(o);
                }
                None => out.push('.'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl ObjectGraph {
    /// Decodes the paths of `proto` (node 0 is the root). Edges to nodes that do not exist are
    /// ignored.
    pub fn new(proto: TrackableObjectGraph) -> Self {
        let n = proto.nodes.len();
        let optimizer_like = |node: &TrackableObject| {
            !node.slot_variables.is_empty()
                || node
                    .children
                    .iter()
                    .any(|c| c.local_name == "_iterations" || c.local_name == "iter")
        };
        // Dijkstra over (optimizer edges, generic-list edges, edges) from the root.
        let mut best: Vec<Option<(Cost, String)>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        let mut seq = 0u64;
        if n > 0 {
            best[0] = Some(((0, 0, 0), String::new()));
            heap.push(Reverse(((0u32, 0u32, 0u32), seq, 0usize)));
        }
        let mut done = vec![false; n];
        while let Some(Reverse((cost, _, v))) = heap.pop() {
            if done[v] {
                continue;
            }
            done[v] = true;
            let base = best[v].as_ref().map(|b| b.1.clone()).unwrap_or_default();
            for c in &proto.nodes[v].children {
                let Ok(u) = usize::try_from(c.node_id) else {
                    continue;
                };
                if u >= n || done[u] {
                    continue;
                }
                let lower = c.local_name.to_ascii_lowercase();
                let opt = u32::from(lower.contains("optimizer") || optimizer_like(&proto.nodes[u]));
                let generic = u32::from(GENERIC_LISTS.contains(&c.local_name.as_str()));
                let nc = (
                    cost.0.saturating_add(opt),
                    cost.1.saturating_add(generic),
                    cost.2.saturating_add(1),
                );
                if best[u].as_ref().is_none_or(|b| nc < b.0) {
                    let path = if base.is_empty() {
                        c.local_name.clone()
                    } else {
                        format!("{base}/{}", c.local_name)
                    };
                    best[u] = Some((nc, path));
                    seq += 1;
                    heap.push(Reverse((nc, seq, u)));
                }
            }
        }
        let mut paths: Vec<Option<String>> = best.into_iter().map(|b| b.map(|b| b.1)).collect();
        // Slots: link them to their variables, and name the unreachable ones as TensorFlow does.
        let mut slot_of: BTreeMap<usize, SlotOf> = BTreeMap::new();
        for (oi, node) in proto.nodes.iter().enumerate() {
            for s in &node.slot_variables {
                let (Ok(var), Ok(slot)) = (
                    usize::try_from(s.original_variable_node_id),
                    usize::try_from(s.slot_variable_node_id),
                ) else {
                    continue;
                };
                if var >= n || slot >= n {
                    continue;
                }
                let Some(vkey) = proto.nodes[var]
                    .attributes
                    .first()
                    .map(|a| a.checkpoint_key.clone())
                else {
                    continue;
                };
                slot_of.insert(
                    slot,
                    SlotOf {
                        variable_key: vkey,
                        slot_name: s.slot_name.clone(),
                    },
                );
                if paths[slot].is_none() {
                    if let (Some(vp), Some(op)) = (paths[var].clone(), paths[oi].clone()) {
                        paths[slot] = Some(format!("{vp}/.OPTIMIZER_SLOT/{op}/{}", s.slot_name));
                    }
                }
            }
        }
        let mut tensors = Vec::new();
        for (i, node) in proto.nodes.iter().enumerate() {
            for a in &node.attributes {
                let base = paths[i].clone().unwrap_or_default();
                let path = if a.name == "VARIABLE_VALUE" {
                    base
                } else if base.is_empty() {
                    a.name.clone()
                } else {
                    format!("{base}/{}", a.name)
                };
                tensors.push(ObjectTensor {
                    key: a.checkpoint_key.clone(),
                    path,
                    attribute: a.name.clone(),
                    node: i,
                    slot: slot_of.get(&i).cloned(),
                });
            }
        }
        tensors.sort_by(|a, b| a.key.cmp(&b.key));
        Self {
            proto,
            paths,
            tensors,
        }
    }

    /// The decoded proto.
    pub fn proto(&self) -> &TrackableObjectGraph {
        &self.proto
    }

    /// The path chosen for each node (`None` for nodes the root does not reach); the root's
    /// is empty.
    pub fn node_paths(&self) -> &[Option<String>] {
        &self.paths
    }

    /// Every tensor the graph names, sorted by checkpoint key.
    pub fn tensors(&self) -> &[ObjectTensor] {
        &self.tensors
    }

    /// The tensor saved under `key`, if the graph names it.
    pub fn tensor(&self, key: &str) -> Option<&ObjectTensor> {
        self.tensors
            .binary_search_by(|t| t.key.as_str().cmp(key))
            .ok()
            .map(|i| &self.tensors[i])
    }

    /// An object graph for TF2 keys `<escaped path>/.ATTRIBUTES/<escaped attribute>`: one node
    /// per path component under the root, each key an attribute of its object (so that
    /// `tf.train.Checkpoint(name=obj, ...).restore` finds every variable by its path). Keys of
    /// another form (TF1 names, slot keys with `.OPTIMIZER_SLOT`, `_CHECKPOINTABLE_OBJECT_GRAPH`)
    /// are left out.
    pub fn from_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> TrackableObjectGraph {
        let mut nodes = vec![TrackableObject::default()];
        let mut index: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for key in keys {
            let Some((path, attr)) = key.rsplit_once("/.ATTRIBUTES/") else {
                continue;
            };
            if path.contains(".OPTIMIZER_SLOT") || path.is_empty() {
                continue;
            }
            let mut at = 0usize;
            for comp in path.split('/') {
                let name = unescape_local_name(comp);
                at = match index.get(&(at, name.clone())) {
                    Some(&c) => c,
                    None => {
                        let id = nodes.len();
                        nodes.push(TrackableObject::default());
                        nodes[at].children.push(ObjectReference {
                            node_id: id as i32,
                            local_name: name.clone(),
                        });
                        index.insert((at, name), id);
                        id
                    }
                };
            }
            nodes[at].attributes.push(SerializedTensor {
                name: unescape_local_name(attr),
                full_name: String::new(),
                checkpoint_key: key.to_string(),
            });
        }
        TrackableObjectGraph { nodes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_escape_and_unescape() {
        assert_eq!(escape_local_name("a.b/c"), "a..b.Sc");
        assert_eq!(unescape_local_name("a..b.Sc"), "a.b/c");
    }

    #[test]
    fn keys_build_a_graph_whose_paths_are_the_keys() {
        let keys = [
            "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
            "model/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
            "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
            "_CHECKPOINTABLE_OBJECT_GRAPH",
        ];
        let g = ObjectGraph::new(ObjectGraph::from_keys(keys));
        let paths: Vec<(&str, &str)> = g
            .tensors()
            .iter()
            .map(|t| (t.key.as_str(), t.path.as_str()))
            .collect();
        assert_eq!(
            paths,
            vec![
                (keys[1], "model/layer_with_weights-0/bias"),
                (keys[0], "model/layer_with_weights-0/kernel"),
                (keys[2], "save_counter"),
            ]
        );
    }

    #[test]
    fn hostile_graphs_do_not_panic() {
        let mut g = ObjectGraph::from_keys(["a/b/.ATTRIBUTES/VARIABLE_VALUE"]);
        g.nodes[0].children.push(ObjectReference {
            node_id: 99,
            local_name: "x".into(),
        });
        g.nodes[1].children.push(ObjectReference {
            node_id: 0,
            local_name: "cycle".into(),
        });
        let og = ObjectGraph::new(g);
        assert_eq!(og.tensors()[0].path, "a/b");
        let _ = ObjectGraph::new(TrackableObjectGraph::default());
    }
}
