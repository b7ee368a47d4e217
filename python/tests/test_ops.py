"""The functions against TensorFlow 2.21 on the same inputs: results bit-exact, errors with
TensorFlow's class and text."""

import ml_dtypes
import numpy as np
import pytest

import tensorcast as tc
from test_package import eager_text

BINARY = {
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "maximum": "maximum",
    "minimum": "minimum",
    "equal": "equal",
    "not_equal": "not_equal",
    "less": "less",
    "less_equal": "less_equal",
    "greater": "greater",
    "greater_equal": "greater_equal",
}


def same_as_tf(ours, theirs):
    a, b = np.asarray(ours), theirs.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "int32", "bfloat16", "float64"])
def test_elementwise_matches_tensorflow(tf, op, dtype):
    rng = np.random.default_rng(7)
    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    x = (rng.standard_normal((4, 1, 5)) * 10).astype(np_dtype)
    y = (rng.standard_normal((3, 1)) * 10).astype(np_dtype)
    if dtype.startswith("float"):
        x.flat[0] = np.nan
        y.flat[1] = np.inf
    same_as_tf(getattr(tc, op)(x, y), getattr(tf.math, BINARY[op])(x, y))


@pytest.mark.parametrize("to", ["int32", "uint8", "bfloat16", "float16", "int64", "bool", "float8_e4m3fn"])
def test_cast_matches_tensorflow(tf, to):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1000) * 300).astype(np.float32)
    x[:4] = [np.nan, np.inf, -np.inf, 1e30]
    if to in ("int32", "uint8", "int64"):
        x = x[4:]  # TensorFlow's result for out-of-range floats is platform-defined
    np_to = getattr(ml_dtypes, to) if hasattr(ml_dtypes, to) else np.dtype(to)
    same_as_tf(tc.cast(x, to), tf.cast(x, tf.as_dtype(np_to)))


def test_bitcast_and_reinterpret(tf):
    x = np.array([[0.0, 1.0], [-2.0, 3.5]], np.float32)
    same_as_tf(tc.bitcast(x, "uint8"), tf.bitcast(x, tf.uint8))
    same_as_tf(tc.bitcast(tc.bitcast(x, "uint16"), "float32"), tf.bitcast(tf.bitcast(x, tf.uint16), tf.float32))
    t = tc.Tensor(x)
    assert tc.bitcast(t, "int32").SharesBufferWith(t)
    r = tc.reinterpret_cast_to(np.zeros((2, 4), np.float16), "uint32")
    assert r.shape == (2, 2) and r.dtype == "uint32"


def test_broadcast_to_matches_tensorflow(tf):
    x = np.arange(3, dtype=np.int64)
    same_as_tf(tc.broadcast_to(x, [4, 3]), tf.broadcast_to(x, [4, 3]))
    same_as_tf(tc.broadcast_to(x, np.array([2, 1, 3], np.int32)), tf.broadcast_to(x, [2, 1, 3]))
    with pytest.raises(tc.errors.InvalidArgumentError) as ours:
        tc.broadcast_to(x, [4, 2])
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        tf.broadcast_to(x, [4, 2])
    assert ours.value.message == eager_text(theirs.value.message)


def test_error_texts_match_tensorflow(tf):
    cases = [
        (lambda m: m.bitcast(np.zeros((2, 3), np.uint8), "float32" if m is tc else m.float32)),
        (lambda m: m.add(np.zeros(3, np.float32), np.zeros(3, np.int32)) if m is tc else m.raw_ops.AddV2(x=m.constant(np.zeros(3, np.float32)), y=m.constant(np.zeros(3, np.int32)))),
        (lambda m: m.equal(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)) if m is tc else m.raw_ops.Equal(x=np.zeros((2, 3), np.float32), y=np.zeros((3, 2), np.float32))),
    ]
    for case in cases:
        with pytest.raises(tf.errors.OpError) as theirs:
            case(tf)
        with pytest.raises(tc.errors.OpError) as ours:
            case(tc)
        assert type(ours.value).__name__ == type(theirs.value).__name__
        assert ours.value.message == eager_text(theirs.value.message)


@pytest.mark.parametrize(
    "value",
    [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([b"a", b"", b"xyz"], dtype=object),
        np.array(3.5, dtype=ml_dtypes.bfloat16),
        np.array([True, False]),
        np.zeros((0, 4), np.int64),
    ],
)
def test_serialize_and_parse_tensor_match_tensorflow(tf, value):
    ours = tc.io.serialize_tensor(value)
    theirs = tf.io.serialize_tensor(tf.constant(value)).numpy()
    assert ours == theirs
    dtype = "string" if value.dtype == object else np.dtype(value.dtype).name
    back = tc.io.parse_tensor(theirs, dtype)
    expected = tf.io.parse_tensor(theirs, tf.as_dtype(value.dtype) if value.dtype != object else tf.string)
    if value.dtype == object:
        assert back.numpy().tolist() == expected.numpy().tolist()
    else:
        same_as_tf(back, expected)
    with pytest.raises(tc.errors.InvalidArgumentError) as e:
        tc.io.parse_tensor(theirs, "complex128")
    with pytest.raises(tf.errors.InvalidArgumentError) as t:
        tf.io.parse_tensor(theirs, tf.complex128)
    assert e.value.message == eager_text(t.value.message)
