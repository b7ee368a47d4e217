//! Graph interoperability with a real TensorFlow: every GraphDef tensorcast writes for the test
//! graphs below (built through the op classes, plus the `graph_def.jsonl` and
//! `graph_control_flow.jsonl` graphs imported and re-exported by tensorcast) is imported by TensorFlow (`tf.compat.v1.import_graph_def`,
//! `name=""`), run in a `tf.compat.v1.Session` with the same feeds, and its outputs must equal
//! tensorcast's session outputs byte for byte; TensorFlow's own re-export of the imported graph
//! must equal tensorcast's bytes.
//!
//! Python is found as the other interop tests find it: `$TENSORCAST_PYTHON`, else the
//! repository's `.venv/bin/python` (installed by scripts/test.sh), else `python3`. Skipped,
//! saying why, where TensorFlow cannot be imported - except with `CI=true`, where that fails.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use tensorcast::graph::ops::{
    AddV2, Bitcast, BroadcastTo, Cast, CastAttrs, Const, Equal, EqualAttrs, Greater, GreaterEqual,
    Identity, Less, LessEqual, Maximum, Minimum, Mul, NotEqual, Placeholder, PlaceholderAttrs,
    Reshape, Shape, ShapeAttrs, Sub,
};
use tensorcast::graph::{import_graph_def_bytes, Error, Graph, Scope, Session};
use tensorcast::{DataType, PartialTensorShape, Tensor, TensorShape};

use crate::peer::{hex, python_with};

const PYTHON_TIMEOUT: Duration = Duration::from_secs(240);

const SCRIPT: &str = r#"
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
work = sys.argv[1]
out = open(os.path.join(work, "tf_results.jsonl"), "w")
for case in json.load(open(os.path.join(work, "cases.json"))):
    rec = {"id": case["id"]}
    try:
        data = open(os.path.join(work, case["file"]), "rb").read()
        gd = tf.compat.v1.GraphDef.FromString(data)
        g = tf.Graph()
        with g.as_default():
            tf.compat.v1.import_graph_def(gd, name="")
        rec["reexport"] = g.as_graph_def().SerializeToString(deterministic=True).hex()
        from google.protobuf import text_format
        text = open(os.path.join(work, case["text_file"])).read()
        rec["text_parses_to_same"] = text_format.Parse(text, tf.compat.v1.GraphDef()) == gd
        feeds = {}
        for name, t in case["feeds"].items():
            dt = tf.dtypes.as_dtype(t["dtype"])
            feeds[name] = np.frombuffer(bytes.fromhex(t["hex"]), dtype=dt.as_numpy_dtype).reshape(t["shape"])
        with tf.compat.v1.Session(graph=g) as s:
            vals = s.run(case["fetches"], feed_dict=feeds)
        rec["outputs"] = [{"dtype": tf.as_dtype(v.dtype).as_datatype_enum, "shape": list(v.shape),
                           "hex": np.ascontiguousarray(v).tobytes().hex()} for v in vals]
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:400])
    out.write(json.dumps(rec) + "\n")
print("python side done")
"#;

fn tensor_json(t: &Tensor) -> Value {
    json!({"dtype": t.dtype().name(), "shape": t.shape().dim_sizes(), "hex": hex(t.tensor_data().unwrap())})
}

struct Case {
    id: String,
    graph: Graph,
    feeds: Vec<(String, Tensor)>,
    fetches: Vec<String>,
}

fn ph(s: &Scope, name: &str, dtype: DataType, dims: &[i64]) -> Placeholder {
    let shape = PartialTensorShape::new(dims).unwrap();
    Placeholder::with_attrs(
        &s.with_op_name(name),
        dtype,
        PlaceholderAttrs::default().shape(shape),
    )
    .unwrap()
}

fn floats(dims: &[i64], seed: f32) -> Tensor {
    let shape = TensorShape::new(dims).unwrap();
    let n = shape.num_elements_usize();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32) * 0.75 + seed).sin() * 3.0)
        .collect();
    Tensor::from_vec(v, &shape).unwrap()
}

