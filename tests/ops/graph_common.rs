//! JSON forms shared by the graph vector files: attr values and partial shapes.

use bytes::Bytes;
use serde_json::Value;
use tensorcast::graph::Attrs;
use tensorcast::proto::{
    attr_value, tensor_shape_proto::Dim, AttrValue, Message, TensorProto, TensorShapeProto,
};
use tensorcast::PartialTensorShape;

use crate::{dtype_of, hex_decode};

/// A partial shape from its JSON form (`null` = unknown rank, -1 = unknown dim).
pub fn partial_shape_of(v: &Value) -> Result<PartialTensorShape, String> {
    if v.is_null() {
        return Ok(PartialTensorShape::unknown_rank());
    }
    let dims: Vec<i64> = v
        .as_array()
        .ok_or("shape is not an array")?
        .iter()
        .map(|d| d.as_i64().ok_or("dim is not an integer"))
        .collect::<Result<_, _>>()?;
    PartialTensorShape::new(&dims).map_err(|e| e.to_string())
}

/// The JSON form of a partial shape.
pub fn partial_shape_json(s: &PartialTensorShape) -> Value {
    match s.dims() {
        None => Value::Null,
        Some(d) => Value::from(d.to_vec()),
    }
}

fn shape_proto(v: &Value) -> Result<TensorShapeProto, String> {
    if v.is_null() {
        return Ok(TensorShapeProto {
            dim: Vec::new(),
            unknown_rank: true,
        });
    }
    let dims = v.as_array().ok_or("shape is not an array")?;
    Ok(TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dim {
                size: d.as_i64().unwrap_or(0),
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    })
}

fn hex_bytes(v: &Value) -> Result<Bytes, String> {
    Ok(Bytes::from(hex_decode(
        v.as_str().ok_or("hex is not a string")?,
    )?))
}

/// One attr value from its JSON form.
pub fn attr_of(v: &Value) -> Result<AttrValue, String> {
    use attr_value::Value as V;
    let value = if let Some(t) = v.get("type") {
        V::Type(dtype_of(t)?.number())
    } else if let Some(s) = v.get("shape") {
        V::Shape(Box::new(shape_proto(s)?))
    } else if let Some(b) = v.get("b") {
        V::B(b.as_bool().ok_or("b is not a bool")?)
    } else if let Some(i) = v.get("i") {
        V::I(i.as_i64().ok_or("i is not an int")?)
    } else if let Some(f) = v.get("f") {
        V::F(f.as_f64().ok_or("f is not a number")? as f32)
    } else if let Some(s) = v.get("s") {
        V::S(hex_bytes(s)?)
    } else if let Some(p) = v.get("proto_hex") {
        V::Tensor(Box::new(
            TensorProto::decode(hex_bytes(p)?).map_err(|e| e.to_string())?,
        ))
    } else if let Some(l) = v.get("list") {
        let mut list = attr_value::ListValue::default();
        if let Some(s) = l.get("s").and_then(Value::as_array) {
            list.s = s.iter().map(hex_bytes).collect::<Result<_, _>>()?;
        }
        if let Some(i) = l.get("i").and_then(Value::as_array) {
            list.i = i.iter().map(|x| x.as_i64().unwrap_or(0)).collect();
        }
        if let Some(f) = l.get("f").and_then(Value::as_array) {
            list.f = f.iter().map(|x| x.as_f64().unwrap_or(0.0) as f32).collect();
        }
        if let Some(b) = l.get("b").and_then(Value::as_array) {
            list.b = b.iter().map(|x| x.as_bool().unwrap_or(false)).collect();
        }
        if let Some(t) = l.get("type").and_then(Value::as_array) {
            list.r#type = t
                .iter()
                .map(|x| dtype_of(x).map(|d| d.number()))
                .collect::<Result<_, _>>()?;
        }
        if let Some(s) = l.get("shape").and_then(Value::as_array) {
            list.shape = s.iter().map(shape_proto).collect::<Result<_, _>>()?;
        }
        V::List(Box::new(list))
    } else {
        return Err(format!("unsupported attr form {v}"));
    };
    Ok(AttrValue { value: Some(value) })
}

/// A node's attrs from their JSON form.
pub fn attrs_of(v: &Value) -> Result<Attrs, String> {
    let Some(map) = v.as_object() else {
        return Ok(Attrs::new());
    };
    map.iter()
        .map(|(k, v)| Ok((k.clone(), attr_of(v)?)))
        .collect()
}
