"""The package itself: import time, TensorFlow's error classes, the GIL released in long calls."""

import subprocess
import sys
import threading
import time

import numpy as np

import tensorcast as tc


def eager_text(message):
    """TensorFlow's own words in an eager error: without the function-node prefix and the
    `[Op:...]` suffix eager mode adds."""
    if "}} " in message:
        message = message.split("}} ", 1)[1]
    return message.split(" [Op:")[0]


def test_import_under_100ms_without_numpy():
    code = (
        "import time, sys; t = time.perf_counter(); import tensorcast; "
        "print(time.perf_counter() - t, 'numpy' in sys.modules)"
    )
    best = None
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        seconds, numpy_loaded = out.stdout.split()
        best = float(seconds) if best is None else min(best, float(seconds))
        assert numpy_loaded == "False"
    assert best < 0.1, f"import tensorcast took {best * 1000:.1f} ms"


def test_error_classes_are_tensorflows(tf):
    names = [n for n in dir(tf.errors) if n.endswith("Error") and issubclass(getattr(tf.errors, n), tf.errors.OpError)]
    assert "DataLossError" in names and "InvalidArgumentError" in names
    for name in names:
        ours = getattr(tc.errors, name)
        assert issubclass(ours, tc.errors.OpError)
    for n in dir(tc.errors):
        if n.isupper():
            assert getattr(tf.errors, n) == getattr(tc.errors, n), n
    # Each class carries the code TensorFlow's class of the same name has.
    err = tf.errors.DataLossError(None, None, "x")
    assert tc.errors.DataLossError(None, None, "x").error_code == err.error_code


def test_error_text_and_class_match_tensorflow(tf):
    x = np.zeros(3, np.uint8)
    try:
        tf.bitcast(x, tf.float32)
    except tf.errors.OpError as e:
        theirs = e
    try:
        tc.bitcast(x, "float32")
    except tc.errors.OpError as e:
        ours = e
    assert type(ours).__name__ == type(theirs).__name__ == "InvalidArgumentError"
    assert ours.message == eager_text(theirs.message)
    assert ours.error_code == theirs.error_code


def test_incompatible_shapes_text_matches_tensorflow(tf):
    a, b = np.zeros(3, np.float32), np.zeros((2, 4), np.float32)
    try:
        tf.add(a, b)
    except tf.errors.InvalidArgumentError as e:
        theirs = e.message
    try:
        tc.add(a, b)
    except tc.errors.InvalidArgumentError as e:
        ours = e.message
    assert ours == "Incompatible shapes: [3] vs. [2,4]"
    assert ours in theirs


def test_long_calls_release_the_gil():
    big = np.ones(1 << 24, np.float32)  # 64 MiB
    # The main thread ran Python while a cast was inside Rust: impossible with the GIL held.
    ran, longest = python_ran_during(lambda: tc.cast(big, "float64"), repeat=4)
    assert longest > 0.01, "the casts were too short to tell"
    assert ran, "no Python ran during a cast: the GIL was held"


def stub_names():
    """The names `_native.pyi` declares: {module-level name: set of member names (None for a
    function)}."""
    import ast
    import pathlib

    tree = ast.parse((pathlib.Path(tc.__file__).parent / "_native.pyi").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            out[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


def test_type_stubs_match_the_native_module():
    from tensorcast import _native

    stubs = stub_names()
    public = {n for n in dir(_native) if not n.startswith("_")}
    assert public == set(stubs), f"missing stubs: {public - set(stubs)}; stubs of nothing: {set(stubs) - public}"
    for name, members in stubs.items():
        obj = getattr(_native, name)
        if members is None:
            assert callable(obj) and not isinstance(obj, type), name
            continue
        assert isinstance(obj, type), name
        runtime = {m for m in dir(obj) if not m.startswith("_")}
        declared = {m for m in members if not m.startswith("_")}
        assert runtime == declared, f"{name}: undeclared {runtime - declared}, declared but absent {declared - runtime}"
        for m in members:
            assert hasattr(obj, m), f"{name}.{m}"
    # The package ships the stubs and says it is typed.
    import pathlib

    assert (pathlib.Path(tc.__file__).parent / "py.typed").exists()


def python_ran_during(call, repeat=3):
    """Runs `call` `repeat` times in a thread while this thread ticks; returns whether a tick
    fell inside a call (impossible if the call held the GIL) and the longest call."""
    windows, ticks = [], []

    def work():
        for _ in range(repeat):
            t0 = time.perf_counter()
            call()
            windows.append((t0, time.perf_counter()))

    th = threading.Thread(target=work)
    th.start()
    while th.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.0005)
    th.join()
    inside = [t for t in ticks for (a, b) in windows if a + 0.002 < t < b - 0.002]
    return bool(inside), max(b - a for a, b in windows)


def long_calls(tmp):
    """One long call of each kind that reads or writes data in bulk."""
    import os

    big = np.random.default_rng(0).standard_normal(1 << 24).astype(np.float32)  # 64 MiB
    prefix = os.path.join(tmp, "ckpt-1")
    tc.train.save_checkpoint(prefix, {"w": big})
    npy = os.path.join(tmp, "big.npy")
    np.save(npy, big)
    from tensorcast._testing import example_bytes

    records = os.path.join(tmp, "r.tfrecord")
    with tc.io.TFRecordWriter(records) as w:
        for i in range(40_000):
            w.write(example_bytes(i, width=64))
    spec = {"x": tc.io.FixedLenFeature([64], "float32"), "label": tc.io.FixedLenFeature([], "int64")}
    batch = tc.io.read_records(records)
    return {
        "checkpoint get_tensor (read)": lambda: tc.train.load_checkpoint(prefix, mmap=False).get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE"),
        "checkpoint write": lambda: tc.train.save_checkpoint(os.path.join(tmp, "out-1"), {"w": big}),
        "load (npy, read)": lambda: tc.load(npy, mmap=False),
        "save (safetensors)": lambda: tc.save(os.path.join(tmp, "o.safetensors"), {"w": big}),
        "read_records (read)": lambda: tc.io.read_records(records, mmap=False),
        "parse_example": lambda: tc.io.parse_example(batch, spec),
        "serialize_tensor": lambda: tc.io.serialize_tensor(big),
    }


def test_every_long_call_releases_the_gil(tmp_path):
    calls = long_calls(str(tmp_path))
    held, measured = [], 0
    for name, call in calls.items():
        ran, longest = python_ran_during(call)
        if longest < 0.01:
            continue  # too short to tell on this machine
        measured += 1
        if not ran:
            held.append(name)
    assert not held, f"no Python ran during: {held}"
    assert measured >= len(calls) - 2, "the calls were too short to tell"
