"""Records SavedModels TensorFlow writes and what TensorFlow reports about them.

Run with TensorFlow 2.21 installed:
    python3 tests/tf_observed/gen_saved_model.py > tests/tf_observed/saved_model.jsonl
Each line is one record, with op "saved_model":
* name: a label; files {relative path: hex} of the SavedModel folder as tf.saved_model.save
  wrote it (assets included);
* show_all: hex of what `saved_model_cli show --dir D --all` prints (its Python module's
  `_show_all`, which `show --all` calls, run in-process, stdout captured), with the folder written "{dir}";
* show {"": `show --dir D`, "T": `show --dir D --tag_set T`, "T/S": `show --dir D --tag_set T
  --signature_def S`}: hex of each output (`_show_tag_sets`, `_show_signature_def_map_keys`,
  `_show_inputs_outputs`, which those flags call);
* ops: the sorted op names of the ops line (`_get_ops_in_metagraph`, a Python set, so the
  line's order is not stable);
* signatures {tag set joined ",": {key: {method_name, inputs|outputs {key: {dtype, shape
  (null for unknown rank), name}}}}} from the MetaGraphDef TensorFlow's loader parses;
* variables [{path, dtype, shape, hex | strings}]: every SavedVariable of the object graph, its
  path breadth-first from the root (children in order), its value as tf.train.load_checkpoint
  reads it from variables/;
* fingerprint {saved_model_checksum, graph_def_program_hash, signature_def_hash,
  saved_object_graph_hash, checkpoint_hash} as tf.saved_model.experimental.read_fingerprint
  reports them, and singleprint.
"""
import contextlib, io, json, os, sys, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import logging
logging.disable(logging.WARNING)
import numpy as np
import tensorflow as tf
from tensorflow.python.tools import saved_model_cli
from tensorflow.python.tools import saved_model_utils
from tensorflow.core.framework import types_pb2

tf.get_logger().setLevel("ERROR")
WORK = tempfile.mkdtemp(prefix="gen_sm_")
out = sys.stdout
sys.stdout = sys.stderr  # model.export prints; only records go to the real stdout


def files_of(folder):
    res = {}
    for root, _, names in os.walk(folder):
        for n in sorted(names):
            full = os.path.join(root, n)
            res[os.path.relpath(full, folder)] = open(full, "rb").read().hex()
    return dict(sorted(res.items()))


