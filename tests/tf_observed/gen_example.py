"""Records TensorFlow 2.21's TFRecord files and tf.train.Example parsing, for tensorcast-records.

    python3 tests/tf_observed/gen_example.py > tests/tf_observed/example.jsonl

Records (one JSON object per line, `op` says which):
* `tfrecord_read`: a file's bytes (`file_hex`, written by TensorFlow's TFRecordWriter with
  `compression` "", "GZIP" or "ZLIB", then possibly damaged) and what `tf.data.TFRecordDataset` read
  back: `records` (hex) and, when it stopped on an error, `error` {kind, message}.
* `tfrecord_write`: records TensorFlow wrote and the file bytes it wrote (`file_hex`).
* `parse_example` / `parse_single_example` / `parse_sequence_example`: a feature spec (JSON, the
  classes and argument names of tf.io), serialized protos (hex) and TensorFlow's outputs (dense:
  a tensor; sparse: indices/values/dense_shape; ragged: flat_values + row_splits) or its error.
"""
import json, os, sys, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

OUT = []
def emit(rec):
    rec["id"] = f"example-{len(OUT):04d}"
    OUT.append(rec)
    print(json.dumps(rec, sort_keys=True))

def err_of(e):
    msg = e.message
    # Eager ops prefix the kernel's message with the wrapped function's name and end with
    # " [Op:...]"; keep the kernel's own words.
    if msg.startswith("{{function_node"):
        msg = msg.split("}} ", 1)[1]
    msg = msg.split(" [Op:")[0]
    return {"kind": type(e).__name__, "message": msg}

# ----- TFRecord files -------------------------------------------------------------------------
TMP = tempfile.mkdtemp()
def tf_write(recs, comp):
    p = os.path.join(TMP, "w")
    with tf.io.TFRecordWriter(p, tf.io.TFRecordOptions(compression_type=comp)) as w:
        for r in recs:
            w.write(r)
    return open(p, "rb").read()

def tf_read(data, comp, name):
    p = os.path.join(TMP, "r")
    open(p, "wb").write(data)
    rec = {"op": "tfrecord_read", "name": name, "compression": comp, "file_hex": data.hex(), "records": []}
    try:
        for r in tf.data.TFRecordDataset(p, compression_type=comp):
            rec["records"].append(r.numpy().hex())
    except tf.errors.OpError as e:
        rec["error"] = err_of(e)
    emit(rec)

def flip(b, i):
    return b[:i] + bytes([b[i] ^ 0x01]) + b[i + 1:]

SETS = {
    "three": [b"hello", b"", b"x" * 20],
    "one_empty": [b""],
    "none": [],
    "binary": [bytes(range(256)), b"\x00" * 7, b"\xff" * 300],
}
for comp in ["", "GZIP", "ZLIB"]:
    for sname, recs in SETS.items():
        data = tf_write(recs, comp)
        emit({"op": "tfrecord_write", "name": sname, "compression": comp, "records": [r.hex() for r in recs], "file_hex": data.hex()})
        tf_read(data, comp, sname)
big = [bytes([i % 251]) * (i * 37 % 1000) for i in range(40)]
for comp in ["", "GZIP", "ZLIB"]:
    tf_read(tf_write(big, comp), comp, "forty")

plain = tf_write(SETS["three"], "")  # records at 0 (21 bytes), 21 (16), 37 (36): 73 bytes
damaged = {
    "length_crc_first": flip(plain, 8),
    "length_crc_second": flip(plain, 21 + 8),
    "length_crc_third": flip(plain, 37 + 9),
    "length_value_first": flip(plain, 0),
    "length_huge": (2**60).to_bytes(8, "little") + plain[8:],
    "data_crc_first": flip(plain, 17),
    "data_first": flip(plain, 12),
    "data_crc_third": flip(plain, 72),
    "truncated_5": plain[:5],
    "truncated_11": plain[:11],
    "truncated_12": plain[:12],
    "truncated_14": plain[:14],
    "truncated_20": plain[:20],
    "truncated_21": plain[:21],
    "truncated_22": plain[:22],
    "truncated_33": plain[:33],
    "truncated_36": plain[:36],
    "truncated_72": plain[:72],
    "trailing_zero_byte": plain + b"\x00",
    "trailing_12_zeros": plain + b"\x00" * 12,
    "empty_file": b"",
    "not_tfrecord_text": b"this is not a tfrecord file at all\n",
}
for name, data in damaged.items():
    tf_read(data, "", name)
