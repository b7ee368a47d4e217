"""Records TensorFlow 2.21's SerializeTensor on random tensors of many dtypes, and ParseTensor on
hand-built TensorProtos (typed fields shorter or longer than the shape, content, malformed).

    python3 tests/tf_observed/gen_proto_extra.py serialize > tests/tf_observed/serialize_extra.jsonl
    python3 tests/tf_observed/gen_proto_extra.py parse > tests/tf_observed/parse_extra.jsonl
"""
import json, os, random, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import ml_dtypes
import tensorflow as tf
from tensorflow.core.framework import tensor_pb2, tensor_shape_pb2, types_pb2

rng = random.Random(5)
NP = {"float": np.float32, "double": np.float64, "half": np.float16, "bfloat16": ml_dtypes.bfloat16,
      "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
      "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
      "complex64": np.complex64, "complex128": np.complex128,
      "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2}

def enc_tensor(name, a):
    if name == "string":
        return {"dtype": name, "shape": list(a.shape), "strings": [v.hex() for v in a.reshape(-1)]}
    b = a.astype(np.uint8) if name == "bool" else a
    return {"dtype": name, "shape": list(a.shape), "hex": np.ascontiguousarray(b).tobytes().hex()}

def random_array(name, shape):
    n = int(np.prod(shape)) if shape else 1
    if name == "string":
        return np.array([bytes(rng.randrange(256) for _ in range(rng.randrange(6))) for _ in range(n)], dtype=object).reshape(shape)
    if name == "bool":
        return np.array([rng.random() < 0.5 for _ in range(n)], np.bool_).reshape(shape)
    raw = bytes(rng.randrange(256) for _ in range(n * np.dtype(NP[name]).itemsize))
    return np.frombuffer(raw, NP[name]).reshape(shape).copy()

def serialize():
    i = 0
    for name in list(NP) + ["string"]:
        for _ in range(5):
            shape = tuple(rng.choice([0, 1, 2, 3]) for _ in range(rng.choice([0, 1, 2, 3])))
            a = random_array(name, shape)
            t = tf.constant(a)
            try:
                wire = tf.io.serialize_tensor(t).numpy()
            except tf.errors.OpError:
                break  # no SerializeTensor kernel for this dtype in TensorFlow 2.21
            print(json.dumps({"id": f"serialize-extra-{i:04d}", "op": "serialize_tensor", "input": enc_tensor(name, a), "proto_hex": wire.hex()}, sort_keys=True))
            i += 1

def parse():
    i = 0
    def emit(name, proto_bytes, out_type):
        nonlocal i
        rec = {"id": f"parse-extra-{i:04d}", "op": "parse_tensor", "name": name, "out_type": out_type, "proto_hex": proto_bytes.hex()}
        try:
            t = tf.io.parse_tensor(proto_bytes, tf.as_dtype(out_type if out_type != "float" else "float32"))
            a = t.numpy()
            if out_type == "string":
                rec["expect"] = {"dtype": "string", "shape": list(t.shape), "strings": [v.hex() for v in np.asarray(a, dtype=object).reshape(-1)]}
            else:
                rec["expect"] = enc_tensor(out_type, np.asarray(a))
        except tf.errors.OpError as e:
            rec["error"] = {"kind": type(e).__name__, "message": e.message.split("\n")[0][:200]}
        print(json.dumps(rec, sort_keys=True))
        i += 1
    def proto(dtype, dims, **fields):
        p = tensor_pb2.TensorProto(dtype=dtype)
        p.tensor_shape.CopyFrom(tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in dims]))
        for k, v in fields.items():
            if k == "tensor_content":
                p.tensor_content = v
            elif k == "float8_val":
                p.float8_val = v
            else:
                getattr(p, k).extend(v)
        return p.SerializeToString()
    DT = types_pb2
    cases = [
        ("float short", DT.DT_FLOAT, [4], {"float_val": [1.5, -2]}, "float"),
        ("float empty", DT.DT_FLOAT, [3], {}, "float"),
        ("double long", DT.DT_DOUBLE, [2], {"double_val": [1, 2, 3]}, "double"),
        ("int32 short", DT.DT_INT32, [2, 3], {"int_val": [7, -1]}, "int32"),
        ("uint8 wrap", DT.DT_UINT8, [3], {"int_val": [256, 511, -1]}, "uint8"),
        ("int16 wrap", DT.DT_INT16, [2], {"int_val": [70000, -40000]}, "int16"),
        ("uint16", DT.DT_UINT16, [3], {"int_val": [65535, 3]}, "uint16"),
        ("int64", DT.DT_INT64, [3], {"int64_val": [-5]}, "int64"),
        ("uint32", DT.DT_UINT32, [2], {"uint32_val": [4000000000]}, "uint32"),
        ("uint64", DT.DT_UINT64, [2], {"uint64_val": [2**64 - 1, 1]}, "uint64"),
        ("bool", DT.DT_BOOL, [4], {"bool_val": [True, False]}, "bool"),
        ("half_val", DT.DT_HALF, [3], {"half_val": [0x3c00, 0x1c000]}, "half"),
        ("bf16 half_val", DT.DT_BFLOAT16, [2], {"half_val": [0x3f80]}, "bfloat16"),
        ("complex64 odd", DT.DT_COMPLEX64, [3], {"scomplex_val": [1, 2, 3]}, "complex64"),
        ("complex128", DT.DT_COMPLEX128, [2], {"dcomplex_val": [1, 2, 3, 4, 5, 6]}, "complex128"),
        ("string short", DT.DT_STRING, [3], {"string_val": [b"a", b"bc"]}, "string"),
        ("string empty", DT.DT_STRING, [2], {}, "string"),
        ("qint8", DT.DT_QINT8, [3], {"int_val": [-3, 200]}, "qint8"),
        ("quint16", DT.DT_QUINT16, [2], {"int_val": [65535]}, "quint16"),
        ("qint32", DT.DT_QINT32, [2], {"int_val": [-7, 9]}, "qint32"),
        ("float content", DT.DT_FLOAT, [2], {"tensor_content": np.array([1, 2], np.float32).tobytes(), "float_val": [9]}, "float"),
        ("float content short", DT.DT_FLOAT, [2], {"tensor_content": b"\x00\x00\x80"}, "float"),
        ("bool content bad", DT.DT_BOOL, [2], {"tensor_content": b"\x01\x05"}, "bool"),
        ("bool content ok", DT.DT_BOOL, [3], {"tensor_content": b"\x01\x00\x01"}, "bool"),
        ("int8 content", DT.DT_INT8, [2, 2], {"tensor_content": b"\x01\xff\x02\xfe"}, "int8"),
        ("string content", DT.DT_STRING, [2], {"tensor_content": b"\x01\x02a" + b"bc"}, "string"),
        ("string content bad", DT.DT_STRING, [2], {"tensor_content": b"\x01\x05abc"}, "string"),
        ("type mismatch", DT.DT_INT32, [1], {"int_val": [1]}, "float"),
        ("empty shape zero", DT.DT_FLOAT, [0, 3], {"float_val": [1]}, "float"),
        ("negative dim", DT.DT_FLOAT, [-1], {}, "float"),
        ("invalid dtype", DT.DT_INVALID, [1], {}, "float"),
        ("float8 val", 25, [3], {"float8_val": b"\x38\x40"}, "float8_e4m3fn"),
        ("float8 e5m2 empty", 24, [2], {}, "float8_e5m2"),
        ("scalar float", DT.DT_FLOAT, [], {"float_val": [3.25]}, "float"),
        ("scalar string", DT.DT_STRING, [], {"string_val": [b"only"]}, "string"),
    ]
    for name, dtype, dims, fields, out in cases:
        emit(name, proto(dtype, dims, **fields), out)
    emit("garbage", b"\xff\xff\xff", "float")
    emit("truncated", proto(DT.DT_FLOAT, [2], float_val=[1, 2])[:-3], "float")

if sys.argv[1:] == ["serialize"]:
    serialize()
else:
    parse()
