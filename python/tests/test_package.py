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
    windows, ticks = [], []

    def work():
        for _ in range(4):
            t0 = time.perf_counter()
            tc.cast(big, "float64")
            windows.append((t0, time.perf_counter()))

    th = threading.Thread(target=work)
    th.start()
    while th.is_alive():
        ticks.append(time.perf_counter())
        time.sleep(0.0005)
    th.join()
    # The main thread ran Python while a cast was inside Rust: impossible with the GIL held.
    inside = [t for t in ticks for (a, b) in windows if a + 0.002 < t < b - 0.002]
    longest = max(b - a for a, b in windows)
    assert longest > 0.01, "the casts were too short to tell"
    assert inside, "no Python ran during a cast: the GIL was held"
