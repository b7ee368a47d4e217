"""Records the text format TensorFlow 2.21 writes for GraphDefs (`tf.io.write_graph(...,
as_text=True)`) for every whole graph in the vectors: the shared `graph_def.jsonl` and our
`graph_functions.jsonl` (function libraries included), plus a few hand-written texts in the
forms protobuf's text parser also accepts (comments, `:` before `{`, `<...>`, `[...]` lists,
single quotes, escapes), each with the GraphDef TensorFlow parses from it.

    .venv/bin/python tests/tf_observed/gen_graph_text.py > tests/tf_observed/graph_text.jsonl

Each record (`op`: `graph_text`): `id`, `pbtxt` (the text), `graphdef_hex` (TensorFlow's
deterministic binary of the GraphDef it parses from the text).
"""
import json, os, sys, tempfile
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
from google.protobuf import text_format

here = os.path.dirname(os.path.abspath(__file__))
sources = [os.path.join(here, "..", "conformance", "graph_def.jsonl"), os.path.join(here, "graph_functions.jsonl")]
tmp = tempfile.mkdtemp()
for path in sources:
    for line in open(path):
        rec = json.loads(line)
        gd = tf.compat.v1.GraphDef.FromString(bytes.fromhex(rec["graphdef_hex"]))
        tf.io.write_graph(gd, tmp, "g.pbtxt", as_text=True)
        text = open(os.path.join(tmp, "g.pbtxt")).read()
        back = text_format.Parse(text, tf.compat.v1.GraphDef())
        assert back == gd
        print(json.dumps({"op": "graph_text", "id": "write_graph/" + rec["id"], "pbtxt": text,
                          "graphdef_hex": back.SerializeToString(deterministic=True).hex()}, sort_keys=True))

hand = {
    "comments-colons-angles": '''# a comment
node: { name: 'x' op: "Placeholder"  # trailing comment
  attr < key: "dtype" value { type: DT_FLOAT } >
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 3 } } } }
}
node { name: "c" op: "Const"
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: [1, 2, 3] } } }
  attr { key: "dtype" value { type: 3 } };
}
versions { producer: 2474, min_consumer: 12 bad_consumers: [3, 4] }
''',
    "escapes-and-adjacent-strings": r'''node { name: "s" op: "Const"
  attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } }
    string_val: "a\n\t\"b\\" 'c' string_val: "\001\377\x41\x7f" } } }
  attr { key: "dtype" value { type: DT_STRING } }
  device: "/device:CPU:0"
}''',
    "floats-and-lists": '''node { name: "f" op: "Const"
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 5 } }
    float_val: 1.5 float_val: -2e-3 float_val: inf float_val: -inf float_val: nan } } }
  attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "_l" value { list { i: [1, -2] f: [0.5] b: true b: false type: [DT_INT32, DT_HALF] s: "x" } } }
}''',
}
for cid, text in hand.items():
    gd = text_format.Parse(text, tf.compat.v1.GraphDef())
    print(json.dumps({"op": "graph_text", "id": "hand/" + cid, "pbtxt": text,
                      "graphdef_hex": gd.SerializeToString(deterministic=True).hex()}, sort_keys=True))
