//! [`Scope`]: TensorFlow's C++ `Scope`, the bundle of construction properties every op is built
//! with (graph, name prefix and name map, control dependencies, device, sticky status).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tensorcast_proto::{AttrValue, GraphDef};

use crate::build::graph::{Graph, NodeSpec};
use crate::build::input::Input;
use crate::build::operation::Operation;
use crate::error::{Error, Result};

type NameMap = Arc<Mutex<HashMap<String, u64>>>;

/// Construction properties for ops: a cheap, cloneable value; every `with_*`/`new_sub_scope`
/// returns a new scope and leaves `self` unchanged.
///
/// Shared between all scopes derived from one root: the graph and the status ("first error
/// wins": once an op fails, every later op built from any scope of the same root returns that
/// error without touching the graph, so code ported from C++ can check [`Scope::ok`] once at the
/// end). Shared with the parent unless `new_sub_scope` was given a non-empty name: the name map.
#[derive(Clone)]
pub struct Scope {
    graph: Graph,
    status: Arc<Mutex<Option<Error>>>,
    names: NameMap,
    prefix: String,
    op_name: Option<String>,
    control_deps: Vec<Operation>,
    device: String,
    kernel_label: Option<String>,
    colocation: Vec<String>,
    /// The operations colocation names (checked to be of this graph when an op is built).
    colocation_ops: Vec<Operation>,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("prefix", &self.prefix)
            .field("op_name", &self.op_name)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl Scope {
    /// A root scope over a new, empty graph (`Scope::NewRootScope()`).
    pub fn new_root_scope() -> Scope {
        Scope::with_graph(Graph::new())
    }

    /// A root scope adding to an existing graph (its names are taken from the graph's nodes).
    pub fn with_graph(graph: Graph) -> Scope {
        let names: HashMap<String, u64> = graph
            .nodes()
            .iter()
            .map(|n| (n.name().to_string(), 0))
            .collect();
        Scope {
            graph,
            status: Arc::new(Mutex::new(None)),
            names: Arc::new(Mutex::new(names)),
            prefix: String::new(),
            op_name: None,
            control_deps: Vec::new(),
            device: String::new(),
            kernel_label: None,
            colocation: Vec::new(),
            colocation_ops: Vec::new(),
        }
    }

    /// A child scope whose ops are named `<prefix>/<name>/...` (`NewSubScope`). `name` is made
    /// unique in this scope's name map (which op names share: `linear`, `linear_1`); the child
    /// starts a fresh map. An empty `name` keeps the prefix and shares this scope's map.
    pub fn new_sub_scope(&self, name: &str) -> Scope {
        let mut s = self.clone();
        s.op_name = None;
        if name.is_empty() {
            return s;
        }
        let unique = self.unique_name(name);
        s.prefix = self.qualify(&unique);
        s.names = Arc::new(Mutex::new(HashMap::new()));
        s
    }

    /// A scope whose next op is named `name` (made unique like any name) instead of its op type.
    pub fn with_op_name(&self, name: impl std::fmt::Display) -> Scope {
        let mut s = self.clone();
        s.op_name = Some(name.to_string());
        s
    }

    /// A scope whose ops also depend on `ops` (appended after this scope's dependencies).
    pub fn with_control_dependencies<'a>(
        &self,
        ops: impl IntoIterator<Item = &'a Operation>,
    ) -> Scope {
        let mut s = self.clone();
        s.control_deps.extend(ops.into_iter().cloned());
        s
    }

    /// A scope without control dependencies.
    pub fn with_no_control_dependencies(&self) -> Scope {
        let mut s = self.clone();
        s.control_deps.clear();
        s
    }

    /// A scope whose ops request `device` (written to `NodeDef.device`).
    pub fn with_device(&self, device: &str) -> Scope {
        let mut s = self.clone();
        s.device = device.to_string();
        s
    }

    /// A scope whose ops carry the kernel label `label` (attr `_kernel`).
    pub fn with_kernel_label(&self, label: &str) -> Scope {
        let mut s = self.clone();
        s.kernel_label = Some(label.to_string());
        s
    }

    /// A scope whose ops are colocated with `op` (attr `_class`, `loc:@<name>`).
    pub fn colocate_with(&self, op: &Operation) -> Scope {
        let mut s = self.clone();
        s.colocation.push(format!("loc:@{}", op.name()));
        s.colocation_ops.push(op.clone());
        s.colocation.sort();
        s.colocation.dedup();
        s
    }

    /// A scope without colocation constraints.
    pub fn clear_colocation(&self) -> Scope {
        let mut s = self.clone();
        s.colocation.clear();
        s.colocation_ops.clear();
        s
    }