for comp in ["GZIP", "ZLIB"]:
    c = tf_write(SETS["three"], comp)
    tf_read(c[:-3], comp, "trailer_cut_3")
    tf_read(c[:-8], comp, "trailer_cut_8")
    tf_read(c[: len(c) // 2], comp, "half")
    tf_read(c[:10] + b"\xff" * 5 + c[15:], comp, "garbage_in_stream")
    tf_read(c + b"junk", comp, "trailing_junk")
    tf_read(plain, comp, "uncompressed_as_" + comp.lower())
    tf_read(b"", comp, "empty_file")
    # A valid compressed stream of damaged TFRecord bytes.
    p = os.path.join(TMP, "c")
    import gzip, zlib
    inner = flip(plain, 17)
    tf_read(gzip.compress(inner) if comp == "GZIP" else zlib.compress(inner), comp, "data_crc_first_compressed")
    tf_read(gzip.compress(plain[:33]) if comp == "GZIP" else zlib.compress(plain[:33]), comp, "truncated_33_compressed")

# ----- Examples -------------------------------------------------------------------------------
def feat(v):
    if isinstance(v, tuple) and v[0] == "empty":
        f = tf.train.Feature()
        if v[1] == "float": f.float_list.SetInParent()
        elif v[1] == "int64": f.int64_list.SetInParent()
        elif v[1] == "bytes": f.bytes_list.SetInParent()
        return f
    if v is None:
        return tf.train.Feature()
    if all(isinstance(x, bytes) for x in v) and v:
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))
    if any(isinstance(x, float) for x in v):
        return tf.train.Feature(float_list=tf.train.FloatList(value=v))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=v))

def example(d):
    return tf.train.Example(features=tf.train.Features(feature={k: feat(v) for k, v in d.items()})).SerializeToString()

def seq_example(ctx, lists):
    s = tf.train.SequenceExample()
    for k, v in ctx.items():
        s.context.feature[k].CopyFrom(feat(v))
    for k, vs in lists.items():
        fl = s.feature_lists.feature_list[k]
        fl.SetInParent()
        for v in vs:
            fl.feature.add().CopyFrom(feat(v))
    return s.SerializeToString()

DT = {"float32": tf.float32, "int64": tf.int64, "string": tf.string, "int32": tf.int32}

def default_py(dv, dtype):
    if dv is None:
        return None
    if dtype == "string":
        return np.array(dv, dtype=object) if isinstance(dv, list) else dv
    return dv

def make_spec(s):
    t = s["type"]
    dt = DT[s["dtype"]]
    if t == "FixedLenFeature":
        dv = s.get("default_value")
        if s["dtype"] == "string" and dv is not None:
            dv = [x.encode() for x in dv] if isinstance(dv, list) else dv.encode()
        return tf.io.FixedLenFeature(s["shape"], dt, default_value=dv)
    if t == "VarLenFeature":
        return tf.io.VarLenFeature(dt)
    if t == "FixedLenSequenceFeature":
        dv = s.get("default_value")
        if s["dtype"] == "string" and dv is not None:
            dv = dv.encode()
        return tf.io.FixedLenSequenceFeature(s["shape"], dt, allow_missing=s.get("allow_missing", False), default_value=dv)
    if t == "RaggedFeature":
        parts = []
        for p in s.get("partitions", []):
            if p["type"] == "RowLengths": parts.append(tf.io.RaggedFeature.RowLengths(p["key"]))
            elif p["type"] == "RowSplits": parts.append(tf.io.RaggedFeature.RowSplits(p["key"]))
            elif p["type"] == "RowStarts": parts.append(tf.io.RaggedFeature.RowStarts(p["key"]))
            elif p["type"] == "RowLimits": parts.append(tf.io.RaggedFeature.RowLimits(p["key"]))
            elif p["type"] == "ValueRowIds": parts.append(tf.io.RaggedFeature.ValueRowIds(p["key"]))
            elif p["type"] == "UniformRowLength": parts.append(tf.io.RaggedFeature.UniformRowLength(p["length"]))
        return tf.io.RaggedFeature(dt, value_key=s.get("value_key"), partitions=parts,
                                   row_splits_dtype=DT[s.get("row_splits_dtype", "int64")], validate=s.get("validate", False))
    raise ValueError(t)

