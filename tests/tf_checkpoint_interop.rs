//! Checkpoints between tensorcast and a real TensorFlow (the interpreter of `peer`; skipped,
//! saying why, where TensorFlow cannot be imported - except with `CI=true`, where that fails):
//! 1. tensorcast writes a bundle of every dtype `SaveV2` takes (strings, 0-d, 0-element
//!    included); TensorFlow restores each tensor with `RestoreV2` and its values must be
//!    tensorcast's.
//! 2. tensorcast writes a TF2 object-based checkpoint whose object graph it built from the
//!    keys ([`ObjectGraph::from_keys`]); `tf.train.Checkpoint(...).restore(...)` loads it into
//!    variables, every one matched.
//! 3. TensorFlow trains a small Keras model with Adam and saves it with `tf.train.Checkpoint`;
//!    tensorcast opens it by its folder, reads every tensor, scales the model's kernels by 2 and writes a checkpoint
//!    with the original's object graph; TensorFlow restores it into a fresh model, whose
//!    outputs must be those of the original model with the kernels scaled.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tensorcast::io::checkpoint::{
    write_checkpoint, Checkpoint, CheckpointWriteOptions, ObjectGraph,
};
use tensorcast::io::{NamedTensor, ReadOptions};
use tensorcast::{bf16, f16, DataType, TString, Tensor};

use crate::peer::{hex, python_with};

const PYTHON_TIMEOUT: Duration = Duration::from_secs(240);

const SCRIPT: &str = r#"
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
import keras

work, step = sys.argv[1], sys.argv[2]
out = open(os.path.join(work, step + ".jsonl"), "w")

def raw(t):
    a = t.numpy()
    if t.dtype == tf.string:
        return {"strings": [bytes(s).hex() for s in np.asarray(a, dtype=object).reshape(-1)]}
    return {"hex": np.ascontiguousarray(a).view(np.uint8).tobytes().hex()}

def model():
    keras.utils.set_random_seed(3)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
    return m

x = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], np.float32)

if step == "restore":
    cases = json.load(open(os.path.join(work, "cases.json")))
    prefix = os.path.join(work, "raw")
    for c in cases:
        t = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=[c["key"]], shape_and_slices=[""],
                                 dtypes=[tf.as_dtype(c["dtype"])])[0]
        out.write(json.dumps(dict(key=c["key"], shape=t.shape.as_list(), **raw(t))) + "\n")
    v = tf.Variable(np.zeros((2, 2), np.float32))
    w = tf.Variable(np.zeros((3,), np.int64))
    ck = tf.train.Checkpoint(model=tf.train.Checkpoint(dense=tf.train.Checkpoint(kernel=v)), step=w)
    ck.restore(os.path.join(work, "objects")).assert_existing_objects_matched()
    out.write(json.dumps(dict(key="objects", kernel=v.numpy().tolist(), step=w.numpy().tolist())) + "\n")
elif step == "keras_save":
    m = model()
    opt = keras.optimizers.Adam(0.01)
    m.compile(optimizer=opt, loss="mse")
    m.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), epochs=2, verbose=0)
    tf.train.Checkpoint(model=m, optimizer=opt).save(os.path.join(work, "keras"))
    for layer in m.layers:
        layer.kernel.assign(layer.kernel * 2.0)
    out.write(json.dumps(dict(y=m(x).numpy().tolist())) + "\n")
elif step == "keras_restore":
    keras.utils.set_random_seed(99)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
    opt = keras.optimizers.Adam(0.01)
    m.compile(optimizer=opt, loss="mse")
    opt.build(m.trainable_variables)
    status = tf.train.Checkpoint(model=m, optimizer=opt).restore(os.path.join(work, "edited"))
    status.assert_existing_objects_matched()
    out.write(json.dumps(dict(y=m(x).numpy().tolist())) + "\n")
"#;

fn python(dir: &Path, step: &str) -> Result<Vec<Value>, String> {
    crate::peer::run_python_script(dir, "ckpt_interop.py", SCRIPT, &[step], PYTHON_TIMEOUT)
        .map_err(|e| format!("{step}: {e}"))?;
    let text =
        std::fs::read_to_string(dir.join(format!("{step}.jsonl"))).map_err(|e| e.to_string())?;
    text.lines()
        .map(|l| serde_json::from_str(l).map_err(|e| e.to_string()))
        .collect()
}

