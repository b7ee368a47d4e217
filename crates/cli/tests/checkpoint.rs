//! TensorFlow checkpoints on the command line: every name a TensorFlow user types, object
//! paths, `--tf-debug-string` against TensorFlow's recorded `inspect_checkpoint` lines,
//! `convert` both ways, `diff`, and the one-line answers for files tensorcast does not read.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tensorcast::io::checkpoint::Checkpoint;
use tensorcast::io::{read_file, ReadOptions};
use tensorcast_testkit::peers::stdout_of;

use crate::common::stderr;
use crate::common::{hex, ok, run_in, stdout};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The recorded TensorFlow checkpoints (tests/tf_observed/checkpoint.jsonl) with a debug string.
fn recorded() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("tests/tf_observed/checkpoint.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r.get("debug_string").is_some())
        .collect()
}

/// Writes record `r`'s files into a fresh directory; returns it.
fn materialize(r: &Value, test: &str) -> PathBuf {
    let dir = crate::common::temp_dir(&format!("ckpt-{test}-{}", r["id"].as_str().unwrap()));
    for (name, bytes) in r["files"].as_object().unwrap() {
        std::fs::write(dir.join(name), hex(bytes.as_str().unwrap())).unwrap();
    }
    dir
}

/// A copy of samples/tf2_ckpt-1 (written by TensorFlow, scripts/gen_samples_tf.py) in `dir`.
fn sample_checkpoint(dir: &Path) -> PathBuf {
    for ext in ["index", "data-00000-of-00001"] {
        std::fs::copy(
            root().join(format!("samples/tf2_ckpt-1.{ext}")),
            dir.join(format!("tf2_ckpt-1.{ext}")),
        )
        .unwrap();
    }
    dir.join("tf2_ckpt-1")
}

#[test]
fn tf_debug_string_equals_inspect_checkpoint_for_every_recorded_checkpoint() {
    let records = recorded();
    assert!(records.len() >= 30, "{}", records.len());
    for r in &records {
        let dir = materialize(r, "debug");
        let prefix = r["prefix"].as_str().unwrap();
        let o = run_in(&dir, &["inspect", prefix, "--tf-debug-string"]);
        assert_eq!(o.status.code(), Some(0), "{}: {}", r["id"], stderr(&o));
        assert_eq!(
            o.stdout,
            hex(r["debug_string"].as_str().unwrap()),
            "{}",
            r["id"]
        );
    }
}