def captured(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


def show_all(folder):
    # What `saved_model_cli show --dir D --all` runs (its absl flags parsed, `show()` calls
    # this with --dir).
    return captured(saved_model_cli._show_all, folder).replace(folder, "{dir}")


def dtype_name(enum):
    return types_pb2.DataType.Name(enum)


def shape_of(tsp):
    if tsp.unknown_rank:
        return None
    return [d.size for d in tsp.dim]


def variables_of(folder, sm):
    graph = sm.meta_graphs[0].object_graph_def
    if not graph.nodes:  # a TF1 SavedModel: no object graph
        return []
    paths = {0: ""}
    order = [0]
    for i in order:
        for c in graph.nodes[i].children:
            if c.node_id not in paths:
                p = paths[i]
                paths[c.node_id] = (p + "/" if p else "") + c.local_name
                order.append(c.node_id)
    reader = tf.train.load_checkpoint(os.path.join(folder, "variables", "variables"))
    res = []
    for i in sorted(paths, key=lambda n: order.index(n)):
        node = graph.nodes[i]
        if node.WhichOneof("kind") != "variable":
            continue
        v = node.variable
        key = paths[i] + "/.ATTRIBUTES/VARIABLE_VALUE"
        rec = {"path": paths[i], "name": v.name, "dtype": dtype_name(v.dtype),
               "shape": shape_of(v.shape), "trainable": v.trainable}
        if reader.has_tensor(key):
            a = reader.get_tensor(key)
            if v.dtype == tf.string.as_datatype_enum:
                rec["strings"] = [bytes(s).hex() for s in np.asarray(a, dtype=object).reshape(-1)]
            else:
                rec["hex"] = np.ascontiguousarray(a).view(np.uint8).tobytes().hex()
        res.append(rec)
    return res


def record(name, folder):
    sm = saved_model_utils.read_saved_model(folder)
    sigs = {}
    ops = set()
    for mg in sm.meta_graphs:
        tags = ",".join(mg.meta_info_def.tags)
        sigs[tags] = {}
        for k, s in mg.signature_def.items():
            d = {"method_name": s.method_name}
            for part in ("inputs", "outputs"):
                d[part] = {ik: {"dtype": dtype_name(ti.dtype), "shape": shape_of(ti.tensor_shape),
                                "name": ti.name} for ik, ti in getattr(s, part).items()}
            sigs[tags][k] = d
        ops |= saved_model_cli._get_ops_in_metagraph(mg)
    # `show --dir D`, `show --dir D --tag_set T`, `show --dir D --tag_set T --signature_def S`.
    views = {"": captured(saved_model_cli._show_tag_sets, folder).encode().hex()}
    for mg in sm.meta_graphs:
        tags = ",".join(mg.meta_info_def.tags)
        views[tags] = captured(saved_model_cli._show_signature_def_map_keys, folder, tags).encode().hex()
        for k in mg.signature_def:
            views[tags + "/" + k] = captured(saved_model_cli._show_inputs_outputs, folder, tags, k).encode().hex()
    has_fp = os.path.exists(os.path.join(folder, "fingerprint.pb"))
    fp = tf.saved_model.experimental.read_fingerprint(folder) if has_fp else None
    rec = {"op": "saved_model", "name": name, "files": files_of(folder),
           "show_all": show_all(folder).encode().hex(), "show": views, "ops": sorted(ops),
           "signatures": sigs, "variables": variables_of(folder, sm),
           "fingerprint": None if fp is None else {
               "saved_model_checksum": str(fp.saved_model_checksum),
               "graph_def_program_hash": str(fp.graph_def_program_hash),
               "signature_def_hash": str(fp.signature_def_hash),
               "saved_object_graph_hash": str(fp.saved_object_graph_hash),
               "checkpoint_hash": str(fp.checkpoint_hash),
               "singleprint": fp.singleprint()}}
    if os.path.exists(os.path.join(folder, "saved_model.pbtxt")):
        # What TensorFlow's reader parses the text into, deterministically encoded.
        rec["binary_of_text"] = sm.SerializeToString(deterministic=True).hex()
    out.write(json.dumps(rec, sort_keys=True) + "\n")


class Module(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        self.b = tf.Variable([0.5, -0.5], name="b")
        self.step = tf.Variable(7, dtype=tf.int64, trainable=False, name="step")

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
    def serve(self, x):
        return {"y": tf.matmul(x, self.w) + self.b}

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name="ids"),
                                  tf.TensorSpec([], tf.float64, name="scale")])
    def count(self, ids, scale):
        return {"total": tf.cast(tf.reduce_sum(ids), tf.float64) * scale,
                "step": self.step.read_value()}


def module_model():
    m = Module()
    folder = os.path.join(WORK, "module")
    tf.saved_model.save(m, folder, signatures={"serving_default": m.serve, "count": m.count})
    record("module_two_signatures", folder)


def keras_model():
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    folder = os.path.join(WORK, "keras")
    model.export(folder) if hasattr(model, "export") else tf.saved_model.save(model, folder)
    record("keras_sequential", folder)


class Strings(tf.Module):
    def __init__(self):
        super().__init__()
        self.vocab = tf.Variable(["a", "bc", ""], name="vocab")

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text):
        return {"length": tf.strings.length(text), "joined": tf.strings.reduce_join(self.vocab)}


def string_model():
    m = Strings()
    folder = os.path.join(WORK, "strings")
    tf.saved_model.save(m, folder, signatures=m.serve)
    record("string_input", folder)


def tf1_text_model():
    # A TF1 SavedModel written as text (`SavedModelBuilder.save(as_text=True)`).
    folder = os.path.join(WORK, "tf1_text")
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([[1.0, 2.0], [3.0, 4.0]]))
        y = tf.identity(tf.matmul(x, w) + 0.5, name="y")
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            b = tf.compat.v1.saved_model.Builder(folder)
            sig = tf.compat.v1.saved_model.predict_signature_def({"x": x}, {"y": y})
            b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig})
            b.save(as_text=True)
    record("tf1_builder_as_text", folder)


def tf2_as_text_model():
    # A TF2 SavedModel's saved_model.pb rewritten as text with protobuf's text_format (object
    # graph, structured values, function library), the .pb removed.
    from google.protobuf import text_format
    src = os.path.join(WORK, "module")
    folder = os.path.join(WORK, "module_text")
    import shutil
    shutil.copytree(src, folder)
    sm = saved_model_utils.read_saved_model(folder)
    os.remove(os.path.join(folder, "saved_model.pb"))
    with open(os.path.join(folder, "saved_model.pbtxt"), "w") as fh:
        fh.write(text_format.MessageToString(sm))
    record("module_two_signatures_as_text", folder)


module_model()
keras_model()
string_model()
tf1_text_model()
tf2_as_text_model()
