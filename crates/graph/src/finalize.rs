//! TensorFlow's `NodeBuilder::Finalize` and `ValidateNodeDef` for one node: type attrs inferred
//! from inputs (building) or checked against them (importing), defaults filled in, attr kinds
//! and allowed types validated, output dtypes derived. Messages are TensorFlow's.

use tensorcast_core::DataType;
use tensorcast_proto::{attr_value::Value, AttrValue};

use crate::attr::{self, Attrs};
use crate::error::{Error, Result};
use crate::opdef::{ArgType, AttrDefault, AttrKind, OpDef};
use crate::shape;

/// How a node is being added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Built through a scope: type attrs come from the inputs (`Inconsistent values ...`).
    Build,
    /// Read from a GraphDef: attrs are given; inputs must match them.
    Import,
}

/// One data input as the builder sees it.
pub(crate) struct InputInfo {
    /// The producer's output dtype (`None` when the producer's op is not registered).
    pub(crate) dtype: Option<DataType>,
    /// The producer's tensor name (`x:0`), for messages.
    pub(crate) source: String,
}

/// Completes `attrs` for a node of `def` named `node` with these inputs; returns the output dtypes.
pub(crate) fn finalize(
    def: &OpDef,
    node: &str,
    attrs: &mut Attrs,
    inputs: &[InputInfo],
    mode: Mode,
) -> Result<Vec<DataType>> {
    if inputs.len() != def.inputs.len() {
        let expected = def.input_types_string(|t| attr::get_type(attrs, t));
        return Err(Error::InputCount {
            node: node.to_string(),
            expected,
            actual: inputs.len(),
            op_summary: def.summary(),
        });
    }
    if mode == Mode::Build {
        for (arg, input) in def.inputs.iter().zip(inputs) {
            let (ArgType::Attr(t), Some(dtype)) = (arg.ty, input.dtype) else {
                continue;
            };
            match attr::get_type(attrs, t) {
                None => {
                    attrs.insert(t.to_string(), AttrValue::of_type(dtype.number()));
                }
                Some(first) if first != dtype => {
                    return Err(Error::InconsistentAttr {
                        attr: t.to_string(),
                        first,
                        second: dtype,
                    });
                }
                Some(_) => {}
            }
        }
    }
    // Defaults.
    for a in def.attrs {
        if attrs.contains_key(a.name) {
            continue;
        }
        let value = match a.default {
            Some(AttrDefault::Type(d)) => AttrValue::of_type(d.number()),
            Some(AttrDefault::Bool(b)) => AttrValue::of_bool(b),
            Some(AttrDefault::UnknownShape) => AttrValue::of_shape(shape::to_proto(&None)),
            None => continue,
        };
        attrs.insert(a.name.to_string(), value);
    }
    // Kinds and allowed values, in the OpDef's attr order.
    for a in def.attrs {
        let Some(v) = attrs.get(a.name) else { continue };
        let ok = matches!(
            (a.kind, &v.value),
            (AttrKind::Type, Some(Value::Type(_)))
                | (AttrKind::Bool, Some(Value::B(_)))
                | (AttrKind::Shape, Some(Value::Shape(_)))
                | (AttrKind::Tensor, Some(Value::Tensor(_)))
        );
        if !ok {
            return Err(Error::AttrKind {
                attr: a.name.to_string(),
                expected: a.kind.name(),
                actual: attr::kind_name(v),
            });
        }
        if let Some(Value::Type(t)) = &v.value {
            let dtype = DataType::from_number(*t);
            let problem = if dtype == DataType::INVALID {
                Some("AttrValue has invalid DataType".to_string())
            } else if !dtype.is_known() {
                Some(format!("AttrValue has invalid DataType enum: {t}"))
            } else if dtype.is_ref() {
                Some(format!(
                    "AttrValue must not have reference type value of {}",
                    dtype.name()
                ))
            } else {
                None
            };
            if let Some(message) = problem {
                return Err(Error::InvalidAttrValue {
                    message,
                    attr: a.name.to_string(),
                    node: node.to_string(),
                    op_summary: def.summary(),
                });
            }
        }
        if let (Some(allowed), Some(Value::Type(t))) = (a.allowed, &v.value) {
            let dtype = DataType::from_number(*t);
            if !allowed.contains(&dtype) {
                return Err(Error::NotInAllowedList {
                    attr: a.name.to_string(),
                    dtype,
                    allowed: allowed.to_vec(),
                });
            }
        }
    }
    // Missing attrs.
    for a in def.attrs {
        if !attrs.contains_key(a.name) {
            return Err(Error::MissingAttr {
                attr: a.name.to_string(),
                op_summary: def.summary(),
            });
        }
    }
    // Shape attrs as TensorFlow's shape functions read them (`MakeShapeFromShapeProto`).
    for a in def.attrs.iter().filter(|a| a.kind == AttrKind::Shape) {
        if let Some(Value::Shape(p)) = attrs.get(a.name).and_then(|v| v.value.as_ref()) {
            shape::check_proto(p)?;
        }
    }
    if mode == Mode::Import {
        for (i, (arg, input)) in def.inputs.iter().zip(inputs).enumerate() {
            let expected = match arg.ty {
                ArgType::Attr(t) => attr::get_type(attrs, t),
                ArgType::Fixed(d) => Some(d),
            };
            if let (Some(expected), Some(actual)) = (expected, input.dtype) {
                if expected != actual {
                    return Err(Error::InputType {
                        index: i,
                        node: node.to_string(),
                        actual,
                        source_name: input.source.clone(),
                        expected,
                    });
                }
            }
        }
    }
    let outputs = def
        .outputs
        .iter()
        .map(|o| match o.ty {
            ArgType::Attr(t) => attr::get_type(attrs, t).unwrap_or(DataType::INVALID),
            ArgType::Fixed(d) => d,
        })
        .collect();
    Ok(outputs)
}
