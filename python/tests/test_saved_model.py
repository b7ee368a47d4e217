"""tensorcast.saved_model against TensorFlow: the recorded models (tests/tf_observed/
saved_model_run.jsonl, replayed bit-exactly), a model TensorFlow saves here, and TensorFlow's
errors for inputs that do not fit a signature."""

import json
import threading

import numpy as np
import pytest

import tensorcast as tc


def from_record(r):
    dtype = {"bool": np.bool_}.get(r["dtype"], r["dtype"])
    return np.frombuffer(bytes.fromhex(r["hex"]), dtype=dtype).reshape(r["shape"])


def test_recorded_signature_runs(repo):
    with open(repo / "tests" / "tf_observed" / "saved_model_run.jsonl") as f:
        records = [json.loads(line) for line in f]
    assert len(records) >= 4
    for r in records:
        loaded = tc.saved_model.load(repo / "tests" / "tf_observed" / "saved_models" / r["model"])
        inputs = {k: from_record(v) for k, v in r["inputs"].items()}
        out = loaded.signatures[r["signature"]](**inputs)
        assert sorted(out) == sorted(r["outputs"]), r["model"]
        for k, exp in r["outputs"].items():
            want = from_record(exp)
            assert out[k].dtype == want.dtype and out[k].shape == want.shape, (r["model"], k)
            assert out[k].tobytes() == want.tobytes(), (r["model"], k)


@pytest.fixture(scope="module")
def tf_model(tf, tmp_path_factory):
    """A model TensorFlow saves now: two signatures, float and int inputs, a matmul, a relu."""

    class Model(tf.Module):
        def __init__(self):
            rng = np.random.default_rng(7)
            self.w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32), name="w")
            self.b = tf.Variable(rng.standard_normal(3).astype(np.float32), name="b")
            self.k = tf.Variable([[1, 5, -2]], dtype=tf.int32, name="k")
            self.h = tf.Variable((rng.standard_normal((256, 256)) / 16).astype(np.float32), name="h")

        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def dense(self, x):
            y = tf.matmul(x, self.w) + self.b
            return {"logits": y, "relu": tf.nn.relu(y)}

        @tf.function(
            input_signature=[tf.TensorSpec([None, 3], tf.int32, name="a"), tf.TensorSpec([], tf.int32, name="s")]
        )
        def ints(self, a, s):
            m = tf.maximum(a, self.k)
            return {"max": m, "eq": tf.equal(m, a), "scaled": tf.cast(m * s, tf.float32)}

        @tf.function(input_signature=[tf.TensorSpec([None, 256], tf.float32, name="x")])
        def heavy(self, x):
            # Long enough to watch another Python thread run meanwhile.
            y = x
            for _ in range(24):
                y = tf.nn.relu(tf.matmul(y, self.h)) + x
            return {"y": y}

    m = Model()
    path = str(tmp_path_factory.mktemp("sm") / "model")
    tf.saved_model.save(m, path, signatures={"serving_default": m.dense, "ints": m.ints, "heavy": m.heavy})
    return path, tf.saved_model.load(path)