/// The test graphs, built through the op classes.
fn built_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Every element-wise op, broadcasting a [2,3] placeholder against a [3] constant.
    {
        let root = Scope::new_root_scope();
        let x = ph(&root, "x", DataType::FLOAT, &[2, 3]);
        let c = Const::new(&root, [0.5f32, -1.0, 2.0]).unwrap();
        let mut fetches = Vec::new();
        macro_rules! each {
            ($($op:ident),*) => {$(
                fetches.push($op::new(&root, &x, &c).unwrap().as_output().name());
            )*};
        }
        each!(
            AddV2,
            Sub,
            Mul,
            Maximum,
            Minimum,
            Less,
            LessEqual,
            Greater,
            GreaterEqual,
            Equal,
            NotEqual
        );
        let ne = NotEqual::with_attrs(
            &root,
            &x,
            [1.0f32, 2.0],
            EqualAttrs::default().incompatible_shape_error(false),
        )
        .unwrap();
        fetches.push(ne.z.name());
        cases.push(Case {
            id: "elementwise".into(),
            graph: root.graph().clone(),
            feeds: vec![("x:0".into(), floats(&[2, 3], 0.1))],
            fetches,
        });
    }
    // BroadcastTo and friends: lazy broadcast into Equal, Cast(BroadcastTo), chains, identity.
    {
        let root = Scope::new_root_scope();
        let a = ph(&root, "a", DataType::FLOAT, &[1, 4]);
        let b = ph(&root, "b", DataType::FLOAT, &[3, 4]);
        let bt = BroadcastTo::new(&root, &a, [3i32, 4]).unwrap();
        let eq = Equal::new(&root, &bt, &b).unwrap();
        let cast = Cast::new(
            &root.with_op_name("cast"),
            BroadcastTo::new(&root, &a, [2i64, 4]).unwrap(),
            DataType::INT32,
        )
        .unwrap();
        let chain = BroadcastTo::new(
            &root,
            BroadcastTo::new(&root, &a, [2i32, 4]).unwrap(),
            [3i32, 2, 4],
        )
        .unwrap();
        let same = BroadcastTo::new(&root, &b, Shape::new(&root, &b).unwrap()).unwrap();
        let id = Identity::new(&root, &same).unwrap();
        let trunc = Cast::with_attrs(
            &root,
            &b,
            DataType::BFLOAT16,
            CastAttrs::default().truncate(true),
        )
        .unwrap();
        let shape64 = Shape::with_attrs(
            &root,
            &chain,
            ShapeAttrs::default().out_type(DataType::INT64),
        )
        .unwrap();
        let flat = Reshape::new(&root, &b, [-1i32]).unwrap();
        let bits = Bitcast::new(&root, &a, DataType::INT32).unwrap();
        let bytes = Bitcast::new(
            &root,
            Const::new(&root, [[0u8, 0, 128, 63], [0, 0, 0, 64]]).unwrap(),
            DataType::FLOAT,
        )
        .unwrap();
        let fetches = [
            eq.z,
            cast.y,
            chain.output,
            id.output,
            trunc.y,
            shape64.output,
            flat.output,
            bits.output,
            bytes.output,
        ]
        .iter()
        .map(|o| o.name())
        .collect();
        let bv = Tensor::from_vec(
            vec![
                0.0f32, 1.0, 2.0, 3.0, 0.0, 1.5, 2.0, 3.0, 9.0, 1.0, 2.0, 3.0,
            ],
            TensorShape::new(&[3, 4]).unwrap(),
        )
        .unwrap();
        let av = Tensor::from_vec(
            vec![0.0f32, 1.0, 2.0, 3.0],
            TensorShape::new(&[1, 4]).unwrap(),
        )
        .unwrap();
        cases.push(Case {
            id: "broadcast".into(),
            graph: root.graph().clone(),
            feeds: vec![("a:0".into(), av), ("b:0".into(), bv)],
            fetches,
        });
    }
    // Names: implicit constants, sub-scopes, control dependencies, devices.
    {
        let root = Scope::new_root_scope();
        let x = ph(&root, "x", DataType::INT32, &[-1]);
        let lin = root.new_sub_scope("linear");
        let m = Mul::new(&lin, &x, 3i32).unwrap();
        let dep = Identity::new(&root.with_op_name("dep"), &x).unwrap();
        let s = root
            .with_control_dependencies([&dep.operation])
            .with_device("/device:CPU:0");
        let y = AddV2::new(&s.with_op_name("y"), &m, 1i32).unwrap();
        let e = Equal::new(&root.new_sub_scope("linear"), &y, &x).unwrap();
        let fetches = vec![m.z.name(), y.z.name(), e.z.name()];
        cases.push(Case {
            id: "names".into(),
            graph: root.graph().clone(),
            feeds: vec![("x:0".into(), Tensor::vector(&[1i32, -2, 7]))],
            fetches,
        });
    }
    cases
}