fn cases() -> Vec<NamedTensor> {
    let mut v = vec![
        NamedTensor::new(
            "float",
            Tensor::from_vec(vec![1.5f32, -2.0, 0.0, 7.25, 1e-30, -0.0], [2i64, 3]).unwrap(),
        ),
        NamedTensor::new("double", Tensor::vector(&[1e300f64, -0.5])),
        NamedTensor::new(
            "half",
            Tensor::vector(&[f16::from_f32(0.5), f16::from_f32(-3.0)]),
        ),
        NamedTensor::new(
            "bfloat16",
            Tensor::vector(&[bf16::from_f32(2.0), bf16::from_f32(-0.125)]),
        ),
        NamedTensor::new("int8", Tensor::vector(&[-1i8, 5, 127])),
        NamedTensor::new("int16", Tensor::vector(&[-300i16])),
        NamedTensor::new("int32", Tensor::scalar_of(-7i32)),
        NamedTensor::new("int64", Tensor::vector(&[i64::MIN, i64::MAX])),
        NamedTensor::new("uint8", Tensor::vector(&[255u8, 0])),
        NamedTensor::new("uint16", Tensor::vector(&[65535u16])),
        NamedTensor::new("uint32", Tensor::vector(&[u32::MAX])),
        NamedTensor::new("uint64", Tensor::vector(&[u64::MAX])),
        NamedTensor::new("bool", Tensor::vector(&[true, false, true])),
        NamedTensor::new(
            "complex64",
            Tensor::vector(&[tensorcast::Complex32::new(1.0, -2.0)]),
        ),
        NamedTensor::new(
            "complex128",
            Tensor::vector(&[tensorcast::Complex64::new(-1.0, 0.5)]),
        ),
        NamedTensor::new("empty", Tensor::new(DataType::FLOAT, [0i64, 3]).unwrap()),
        NamedTensor::new(
            "string",
            Tensor::from_vec(
                vec![
                    TString::from(""),
                    TString::from(vec![0u8, 255, 10]),
                    TString::from("x".repeat(300)),
                ],
                [3i64],
            )
            .unwrap(),
        ),
        NamedTensor::new("string_scalar", Tensor::scalar_of(TString::from("hello"))),
    ];
    for d in [
        DataType::QINT8,
        DataType::QUINT8,
        DataType::QINT32,
        DataType::FLOAT8_E4M3FN,
        DataType::FLOAT8_E5M2,
    ] {
        let mut t = Tensor::new(d, [2i64]).unwrap();
        t.tensor_data_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = 0x30 + i as u8);
        v.push(NamedTensor::new(d.name(), t));
    }
    v
}

fn check(t: &Tensor, rec: &Value) -> Result<(), String> {
    let shape: Vec<i64> = rec["shape"]
        .as_array()
        .ok_or("shape")?
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    if shape != t.shape().dim_sizes() {
        return Err(format!("shape {shape:?} != {}", t.shape()));
    }
    if t.dtype() == DataType::STRING {
        let want: Vec<String> = t
            .as_slice::<TString>()
            .map_err(|e| e.to_string())?
            .iter()
            .map(|s| hex(s.as_bytes()))
            .collect();
        let got: Vec<String> = rec["strings"]
            .as_array()
            .ok_or("strings")?
            .iter()
            .filter_map(|s| s.as_str().map(String::from))
            .collect();
        return if got == want {
            Ok(())
        } else {
            Err(format!("strings {got:?} != {want:?}"))
        };
    }
    let want = if t.num_elements() == 0 {
        String::new()
    } else {
        hex(t.tensor_data().map_err(|e| e.to_string())?)
    };
    match rec["hex"].as_str() {
        Some(h) if h == want => Ok(()),
        other => Err(format!("bytes {other:?} != {want}")),
    }
}