def test_signatures_equal_tensorflow(tf_model):
    path, theirs = tf_model
    ours = tc.saved_model.load(path)
    assert ours.tags == ["serve"] and sorted(ours.signatures) == sorted(theirs.signatures.keys())
    for key in ours.signatures:
        f, g = ours.signatures[key], theirs.signatures[key]
        # The specs, printed as TensorFlow prints them (TensorFlow's dicts are not always in
        # key order).
        assert f.structured_input_signature[0] == g.structured_input_signature[0] == ()
        mine, theirs_specs = f.structured_input_signature[1], g.structured_input_signature[1]
        assert {k: repr(v) for k, v in mine.items()} == {k: repr(v) for k, v in theirs_specs.items()}
        assert {k: repr(v) for k, v in f.structured_outputs.items()} == {k: repr(v) for k, v in g.structured_outputs.items()}
    x = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    got = ours.signatures["serving_default"](x=x)
    want = theirs.signatures["serving_default"](x=x)
    assert sorted(got) == sorted(want) == ["logits", "relu"]
    for k in got:
        assert got[k].dtype == np.float32 and got[k].shape == (5, 3)
        np.testing.assert_allclose(got[k], want[k].numpy(), rtol=1e-6, atol=1e-6)
    # Conversions TensorFlow makes: numpy arrays of another dtype (astype), Python ints, a
    # tensorcast tensor of the right dtype.
    a = np.array([[0, 9, -3], [2**40, -1, 3]], np.int64)
    for kwargs in (dict(a=a, s=np.int32(2)), dict(a=[[1, 2, 3]], s=2), dict(a=np.array([[1.5, -2.7, 3]]), s=3)):
        got = ours.signatures["ints"](**kwargs)
        want = theirs.signatures["ints"](**kwargs)
        for k in want:
            assert got[k].dtype == want[k].numpy().dtype
            assert np.array_equal(got[k], want[k].numpy()), (kwargs, k)
    t = tc.Tensor(np.array([[4, 4, 4]], np.int32))
    assert ours.signatures["ints"](a=t, s=1)["max"].tolist() == [[4, 5, 4]]


BAD_CALLS = [
    ("extra", (), dict(a=np.array([[0, 9, -3]], np.int32), s=np.array(2, np.int32), z=np.array(2, np.int32))),
    ("missing", (), dict(a=np.array([[0, 9, -3]], np.int32))),
    ("positional", (np.array([[0, 9, -3]], np.int32), np.array(2, np.int32)), {}),
    ("float list to int", (), dict(a=[[1.5, 2, 3]], s=2)),
    ("python float to int", (), dict(a=np.array([[0, 9, -3]], np.int32), s=2.0)),
    ("wrong rank", (), dict(a=np.array([1, 2, 3], np.int32), s=np.array(2, np.int32))),
    ("wrong dim", (), dict(a=np.array([[1, 2]], np.int32), s=np.array(2, np.int32))),
    ("scalar given a vector", (), dict(a=np.array([[0, 9, -3]], np.int32), s=np.array([2], np.int32))),
    ("ragged list", (), dict(a=[[1, 2], [3]], s=np.array(2, np.int32))),
    ("strings to int", (), dict(a=np.array([[b"a", b"b", b"c"]]), s=np.array(2, np.int32))),
]