#[test]
fn inspect_takes_a_checkpoint_by_every_name_a_tensorflow_user_types() {
    let r = recorded()
        .into_iter()
        .find(|r| r["id"] == "keras-adam")
        .unwrap();
    let dir = materialize(&r, "names");
    // A SavedModel directory: its variables/variables bundle.
    let sm = dir.join("sm");
    std::fs::create_dir_all(sm.join("variables")).unwrap();
    for (from, to) in [
        ("ckpt-1.index", "variables.index"),
        (
            "ckpt-1.data-00000-of-00001",
            "variables.data-00000-of-00001",
        ),
    ] {
        std::fs::copy(dir.join(from), sm.join("variables").join(to)).unwrap();
    }
    std::fs::write(sm.join("saved_model.pb"), b"").unwrap();
    let dirs = dir.display().to_string();
    for name in [
        "ckpt-1",
        "ckpt-1.index",
        "ckpt-1.data-00000-of-00001",
        ".",
        dirs.as_str(),
        "sm",
    ] {
        let out = ok(&run_in(&dir, &["inspect", name, "--json"]));
        let doc: Value = serde_json::from_str(&out).unwrap();
        let f = &doc["files"][0];
        assert_eq!(f["format"], "checkpoint", "{name}");
        let paths: Vec<&str> = f["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["path"].as_str().unwrap())
            .collect();
        assert!(paths.contains(&"save_counter"), "{name}: {paths:?}");
        let lr = f["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["key"] == "optimizer/_learning_rate/.ATTRIBUTES/VARIABLE_VALUE")
            .unwrap();
        assert_eq!(lr["bookkeeping"], true);
        assert_eq!(lr["dtype"], "float");
    }
    // The text table: path, dtype, shape, bytes, statistics, key.
    let out = ok(&run_in(&dir, &["inspect", "ckpt-1"]));
    assert!(
        out.starts_with("ckpt-1: TensorFlow checkpoint (TF2)"),
        "{out}"
    );
    assert!(
        out.contains("save_counter/.ATTRIBUTES/VARIABLE_VALUE"),
        "{out}"
    );
}

#[test]
fn inspect_shows_slots_as_slots_of_their_variable() {
    let r = recorded().into_iter().find(|r| r["id"] == "slots").unwrap();
    let dir = materialize(&r, "slots");
    let out = ok(&run_in(&dir, &["inspect", "ckpt"]));
    assert!(out.contains("slot m of v"), "{out}");
    assert!(out.contains("slot v of v"), "{out}");
}

#[test]
fn inspect_without_files_shows_the_sample_checkpoint_and_saved_model() {
    let out = ok(&run_in(&root(), &["inspect"]));
    assert!(
        out.contains("samples/tf2_ckpt-1.index: TensorFlow checkpoint (TF2)"),
        "{out}"
    );
    assert!(!out.contains("tf2_ckpt-1.data"), "{out}");
    // The sample SavedModel, by its variables.
    assert!(
        out.contains("samples/saved_model_affine: TensorFlow checkpoint (TF2)"),
        "{out}"
    );
    assert!(
        out.contains("  w: Tensor<type: float shape: [3] values: 1.5 -2 0.25>"),
        "{out}"
    );
    let sm = ok(&run_in(
        &root(),
        &["saved-model", "show", "samples/saved_model_affine", "--all"],
    ));
    assert!(
        sm.contains(
            "    inputs['x'] tensor_info:\n        dtype: DT_FLOAT\n        shape: (-1, 3)\n"
        ),
        "{sm}"
    );
    assert!(
        sm.contains("\nVariables:\n  w: DT_FLOAT (3)\n  b: DT_FLOAT (3)\n"),
        "{sm}"
    );
    assert!(sm.contains("\nFingerprint:\n  singleprint: "), "{sm}");
}

#[test]
fn convert_checkpoint_names_by_object_path_and_leaves_out_bookkeeping() {
    let dir = crate::common::temp_dir("ckpt-convert");
    let prefix = sample_checkpoint(&dir);
    let p = prefix.display().to_string();
    ok(&run_in(&dir, &["convert", &p, "w.safetensors"]));
    let ts = read_file(&dir.join("w.safetensors")).unwrap();
    let mut names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    for n in &names {
        assert!(!n.contains(".ATTRIBUTES"), "{n}");
        assert!(!n.starts_with("optimizer"), "{n}");
        assert!(n.starts_with("model/"), "{n}");
    }
    // Keys and everything on request (the object graph is never a tensor to export).
    ok(&run_in(
        &dir,
        &["convert", &p, "-o", "all.npz", "--names", "keys", "--all"],
    ));
    let all = read_file(&dir.join("all.npz")).unwrap();
    let ckpt = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    assert_eq!(all.len(), ckpt.entries().len() - 1);
    for t in &all {
        assert_eq!(ckpt.read(&t.name).unwrap(), t.tensor, "{}", t.name);
    }
    // --cast as for other files.
    ok(&run_in(&dir, &["convert", &p, "h.npz", "--cast", "f16"]));
    let h = read_file(&dir.join("h.npz")).unwrap();
    assert!(h
        .iter()
        .all(|t| t.tensor.dtype() == tensorcast::DataType::HALF));
}

/// `convert w.safetensors -o PREFIX --format checkpoint` in `dir`.
fn safetensors_to_checkpoint(dir: &Path, prefix: &str) {
    let args = [
        "convert",
        "w.safetensors",
        "-o",
        prefix,
        "--format",
        "checkpoint",
    ];
    ok(&run_in(dir, &args));
}

#[test]
fn convert_back_to_a_checkpoint_round_trips_by_object_path() {
    let dir = crate::common::temp_dir("ckpt-back");
    let prefix = sample_checkpoint(&dir);
    let p = prefix.display().to_string();
    ok(&run_in(&dir, &["convert", &p, "w.safetensors"]));
    safetensors_to_checkpoint(&dir, "new-1");
    // The old spelling too.
    ok(&run_in(
        &dir,
        &["convert", "w.safetensors", "new-2", "--to", "checkpoint"],
    ));
    let new = Checkpoint::open(&dir.join("new-1"), &ReadOptions::default()).unwrap();
    let graph = new.object_graph().unwrap().expect("an object graph");
    let src = read_file(&dir.join("w.safetensors")).unwrap();
    for t in &src {
        let key = format!("{}/.ATTRIBUTES/VARIABLE_VALUE", t.name);
        assert_eq!(new.read(&key).unwrap(), t.tensor);
        assert_eq!(graph.tensor(&key).unwrap().path, t.name);
    }
    // diff pairs the model's variables by path: the same.
    let o = run_in(&dir, &["diff", "new-1", &p]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        std::fs::read(dir.join("new-1.index")).unwrap(),
        std::fs::read(dir.join("new-2.index")).unwrap()
    );
}

/// `convert PREFIX out --format checkpoint` of recorded checkpoint `r`, in a fresh folder:
/// every file written (`out.index`, `out.data-*`) must be TensorFlow's file, byte for byte.
fn assert_rewrite_is_byte_identical(r: &Value, test: &str) {
    let id = r["id"].as_str().unwrap();
    let dir = materialize(r, test);
    let prefix = r["prefix"].as_str().unwrap();
    ok(&run_in(
        &dir,
        &["convert", prefix, "-o", "out", "--format", "checkpoint"],
    ));
    let files: Vec<&String> = r["files"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|f| f.starts_with(&format!("{prefix}.")))
        .collect();
    assert!(files.len() >= 2, "{id}: {files:?}");
    for f in files {
        let ours = format!("out{}", &f[prefix.len()..]);
        assert!(
            std::fs::read(dir.join(&ours)).unwrap() == std::fs::read(dir.join(f)).unwrap(),
            "{id}: {ours} differs from TensorFlow's {f}"
        );
    }
}

#[test]
fn convert_checkpoint_to_checkpoint_gives_tensorflows_bytes_back() {
    // Every recorded checkpoint whose bytes a writer can reproduce: every dtype, strings,
    // variants, sliced and sharded bundles, object graphs.
    let written: Vec<Value> = recorded()
        .into_iter()
        .filter(|r| r["write"].as_bool() == Some(true))
        .collect();
    assert!(written.len() >= 40, "{}", written.len());
    for r in &written {
        assert_rewrite_is_byte_identical(r, "rewrite");
    }
}

#[test]
fn checkpoint_rewrite_with_empty_tensor_is_byte_identical() {
    // TensorFlow's bundles with zero-element tensors between others (an empty tensor takes
    // the offset of the one added after it, whose key sorts first), slices added out of
    // order, an object graph, and shards (tests/tf_observed/gen_checkpoint.py, part 11-12).
    let ids = [
        "empty-between",
        "object-empty-between",
        "sharded-empty-between",
    ];
    let records: Vec<Value> = recorded()
        .into_iter()
        .filter(|r| ids.contains(&r["id"].as_str().unwrap()))
        .collect();
    assert_eq!(records.len(), ids.len());
    for r in &records {
        assert_rewrite_is_byte_identical(r, "rewrite-empty");
    }
}

/// Exit 2, one line naming the file and `what`, without the decoders' words.
fn assert_foreign(dir: &Path, file: &str, what: &str) {
    for args in [
        vec!["inspect", file],
        vec!["convert", file, "o.npy"],
        vec!["diff", file, file],
    ] {
        let o = run_in(dir, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(&format!("tensorcast: {file}: ")), "{err}");
        assert!(err.contains(what), "{what:?} not in {err:?}");
        for decoder_word in ["TensorProto", "npy", "safetensors", "zip", "unknown format"] {
            assert!(!err.contains(decoder_word), "{decoder_word} in {err:?}");
        }
    }
}

#[test]
fn files_tensorcast_does_not_read_say_what_they_are_in_one_line() {
    let dir = crate::common::temp_dir("ckpt-foreign");
    std::fs::write(
        dir.join("model.h5"),
        b"\x89HDF\r\n\x1a\n\0\0\0\0\0\x08\x08\0\x04\0\x10\0",
    )
    .unwrap();
    assert_foreign(&dir, "model.h5", "an HDF5 file (Keras .h5");
    let mut keras = b"PK\x03\x04\x14\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x0d\0\0\0".to_vec();
    keras.extend_from_slice(b"metadata.json{}");
    std::fs::write(dir.join("model.keras"), &keras).unwrap();
    assert_foreign(&dir, "model.keras", "a Keras .keras archive");
    std::fs::write(dir.join("model.ckpt.meta"), b"\x0a\x04\x0a\x02\x08\x01").unwrap();
    assert_foreign(&dir, "model.ckpt.meta", "a MetaGraphDef");
    std::fs::create_dir_all(dir.join("sm")).unwrap();
    std::fs::write(dir.join("sm/saved_model.pb"), b"\x08\x01\x12\x00").unwrap();
    assert_foreign(&dir, "sm/saved_model.pb", "a SavedModel's graph");
    std::fs::write(
        dir.join("g.pbtxt"),
        b"node {\n  name: \"x\"\n  op: \"Placeholder\"\n}\n",
    )
    .unwrap();
    assert_foreign(&dir, "g.pbtxt", "a text GraphDef");
    std::fs::copy(root().join("samples/graph_small.pb"), dir.join("g.pb")).unwrap();
    assert_foreign(&dir, "g.pb", "tensorcast graph inspect");
}

#[test]
fn a_damaged_checkpoint_is_one_line_naming_it() {
    let dir = crate::common::temp_dir("ckpt-damaged");
    let prefix = sample_checkpoint(&dir);
    std::fs::remove_file(dir.join("tf2_ckpt-1.data-00000-of-00001")).unwrap();
    for out in ["o.npz", "o.safetensors"] {
        let o = run_in(&dir, &["convert", "tf2_ckpt-1", out]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("tensorcast: tf2_ckpt-1: "), "{err}");
        assert!(err.contains("No such file or directory"), "{err}");
        assert!(!dir.join(out).exists());
        let litter = std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(litter, 1, "only the index is left");
    }
    let _ = prefix;
}

const RESTORE: &str = r#"
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
def outputs(prefix):
    tf.keras.utils.set_random_seed(99)
    m = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(3, activation="relu"), tf.keras.layers.Dense(2)])
    if prefix:
        # expect_partial: the sample has no save_counter; the outputs show what was restored.
        tf.train.Checkpoint(model=m).restore(prefix).expect_partial()
    return m(np.arange(8, dtype=np.float32).reshape(2, 4) / 8).numpy().tolist()