fn run(dir: &Path) -> Result<(), String> {
    // 1. and 2.: tensorcast writes, TensorFlow restores.
    let ts = cases();
    write_checkpoint(&dir.join("raw"), &ts, &CheckpointWriteOptions::default())
        .map_err(|e| e.to_string())?;
    let list: Vec<Value> = ts
        .iter()
        .map(|nt| serde_json::json!({"key": nt.name, "dtype": nt.tensor.dtype().name()}))
        .collect();
    std::fs::write(
        dir.join("cases.json"),
        serde_json::to_string(&list).unwrap(),
    )
    .map_err(|e| e.to_string())?;
    let kernel = "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE";
    let step = "step/.ATTRIBUTES/VARIABLE_VALUE";
    let counter = "save_counter/.ATTRIBUTES/VARIABLE_VALUE";
    let objects = vec![
        NamedTensor::new(counter, Tensor::scalar_of(1i64)),
        NamedTensor::new(
            kernel,
            Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2i64, 2]).unwrap(),
        ),
        NamedTensor::new(step, Tensor::vector(&[5i64, 6, 7])),
    ];
    let opts = CheckpointWriteOptions {
        object_graph: Some(ObjectGraph::from_keys([kernel, step, counter])),
        ..CheckpointWriteOptions::default()
    };
    write_checkpoint(&dir.join("objects"), &objects, &opts).map_err(|e| e.to_string())?;
    let recs = python(dir, "restore")?;
    for nt in &ts {
        let rec = recs
            .iter()
            .find(|r| r["key"] == nt.name.as_str())
            .ok_or(format!("no result for {}", nt.name))?;
        check(&nt.tensor, rec).map_err(|e| format!("{}: {e}", nt.name))?;
    }
    let obj = recs
        .iter()
        .find(|r| r["key"] == "objects")
        .ok_or("no object restore")?;
    if obj["kernel"] != serde_json::json!([[1.0, 2.0], [3.0, 4.0]])
        || obj["step"] != serde_json::json!([5, 6, 7])
    {
        return Err(format!("object-based restore gave {obj}"));
    }
    // 3.: a Keras model's checkpoint, edited in Rust, restored by TensorFlow.
    let want = python(dir, "keras_save")?;
    // By the folder: its `checkpoint` state file names `keras-1`.
    let ckpt = Checkpoint::open(dir, &ReadOptions::default()).map_err(|e| e.to_string())?;
    if ckpt.prefix() != dir.join("keras-1") {
        return Err(format!("the folder opened {}", ckpt.prefix().display()));
    }
    let graph = ckpt
        .object_graph()
        .map_err(|e| e.to_string())?
        .ok_or("no object graph")?;
    let mut entries = ckpt.entries().to_vec();
    entries.sort_by_key(|e| (e.shard_id, e.offset));
    let mut out = Vec::new();
    let mut scaled = 0;
    for e in entries
        .iter()
        .filter(|e| e.key != "_CHECKPOINTABLE_OBJECT_GRAPH")
    {
        let mut t = ckpt.read(&e.key).map_err(|e| e.to_string())?;
        let path = graph
            .tensor(&e.key)
            .map(|o| o.path.clone())
            .unwrap_or_default();
        if path.starts_with("model/") && path.ends_with("kernel") {
            let v: Vec<f32> = t
                .as_slice::<f32>()
                .map_err(|e| e.to_string())?
                .iter()
                .map(|x| x * 2.0)
                .collect();
            t = Tensor::from_vec(v, t.shape().clone()).map_err(|e| e.to_string())?;
            scaled += 1;
        }
        out.push(NamedTensor::new(e.key.clone(), t));
    }
    if scaled != 2 {
        return Err(format!(
            "found {scaled} model kernels by object path, not 2: {:?}",
            graph.tensors()
        ));
    }
    let opts = CheckpointWriteOptions {
        object_graph: Some(graph.proto().clone()),
        ..CheckpointWriteOptions::default()
    };
    write_checkpoint(&dir.join("edited"), &out, &opts).map_err(|e| e.to_string())?;
    let got = python(dir, "keras_restore")?;
    if got[0]["y"] != want[0]["y"] {
        return Err(format!(
            "restored model gives {} , expected {}",
            got[0]["y"], want[0]["y"]
        ));
    }
    Ok(())
}

#[test]
fn tensorflow_restores_checkpoints_tensorcast_writes() {
    if python_with("tensorflow").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    if let Err(e) = run(dir.path()) {
        panic!("{e}");
    }
}
