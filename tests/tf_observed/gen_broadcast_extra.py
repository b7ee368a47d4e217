"""Records TensorFlow 2.21's BroadcastTo on random input shapes and targets (valid and not),
for the dtypes of the shared vectors plus half, uint16, int32, double and uint8.

    python3 tests/tf_observed/gen_broadcast_extra.py > tests/tf_observed/broadcast_extra.jsonl
"""
import json, os, random
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf

rng = random.Random(77)
DT = {"float": np.float32, "int8": np.int8, "int64": np.int64, "bool": np.bool_, "complex128": np.complex128,
      "bfloat16": ml_dtypes.bfloat16, "half": np.float16, "uint16": np.uint16, "int32": np.int32,
      "double": np.float64, "uint8": np.uint8, "string": object}

def make(name, shape):
    n = int(np.prod(shape)) if shape else 1
    if name == "string":
        vals = [rng.choice([b"x", b"", b"yy", b"\x00z"]) for _ in range(n)]
        return tf.constant(np.array(vals, dtype=object).reshape(shape)), {"dtype": "string", "shape": list(shape), "strings": [v.hex() for v in vals]}
    if name == "bool":
        a = np.array([rng.random() < 0.5 for _ in range(n)], np.bool_).reshape(shape)
        return tf.constant(a), {"dtype": name, "shape": list(shape), "hex": a.astype(np.uint8).tobytes().hex()}
    if name == "complex128":
        a = np.array([complex(rng.randint(-9, 9), rng.randint(-9, 9)) for _ in range(n)], np.complex128).reshape(shape)
    else:
        a = np.array([rng.randint(0, 100) for _ in range(n)], np.float64).astype(DT[name]).reshape(shape)
    return tf.constant(a), {"dtype": name, "shape": list(shape), "hex": a.tobytes().hex()}

def target_for(shape):
    r = rng.random()
    out = list(shape)
    for i in range(len(out)):
        if out[i] == 1 and rng.random() < 0.6:
            out[i] = rng.choice([0, 2, 3, 4])
    for _ in range(rng.choice([0, 0, 1, 2])):
        out.insert(0, rng.choice([1, 2, 3, 0]))
    if r < 0.25 and out:
        i = rng.randrange(len(out)); out[i] = rng.choice([0, 1, 5, 7])   # maybe incompatible
    elif r < 0.3:
        out = out[1:] if out else [-1]                                    # rank too small / negative
    elif r < 0.33:
        out = out + [-2]
    return out

n = 0
for name in DT:
    for _ in range(14):
        rank = rng.choice([0, 1, 2, 2, 3, 4])
        shape = [rng.choice([1, 1, 2, 3, 0]) for _ in range(rank)]
        t, enc = make(name, shape)
        target = target_for(shape)
        sd = rng.choice(["int32", "int64"])
        rec = {"id": f"broadcast-extra-{n:04d}", "op": "broadcast_to", "input": enc, "shape": target, "shape_dtype": sd}
        try:
            y = tf.raw_ops.BroadcastTo(input=t, shape=tf.constant(target, getattr(tf, sd)))
            if name == "string":
                rec["expect"] = {"dtype": "string", "shape": list(y.shape), "strings": [v.hex() for v in np.asarray(y.numpy(), dtype=object).reshape(-1)]}
            elif name == "bool":
                rec["expect"] = {"dtype": name, "shape": list(y.shape), "hex": y.numpy().astype(np.uint8).tobytes().hex()}
            else:
                rec["expect"] = {"dtype": name, "shape": list(y.shape), "hex": y.numpy().tobytes().hex()}
        except tf.errors.OpError as e:
            msg = e.message.split(" [Op:")[0]
            if "}} " in msg:
                msg = msg.split("}} ", 1)[1]
            rec["error"] = {"kind": type(e).__name__, "message": msg}
        print(json.dumps(rec, sort_keys=True))
        n += 1
