//! `graph_def.jsonl`: whole graphs written by TensorFlow. Each record is checked five ways
//! (GRAPH.md): decode (the bytes give the listed nodes), encode (the listed nodes serialize to
//! the bytes), import + export (identical bytes), build (the same nodes built through the op
//! classes and a scope serialize to the bytes), run (fetches equal `expect`, or the run fails with
//! `run_error`). A record whose run needs a kernel tensorcast does not have yet is not counted as
//! passed: it is skipped, and listed.

use serde_json::Value;
use tensorcast::graph::ops::{
    AddV2, Bitcast, BroadcastTo, Cast, CastAttrs, Const, Equal, EqualAttrs, Greater, GreaterEqual,
    Identity, Less, LessEqual, Maximum, Minimum, Mul, NotEqual, Placeholder, PlaceholderAttrs,
    Reshape, Shape, ShapeAttrs, Sub,
};
use tensorcast::graph::{import_graph_def_bytes, Error, Graph, Output, Scope, Session};
use tensorcast::proto::{attr_value, GraphDef, Message, NodeDef, VersionDef};
use tensorcast::DataType;

use super::graph_common::{attrs_of, partial_shape_of};
use crate::{check_tensor, hex_decode, hex_encode, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(true) => Outcome::Pass,
        Ok(false) => Outcome::Skip,
        Err(e) => Outcome::Fail(e),
    }
}

fn nodes_of(rec: &Value) -> Result<Vec<NodeDef>, String> {
    let mut out = Vec::new();
    for n in rec["nodes"].as_array().ok_or("nodes is not a list")? {
        out.push(NodeDef {
            name: n["name"].as_str().unwrap_or("").to_string(),
            op: n["op"].as_str().unwrap_or("").to_string(),
            input: n["inputs"]
                .as_array()
                .map(|l| {
                    l.iter()
                        .map(|s| s.as_str().unwrap_or("").to_string())
                        .collect()
                })
                .unwrap_or_default(),
            device: n["device"].as_str().unwrap_or("").to_string(),
            attr: attrs_of(&n["attrs"])?,
            experimental_debug_info: None,
            experimental_type: n.get("experimental_type").map(full_type_of),
        });
    }
    Ok(out)
}

fn full_type_of(v: &Value) -> tensorcast::proto::FullTypeDef {
    let id = match v["type_id"].as_str().unwrap_or("") {
        "TFT_PRODUCT" => 3,
        "TFT_SHAPE_TENSOR" => 1005,
        "TFT_TENSOR" => 1000,
        "TFT_INT32" => 207,
        "TFT_INT64" => 208,
        "TFT_FLOAT" => 210,
        "TFT_VAR" => 1,
        _ => 0,
    };
    tensorcast::proto::FullTypeDef {
        type_id: id,
        args: v["args"]
            .as_array()
            .map(|a| a.iter().map(full_type_of).collect())
            .unwrap_or_default(),
        attr: None,
    }
}

fn check(rec: &Value) -> Result<bool, String> {
    let bytes = hex_decode(rec["graphdef_hex"].as_str().ok_or("no graphdef_hex")?)?;
    let want_hex = hex_encode(&bytes);
    // 1. Decode.
    let decoded = GraphDef::decode(bytes.as_slice()).map_err(|e| format!("decode: {e}"))?;
    let listed = nodes_of(rec)?;
    if decoded.node != listed {
        return Err("decoded nodes differ from the listed nodes".into());
    }
    // 2. Encode from the listed nodes.
    let v = &rec["versions"];
    let versions = VersionDef {
        producer: v["producer"].as_i64().unwrap_or(0) as i32,
        min_consumer: v["min_consumer"].as_i64().unwrap_or(0) as i32,
        bad_consumers: Vec::new(),
    };
    let gd = GraphDef {
        node: listed,
        versions: Some(versions),
        ..Default::default()
    };
    let encoded = hex_encode(&gd.encode_to_vec());
    if encoded != want_hex {
        return Err(format!("encode: {encoded} != {want_hex}"));
    }
    // 3. Import and export.
    let imported = Graph::new();
    import_graph_def_bytes(&imported, &bytes).map_err(|e| format!("import: {e}"))?;
    let exported = hex_encode(&imported.to_graph_def_bytes());
    if exported != want_hex {
        return Err(format!("import/export: {exported} != {want_hex}"));
    }
    // 4. Build through the op classes.
    let built = build(rec).map_err(|e| format!("build: {e}"))?;
    let built_hex = hex_encode(&built.to_graph_def_bytes());
    if built_hex != want_hex {
        return Err(format!("build: {built_hex} != {want_hex}"));
    }
    // 5. Run, with and without the optimization pass.
    for optimize in [true, false] {
        let session = Session::with_options(
            &imported,
            tensorcast::graph::SessionOptions {
                optimize,
                ..Default::default()
            },
        );
        match run_record(rec, &session) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(e) => return Err(format!("run (optimize={optimize}): {e}")),
        }
    }
    Ok(true)
}

