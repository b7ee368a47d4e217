"""Records TensorFlow's tensor bundles (checkpoints V2): the files it writes and what it reads back.

Run with TensorFlow 2.21 installed:
    python3 tests/tf_observed/gen_checkpoint.py > tests/tf_observed/checkpoint.jsonl
Each line is one record, with op:
* "checkpoint": files {name: hex} written by TensorFlow (tf.raw_ops.SaveV2 or tf.train.Checkpoint),
  prefix (the checkpoint prefix inside the record's folder), tensors [{key, dtype, shape, hex |
  strings}] as TensorFlow reads every full tensor back (RestoreV2 of each key
  tf.train.list_variables names), debug_string (hex of CheckpointReader.debug_string()),
  write (true when writing the stored tensors and slices shard by shard in the data files'
  order must give TensorFlow's bytes),
  and, for object-based checkpoints, object_paths {checkpoint key: object path} computed from
  the TrackableObjectGraph (breadth-first from the root, children in order: the shortest path,
  as TensorFlow names objects) and slots [[variable key, slot name, slot key]].
* "checkpoint_error": files as above, damaged; read (the key read, or null when opening alone
  fails), error {kind, message}: TensorFlow's CheckpointReader error, its folder written "{dir}".
"""
import json, os, shutil, sys, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import logging
logging.disable(logging.WARNING)
import numpy as np
import tensorflow as tf
import ml_dtypes
from tensorflow.core.protobuf import trackable_object_graph_pb2

tf.get_logger().setLevel("ERROR")
WORK = tempfile.mkdtemp(prefix="gen_ckpt_")
out = sys.stdout


def files_of(folder):
    res = {}
    for root, _, names in os.walk(folder):
        for n in sorted(names):
            full = os.path.join(root, n)
            res[os.path.relpath(full, folder)] = open(full, "rb").read().hex()
    return dict(sorted(res.items()))


def value(t):
    if t.dtype == tf.variant:
        return {}
    a = t.numpy()
    if t.dtype == tf.string:
        return {"strings": [bytes(s).hex() for s in np.asarray(a, dtype=object).reshape(-1)]}
    return {"hex": np.ascontiguousarray(a).view(np.uint8).tobytes().hex()}


def read_back(prefix):
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    tensors = []
    for key, shape in sorted(tf.train.list_variables(prefix)):
        dt = dtypes[key]
        t = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=[key], shape_and_slices=[""], dtypes=[dt])[0]
        rec = {"key": key, "dtype": dt.name if dt != tf.float32 else "float", "shape": list(shape)}
        rec["dtype"] = {"float32": "float", "float64": "double", "float16": "half"}.get(dt.name, dt.name)
        rec.update(value(t))
        if dt == tf.variant:
            rec["variant_hex"] = tf.io.serialize_tensor(t).numpy().hex()
        tensors.append(rec)
    debug = tf.compat.v1.train.NewCheckpointReader(prefix).debug_string()
    return tensors, debug.hex()


def object_info(prefix):
    reader = tf.train.load_checkpoint(prefix)
    if not reader.has_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"):
        return None
    g = trackable_object_graph_pb2.TrackableObjectGraph()
    g.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    paths = {0: ""}
    queue = [0]
    while queue:
        n = queue.pop(0)
        for c in g.nodes[n].children:
            if c.node_id not in paths:
                paths[c.node_id] = (paths[n] + "/" if paths[n] else "") + c.local_name
                queue.append(c.node_id)
    # Every path from the root to each node (depth-first, children in order; at most 8 a node).
    every = {}

    def walk(n, path, seen):
        lst = every.setdefault(n, [])
        if len(lst) < 8:
            lst.append(path)
        for c in g.nodes[n].children:
            if c.node_id not in seen:
                walk(c.node_id, (path + "/" if path else "") + c.local_name, seen | {c.node_id})

    walk(0, "", {0})
    object_paths, all_paths, slots = {}, {}, []
    for i, node in enumerate(g.nodes):
        for a in node.attributes:
            if i in paths:
                object_paths[a.checkpoint_key] = paths[i]
                all_paths[a.checkpoint_key] = sorted(set(every.get(i, [])))
        for s in node.slot_variables:
            var = [a.checkpoint_key for a in g.nodes[s.original_variable_node_id].attributes]
            slot = [a.checkpoint_key for a in g.nodes[s.slot_variable_node_id].attributes]
            if var and slot:
                slots.append([var[0], s.slot_name, slot[0]])
    return {"object_paths": dict(sorted(object_paths.items())), "all_paths": dict(sorted(all_paths.items())),
            "slots": sorted(slots)}


n_rec = 0


def emit(rec):
    global n_rec
    out.write(json.dumps(rec, sort_keys=True) + "\n")
    n_rec += 1


