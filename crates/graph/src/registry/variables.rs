//! Resource variables as TensorFlow 2 graphs use them: `VarHandleOp` (a handle naming a
//! variable), `ReadVariableOp` (its value), `AssignVariableOp` (a new value). Values live in the
//! session's [`Resources`]; a SavedModel's variables are put there from its checkpoint before a
//! signature runs.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use tensorcast_core::{Code, DataType, PartialTensorShape, ResourceHandle, Tensor};

use super::spec::op_def;
use super::{kernel_error, Entry, KernelCtx, ShapeCtx};
use crate::attr;
use crate::error::Result;

/// The variables of one session, by name (`container/shared_name` as TensorFlow keys them, the
/// container empty for the default one).
#[derive(Default)]
pub(crate) struct Resources {
    vars: RwLock<HashMap<String, Tensor>>,
    /// The functions of the session's graph, for the ops that call them (`While`, `If`,
    /// `Case`). Weak: the session owns the library, whose compiled functions hold these
    /// resources.
    functions: RwLock<Option<Weak<dyn Functions>>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("vars", &self.len())
            .finish_non_exhaustive()
    }
}

/// Runs functions of a graph's library by name.
pub(crate) trait Functions: Send + Sync {
    /// Runs function `name` on `args` inside `run` (its cancellation, limits and the calls it
    /// is nested in): the function's outputs, in order.
    fn call(&self, name: &str, args: Vec<Tensor>, run: &super::Run<'_>) -> Result<Vec<Tensor>>;
}

impl Resources {
    /// The value of variable `name`.
    pub(crate) fn get(&self, name: &str) -> Option<Tensor> {
        self.vars
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }
    /// Sets variable `name`.
    pub(crate) fn set(&self, name: &str, value: Tensor) {
        self.vars
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), value);
    }
    /// Number of variables set.
    pub(crate) fn len(&self) -> usize {
        self.vars.read().unwrap_or_else(|e| e.into_inner()).len()
    }
    /// Sets the functions calls run.
    pub(crate) fn set_functions(&self, f: Weak<dyn Functions>) {
        *self.functions.write().unwrap_or_else(|e| e.into_inner()) = Some(f);
    }
    /// The functions calls run (an error when the graph has no function library).
    pub(crate) fn functions(&self) -> Result<Arc<dyn Functions>> {
        self.functions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
            .ok_or_else(|| {
                crate::error::Error::Function("the graph has no function library to call".into())
            })
    }
}

/// The store key of a handle.
fn key(h: &ResourceHandle) -> String {
    if h.container.is_empty() || h.container == "localhost" {
        h.name.clone()
    } else {
        format!("{}/{}", h.container, h.name)
    }
}

fn op_error(op: &'static str, code: Code, message: String) -> crate::error::Error {
    kernel_error(tensorcast_core::Error::Op { op, code, message })
}

/// The handle a resource input holds.
fn handle(op: &'static str, t: &Tensor) -> Result<ResourceHandle> {
    if t.dtype() != DataType::RESOURCE || t.num_elements() != 1 {
        return Err(op_error(
            op,
            Code::InvalidArgument,
            format!(
                "Expected a resource handle scalar, got a {} tensor of shape {}",
                t.dtype().name(),
                t.shape()
            ),
        ));
    }
    let v = t.as_slice::<ResourceHandle>().map_err(kernel_error)?;
    Ok(v[0].clone())
}

fn var_handle(c: &KernelCtx<'_>, _: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let shared = attr::get_string(c.attrs, "shared_name").unwrap_or_default();
    let name = if shared.is_empty() {
        c.node.to_string()
    } else {
        String::from_utf8_lossy(shared).into_owned()
    };
    let container =
        String::from_utf8_lossy(attr::get_string(c.attrs, "container").unwrap_or_default())
            .into_owned();
    let dtype = attr::get_type(c.attrs, "dtype").unwrap_or(DataType::INVALID);
    let shape = attr::get_partial_shape(c.attrs, "shape")?;
    let h = ResourceHandle {
        device: "/job:localhost/replica:0/task:0/device:CPU:0".into(),
        container: if container.is_empty() {
            "localhost".into()
        } else {
            container
        },
        name,
        maybe_type_name: "tensorflow::Var".into(),
        dtypes_and_shapes: vec![(dtype, shape)],
        ..ResourceHandle::default()
    };
    Ok(vec![Tensor::scalar_of(h)])
}

fn read_variable(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let h = handle("ReadVariableOp", &inputs[0])?;
    let dtype = attr::get_type(c.attrs, "dtype").unwrap_or(DataType::INVALID);
    let Some(v) = c.run.resources.get(&key(&h)) else {
        return Err(op_error(
            "ReadVariableOp",
            Code::FailedPrecondition,
            format!(
                "Could not find variable {}. This could mean that the variable has been deleted. In TF1, it can also mean the variable is uninitialized. Debug info: container={}, status error message=Resource {}/{}/N10tensorflow3VarE does not exist.",
                h.name, h.container, h.container, h.name
            ),
        ));
    };
    if v.dtype() != dtype {
        return Err(op_error(
            "ReadVariableOp",
            Code::InvalidArgument,
            format!(
                "Trying to read variable with wrong dtype. Expected {} got {}",
                v.dtype().name(),
                dtype.name()
            ),
        ));
    }
    Ok(vec![v])
}

fn assign_variable(c: &KernelCtx<'_>, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let value = inputs
        .pop()
        .ok_or_else(|| crate::error::Error::Internal("no value".into()))?;
    let h = handle("AssignVariableOp", &inputs[0])?;
    let dtype = attr::get_type(c.attrs, "dtype").unwrap_or(DataType::INVALID);
    if value.dtype() != dtype {
        return Err(op_error(
            "AssignVariableOp",
            Code::InvalidArgument,
            format!(
                "Trying to assign variable with wrong dtype. Expected {} got {}",
                dtype.name(),
                value.dtype().name()
            ),
        ));
    }
    c.run.resources.set(&key(&h), value);
    Ok(Vec::new())
}

fn scalar_shape(_: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![PartialTensorShape::from(
        &tensorcast_core::TensorShape::scalar(),
    )])
}

/// `ReadVariableOp`'s shape: the handle's shape when the producer's `shape` attr is known; TF
/// reads it from the handle's shape-and-type data, which tensorcast does not carry at graph
/// time, so unknown.
fn read_shape(_: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![PartialTensorShape::unknown_rank()])
}

fn no_outputs(_: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(Vec::new())
}

pub(super) fn entries() -> Vec<Entry> {
    vec![
        Entry {
            def: op_def("VarHandleOp"),
            shape: scalar_shape,
            kernel: Some(var_handle),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("ReadVariableOp"),
            shape: read_shape,
            kernel: Some(read_variable),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("AssignVariableOp"),
            shape: no_outputs,
            kernel: Some(assign_variable),
            fold: false,
            sized_by_values: false,
        },
    ]
}