    /// True while no op built from this root has failed.
    pub fn ok(&self) -> bool {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// The first error any op built from this root hit.
    ///
    /// # Errors
    /// That error, if there was one.
    pub fn status(&self) -> Result<()> {
        match &*self.status.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// Records `error` unless an earlier one is recorded (first error wins).
    pub fn update_status(&self, error: Error) {
        let mut s = self.status.lock().unwrap_or_else(|e| e.into_inner());
        if s.is_none() {
            *s = Some(error);
        }
    }

    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The control dependencies ops built here get.
    pub fn control_deps(&self) -> &[Operation] {
        &self.control_deps
    }

    /// The full name the next op of type `default_name` would get, consuming it
    /// (`GetUniqueNameForOp`).
    pub fn get_unique_name_for_op(&self, default_name: &str) -> String {
        let base = self
            .op_name
            .clone()
            .unwrap_or_else(|| default_name.to_string());
        let unique = self.unique_name(&base);
        self.qualify(&unique)
    }

    /// The graph as a `GraphDef`.
    ///
    /// # Errors
    /// The stored error, if an op built from this root failed (as TensorFlow's `ToGraphDef`).
    pub fn to_graph_def(&self) -> Result<GraphDef> {
        self.status()?;
        Ok(self.graph.to_graph_def())
    }

    fn qualify(&self, unique: &str) -> String {
        if self.prefix.is_empty() {
            unique.to_string()
        } else {
            format!("{}/{unique}", self.prefix)
        }
    }

    /// TensorFlow's `GetUniqueName`: `p`, then `p_1`, `p_2`, ... skipping names already taken.
    fn unique_name(&self, prefix: &str) -> String {
        let mut map = self.names.lock().unwrap_or_else(|e| e.into_inner());
        let Some(counter) = map.get(prefix).copied() else {
            map.insert(prefix.to_string(), 0);
            return prefix.to_string();
        };
        let mut k = counter;
        let unique = loop {
            k += 1;
            let candidate = format!("{prefix}_{k}");
            if !map.contains_key(&candidate) {
                break candidate;
            }
        };
        map.insert(prefix.to_string(), k);
        map.insert(unique.clone(), 0);
        unique
    }

    /// Builds a node of any registered op type from its inputs and explicitly set attrs (what
    /// TensorFlow's C API `TF_NewOperation` ... `TF_FinishOperation` does): type attrs are
    /// inferred from the inputs, defaults filled in, attrs validated, shapes inferred. Named
    /// `op_type` unless [`Scope::with_op_name`] says otherwise. The op classes in
    /// [`ops`](crate::build::ops) are this with typed arguments.
    ///
    /// # Errors
    /// The scope's stored error, or the node's graph-time error (also stored in the scope).
    pub fn new_operation(
        &self,
        op_type: &str,
        inputs: Vec<Input>,
        attrs: crate::Attrs,
    ) -> Result<Operation> {
        self.build_attrs(op_type, inputs, attrs)
    }

    /// The body every op class shares.
    pub(crate) fn build_op(
        &self,
        op: &str,
        inputs: Vec<Input>,
        attrs: Vec<(&str, AttrValue)>,
    ) -> Result<Operation> {
        self.build_attrs(
            op,
            inputs,
            attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        )
    }

    /// Sticky status, implicit constants, unique name, control deps, device, NodeBuilder checks,
    /// shape inference.
    fn build_attrs(
        &self,
        op: &str,
        inputs: Vec<Input>,
        mut attr_map: crate::Attrs,
    ) -> Result<Operation> {
        self.status()?;
        // Operations of another graph (their ids mean nothing here).
        if let Some(op) = self
            .control_deps
            .iter()
            .chain(&self.colocation_ops)
            .find(|op| !op.graph.same_graph(&self.graph))
        {
            let e = Error::ForeignOperation(op.name());
            self.update_status(e.clone());
            return Err(e);
        }
        let mut endpoints = Vec::with_capacity(inputs.len());
        for input in inputs {
            match input.to_output(self) {
                Ok(o) => endpoints.push(o.endpoint()),
                Err(e) => {
                    self.update_status(e.clone());
                    return Err(e);
                }
            }
        }
        let name = self.get_unique_name_for_op(op);
        if let Some(label) = &self.kernel_label {
            attr_map.insert(
                "_kernel".into(),
                AttrValue {
                    value: Some(tensorcast_proto::attr_value::Value::S(Bytes::from(
                        label.clone(),
                    ))),
                },
            );
        }
        if !self.colocation.is_empty() {
            let list = self
                .colocation
                .iter()
                .map(|s| Bytes::from(s.clone()))
                .collect();
            attr_map.insert("_class".into(), AttrValue::of_strings(list));
        }
        let spec = NodeSpec {
            name,
            op: op.to_string(),
            inputs: endpoints,
            control_inputs: self.control_deps.iter().map(|o| o.id).collect(),
            device: self.device.clone(),
            attrs: attr_map,
            experimental_type: None,
            debug_info: None,
        };
        let result = self.graph.add_node(spec);
        if let Err(e) = &result {
            self.update_status(e.clone());
        }
        result
    }
}