def record(rid, folder, prefix, write=True):
    tensors, debug = read_back(os.path.join(folder, prefix))
    rec = {"id": rid, "op": "checkpoint", "files": files_of(folder), "prefix": prefix,
           "tensors": tensors, "debug_string": debug, "write": write}
    info = object_info(os.path.join(folder, prefix))
    if info:
        rec.update(info)
    emit(rec)
    return rec


def fresh(name):
    folder = os.path.join(WORK, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


def save(rid, names, tensors, slices=None):
    folder = fresh(rid)
    tf.raw_ops.SaveV2(prefix=os.path.join(folder, "ckpt"), tensor_names=names,
                      shape_and_slices=slices or [""] * len(names), tensors=tensors)
    return record(rid, folder, "ckpt")


# 1. Every dtype SaveV2 takes: a [2, 3] tensor of edge values, a scalar and a 0-element tensor.
DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "qint8", "quint8",
          "qint16", "quint16", "qint32", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
          "float8_e4m3b11fnuz", "float8_e5m2fnuz", "int4", "uint4", "int2", "uint2", "float4_e2m1fn"]
for name in DTYPES:
    dt = tf.as_dtype(name)
    base = np.array([[0, 1, -1], [2, 3, -2]])
    if dt == tf.bool:
        vals = np.array([[True, False, True], [False, False, True]])
    elif dt.is_quantized:
        vals = base.astype(dt.as_numpy_dtype) if not dt.name.startswith("qu") else np.abs(base).astype(dt.as_numpy_dtype)
    elif name.startswith("uint"):
        vals = np.abs(base).astype(dt.as_numpy_dtype)
    elif dt.is_floating or dt.is_complex:
        vals = (base * 0.5).astype(dt.as_numpy_dtype)
        if dt.is_complex:
            vals = vals + 1j * np.flip(vals)
    else:
        vals = base.astype(dt.as_numpy_dtype)
    big = tf.constant(vals, dt)
    scalar = tf.constant(vals.reshape(-1)[1], dt)
    empty = tf.constant(np.zeros((0, 3), dt.as_numpy_dtype), dt)
    save(f"dtype-{name}", ["m", "s", "z"], [big, scalar, empty])

# 2. Strings: empty strings, binary, a long one (2-byte varint), 0-d and 0-element.
save("strings", ["a", "b", "c", "d"], [
    tf.constant([[b"", b"x"], [bytes(range(256)), b"hello world"]]),
    tf.constant(b"scalar"),
    tf.constant(np.zeros((0,), object), tf.string),
    tf.constant([b"y" * 300]),
])

# 3. Variant (a TensorList).
save("variant", ["list", "w"], [
    tf.raw_ops.TensorListFromTensor(tensor=tf.constant([[1., 2.], [3., 4.]]), element_shape=tf.constant([2], tf.int32)),
    tf.constant([7], tf.int64),
])

# 4. Keys sorted bytewise, several at once; names with shared prefixes (index restarts).
names = [f"layer_{i:02d}/kernel" for i in range(20)] + ["a", "b/c", "b", "Z", "z" * 40]
save("many-keys", names, [tf.constant([float(i)]) for i in range(len(names))])

# 5. More than one 256 KiB index block (FindShortestSeparator keys in the index block).
names = [f"model/block_{i // 100:03d}/layer_{i:05d}/" + "w" * 40 for i in range(4000)]
save("two-index-blocks", names, [tf.constant(np.int8(i % 100)) for i in range(len(names))])

# 6. Sliced entries: SaveV2 with shape_and_slices (as TF1 partitioned variables save).
x = np.arange(24, dtype=np.float32).reshape(4, 6)
save("sliced", ["p", "p", "q"], [tf.constant(x[:2]), tf.constant(x[2:]), tf.constant([1, 2], tf.int32)],
     ["4 6 0,2:-", "4 6 2,2:-", ""])
y = np.arange(12, dtype=np.int64).reshape(3, 4)
save("sliced-columns", ["c", "c", "c"], [tf.constant(y[:, :1]), tf.constant(y[:, 1:3]), tf.constant(y[:, 3:])],
     ["3 4 -:0,1", "3 4 -:1,2", "3 4 -:3,1"])

# 7. tf.train.Checkpoint of variables (object graph, save_counter).
folder = fresh("object-vars")
ck = tf.train.Checkpoint(v=tf.Variable([1., 2.]), nested=tf.train.Checkpoint(w=tf.Variable([[3]], dtype=tf.int64)),
                         s=tf.Variable(b"text"))
ck.write(os.path.join(folder, "ckpt-1"))
record("object-vars", folder, "ckpt-1")

# 8. A Keras model with an optimizer (slots), saved by tf.train.Checkpoint.save (a state file).
import keras
keras.utils.set_random_seed(1)
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
opt = keras.optimizers.Adam(0.01)
model.compile(optimizer=opt, loss="mse")
model.fit(np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32), epochs=1, verbose=0)
folder = fresh("keras-adam")
ck = tf.train.Checkpoint(model=model, optimizer=opt)
ck.save(os.path.join(folder, "ckpt"))
record("keras-adam", folder, "ckpt-1")

