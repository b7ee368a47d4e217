"""tensorcast.Session runs a GraphDef as TensorFlow's Session runs it."""

import numpy as np
import pytest

import tensorcast as tc


def test_session_matches_tensorflow(tf, repo):
    graph_def = (repo / "samples" / "graph_small.pb").read_bytes()
    x = np.load(repo / "samples" / "graph_small_x.npy")
    ours = tc.Session(graph_def).run(["eq:0", "sum"], {"x": x})
    g = tf.Graph()
    with g.as_default():
        gd = tf.compat.v1.GraphDef.FromString(graph_def)
        tf.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=g) as sess:
        theirs = sess.run(["eq:0", "sum:0"], {"x:0": x})
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    single = tc.Session(str(repo / "samples" / "graph_small.pb")).run("sum", {"x": x})
    assert np.array_equal(single, theirs[1])


def test_session_errors(repo):
    s = tc.Session(repo / "samples" / "graph_small.pb")
    with pytest.raises(tc.errors.OpError):
        s.run("nope:0", {})
    with pytest.raises(tc.errors.NotFoundError):
        tc.Session("/nonexistent/graph.pb")


def _interrupt_after(seconds):
    """Sends this process's main thread a Ctrl-C (SIGINT) after `seconds`, from a thread."""
    import os
    import signal
    import threading

    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_session_run_of_an_endless_loop_stops_on_ctrl_c(tf):
    import time

    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [], name="x")
        y = tf.while_loop(lambda v: tf.constant(True), lambda v: v + 1.0, [x])
        tf.identity(y, name="y")
    s = tc.Session(g.as_graph_def().SerializeToString())
    timer = _interrupt_after(0.3)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.run("y", {"x": np.float32(0)})
    finally:
        timer.cancel()
    # The run stopped soon after the signal (it never ends by itself).
    assert time.monotonic() - start < 2.5
    # The session still runs what ends.
    g2 = tf.Graph()
    with g2.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [], name="x")
        tf.identity(tf.while_loop(lambda v: v < 10.0, lambda v: v + 1.0, [x]), name="y")
    assert tc.Session(g2.as_graph_def().SerializeToString()).run("y", {"x": np.float32(0)}) == 10.0