/// The `graph_def.jsonl` graphs, imported and written back by tensorcast.
fn vector_cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/graph_def.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut cases = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).unwrap();
        let h = rec["graphdef_hex"].as_str().unwrap();
        let bytes: Vec<u8> = (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let graph = Graph::new();
        import_graph_def_bytes(&graph, &bytes).unwrap();
        let mut feeds = Vec::new();
        for (name, t) in rec["feeds"].as_object().cloned().unwrap_or_default() {
            if t["dtype"] == "string" {
                continue;
            }
            let shape = TensorShape::new(
                &t["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_i64().unwrap())
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            let hx = t["hex"].as_str().unwrap();
            let b: Vec<u8> = (0..hx.len() / 2)
                .map(|i| u8::from_str_radix(&hx[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let buf = tensorcast::buffer::Buffer::copy_from_slice(&b).unwrap();
            let dtype = DataType::from_name(t["dtype"].as_str().unwrap()).unwrap();
            feeds.push((name, Tensor::from_buffer(dtype, &shape, buf).unwrap()));
        }
        if rec.get("run_error").is_some()
            || rec["feeds"]
                .as_object()
                .is_some_and(|f| f.len() != feeds.len())
        {
            continue;
        }
        let fetches = rec["fetches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        cases.push(Case {
            id: rec["id"].as_str().unwrap().to_string(),
            graph,
            feeds,
            fetches,
        });
    }
    cases
}

/// The graphs of `tf_observed/graph_control_flow.jsonl` (TF1 loops and conditionals, TF2
/// `While`/`If` with their function libraries, TensorList loops), imported and written back by
/// tensorcast.
fn control_flow_cases() -> Vec<Case> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tf_observed/graph_control_flow.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let unhex = |h: &str| -> Vec<u8> {
        (0..h.len() / 2)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    };
    let mut cases = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).unwrap();
        if rec["op"] != "graph_roundtrip" {
            continue;
        }
        let graph = Graph::new();
        import_graph_def_bytes(&graph, &unhex(rec["graphdef_hex"].as_str().unwrap())).unwrap();
        let mut feeds = Vec::new();
        for (name, t) in rec["feeds"].as_object().cloned().unwrap_or_default() {
            let dims: Vec<i64> = t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_i64().unwrap())
                .collect();
            let shape = TensorShape::new(&dims).unwrap();
            let dtype = match t["dtype"].as_str().unwrap() {
                "float32" => DataType::FLOAT,
                "float64" => DataType::DOUBLE,
                other => DataType::from_name(other).unwrap(),
            };
            let buf =
                tensorcast::buffer::Buffer::copy_from_slice(&unhex(t["hex"].as_str().unwrap()))
                    .unwrap();
            feeds.push((name, Tensor::from_buffer(dtype, &shape, buf).unwrap()));
        }
        let fetches = rec["fetches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        cases.push(Case {
            id: format!("cf-{}", rec["id"].as_str().unwrap()),
            graph,
            feeds,
            fetches,
        });
    }
    cases
}

/// Random graphs of broadcasts and element-wise ops, each as built and as `graph optimize`
/// rewrites it (`opt-<seed>-original` / `opt-<seed>-optimized`): TensorFlow must compute the
/// same for both (and tensorcast what TensorFlow computes).
fn optimize_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for seed in 0..48u64 {
        let g = tensorcast_testkit::graphs::broadcast_graph(seed, 10);
        if g.fetches.is_empty() {
            continue;
        }
        let gd = g.scope.graph().to_graph_def();
        let (optimized, _) = tensorcast::graph::optimize_graph_def(&gd, &[]).unwrap();
        let rewritten = Graph::new();
        tensorcast::graph::import_graph_def(&rewritten, &optimized).unwrap();
        for (suffix, graph) in [
            ("original", g.scope.graph().clone()),
            ("optimized", rewritten),
        ] {
            cases.push(Case {
                id: format!("opt-{seed}-{suffix}"),
                graph,
                feeds: g.feeds.clone(),
                fetches: g.fetches.clone(),
            });
        }
    }
    cases
}

fn run_python(dir: &Path) -> Result<(), String> {
    crate::peer::run_python_script(dir, "graph_interop.py", SCRIPT, &[], PYTHON_TIMEOUT)
}