print(json.dumps(dict(original=outputs(sys.argv[1]), converted=outputs(sys.argv[2]), fresh=outputs(None))))
"#;

#[test]
fn tensorflow_restores_the_checkpoint_convert_writes_from_safetensors() {
    let Some(py) = crate::common::tensorflow_python() else {
        return;
    };
    let dir = crate::common::temp_dir("ckpt-tf-restore");
    let prefix = sample_checkpoint(&dir);
    let p = prefix.display().to_string();
    ok(&run_in(&dir, &["convert", &p, "w.safetensors"]));
    safetensors_to_checkpoint(&dir, "back-1");
    std::fs::write(dir.join("restore.py"), RESTORE).unwrap();
    let out = stdout_of(
        Command::new(&py)
            .arg(dir.join("restore.py"))
            .arg(&p)
            .arg(dir.join("back-1")),
    );
    let v: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(v["original"], v["converted"], "{v}");
    // The model as initialised gives other outputs: the restore did something.
    assert_ne!(v["original"], v["fresh"], "{v}");
}

#[test]
fn a_decoder_error_is_printed_once_not_three_times() {
    let dir = crate::common::temp_dir("ckpt-once");
    // A TensorProto whose tensor_content claims more bytes than there are.
    std::fs::write(dir.join("t.pb"), b"\x08\x01\x12\x00\x22\x05abc").unwrap();
    let o = run_in(&dir, &["inspect", "t.pb"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("buffer underflow").count(), 1, "{err}");
    assert_eq!(err.matches("Could not parse").count(), 1, "{err}");
}

#[test]
fn a_tf1_checkpoint_keeps_its_names_and_leaves_out_slots_and_global_step() {
    use tensorcast::io::checkpoint::{write_checkpoint, CheckpointWriteOptions};
    use tensorcast::io::NamedTensor;
    use tensorcast::Tensor;
    let dir = crate::common::temp_dir("ckpt-tf1");
    let v = |x: f32| Tensor::vector(&[x, x]);
    let ts = vec![
        NamedTensor::new("dense/kernel", v(1.0)),
        NamedTensor::new("dense/kernel/Adam", v(2.0)),
        NamedTensor::new("dense/kernel/Adam_1", v(3.0)),
        NamedTensor::new("beta1_power", Tensor::scalar_of(0.9f32)),
        NamedTensor::new("global_step", Tensor::scalar_of(7i64)),
    ];
    write_checkpoint(
        &dir.join("model.ckpt-7"),
        &ts,
        &CheckpointWriteOptions::default(),
    )
    .unwrap();
    ok(&run_in(&dir, &["convert", "model.ckpt-7", "w.npz"]));
    let w = read_file(&dir.join("w.npz")).unwrap();
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].name, "dense/kernel");
    ok(&run_in(
        &dir,
        &["convert", "model.ckpt-7.index", "a.npz", "--all"],
    ));
    assert_eq!(read_file(&dir.join("a.npz")).unwrap().len(), 5);
    let out = ok(&run_in(&dir, &["inspect", "model.ckpt-7"]));
    assert!(out.contains("slot v of dense/kernel"), "{out}");
}