@pytest.mark.parametrize("name,args,kwargs", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_inputs_raise_tensorflows_errors(tf_model, name, args, kwargs):
    path, theirs = tf_model
    f = tc.saved_model.load(path).signatures["ints"]
    with pytest.raises(TypeError) as want:
        theirs.signatures["ints"](*args, **kwargs)
    with pytest.raises(TypeError) as got:
        f(*args, **kwargs)
    # TensorFlow adds a second sentence about its fallback to the flat signature, naming its
    # Python wrapper function; the binding's sentence is the same, up to the order in which
    # the signature's inputs and outputs are listed (TensorFlow's follows the order of a
    # protobuf map in the file it wrote, which varies from one save to the next; ours is
    # sorted by key).
    assert message_parts(str(got.value)) == message_parts(str(want.value).split("\nFallback to flat signature")[0]), name


SPEC = r"TensorSpec\(shape=(?:\([^)]*\)|<unknown>), dtype=tf\.\w+, name='\w+'\)"


def message_parts(msg):
    import re

    head, sig = msg.split(" for signature: ", 1)
    ins, outs = sig.split(" -> Dict[", 1)
    return head, sorted(re.findall(rf"\w+: {SPEC}", ins)), sorted(re.findall(rf"\['\w+', {SPEC}\]", outs)), outs[-3:]


def test_a_tensor_of_another_dtype_is_refused_as_tensorflow_refuses_it(tf_model, tf):
    path, theirs = tf_model
    f = tc.saved_model.load(path).signatures["ints"]
    a = np.array([[0, 9, -3]], np.int64)
    with pytest.raises(TypeError) as want:
        theirs.signatures["ints"](a=tf.constant(a), s=2)
    with pytest.raises(TypeError) as got:
        f(a=tc.Tensor(a), s=2)
    reason = str(want.value).split("`")[1]
    assert reason == "Can not cast TensorSpec(shape=(1, 3), dtype=tf.int64, name='a') to TensorSpec(shape=(None, 3), dtype=tf.int32, name='a')"
    assert str(got.value).split("`")[1] == reason


def test_load_errors_are_tensorflows(tf_model, tf, tmp_path):
    path, _ = tf_model
    for tags in (["foo", "bar"], "gpu"):
        with pytest.raises(ValueError) as want:
            tf.saved_model.load(path, tags=tags)
        with pytest.raises(ValueError) as got:
            tc.saved_model.load(path, tags=tags)
        assert str(got.value) == str(want.value)
    missing = str(tmp_path / "nothing")
    with pytest.raises(OSError) as want:
        tf.saved_model.load(missing)
    with pytest.raises(OSError) as got:
        tc.saved_model.load(missing)
    assert str(got.value) == str(want.value)
    assert tc.saved_model.load(path, tags="serve").tags == ["serve"]
    with pytest.raises(KeyError):
        tc.saved_model.load(path).signatures["nope"]


def test_signatures_run_in_parallel_threads(tf_model):
    # The GIL is released while a signature runs: threads share one loaded model and each
    # gets its own results.
    path, theirs = tf_model
    f = tc.saved_model.load(path).signatures["serving_default"]
    xs = [np.full((64, 4), i, np.float32) for i in range(8)]
    results = [None] * len(xs)

    def work(i):
        for _ in range(20):
            results[i] = f(x=xs[i])["logits"]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(xs):
        np.testing.assert_allclose(results[i], theirs.signatures["serving_default"](x=x)["logits"].numpy(), rtol=1e-6)


def test_the_gil_is_released_while_a_signature_runs(tf_model):
    # While one thread runs a long signature, a pure-Python loop in this thread keeps going:
    # with the GIL held it could not run at all until the call returned.
    import time

    path, theirs = tf_model
    f = tc.saved_model.load(path).signatures["heavy"]
    x = np.random.default_rng(3).standard_normal((1024, 256)).astype(np.float32)
    done = threading.Event()
    out = {}

    def work():
        start = time.perf_counter()
        out["y"] = f(x=x)["y"]
        out["seconds"] = time.perf_counter() - start
        done.set()

    # How fast the loop runs alone, to compare with how fast it runs during the call.
    probe = threading.Event()
    alone, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.2 and not probe.is_set():
        alone += 1
    rate = alone / (time.perf_counter() - start)
    count = 0
    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        count += 1
    t.join()
    # With the GIL held for the call, the loop would run only for the interpreter's switch
    # interval (5 ms) before the call took the GIL: a few percent of the call at most. Released,
    # it runs through the call (slower: the kernels use both cores).
    assert count > 0.2 * rate * out["seconds"], (count, rate, out["seconds"])
    np.testing.assert_allclose(out["y"], theirs.signatures["heavy"](x=x)["y"].numpy(), rtol=1e-4, atol=1e-4)


def test_a_signature_that_never_ends_stops_on_ctrl_c(tf, tmp_path):
    import os
    import signal
    import time

    class Endless(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="x")])
        def run(self, x):
            return {"y": tf.while_loop(lambda v: tf.constant(True), lambda v: v + 1.0, [x])[0]}

    m = Endless()
    path = str(tmp_path / "endless")
    tf.saved_model.save(m, path, signatures={"serving_default": m.run})
    f = tc.saved_model.load(path).signatures["serving_default"]
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            f(x=np.float32(0))
    finally:
        timer.cancel()
    assert time.monotonic() - start < 2.5