def enc(t):
    a = t.numpy() if hasattr(t, "numpy") else np.asarray(t)
    name = t.dtype.name
    if name == "string":
        a = np.asarray(a, dtype=object)  # a scalar string comes back as bytes
        return {"dtype": "string", "shape": list(a.shape), "strings": [v.hex() for v in a.reshape(-1)]}
    nm = {"float32": "float"}.get(name, name)
    return {"dtype": nm, "shape": list(a.shape), "hex": np.ascontiguousarray(a).tobytes().hex()}

def enc_out(v):
    if isinstance(v, tf.SparseTensor):
        return {"kind": "sparse", "indices": enc(v.indices), "values": enc(v.values), "dense_shape": enc(v.dense_shape)}
    if isinstance(v, tf.RaggedTensor):
        splits = []
        r = v
        while isinstance(r, tf.RaggedTensor):
            splits.append(enc(r.row_splits))
            r = r.values
        return {"kind": "ragged", "flat_values": enc(r), "row_splits": splits}
    return {"kind": "dense", "value": enc(v)}

def case_parse(name, spec, serialized, single=False, example_names=None):
    rec = {"op": "parse_single_example" if single else "parse_example", "name": name, "spec": spec}
    if single:
        rec["serialized"] = serialized.hex()
    else:
        rec["serialized"] = [s.hex() for s in serialized]
    if example_names is not None:
        rec["example_names"] = example_names
    try:
        fs = {k: make_spec(s) for k, s in spec.items()}
    except (ValueError, TypeError) as e:
        return  # Python-side spec validation: not part of what we replay
    try:
        if single:
            out = tf.io.parse_single_example(tf.constant(serialized), fs, example_names=example_names)
        else:
            out = tf.io.parse_example(tf.constant(serialized, dtype=tf.string, shape=[len(serialized)]), fs,
                                      example_names=example_names)
        rec["expect"] = {k: enc_out(v) for k, v in sorted(out.items())}
    except tf.errors.OpError as e:
        rec["error"] = err_of(e)
    except (ValueError, TypeError) as e:
        rec["python_error"] = str(e).split("\n")[0]
    emit(rec)

F = lambda shape, dtype, dv=None: {"type": "FixedLenFeature", "shape": shape, "dtype": dtype, "default_value": dv}
V = lambda dtype: {"type": "VarLenFeature", "dtype": dtype}
S = lambda shape, dtype, allow_missing=False, dv=None: {"type": "FixedLenSequenceFeature", "shape": shape, "dtype": dtype, "allow_missing": allow_missing, "default_value": dv}
R = lambda dtype, value_key=None, partitions=(), rsd="int64": {"type": "RaggedFeature", "dtype": dtype, "value_key": value_key, "partitions": list(partitions), "row_splits_dtype": rsd}

