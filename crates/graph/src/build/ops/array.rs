//! Array ops: `Placeholder`, `Identity`, `Cast`, `Shape`, `Bitcast`, `BroadcastTo`, `Reshape`.

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_proto::AttrValue;

use super::single_output;
use crate::error::Result;
use crate::{shape, Input, Operation, Output, Scope};

/// A value fed at run time (`Placeholder`): attrs `dtype` and `shape` (default unknown rank).
#[derive(Debug, Clone)]
pub struct Placeholder {
    /// The node.
    pub operation: Operation,
    /// The fed value.
    pub output: Output,
}
single_output!(Placeholder, output);

/// Optional attrs of [`Placeholder`].
#[derive(Debug, Clone, Default)]
pub struct PlaceholderAttrs {
    /// The (partial) shape the fed value must have; `None` = unknown rank.
    pub shape: Option<PartialTensorShape>,
}

impl PlaceholderAttrs {
    /// Sets `shape` (C++ `Placeholder::Shape(...)`).
    pub fn shape(mut self, shape: PartialTensorShape) -> Self {
        self.shape = Some(shape);
        self
    }
}

impl Placeholder {
    /// A placeholder of `dtype` and unknown shape.
    ///
    /// # Errors
    /// The scope's stored error.
    pub fn new(scope: &Scope, dtype: DataType) -> Result<Placeholder> {
        Self::with_attrs(scope, dtype, PlaceholderAttrs::default())
    }

    /// A placeholder with optional attrs.
    ///
    /// # Errors
    /// The scope's stored error.
    pub fn with_attrs(
        scope: &Scope,
        dtype: DataType,
        attrs: PlaceholderAttrs,
    ) -> Result<Placeholder> {
        let mut a = vec![("dtype", AttrValue::of_type(dtype.number()))];
        if let Some(s) = &attrs.shape {
            a.push((
                "shape",
                AttrValue::of_shape(shape::to_proto(&shape::from_partial(s))),
            ));
        }
        let operation = scope.build_op("Placeholder", Vec::new(), a)?;
        Ok(Placeholder {
            output: operation.output(0),
            operation,
        })
    }
}

/// `NoOp`: does nothing; other ops depend on it by control edges (TensorFlow 2's frozen graphs
/// end in `Identity(x, ^NoOp)`), and a run may name it as a target.
#[derive(Debug, Clone)]
pub struct NoOp {
    /// The node.
    pub operation: Operation,
}

impl NoOp {
    /// `NoOp()` (with the scope's control dependencies, as C++ `ops::NoOp` takes them).
    ///
    /// # Errors
    /// The scope's stored error, or a graph-time error.
    pub fn new(scope: &Scope) -> Result<NoOp> {
        let operation = scope.build_op("NoOp", Vec::new(), Vec::new())?;
        Ok(NoOp { operation })
    }
}

/// `Identity`: its input, unchanged.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The node.
    pub operation: Operation,
    /// The input, forwarded.
    pub output: Output,
}
single_output!(Identity, output);

impl Identity {
    /// `Identity(input)`.
    ///
    /// # Errors
    /// The scope's stored error, or a graph-time error.
    pub fn new(scope: &Scope, input: impl Into<Input>) -> Result<Identity> {
        let operation = scope.build_op("Identity", vec![input.into()], Vec::new())?;
        Ok(Identity {
            output: operation.output(0),
            operation,
        })
    }
}

/// `Cast`: converts `x` to `DstT`.
#[derive(Debug, Clone)]
pub struct Cast {
    /// The node.
    pub operation: Operation,
    /// The converted tensor.
    pub y: Output,
}
single_output!(Cast, y);

/// Optional attrs of [`Cast`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CastAttrs {
    /// `Truncate` (default false): round float-to-bfloat16 by truncation.
    pub truncate: bool,
}

impl CastAttrs {
    /// Sets `Truncate` (C++ `Cast::Truncate(true)`).
    pub fn truncate(mut self, truncate: bool) -> Self {
        self.truncate = truncate;
        self
    }
}

impl Cast {
    /// `Cast(x, DstT)`.
    ///
    /// # Errors
    /// The scope's stored error, or a graph-time error.
    pub fn new(scope: &Scope, x: impl Into<Input>, dst: DataType) -> Result<Cast> {
        Self::with_attrs(scope, x, dst, CastAttrs::default())
    }

    /// `Cast` with optional attrs.
    ///
    /// # Errors
    /// The scope's stored error, or a graph-time error.
    pub fn with_attrs(
        scope: &Scope,
        x: impl Into<Input>,
        dst: DataType,
        attrs: CastAttrs,
    ) -> Result<Cast> {
        let operation = scope.build_op(
            "Cast",
            vec![x.into()],
            vec![
                ("DstT", AttrValue::of_type(dst.number())),
                ("Truncate", AttrValue::of_bool(attrs.truncate)),
            ],
        )?;
        Ok(Cast {
            y: operation.output(0),
            operation,
        })
    }
}

