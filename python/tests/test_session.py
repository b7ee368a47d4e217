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
