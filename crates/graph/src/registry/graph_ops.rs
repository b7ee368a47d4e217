//! Ops of the graph itself, with no computation of their own: `StopGradient`,
//! `PreventGradient`, `Snapshot`, `IdentityN`, `PlaceholderWithDefault`.

use tensorcast_core::PartialTensorShape;

use super::spec::op_def;
use super::{forward, forwarding, shapes_of_inputs, Entry, ShapeCtx};
use crate::attr;
use crate::error::Result;

/// `PlaceholderWithDefault`: the `shape` attr where it is more precise than the default's.
fn placeholder_with_default_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let declared = attr::get_partial_shape(c.attrs, "shape")?;
    // TensorFlow's shape function returns the attr's shape after checking the input against it.
    Ok(vec![declared])
}

pub(super) fn entries() -> Vec<Entry> {
    let pass = |def| forwarding(def, true);
    vec![
        pass(op_def("StopGradient")),
        pass(op_def("PreventGradient")),
        pass(op_def("Snapshot")),
        Entry {
            def: op_def("IdentityN"),
            shape: shapes_of_inputs,
            kernel: Some(forward),
            fold: true,
            sized_by_values: false,
        },
        Entry {
            def: op_def("PlaceholderWithDefault"),
            shape: placeholder_with_default_shape,
            kernel: Some(forward),
            fold: false,
            sized_by_values: false,
        },
    ]
}