e_full = example({"f": [1.0, 2.0, 3.0], "i": [7], "s": [b"ab", b"c"], "v": [1, 2, 3, 4], "b": [b"x"]})
e_part = example({"f": [4.0, 5.0, 6.0], "v": [5]})
e_empty = example({})
e_none = b""
cases = [
    ("dense float", {"f": F([3], "float32")}, [e_full, e_part]),
    ("dense float 2d", {"f": F([1, 3], "float32")}, [e_full, e_part]),
    ("dense float scalar wrong length", {"f": F([], "float32")}, [e_full]),
    ("dense int64 scalar", {"i": F([], "int64")}, [e_full]),
    ("dense int64 missing required", {"i": F([], "int64")}, [e_full, e_part]),
    ("dense int64 missing with default", {"i": F([], "int64", -1)}, [e_full, e_part, e_empty, e_none]),
    ("dense float default list", {"f": F([3], "float32", [0.5, 0.25, 0.125]), "g": F([2], "float32", [9.0, 8.0])}, [e_part, e_empty]),
    ("dense wrong type float as int64", {"f": F([3], "int64")}, [e_full]),
    ("dense wrong type int as string", {"i": F([1], "string")}, [e_full]),
    ("dense wrong type string as float", {"s": F([2], "float32")}, [e_full]),
    ("dense wrong length too many", {"v": F([2], "int64")}, [e_full]),
    ("dense wrong length too few", {"v": F([2], "int64")}, [e_part]),
    ("dense wrong length second example", {"f": F([3], "float32"), "v": F([4], "int64")}, [e_full, e_part]),
    ("dense string", {"s": F([2], "string")}, [e_full]),
    ("dense string default", {"b": F([], "string", "dflt")}, [e_full, e_part]),
    ("dense 2x2 int64", {"v": F([2, 2], "int64")}, [e_full]),
    ("dense empty batch", {"f": F([3], "float32"), "v": V("int64")}, []),
    ("sparse int64", {"v": V("int64")}, [e_full, e_part, e_empty]),
    ("sparse float", {"f": V("float32")}, [e_full, e_empty, e_part]),
    ("sparse string", {"s": V("string")}, [e_full, e_part]),
    ("sparse all missing", {"zz": V("string")}, [e_full, e_part]),
    ("sparse wrong type", {"f": V("int64")}, [e_full]),
    ("sparse empty batch", {"v": V("int64")}, []),
    ("mixed dense sparse", {"f": F([3], "float32"), "v": V("int64"), "s": V("string"), "i": F([], "int64", 0)}, [e_full, e_part]),
    ("ragged values", {"v": R("int64")}, [e_full, e_part, e_empty]),
    ("ragged string", {"s": R("string")}, [e_full, e_part]),
    ("ragged value_key", {"r": R("float32", value_key="f")}, [e_full, e_part]),
    ("ragged int32 splits", {"v": R("int64", rsd="int32")}, [e_full, e_part]),
    ("sequence allow_missing", {"f": S([], "float32", allow_missing=True)}, [e_full, e_empty]),
    ("sequence allow_missing shape 3", {"f": S([3], "float32", allow_missing=True)}, [e_full, e_part]),
    ("sequence allow_missing default", {"v": S([], "int64", allow_missing=True, dv=-7)}, [e_full, e_part, e_empty]),
    ("sequence shape 2 not multiple", {"f": S([2], "float32", allow_missing=True)}, [e_full]),
    ("sequence string", {"s": S([], "string", allow_missing=True, dv="pad")}, [e_full, e_part, e_empty]),
    ("bad serialized", {"f": F([3], "float32")}, [b"\x0aabc"]),
    ("bad serialized second", {"f": F([3], "float32")}, [e_full, b"\x0a\x05\x0a\x03"]),
    ("not example but parses", {"f": F([3], "float32", [1.0, 1.0, 1.0])}, [b"\x10\x01"]),
]
# Hand-built wire forms: unpacked repeated floats and int64s, repeated keys (last wins), a
# feature with no kind, negative int64 (10-byte varints).
def kv(key, feature_bytes):
    entry = b"\x0a" + bytes([len(key)]) + key + b"\x12" + bytes([len(feature_bytes)]) + feature_bytes
    return b"\x0a" + bytes([len(entry)]) + entry
def features(*entries):
    body = b"".join(entries)
    return b"\x0a" + bytes([len(body)]) + body
import struct
unpacked_floats = b"\x12" + bytes([10]) + b"\x0d" + struct.pack("<f", 1.5) + b"\x0d" + struct.pack("<f", -2.0)
unpacked_ints = b"\x1a" + bytes([4]) + b"\x08\x05\x08\x7f"
neg_ints = tf.train.Feature(int64_list=tf.train.Int64List(value=[-1, -(2**63), 2**63 - 1])).SerializeToString()
ex_unpacked = features(kv(b"f", unpacked_floats), kv(b"v", unpacked_ints))
ex_dup = features(kv(b"v", b"\x1a\x03\x0a\x01\x01"), kv(b"v", b"\x1a\x04\x0a\x02\x02\x03"))
ex_nokind = features(kv(b"v", b""))
ex_neg = features(kv(b"v", neg_ints))
cases += [
    ("unpacked floats and ints", {"f": F([2], "float32"), "v": F([2], "int64")}, [ex_unpacked]),
    ("unpacked sparse", {"f": V("float32"), "v": V("int64")}, [ex_unpacked, ex_unpacked]),
    ("duplicate key last wins", {"v": V("int64")}, [ex_dup]),
    ("feature without kind dense", {"v": F([], "int64", 3)}, [ex_nokind]),
    ("feature without kind sparse", {"v": V("int64")}, [ex_nokind]),
    ("negative int64", {"v": F([3], "int64")}, [ex_neg]),
    ("empty lists", {"f": V("float32"), "v": R("int64")}, [example({"f": ("empty", "float"), "v": ("empty", "int64")})]),
    ("empty list dense with default", {"f": F([2], "float32", [1.0, 2.0])}, [example({"f": ("empty", "float")})]),
    ("empty list dense no default", {"f": F([2], "float32")}, [example({"f": ("empty", "float")})]),
    ("empty list of other type", {"f": F([2], "float32", [1.0, 2.0])}, [example({"f": ("empty", "int64")})]),
]
for name, spec, ser in cases:
    case_parse(name, spec, ser)
