//! TensorFlow's `NodeBuilder::Finalize` and `ValidateNodeDef` for one node: type attrs inferred
//! from inputs (building) or checked against them (importing), defaults filled in, attr kinds
//! and allowed types validated, output dtypes derived. Messages are TensorFlow's.

use tensorcast_core::DataType;
use tensorcast_proto::{attr_value::Value, AttrValue};

use crate::attr::{self, Attrs};
use crate::error::{Error, Result};
use crate::registry::opdef::{ArgType, AttrKind, OpDef};
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
    if mode == Mode::Build {
        infer_type_attrs(def, attrs, inputs)?;
    }
    // Defaults.
    for a in def.attrs {
        if attrs.contains_key(a.name) {
            continue;
        }
        if let Some(d) = a.default {
            attrs.insert(a.name.to_string(), d.to_value());
        }
    }
    // Kinds and allowed values, in the OpDef's attr order.
    for a in def.attrs {
        let Some(v) = attrs.get(a.name) else { continue };
        let ok = match (a.kind, &v.value) {
            (AttrKind::Type, Some(Value::Type(_)))
            | (AttrKind::Bool, Some(Value::B(_)))
            | (AttrKind::Shape, Some(Value::Shape(_)))
            | (AttrKind::Tensor, Some(Value::Tensor(_)))
            | (AttrKind::Int, Some(Value::I(_)))
            | (AttrKind::Float, Some(Value::F(_)))
            | (AttrKind::String, Some(Value::S(_)))
            | (AttrKind::Func, Some(Value::Func(_))) => true,
            // A list attr holds a list of its kind (an empty list is one of every kind).
            (AttrKind::ListInt, Some(Value::List(l))) => list_only(l, l.i.len()),
            (AttrKind::ListType, Some(Value::List(l))) => list_only(l, l.r#type.len()),
            (AttrKind::ListFloat, Some(Value::List(l))) => list_only(l, l.f.len()),
            (AttrKind::ListString, Some(Value::List(l))) => list_only(l, l.s.len()),
            (AttrKind::ListShape, Some(Value::List(l))) => list_only(l, l.shape.len()),
            (AttrKind::ListFunc, Some(Value::List(l))) => list_only(l, l.func.len()),
            _ => false,
        };
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
        if let (Some(allowed), Some(Value::S(v))) = (a.allowed_strings, &v.value) {
            if !allowed.iter().any(|x| x.as_bytes() == v.as_ref()) {
                let list: Vec<String> = allowed.iter().map(|x| format!("\"{x}\"")).collect();
                return Err(Error::AttrNotAllowed {
                    message: format!(
                        "Value for attr '{}' of \"{}\" is not in the list of allowed values: {}",
                        a.name,
                        String::from_utf8_lossy(v),
                        list.join(", ")
                    ),
                    node: node.to_string(),
                    op_summary: def.summary(),
                });
            }
        }
        if let Some(min) = a.minimum {
            let (what, value) = match &v.value {
                Some(Value::I(i)) => ("Value", *i),
                Some(Value::List(l)) => ("Length", list_len(l) as i64),
                _ => ("Value", min),
            };
            if value < min {
                return Err(Error::AttrNotAllowed {
                    message: format!(
                        "{what} for attr '{}' of {value} must be at least minimum {min}",
                        a.name
                    ),
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
    // Missing attrs, all named.
    let mut missing: Vec<String> = def
        .attrs
        .iter()
        .filter(|a| !attrs.contains_key(a.name))
        .map(|a| a.name.to_string())
        .collect();
    if !missing.is_empty() {
        missing.sort();
        return Err(Error::MissingAttr {
            attrs: missing,
            op_summary: def.summary(),
        });
    }
    // Shape attrs as TensorFlow's shape functions read them (`MakeShapeFromShapeProto`).
    for a in def.attrs.iter().filter(|a| a.kind == AttrKind::Shape) {
        if let Some(Value::Shape(p)) = attrs.get(a.name).and_then(|v| v.value.as_ref()) {
            shape::check_proto(p)?;
        }
    }
    // The signature, lists expanded by the (now complete) attrs.
    let expected =
        OpDef::expand(def.inputs, attrs, inputs.len()).filter(|e| e.len() == inputs.len());
    let Some(expected) = expected else {
        return Err(Error::InputCount {
            node: node.to_string(),
            expected: def.input_types_string(attrs),
            actual: inputs.len(),
            op_summary: def.summary(),
        });
    };
    if mode == Mode::Import {
        for (i, (expected, input)) in expected.iter().zip(inputs).enumerate() {
            if let (Some(expected), Some(actual)) = (*expected, input.dtype) {
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
    let outputs = OpDef::expand(def.outputs, attrs, MAX_OUTPUTS).ok_or_else(|| {
        Error::InvalidInput(format!(
            "node {node}: the attrs of its {} give more than {MAX_OUTPUTS} outputs, or none that can be counted",
            def.name
        ))
    })?;
    Ok(outputs
        .into_iter()
        .map(|d| d.unwrap_or(DataType::INVALID))
        .collect())
}

/// Most outputs one node may declare (`Split`'s `num_split`, `Unpack`'s `num`, ...): beyond it
/// a GraphDef's attr is refused rather than believed.
pub(crate) const MAX_OUTPUTS: usize = 1 << 16;

/// True when a list value holds `own` values of its kind and nothing else.
fn list_only(l: &tensorcast_proto::attr_value::ListValue, own: usize) -> bool {
    list_len(l) == own
}

/// Number of values in a list attr, of every kind.
fn list_len(l: &tensorcast_proto::attr_value::ListValue) -> usize {
    l.s.len()
        + l.i.len()
        + l.f.len()
        + l.b.len()
        + l.r#type.len()
        + l.shape.len()
        + l.tensor.len()
        + l.func.len()
}

/// Building: each type attr (and list count) the inputs determine, set from them
/// (`Inconsistent values ...` when two inputs disagree). Input counts that do not fit the
/// signature are left for the count check.
fn infer_type_attrs(def: &OpDef, attrs: &mut Attrs, inputs: &[InputInfo]) -> Result<()> {
    let mut pos = 0usize;
    let variable = def
        .inputs
        .iter()
        .filter(|a| !matches!(a.ty, ArgType::Attr(_) | ArgType::Fixed(_)))
        .count();
    let fixed_args = def.inputs.len() - variable;
    for arg in def.inputs {
        let take = match arg.ty {
            ArgType::Attr(_) | ArgType::Fixed(_) => 1,
            ArgType::List { number, .. } | ArgType::FixedList { number, .. } => {
                match attr::get_int(attrs, number) {
                    Some(n) => usize::try_from(n).unwrap_or(0),
                    // The only list: it takes every input the others leave.
                    None if variable == 1 => {
                        let n = inputs.len().saturating_sub(fixed_args);
                        attrs.insert(number.to_string(), AttrValue::of_int(n as i64));
                        n
                    }
                    None => 0,
                }
            }
            ArgType::TypeList(t) => match attr::get_types(attrs, t) {
                Some(l) => l.len(),
                None if variable == 1 => {
                    let n = inputs.len().saturating_sub(fixed_args);
                    let types: Option<Vec<i32>> = inputs[pos.min(inputs.len())..]
                        .iter()
                        .take(n)
                        .map(|i| i.dtype.map(|d| d.number()))
                        .collect();
                    if let Some(types) = types {
                        attrs.insert(
                            t.to_string(),
                            AttrValue {
                                value: Some(Value::List(Box::new(
                                    tensorcast_proto::attr_value::ListValue {
                                        r#type: types,
                                        ..Default::default()
                                    },
                                ))),
                            },
                        );
                    }
                    n
                }
                None => 0,
            },
        };
        let ty = match arg.ty {
            ArgType::Attr(t) | ArgType::List { ty: t, .. } => Some(t),
            _ => None,
        };
        for input in inputs.iter().skip(pos).take(take) {
            let (Some(t), Some(dtype)) = (ty, input.dtype) else {
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
        pos += take;
    }
    Ok(())
}
