//! Reading node attrs, and TensorFlow's `SummarizeAttrValue`.

use std::collections::BTreeMap;

use tensorcast_core::{DataType, PartialTensorShape};
use tensorcast_proto::{attr_value::Value, AttrValue, TensorProto, TensorShapeProto};

use crate::error::enum_name;

/// A node's attrs, sorted by name (as TensorFlow's deterministic serialization writes them).
pub type Attrs = BTreeMap<String, AttrValue>;

/// The kind name TensorFlow prints for an attr value (`type`, `bool`, `list(int)`...).
pub(crate) fn kind_name(v: &AttrValue) -> &'static str {
    match &v.value {
        None => "none",
        Some(Value::List(_)) => "list",
        Some(Value::S(_)) => "string",
        Some(Value::I(_)) => "int",
        Some(Value::F(_)) => "float",
        Some(Value::B(_)) => "bool",
        Some(Value::Type(_)) => "type",
        Some(Value::Shape(_)) => "shape",
        Some(Value::Tensor(_)) => "tensor",
        Some(Value::Placeholder(_)) => "placeholder",
        Some(Value::Func(_)) => "func",
    }
}

/// The dtype of a `type` attr.
pub(crate) fn get_type(attrs: &Attrs, name: &str) -> Option<DataType> {
    match attrs.get(name)?.value {
        Some(Value::Type(t)) => Some(DataType::from_number(t)),
        _ => None,
    }
}

/// The value of a `bool` attr.
pub(crate) fn get_bool(attrs: &Attrs, name: &str) -> Option<bool> {
    match attrs.get(name)?.value {
        Some(Value::B(b)) => Some(b),
        _ => None,
    }
}

/// The value of a `shape` attr.
pub(crate) fn get_shape<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a TensorShapeProto> {
    match &attrs.get(name)?.value {
        Some(Value::Shape(s)) => Some(s),
        _ => None,
    }
}

/// A `TensorShapeProto` (a `shape` attr, a list item) as the partial shape it describes
/// (TensorFlow's `PartialTensorShape(proto)`), with TensorFlow's messages for one that is not
/// valid.
pub(crate) fn partial_shape(p: &TensorShapeProto) -> crate::error::Result<PartialTensorShape> {
    Ok(tensorcast_proto::partial_shape_from_proto(Some(p))?)
}

/// The partial shape of `shape` attr `name` (unknown rank when the attr is absent).
pub(crate) fn get_partial_shape(
    attrs: &Attrs,
    name: &str,
) -> crate::error::Result<PartialTensorShape> {
    get_shape(attrs, name).map_or_else(|| Ok(PartialTensorShape::unknown_rank()), partial_shape)
}

/// The value of a `tensor` attr.
pub(crate) fn get_tensor<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a TensorProto> {
    match &attrs.get(name)?.value {
        Some(Value::Tensor(t)) => Some(t),
        _ => None,
    }
}

/// The value of an `int` attr.
pub(crate) fn get_int(attrs: &Attrs, name: &str) -> Option<i64> {
    match attrs.get(name)?.value {
        Some(Value::I(i)) => Some(i),
        _ => None,
    }
}

/// The value of a `float` attr.
#[allow(
    dead_code,
    reason = "read by the kernel entries of the kernels crate's ops"
)]
pub(crate) fn get_float(attrs: &Attrs, name: &str) -> Option<f32> {
    match attrs.get(name)?.value {
        Some(Value::F(f)) => Some(f),
        _ => None,
    }
}

/// The value of a `string` attr (its bytes).
pub(crate) fn get_string<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a [u8]> {
    match &attrs.get(name)?.value {
        Some(Value::S(s)) => Some(s),
        _ => None,
    }
}

/// The values of a `list(int)` attr.
#[allow(
    dead_code,
    reason = "read by the kernel entries of the kernels crate's ops"
)]
pub(crate) fn get_ints<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a [i64]> {
    match &attrs.get(name)?.value {
        Some(Value::List(l)) => Some(&l.i),
        _ => None,
    }
}

/// The values of a `list(type)` attr.
pub(crate) fn get_types(attrs: &Attrs, name: &str) -> Option<Vec<DataType>> {
    match &attrs.get(name)?.value {
        Some(Value::List(l)) => Some(l.r#type.iter().map(|&t| DataType::from_number(t)).collect()),
        _ => None,
    }
}

/// A short `SummarizeAttrValue`-like rendering, for node summaries and the CLI.
pub fn summarize(v: &AttrValue) -> String {
    match &v.value {
        None => "<Unknown AttrValue type>".to_string(),
        Some(Value::List(l)) => {
            let mut items: Vec<String> = Vec::new();
            items.extend(l.s.iter().map(|s| format!("\"{}\"", escape(s))));
            items.extend(l.i.iter().map(|i| i.to_string()));
            items.extend(l.f.iter().map(|f| f.to_string()));
            items.extend(l.b.iter().map(|b| b.to_string()));
            items.extend(
                l.r#type
                    .iter()
                    .map(|t| enum_name(DataType::from_number(*t))),
            );
            items.extend(
                l.shape
                    .iter()
                    .map(tensorcast_proto::shape_proto_debug_string),
            );
            items.extend(l.tensor.iter().map(|_| "<Tensor>".to_string()));
            items.extend(l.func.iter().map(|f| f.name.clone()));
            format!("[{}]", items.join(", "))
        }
        Some(Value::S(s)) => format!("\"{}\"", escape(s)),
        Some(Value::I(i)) => i.to_string(),
        Some(Value::F(f)) => f.to_string(),
        Some(Value::B(b)) => b.to_string(),
        Some(Value::Type(t)) => enum_name(DataType::from_number(*t)),
        Some(Value::Shape(s)) => tensorcast_proto::shape_proto_debug_string(s),
        Some(Value::Tensor(t)) => match tensorcast_proto::tensor_from_proto(t) {
            Ok(t) => t.debug_string(3),
            Err(_) => "<TensorProto>".to_string(),
        },
        Some(Value::Placeholder(p)) => format!("${p}"),
        Some(Value::Func(f)) => f.name.clone(),
    }
}

fn escape(s: &[u8]) -> String {
    let mut out = String::new();
    for &b in s {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}