case_parse("names in error", {"i": F([], "int64")}, [e_full, e_part], example_names=["first", "second"])
case_parse("names wrong length", {"v": F([2], "int64")}, [e_full, e_part], example_names=["first", "second"])

singles = [
    ("single dense", {"f": F([3], "float32"), "i": F([], "int64", 0)}, e_full),
    ("single sparse", {"v": V("int64"), "s": V("string")}, e_full),
    ("single missing", {"i": F([], "int64")}, e_part),
    ("single wrong length", {"v": F([3], "int64")}, e_full),
    ("single ragged", {"v": R("int64")}, e_part),
    ("single sequence", {"v": S([], "int64", allow_missing=True)}, e_full),
    ("single empty", {"f": F([3], "float32", [0.0, 0.0, 0.0]), "v": V("int64")}, e_empty),
    ("single bad", {"f": F([3], "float32")}, b"\x0a"),
    ("single too few", {"f": F([4], "float32")}, e_full),
    ("single wrong type dense", {"f": F([3], "int64")}, e_full),
    ("single wrong type sparse", {"s": V("float32")}, e_full),
    ("single sequence not multiple", {"f": S([2], "float32", allow_missing=True)}, e_full),
    ("single string default", {"b": F([], "string", "dflt"), "s": F([2], "string")}, e_full),
    ("single ragged partitions", {"r": R("int64", "tok", [{"type": "RowLengths", "key": "lens"}])}, example({"tok": [1, 2, 3], "lens": [1, 2]})),
]
for name, spec, ser in singles:
    case_parse(name, spec, ser, single=True)

# Ragged with partitions (tf.io.parse_example supports partitions of RaggedFeature)
e_rag = example({"tok": [1, 2, 3, 4, 5], "lens": [2, 0, 3], "splits": [0, 2, 2, 5], "fl": [1.0, 2.0, 3.0, 4.0]})
e_rag2 = example({"tok": [6, 7], "lens": [1, 1], "splits": [0, 1, 2], "fl": [5.0, 6.0]})
e_rag_bad = example({"tok": [1, 2, 3], "lens": [2, 2], "splits": [0, 4], "fl": [1.0, 2.0, 3.0]})
rag_cases = [
    ("ragged row lengths", {"r": R("int64", "tok", [{"type": "RowLengths", "key": "lens"}])}, [e_rag, e_rag2]),
    ("ragged row splits", {"r": R("int64", "tok", [{"type": "RowSplits", "key": "splits"}])}, [e_rag, e_rag2]),
    ("ragged row lengths int32", {"r": R("int64", "tok", [{"type": "RowLengths", "key": "lens"}], "int32")}, [e_rag, e_rag2]),
    ("ragged uniform row length", {"r": R("float32", "fl", [{"type": "UniformRowLength", "length": 2}])}, [e_rag, e_rag2]),
    ("ragged row lengths mismatch", {"r": R("int64", "tok", [{"type": "RowLengths", "key": "lens"}])}, [e_rag_bad]),
    ("ragged row splits mismatch", {"r": R("int64", "tok", [{"type": "RowSplits", "key": "splits"}])}, [e_rag_bad]),
    ("ragged uniform not divisible", {"r": R("int64", "tok", [{"type": "UniformRowLength", "length": 2}])}, [e_rag]),
    ("ragged partition missing", {"r": R("int64", "tok", [{"type": "RowLengths", "key": "nope"}])}, [e_rag]),
]
for name, spec, ser in rag_cases:
    case_parse(name, spec, ser)