#[test]
fn tensorflow_imports_and_runs_tensorcast_graphdefs_byte_identically() {
    if python_with("tensorflow").is_none() {
        return;
    }
    let mut cases = built_cases();
    cases.extend(vector_cases());
    cases.extend(optimize_cases());
    cases.extend(control_flow_cases());
    let dir = std::env::temp_dir().join(format!("tensorcast_graph_interop_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let file = format!("g{i}.pb");
        std::fs::write(dir.join(&file), c.graph.to_graph_def_bytes()).unwrap();
        let text_file = format!("g{i}.pbtxt");
        let text = tensorcast::proto::graph_def_to_text(&c.graph.to_graph_def()).unwrap();
        std::fs::write(dir.join(&text_file), text).unwrap();
        let feeds: serde_json::Map<String, Value> = c
            .feeds
            .iter()
            .map(|(n, t)| (n.clone(), tensor_json(t)))
            .collect();
        manifest.push(json!({"id": c.id, "file": file, "text_file": text_file, "feeds": feeds, "fetches": c.fetches}));
    }
    std::fs::write(dir.join("cases.json"), Value::Array(manifest).to_string()).unwrap();
    let ran = run_python(&dir);
    let results = std::fs::read_to_string(dir.join("tf_results.jsonl")).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    ran.unwrap();
    let mut failures = Vec::new();
    let (mut compared, mut no_kernel, mut reexport_same) = (0usize, 0usize, 0usize);
    let mut tf_outputs: std::collections::HashMap<String, Value> = Default::default();
    for (c, line) in cases.iter().zip(results.lines()) {
        let rec: Value = serde_json::from_str(line).unwrap();
        assert_eq!(rec["id"], c.id.as_str());
        tf_outputs.insert(c.id.clone(), rec["outputs"].clone());
        if let Some(e) = rec.get("error") {
            failures.push(format!("{}: TensorFlow: {e}", c.id));
            continue;
        }
        if rec["text_parses_to_same"] != true {
            failures.push(format!(
                "{}: TensorFlow parses tensorcast's text to another GraphDef",
                c.id
            ));
        }
        if rec["reexport"] == hex(&c.graph.to_graph_def_bytes()) {
            reexport_same += 1;
        } else {
            failures.push(format!("{}: TensorFlow's re-export differs", c.id));
        }
        let feeds: Vec<(&str, Tensor)> = c
            .feeds
            .iter()
            .map(|(n, t)| (n.as_str(), t.clone()))
            .collect();
        let tf_out = rec["outputs"].as_array().unwrap();
        for (k, fetch) in c.fetches.iter().enumerate() {
            // Fetch one at a time, so that a missing kernel only hides its own fetch.
            match Session::new(&c.graph).run(&feeds, &[fetch.as_str()], &[]) {
                Err(Error::NoKernel { .. } | Error::MissingKernels(_)) => no_kernel += 1,
                Err(e) => failures.push(format!("{}: {fetch}: tensorcast: {e}", c.id)),
                Ok(out) => {
                    let t = &out[0];
                    let want = &tf_out[k];
                    let ok = want["dtype"] == t.dtype().number()
                        && want["shape"] == json!(t.shape().dim_sizes())
                        && want["hex"] == hex(t.tensor_data().unwrap());
                    if ok {
                        compared += 1;
                    } else {
                        failures.push(format!(
                            "{}: {fetch}: ours {} vs TensorFlow's {want}",
                            c.id,
                            tensor_json(t)
                        ));
                    }
                }
            }
        }
    }
    let mut optimize_pairs = 0;
    for (id, original) in &tf_outputs {
        let Some(seed) = id.strip_suffix("-original") else {
            continue;
        };
        let optimized = &tf_outputs[&format!("{seed}-optimized")];
        if original.is_null() || original != optimized {
            failures.push(format!(
                "{seed}: TensorFlow computes different outputs for the original and the \
                 optimized GraphDef"
            ));
        }
        optimize_pairs += 1;
    }
    println!(
        "tf_graph_interop: {optimize_pairs} random broadcast graphs give TensorFlow the same \
         outputs before and after `graph optimize`"
    );
    println!(
        "tf_graph_interop: {} graphs imported and run by TensorFlow ({reexport_same} re-exported byte-identical); \
         {compared} fetches byte-identical, {no_kernel} not run by tensorcast (no kernel yet)",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(reexport_same, cases.len());
}