const KERAS3: &str = r#"
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf
def build():
    tf.keras.utils.set_random_seed(5)
    return tf.keras.Sequential([tf.keras.Input(shape=(5,)), tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1)])
x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)
if sys.argv[1] == "write":
    m = build()
    opt = tf.keras.optimizers.Adam(0.05)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(m(x) - 1.0))
        opt.apply_gradients(zip(tape.gradient(loss, m.trainable_variables), m.trainable_variables))
    path = tf.train.Checkpoint(model=m, optimizer=opt).write(sys.argv[2])
    keys = [k for k, _ in tf.train.list_variables(path)]
    print(json.dumps(dict(outputs=m(x).numpy().tolist(), keys=keys)))
else:
    m = build()
    fresh = m(x).numpy().tolist()
    tf.train.Checkpoint(model=m).restore(sys.argv[2]).expect_partial()
    print(json.dumps(dict(outputs=m(x).numpy().tolist(), fresh=fresh)))
"#;

#[test]
fn a_keras3_checkpoint_tensorflow_writes_converts_by_the_models_paths_and_restores() {
    let Some(py) = crate::common::tensorflow_python() else {
        return;
    };
    let dir = crate::common::temp_dir("ckpt-keras3");
    std::fs::write(dir.join("keras3.py"), KERAS3).unwrap();
    let python = |args: &[&str]| -> Value {
        let out = stdout_of(Command::new(&py).arg(dir.join("keras3.py")).args(args));
        serde_json::from_str(out.lines().last().unwrap()).unwrap()
    };
    let written = python(&["write", &dir.join("ckpt").display().to_string()]);
    // Keras 3 keys the model's weights under the optimizer (TensorFlow's shortest path).
    let keys: Vec<&str> = written["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(
        keys.iter()
            .any(|k| k.starts_with("optimizer/_trainable_variables/")),
        "{keys:?}"
    );
    ok(&run_in(&dir, &["convert", "ckpt", "w.safetensors"]));
    let ts = read_file(&dir.join("w.safetensors")).unwrap();
    let mut names: Vec<&str> = ts.iter().map(|t| t.name.as_str()).collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
    for n in &names {
        assert!(n.starts_with("model/"), "not the model's own path: {n}");
        // Keras 3 names a Dense layer's kernel `_kernel`: `model/_functional/_operations/1/_kernel`.
        assert!(n.ends_with("kernel") || n.ends_with("/bias"), "{n}");
    }
    // Back to a checkpoint (streamed from the safetensors file): TensorFlow restores it into
    // a fresh model, whose outputs are the trained model's.
    safetensors_to_checkpoint(&dir, "back");
    let restored = python(&["restore", &dir.join("back").display().to_string()]);
    assert_eq!(restored["outputs"], written["outputs"], "{restored}");
    assert_ne!(restored["fresh"], written["outputs"], "{restored}");
}