/// `Shape`: the shape of its input as a vector.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The node.
    pub operation: Operation,
    /// The shape vector.
    pub output: Output,
}
single_output!(Shape, output);

/// Optional attrs of [`Shape`].
#[derive(Debug, Clone, Copy)]
pub struct ShapeAttrs {
    /// `out_type` (int32 or int64; default int32).
    pub out_type: DataType,
}

impl Default for ShapeAttrs {
    fn default() -> Self {
        ShapeAttrs {
            out_type: DataType::INT32,
        }
    }
}

impl ShapeAttrs {
    /// Sets `out_type`.
    pub fn out_type(mut self, dtype: DataType) -> Self {
        self.out_type = dtype;
        self
    }
}

impl Shape {
    /// `Shape(input)` as int32.
    ///
    /// # Errors
    /// The scope's stored error.
    pub fn new(scope: &Scope, input: impl Into<Input>) -> Result<Shape> {
        Self::with_attrs(scope, input, ShapeAttrs::default())
    }

    /// `Shape` with optional attrs.
    ///
    /// # Errors
    /// The scope's stored error, or `out_type` not int32/int64.
    pub fn with_attrs(scope: &Scope, input: impl Into<Input>, attrs: ShapeAttrs) -> Result<Shape> {
        let operation = scope.build_op(
            "Shape",
            vec![input.into()],
            vec![("out_type", AttrValue::of_type(attrs.out_type.number()))],
        )?;
        Ok(Shape {
            output: operation.output(0),
            operation,
        })
    }
}

/// `Bitcast`: reinterprets the input's bytes as another type, without copying.
#[derive(Debug, Clone)]
pub struct Bitcast {
    /// The node.
    pub operation: Operation,
    /// The reinterpreted tensor.
    pub output: Output,
}
single_output!(Bitcast, output);

impl Bitcast {
    /// `Bitcast(input, type)` (C++ `ops::Bitcast(scope, input, type)`).
    ///
    /// # Errors
    /// The scope's stored error; a type outside Bitcast's list; a shape that does not fit.
    pub fn new(scope: &Scope, input: impl Into<Input>, dtype: DataType) -> Result<Bitcast> {
        let operation = scope.build_op(
            "Bitcast",
            vec![input.into()],
            vec![("type", AttrValue::of_type(dtype.number()))],
        )?;
        Ok(Bitcast {
            output: operation.output(0),
            operation,
        })
    }
}

/// `BroadcastTo`: the input broadcast to `shape`. In a session, an element-wise consumer reads
/// it as a lazy view instead of a materialised tensor (see the session's optimization pass).
#[derive(Debug, Clone)]
pub struct BroadcastTo {
    /// The node.
    pub operation: Operation,
    /// The broadcast tensor.
    pub output: Output,
}
single_output!(BroadcastTo, output);

impl BroadcastTo {
    /// `BroadcastTo(input, shape)` (Java `BroadcastTo.create(scope, input, shape)`).
    ///
    /// # Errors
    /// The scope's stored error, or the shape function's error.
    pub fn new(
        scope: &Scope,
        input: impl Into<Input>,
        shape: impl Into<Input>,
    ) -> Result<BroadcastTo> {
        let operation =
            scope.build_op("BroadcastTo", vec![input.into(), shape.into()], Vec::new())?;
        Ok(BroadcastTo {
            output: operation.output(0),
            operation,
        })
    }

    /// Java's `create` spelling of [`BroadcastTo::new`].
    ///
    /// # Errors
    /// As [`BroadcastTo::new`].
    pub fn create(
        scope: &Scope,
        input: impl Into<Input>,
        shape: impl Into<Input>,
    ) -> Result<BroadcastTo> {
        Self::new(scope, input, shape)
    }
}

/// `Reshape`: the input with a new shape (one `-1` entry is inferred).
#[derive(Debug, Clone)]
pub struct Reshape {
    /// The node.
    pub operation: Operation,
    /// The reshaped tensor.
    pub output: Output,
}
single_output!(Reshape, output);

impl Reshape {
    /// `Reshape(tensor, shape)`.
    ///
    /// # Errors
    /// The scope's stored error, or the shape function's error.
    pub fn new(
        scope: &Scope,
        tensor: impl Into<Input>,
        shape: impl Into<Input>,
    ) -> Result<Reshape> {
        let operation = scope.build_op("Reshape", vec![tensor.into(), shape.into()], Vec::new())?;
        Ok(Reshape {
            output: operation.output(0),
            operation,
        })
    }
}