/// Builds the record's nodes, in order, through the op classes of a scope.
fn build(rec: &Value) -> Result<Graph, String> {
    let root = Scope::new_root_scope();
    let graph = root.graph().clone();
    let find = |name: &str| -> Result<Output, String> {
        let (op, k) = match name.rsplit_once(':') {
            Some((op, k)) => (op, k.parse::<usize>().map_err(|e| e.to_string())?),
            None => (name, 0),
        };
        Ok(graph
            .operation_by_name(op)
            .ok_or(format!("no node {op}"))?
            .output(k))
    };
    for n in rec["nodes"].as_array().ok_or("nodes is not a list")? {
        let name = n["name"].as_str().unwrap_or("");
        let op = n["op"].as_str().unwrap_or("");
        let attrs = attrs_of(&n["attrs"])?;
        let mut data = Vec::new();
        let mut controls = Vec::new();
        for i in n["inputs"].as_array().cloned().unwrap_or_default() {
            let i = i.as_str().unwrap_or("");
            match i.strip_prefix('^') {
                Some(c) => controls.push(graph.operation_by_name(c).ok_or(format!("no node {c}"))?),
                None => data.push(find(i)?),
            }
        }
        let mut s = root.with_op_name(name).with_control_dependencies(&controls);
        if let Some(d) = n["device"].as_str() {
            s = s.with_device(d);
        }
        let ty = |a: &str| match attrs.get(a).and_then(|v| v.value.as_ref()) {
            Some(attr_value::Value::Type(t)) => Ok(DataType::from_number(*t)),
            _ => Err(format!("{name}: no type attr {a}")),
        };
        let b = |a: &str| match attrs.get(a).and_then(|v| v.value.as_ref()) {
            Some(attr_value::Value::B(b)) => *b,
            _ => false,
        };
        // Python-only attrs (`_has_manual_control_dependencies`, `_class`) have no op-class
        // form: such nodes go through the generic builder with all their attrs.
        if attrs.keys().any(|k| k.starts_with('_')) {
            s.new_operation(
                op,
                data.into_iter().map(Into::into).collect(),
                attrs.clone(),
            )
            .map_err(|e| e.to_string())?;
            continue;
        }
        let x = |i: usize| {
            data.get(i)
                .cloned()
                .ok_or(format!("{name}: missing input {i}"))
        };
        let r: Result<(), Error> = (|| {
            match op {
                "Const" => {
                    let Some(attr_value::Value::Tensor(p)) =
                        attrs.get("value").and_then(|v| v.value.clone())
                    else {
                        return Err(Error::Internal("Const without value".into()));
                    };
                    let dtype = ty("dtype").map_err(Error::Internal)?;
                    Const::from_proto_with_dtype(&s, *p, dtype.number())?;
                }
                "Placeholder" => {
                    let dtype = ty("dtype").map_err(Error::Internal)?;
                    let shape = n["attrs"]["shape"]["shape"].clone();
                    let shape = partial_shape_of(&shape).map_err(Error::Internal)?;
                    Placeholder::with_attrs(&s, dtype, PlaceholderAttrs::default().shape(shape))?;
                }
                _ => build_op(&s, op, &x, &ty, &b).map_err(Error::Internal)??,
            }
            Ok(())
        })();
        r.map_err(|e| format!("{name}: {e}"))?;
    }
    root.status().map_err(|e| e.to_string())?;
    Ok(graph)
}