# ----- SequenceExamples -----------------------------------------------------------------------
def case_seq(name, ctx_spec, seq_spec, serialized, single=False):
    rec = {"op": "parse_sequence_example", "name": name, "context_spec": ctx_spec, "sequence_spec": seq_spec,
           "serialized": [s.hex() for s in serialized]}
    try:
        cf = {k: make_spec(s) for k, s in ctx_spec.items()}
        sf = {k: make_spec(s) for k, s in seq_spec.items()}
    except (ValueError, TypeError):
        return
    try:
        ctx, seq, lens = tf.io.parse_sequence_example(tf.constant(serialized, dtype=tf.string, shape=[len(serialized)]), cf, sf)
        rec["expect"] = {"context": {k: enc_out(v) for k, v in sorted(ctx.items())},
                         "sequence": {k: enc_out(v) for k, v in sorted(seq.items())},
                         "lengths": {k: enc(v) for k, v in sorted(lens.items())}}
    except tf.errors.OpError as e:
        rec["error"] = err_of(e)
    except (ValueError, TypeError) as e:
        rec["python_error"] = str(e).split("\n")[0]
    emit(rec)

s1 = seq_example({"len": [3], "lbl": [b"a"]}, {"tok": [[1], [2], [3]], "emb": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "w": [[b"x"], [b"y", b"z"], ("empty", "bytes")]})
s_int_step = seq_example({}, {"w": [[b"x"], []]})  # [] is an empty int64_list
s2 = seq_example({"len": [1]}, {"tok": [[9]], "emb": [[7.0, 8.0]], "w": [[b"q"]]})
s_empty = seq_example({}, {})
s_bad_emb = seq_example({"len": [1]}, {"tok": [[1, 2]], "emb": [[1.0]]})
seq_cases = [
    ("seq basic", {"len": F([], "int64")}, {"tok": S([], "int64"), "emb": S([2], "float32")}, [s1, s2]),
    ("seq varlen", {"lbl": V("string")}, {"w": V("string")}, [s1, s2]),
    ("seq missing context required", {"lbl": F([], "string")}, {}, [s1, s2]),
    ("seq context default", {"lbl": F([], "string", "none")}, {"tok": S([], "int64")}, [s1, s2]),
    ("seq missing list allow_missing", {}, {"zz": S([], "int64", allow_missing=True)}, [s1, s_empty]),
    ("seq missing list required", {}, {"zz": S([], "int64")}, [s1]),
    ("seq wrong inner length", {}, {"emb": S([2], "float32")}, [s1, s_bad_emb]),
    ("seq wrong type", {}, {"tok": S([], "float32")}, [s1]),
    ("seq ragged", {}, {"w": R("string")}, [s1, s2]),
    ("seq ragged int32", {}, {"tok": R("int64", rsd="int32")}, [s1, s2]),
    ("seq empty batch", {"len": F([], "int64", 0)}, {"tok": S([], "int64", allow_missing=True)}, []),
    ("seq step of another type", {}, {"w": V("string")}, [s_int_step]),
    ("seq ragged step of another type", {}, {"w": R("string")}, [s_int_step]),
    ("seq ragged float", {"lbl": V("string")}, {"emb": R("float32")}, [s1, s2, s_empty]),
    ("seq dense default", {}, {"emb": S([2], "float32", allow_missing=True, dv=-1.0)}, [s1, s2, s_empty]),
    ("seq context wrong type", {"len": F([], "float32")}, {}, [s1]),
    ("seq context wrong length", {"len": F([2], "int64")}, {}, [s1]),
    ("seq context sparse", {"len": V("int64"), "lbl": V("string")}, {"tok": S([], "int64")}, [s1, s2]),
    ("seq bad bytes", {}, {"tok": S([], "int64")}, [b"\x12\x05"]),
]
for name, c, s, ser in seq_cases:
    case_seq(name, c, s, ser)

# ----- RaggedFeature partitions as row starts, row limits and value row ids (appended last so
# the ids above stay put) ------------------------------------------------------------------------
e_p = example({"tok": [1, 2, 3, 4, 5], "starts": [0, 2, 2], "limits": [2, 2, 5], "rowids": [0, 0, 2, 2, 2],
               "lens": [2, 0, 3], "fl": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "frowids": [0, 2, 2]})
e_p2 = example({"tok": [6, 7], "starts": [0, 1], "limits": [1, 2], "rowids": [0, 1], "lens": [1, 1],
                "fl": [7.0, 8.0], "frowids": [0]})
e_p_none = example({})
# Two levels: 6 values in 4 inner rows (value row ids), the inner rows in 2 outer rows.
e_n = example({"tok": [1, 2, 3, 4, 5, 6], "rowids": [0, 0, 1, 2, 2, 3], "olens": [1, 3], "ostarts": [0, 1],
               "olimits": [1, 4], "osplits": [0, 1, 4]})
