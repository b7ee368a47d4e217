//! `Const`: a constant tensor as a node (C++ `ops::Const`).

use tensorcast_core::Tensor;
use tensorcast_proto::{as_proto_field, as_proto_tensor_content, AttrValue, TensorProto};

use super::single_output;
use crate::error::{Error, Result};
use crate::{Input, Operation, Output, Scope};

/// A constant (`Const`): attrs `value` (the tensor) and `dtype`.
#[derive(Debug, Clone)]
pub struct Const {
    /// The node.
    pub operation: Operation,
    /// The constant's value as an output.
    pub output: Output,
}

single_output!(Const, output);

impl Const {
    /// A constant holding `value` (a tensor, scalar, slice or nested array), written as C++
    /// writes it: more than one element as `tensor_content`, otherwise the typed field.
    ///
    /// # Errors
    /// The scope's stored error, or [`Error::InvalidInput`] if `value` is not a value.
    pub fn new(scope: &Scope, value: impl Into<Input>) -> Result<Const> {
        let input = value.into();
        input.status()?;
        let Some(t) = input.tensor() else {
            let e = Error::InvalidInput("Const needs a value, not an Output".into());
            scope.update_status(e.clone());
            return Err(e);
        };
        let proto = if t.num_elements() > 1 {
            as_proto_tensor_content(t)
        } else {
            as_proto_field(t)
        };
        Self::from_proto(scope, proto)
    }

    /// A constant from a tensor, written with the typed field or content as `proto` says
    /// (C++ `ConstFromProto`). The `dtype` attr is the proto's dtype.
    ///
    /// # Errors
    /// The scope's stored error, or the shape function's error for an invalid shape.
    pub fn from_proto(scope: &Scope, proto: TensorProto) -> Result<Const> {
        let dtype = proto.dtype;
        Self::from_proto_with_dtype(scope, proto, dtype)
    }

    /// A constant whose `dtype` attr is given separately (it may disagree with the value: then
    /// the graph builds and running the node fails, as in TensorFlow).
    ///
    /// # Errors
    /// The scope's stored error, or the shape function's error for an invalid shape.
    pub fn from_proto_with_dtype(scope: &Scope, proto: TensorProto, dtype: i32) -> Result<Const> {
        let operation = scope.build_op(
            "Const",
            Vec::new(),
            vec![
                ("value", AttrValue::of_tensor(proto)),
                ("dtype", AttrValue::of_type(dtype)),
            ],
        )?;
        Ok(Const {
            output: operation.output(0),
            operation,
        })
    }

    /// A constant from a tensor (see [`Const::new`]).
    ///
    /// # Errors
    /// As [`Const::new`].
    pub fn from_tensor(scope: &Scope, value: &Tensor) -> Result<Const> {
        Self::new(scope, value.clone())
    }
}