type Ty<'a> = dyn Fn(&str) -> Result<DataType, String> + 'a;

fn build_op(
    s: &Scope,
    op: &str,
    x: &dyn Fn(usize) -> Result<Output, String>,
    ty: &Ty<'_>,
    b: &dyn Fn(&str) -> bool,
) -> Result<Result<(), Error>, String> {
    let r = match op {
        "Identity" => Identity::new(s, x(0)?).map(drop),
        "Cast" => Cast::with_attrs(
            s,
            x(0)?,
            ty("DstT")?,
            CastAttrs::default().truncate(b("Truncate")),
        )
        .map(drop),
        "Shape" => {
            Shape::with_attrs(s, x(0)?, ShapeAttrs::default().out_type(ty("out_type")?)).map(drop)
        }
        "Bitcast" => Bitcast::new(s, x(0)?, ty("type")?).map(drop),
        "BroadcastTo" => BroadcastTo::new(s, x(0)?, x(1)?).map(drop),
        "Reshape" => Reshape::new(s, x(0)?, x(1)?).map(drop),
        "Equal" => Equal::with_attrs(
            s,
            x(0)?,
            x(1)?,
            EqualAttrs::default().incompatible_shape_error(b("incompatible_shape_error")),
        )
        .map(drop),
        "NotEqual" => NotEqual::with_attrs(
            s,
            x(0)?,
            x(1)?,
            EqualAttrs::default().incompatible_shape_error(b("incompatible_shape_error")),
        )
        .map(drop),
        "Less" => Less::new(s, x(0)?, x(1)?).map(drop),
        "LessEqual" => LessEqual::new(s, x(0)?, x(1)?).map(drop),
        "Greater" => Greater::new(s, x(0)?, x(1)?).map(drop),
        "GreaterEqual" => GreaterEqual::new(s, x(0)?, x(1)?).map(drop),
        "AddV2" => AddV2::new(s, x(0)?, x(1)?).map(drop),
        "Sub" => Sub::new(s, x(0)?, x(1)?).map(drop),
        "Mul" => Mul::new(s, x(0)?, x(1)?).map(drop),
        "Maximum" => Maximum::new(s, x(0)?, x(1)?).map(drop),
        "Minimum" => Minimum::new(s, x(0)?, x(1)?).map(drop),
        other => return Err(format!("no op class for {other}")),
    };
    Ok(r)
}

/// Runs the record; `Ok(false)` when a kernel is missing.
fn run_record(rec: &Value, session: &Session) -> Result<bool, String> {
    let mut feeds = Vec::new();
    if let Some(f) = rec["feeds"].as_object() {
        for (name, t) in f {
            feeds.push((name.as_str(), tensor_of(t)?));
        }
    }
    let fetches: Vec<&str> = rec["fetches"]
        .as_array()
        .ok_or("fetches is not a list")?
        .iter()
        .map(|f| f.as_str().unwrap_or(""))
        .collect();
    match (session.run(&feeds, &fetches, &[]), rec.get("run_error")) {
        (Err(Error::NoKernel { .. } | Error::MissingKernels(_)), _) => Ok(false),
        (Ok(out), None) => {
            for (name, t) in fetches.iter().zip(&out) {
                check_tensor(t, &rec["expect"][name]).map_err(|e| format!("{name}: {e}"))?;
            }
            Ok(true)
        }
        (Err(e), Some(want)) => {
            let msg = want["message"].as_str().unwrap_or("");
            if e.to_string() != msg {
                return Err(format!("error {:?}, expected {msg:?}", e.to_string()));
            }
            if e.node() != want["node"].as_str() {
                return Err(format!(
                    "error at {:?}, expected {}",
                    e.node(),
                    want["node"]
                ));
            }
            Ok(true)
        }
        (Ok(_), Some(want)) => Err(format!("ran, expected {want}")),
        (Err(e), None) => Err(format!("failed: {e}")),
    }
}
