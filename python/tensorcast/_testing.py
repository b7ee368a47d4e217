"""Helpers of the tests and the benchmark: tf.train.Example bytes built by hand (no protobuf
or TensorFlow needed), and the SavedModels TensorFlow wrote for the repository's tests."""

import os
import struct


def saved_model_dir(name):
    """The folder of a SavedModel recorded in the repository (``tests/tf_observed/saved_models``):
    found through ``TENSORCAST_TEST_DATA`` (the tests' ``conftest.py`` sets it) or by looking up
    from the working directory."""
    root = os.environ.get("TENSORCAST_TEST_DATA")
    if root is None:
        here = os.path.abspath(os.getcwd())
        while True:
            if os.path.isdir(os.path.join(here, "tests", "tf_observed")):
                root = os.path.join(here, "tests", "tf_observed")
                break
            parent = os.path.dirname(here)
            if parent == here:
                raise FileNotFoundError("tests/tf_observed not found: set TENSORCAST_TEST_DATA")
            here = parent
    return os.path.join(root, "saved_models", name)


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _feature_entry(name, feature):
    return _field(1, _field(1, name.encode()) + _field(2, feature))


def example_bytes(i, width=4, tags=None):
    """An Example: ``x`` = `width` floats (i, i+1, ...), ``label`` = i, ``tags`` = i % 3 byte
    strings (``t0``, ``t1``...)."""
    floats = struct.pack(f"<{width}f", *[float(i + k) for k in range(width)])
    x = _field(2, _field(1, floats))  # Feature.float_list (2) { value (1), packed }
    label = _field(3, _field(1, _varint(i)))  # Feature.int64_list (3) { value (1), packed }
    tags = [b"t%d" % k for k in range(i % 3)] if tags is None else tags
    tag_list = _field(1, b"".join(_field(1, t) for t in tags))  # Feature.bytes_list (1)
    features = _feature_entry("x", x) + _feature_entry("label", label) + _feature_entry("tags", tag_list)
    return _field(1, features)  # Example.features (1)


def example_of(features):
    """An Example of ``{name: list}``: a list of ``float`` becomes a float_list, of ``int`` an
    int64_list, of ``bytes`` a bytes_list."""
    entries = b""
    for name, values in features.items():
        if values and isinstance(values[0], float):
            feature = _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
        elif values and isinstance(values[0], bytes):
            feature = _field(1, b"".join(_field(1, v) for v in values))
        else:  # int64s, packed as two's-complement varints
            feature = _field(3, _field(1, b"".join(_varint(v & (2**64 - 1)) for v in values)))
        entries += _feature_entry(name, feature)
    return _field(1, entries)