# 8b. A TF1 optimizer's slot variables (SlotVariableReference in the object graph).
folder = fresh("slots")
v = tf.Variable([1.0, -2.0])
opt1 = tf.compat.v1.train.AdamOptimizer(0.1)
opt1.minimize(lambda: tf.reduce_sum(v * v), var_list=[v])
tf.train.Checkpoint(v=v, optimizer=opt1).write(os.path.join(folder, "ckpt"))
record("slots", folder, "ckpt")

# 9. Several shards and slices across them: MaxShardSizePolicy.
folder = fresh("sharded")
ck = tf.train.Checkpoint(a=tf.Variable(np.arange(40, dtype=np.float32).reshape(10, 4)),
                         b=tf.Variable(np.arange(8, dtype=np.int32)))
opts = tf.train.CheckpointOptions(
    experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(max_shard_size=64))
ck.write(os.path.join(folder, "ckpt"), options=opts)
record("sharded", folder, "ckpt")

# 10. Errors: what CheckpointReader says for damaged files.
folder = fresh("err-base")
base = os.path.join(folder, "ckpt")
tf.raw_ops.SaveV2(prefix=base, tensor_names=["a", "s"], shape_and_slices=["", ""],
                  tensors=[tf.constant([1., 2., 3.]), tf.constant([b"xy", b"z"])])
index = open(base + ".index", "rb").read()
data = open(base + ".data-00000-of-00001", "rb").read()


def flip(b, i):
    b = bytearray(b)
    b[i] ^= 1
    return bytes(b)


def error_case(rid, idx, dat, read):
    folder = fresh(rid)
    prefix = os.path.join(folder, "ckpt")
    if idx is not None:
        open(prefix + ".index", "wb").write(idx)
    if dat is not None:
        open(prefix + ".data-00000-of-00001", "wb").write(dat)
    try:
        reader = tf.train.load_checkpoint(prefix)
        if read is not None:
            reader.get_tensor(read)
        raise SystemExit(f"{rid}: TensorFlow read the damaged checkpoint")
    except SystemExit:
        raise
    except Exception as e:
        msg = getattr(e, "message", str(e)).replace(folder, "{dir}")
        emit({"id": rid, "op": "checkpoint_error", "files": files_of(folder), "prefix": "ckpt",
              "read": read, "error": {"kind": type(e).__name__, "message": msg}})


error_case("err-tensor-bytes", index, flip(data, 0), "a")
error_case("err-string-bytes", index, flip(data, len(data) - 1), "s")
error_case("err-string-lengths", index, flip(data, 12), "s")
error_case("err-missing-shard", index, None, "a")
error_case("err-short-shard", index, data[:5], "a")
error_case("err-truncated-index", index[:-10], data, None)
error_case("err-index-too-short", index[:30], data, None)
error_case("err-bad-magic", flip(index, len(index) - 1), data, None)
error_case("err-corrupted-block", flip(index, 3), data, None)
error_case("err-corrupted-index-block", flip(index, len(index) - 55), data, None)

# 11. Zero-element tensors between others: TensorFlow records one at the data size when it is
# added, so it shares its offset with the next tensor added (whose key may sort first), and
# slices of a partitioned tensor around them, added in an order that is not the slices'.
x = np.arange(8, dtype=np.float32).reshape(4, 2)
save("empty-between", ["m", "e", "b", "p", "z", "d", "p", "a"],
     [tf.constant([1.0], tf.float64), tf.zeros((0, 3), tf.float32), tf.constant([5, 6], tf.int32),
      tf.constant(x[2:]), tf.zeros((0,), tf.int64), tf.zeros((2, 0), tf.int8), tf.constant(x[:2]),
      tf.constant(np.zeros((0,), object), tf.string)],
     ["", "", "", "4 2 2,2:-", "", "", "4 2 0,2:-", ""])

# 12. The same in an object-based checkpoint, and sharded with a variable split into slices
# across shards (MaxShardSizePolicy).
folder = fresh("object-empty-between")
ck = tf.train.Checkpoint(w=tf.Variable([1., 2.]), empty=tf.Variable(np.zeros((0, 4), np.float32)),
                         a=tf.Variable([3], dtype=tf.int64))
ck.write(os.path.join(folder, "ckpt"))
record("object-empty-between", folder, "ckpt")
folder = fresh("sharded-empty-between")
ck = tf.train.Checkpoint(a=tf.Variable(np.arange(40, dtype=np.float32).reshape(10, 4)),
                         e=tf.Variable(np.zeros((0, 2), np.float32)),
                         b=tf.Variable(np.arange(8, dtype=np.int32)))
opts = tf.train.CheckpointOptions(
    experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(max_shard_size=64))
ck.write(os.path.join(folder, "ckpt"), options=opts)
record("sharded-empty-between", folder, "ckpt")

shutil.rmtree(WORK)
print(f"{n_rec} records", file=sys.stderr)