e_n2 = example({"tok": [7], "rowids": [0], "olens": [1], "ostarts": [0], "olimits": [1], "osplits": [0, 1]})
e_gap = example({"tok": [1, 2], "rowids": [1, 3]})  # leading and inner empty rows
e_bad_starts = example({"tok": [1, 2, 3], "starts": [1, 2]})  # not starting at 0 (validate=False)
e_bad_limits = example({"tok": [1, 2, 3], "limits": [2, 5]})  # past the values
e_bad_ids = example({"tok": [1, 2, 3], "rowids": [2, 0, 1]})  # not sorted
e_neg_ids = example({"tok": [1, 2], "rowids": [-1, 0]})
P = lambda t, k: {"type": t, "key": k}
part_cases = [
    ("ragged row starts", {"r": R("int64", "tok", [P("RowStarts", "starts")])}, [e_p, e_p2]),
    ("ragged row limits", {"r": R("int64", "tok", [P("RowLimits", "limits")])}, [e_p, e_p2]),
    ("ragged value row ids", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")])}, [e_p, e_p2]),
    ("ragged row starts int32", {"r": R("int64", "tok", [P("RowStarts", "starts")], "int32")}, [e_p, e_p2]),
    ("ragged value row ids int32", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")], "int32")}, [e_p, e_p2]),
    ("ragged row limits string", {"r": R("string", "tok_s", [P("RowLimits", "limits")])},
     [example({"tok_s": [b"a", b"b", b"c"], "limits": [1, 3]}), example({"tok_s": [b"d"], "limits": [0, 1]})]),
    ("ragged partitions missing in some examples", {"r": R("int64", "tok", [P("RowStarts", "starts")]),
                                                    "q": R("int64", "tok", [P("ValueRowIds", "rowids")]),
                                                    "l": R("int64", "tok", [P("RowLimits", "limits")])},
     [e_p, e_p_none, e_p2]),
    ("ragged value row ids with empty rows", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")])}, [e_gap, e_p2]),
    ("ragged value row ids float", {"r": R("float32", "fl", [P("ValueRowIds", "frowids"), {"type": "UniformRowLength", "length": 2}])}, [e_p, e_p2]),
    ("ragged nested lengths and row ids", {"r": R("int64", "tok", [P("RowLengths", "olens"), P("ValueRowIds", "rowids")])}, [e_n, e_n2]),
    ("ragged nested starts and row ids", {"r": R("int64", "tok", [P("RowStarts", "ostarts"), P("ValueRowIds", "rowids")])}, [e_n, e_n2]),
    ("ragged nested limits and row ids", {"r": R("int64", "tok", [P("RowLimits", "olimits"), P("ValueRowIds", "rowids")])}, [e_n, e_n2]),
    ("ragged nested splits and row ids", {"r": R("int64", "tok", [P("RowSplits", "osplits"), P("ValueRowIds", "rowids")])}, [e_n, e_n2]),
    ("ragged nested row ids and uniform", {"r": R("int64", "tok", [P("ValueRowIds", "rowids"), {"type": "UniformRowLength", "length": 2}])}, [e_n]),
    ("ragged row starts not from zero", {"r": R("int64", "tok", [P("RowStarts", "starts")])}, [e_bad_starts]),
    ("ragged row limits past the values", {"r": R("int64", "tok", [P("RowLimits", "limits")])}, [e_bad_limits]),
    ("ragged value row ids unsorted", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")])}, [e_bad_ids]),
    ("ragged value row ids negative", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")])}, [e_neg_ids]),
    ("ragged row starts missing key", {"r": R("int64", "tok", [P("RowStarts", "nope")])}, [e_p]),
    ("ragged value row ids wrong type", {"r": R("int64", "tok", [P("ValueRowIds", "fl")])}, [e_p]),
]
for name, spec, ser in part_cases:
    case_parse(name, spec, ser)
single_parts = [
    ("single ragged row starts", {"r": R("int64", "tok", [P("RowStarts", "starts")])}, e_p),
    ("single ragged value row ids", {"r": R("int64", "tok", [P("ValueRowIds", "rowids")])}, e_gap),
    ("single ragged row limits", {"r": R("int64", "tok", [P("RowLimits", "limits")])}, e_p),
]
for name, spec, ser in single_parts:
    case_parse(name, spec, ser, single=True)
