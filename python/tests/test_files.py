"""tensorcast.load / tensorcast.save for npy, npz, safetensors and TensorProto files, checked
with numpy, safetensors and TensorFlow."""

import ml_dtypes
import numpy as np
import pytest

import tensorcast as tc


def tensors():
    rng = np.random.default_rng(1)
    return {
        "w": rng.standard_normal((3, 4)).astype(np.float32),
        "b": np.arange(5, dtype=np.int64),
        "h": rng.standard_normal(7).astype(ml_dtypes.bfloat16),
    }


def test_safetensors_both_ways(tmp_path):
    from safetensors.numpy import load_file, save_file

    ts = tensors()
    ours = tmp_path / "ours.safetensors"
    tc.save(ours, ts)
    back = load_file(str(ours))
    for k, v in ts.items():
        assert back[k].tobytes() == v.tobytes() and back[k].shape == v.shape
    theirs = tmp_path / "theirs.safetensors"
    save_file({k: v for k, v in ts.items() if k != "h"}, str(theirs))
    loaded = tc.load(theirs)
    assert sorted(loaded) == ["b", "w"]
    assert np.array_equal(np.asarray(loaded["w"]), ts["w"])


def test_npy_and_npz_with_numpy(tmp_path):
    ts = tensors()
    tc.save(tmp_path / "a.npy", ts["w"])
    assert np.array_equal(np.load(tmp_path / "a.npy"), ts["w"])
    np.save(tmp_path / "n.npy", ts["b"])
    t = tc.load(tmp_path / "n.npy")
    assert isinstance(t, tc.Tensor) and np.array_equal(np.asarray(t), ts["b"])
    tc.save(tmp_path / "z.npz", {"w": ts["w"], "b": ts["b"]})
    with np.load(tmp_path / "z.npz") as z:
        assert np.array_equal(z["w"], ts["w"]) and np.array_equal(z["b"], ts["b"])
    np.savez_compressed(tmp_path / "c.npz", x=ts["w"])
    assert np.array_equal(np.asarray(tc.load(tmp_path / "c.npz")["x"]), ts["w"])


def test_tensorproto_files_with_tensorflow(tf, tmp_path):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    tc.save(tmp_path / "x.pb", x)
    data = (tmp_path / "x.pb").read_bytes()
    assert data == tf.io.serialize_tensor(x).numpy()
    (tmp_path / "y.pb").write_bytes(tf.io.serialize_tensor(tf.constant([b"p", b"q"])).numpy())
    assert tc.load(tmp_path / "y.pb").numpy().tolist() == [b"p", b"q"]


def test_errors(tmp_path):
    with pytest.raises(tc.errors.NotFoundError):
        tc.load(tmp_path / "missing.npy")
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(tc.errors.OpError):
        tc.load(tmp_path / "bad.safetensors")
    with pytest.raises(tc.errors.InvalidArgumentError, match="extension"):
        tc.save(tmp_path / "x.unknown", np.zeros(2))
