"""Checkpoints: what TensorFlow writes reads as TensorFlow reads it; TensorFlow restores what
tensorcast writes."""

import ml_dtypes
import numpy as np
import pytest

import tensorcast as tc


@pytest.fixture(scope="module")
def tf_checkpoint(tf, tmp_path_factory):
    d = tmp_path_factory.mktemp("ckpt")
    rng = np.random.default_rng(0)

    class Layer(tf.Module):
        def __init__(self):
            super().__init__()
            self.kernel = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32))
            self.bias = tf.Variable(np.zeros(3, np.float64))
            self.half = tf.Variable(rng.standard_normal(5).astype(ml_dtypes.bfloat16))

    model = tf.Module()
    model.dense = Layer()
    model.step = tf.Variable(np.int64(7))
    model.names = tf.Variable([b"alpha", b"", b"gamma"])
    ckpt = tf.train.Checkpoint(model=model)
    path = ckpt.write(str(d / "ckpt-1"))
    return path


def test_reader_matches_tensorflows(tf, tf_checkpoint):
    theirs = tf.train.load_checkpoint(tf_checkpoint)
    ours = tc.train.load_checkpoint(tf_checkpoint)
    assert ours.get_variable_to_shape_map() == theirs.get_variable_to_shape_map()
    assert ours.get_variable_to_dtype_map() == {k: v.name for k, v in theirs.get_variable_to_dtype_map().items()}
    for key in theirs.get_variable_to_shape_map():
        a, b = ours.get_tensor(key), theirs.get_tensor(key)
        if isinstance(b, np.ndarray) and b.dtype == object:
            assert a.tolist() == b.tolist()
        elif isinstance(b, bytes):
            assert a.tolist() == b
        else:
            b = np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
    assert sorted(ours.keys()) == sorted(theirs.get_variable_to_shape_map())
    assert tc.train.list_variables(tf_checkpoint) == tf.train.list_variables(tf_checkpoint)


def test_lazy_mapping_by_object_path(tf, tf_checkpoint):
    ckpt = tc.train.load_checkpoint(tf_checkpoint)
    kernel = ckpt["model/dense/kernel"]
    key = "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    assert np.array_equal(kernel, tf.train.load_variable(tf_checkpoint, key))
    assert "model/dense/kernel" in ckpt and key in ckpt and "nope" not in ckpt
    assert ckpt.object_paths()["model/step"] == "model/step/.ATTRIBUTES/VARIABLE_VALUE"
    assert len(ckpt) == len(list(ckpt))
    assert ckpt["model/names"].tolist() == [b"alpha", b"", b"gamma"]
    with pytest.raises(KeyError):
        ckpt["nope"]
    # Open by the .index file too.
    assert tc.train.load_checkpoint(tf_checkpoint + ".index").keys() == ckpt.keys()


def test_missing_key_is_tensorflows_error(tf, tf_checkpoint):
    with pytest.raises(tf.errors.NotFoundError) as theirs:
        tf.train.load_checkpoint(tf_checkpoint).get_tensor("nope")
    with pytest.raises(tc.errors.NotFoundError) as ours:
        tc.train.load_checkpoint(tf_checkpoint).get_tensor("nope")
    assert str(ours.value) == str(theirs.value)


def test_missing_checkpoint_is_not_found(tmp_path):
    with pytest.raises(tc.errors.NotFoundError):
        tc.train.load_checkpoint(str(tmp_path / "none-1"))


def test_damaged_data_is_data_loss(tf, tf_checkpoint, tmp_path):
    import glob
    import shutil

    for f in glob.glob(tf_checkpoint + "*"):
        shutil.copy(f, tmp_path)
    prefix = str(tmp_path / "ckpt-1")
    data = glob.glob(prefix + ".data-*")[0]
    raw = bytearray(open(data, "rb").read())
    raw[0] ^= 0xFF
    open(data, "wb").write(bytes(raw))
    reader = tc.train.load_checkpoint(prefix)
    errors = []
    for key in reader.keys():
        try:
            reader.get_tensor(key)
        except tc.errors.DataLossError as e:
            errors.append(str(e))
    assert errors and "Checksum does not match" in errors[0]


def test_tensorflow_restores_what_we_write(tf, tmp_path):
    rng = np.random.default_rng(5)
    kernel = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    prefix = str(tmp_path / "ours-1")
    tc.train.save_checkpoint(prefix, {"model/kernel": kernel, "model/bias": bias, "model/step": np.int64(3), "save_counter": np.int64(1)})

    model = tf.Module()
    model.kernel = tf.Variable(np.zeros((4, 3), np.float32))
    model.bias = tf.Variable(np.zeros(3, np.float32))
    model.step = tf.Variable(np.int64(0))
    tf.train.Checkpoint(model=model).restore(prefix).assert_consumed()
    assert np.array_equal(model.kernel.numpy(), kernel)
    assert np.array_equal(model.bias.numpy(), bias)
    assert model.step.numpy() == 3
    # And TensorFlow's reader sees the same keys and values.
    reader = tf.train.load_checkpoint(prefix)
    assert np.array_equal(reader.get_tensor("model/kernel/.ATTRIBUTES/VARIABLE_VALUE"), kernel)


def test_unmapped_reads_are_writable_arrays_of_their_own(tf, tf_checkpoint):
    mapped = tc.train.load_checkpoint(tf_checkpoint)
    unmapped = tc.train.load_checkpoint(tf_checkpoint, mmap=False)
    theirs = tf.train.load_checkpoint(tf_checkpoint)
    key = "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    a, b = mapped.get_tensor(key), unmapped.get_tensor(key)
    assert a.tobytes() == b.tobytes() == theirs.get_tensor(key).tobytes()
    # Views of the map are read-only; a read of its own is writable, as TensorFlow's is.
    assert not a.flags.writeable
    assert b.flags.writeable and theirs.get_tensor(key).flags.writeable
    with pytest.raises(ValueError):
        a[0, 0] = 1
    b[...] = 0
    # Each call reads afresh: the write changed neither the file nor the next read.
    assert unmapped.get_tensor(key).tobytes() == a.tobytes() != b.tobytes()
    assert mapped["model/names"].tolist() == unmapped["model/names"].tolist() == [b"alpha", b"", b"gamma"]


@pytest.mark.parametrize("mmap", [True, False])
def test_large_tensor_checksum_equals_tensorflows(tf, tmp_path, mmap):
    # 24 MiB: past the size whose halves are checked on two threads. A flipped byte in the
    # second half is found, with TensorFlow's error text.
    big = np.random.default_rng(3).standard_normal(6 << 20).astype(np.float32)
    model = tf.Module()
    model.big = tf.Variable(big)
    prefix = tf.train.Checkpoint(model=model).write(str(tmp_path / "good" / "ckpt-1"))
    key = "model/big/.ATTRIBUTES/VARIABLE_VALUE"
    got = tc.train.load_checkpoint(prefix, mmap=mmap).get_tensor(key)
    assert got.tobytes() == big.tobytes()
    import glob
    import shutil

    bad = tmp_path / "bad"
    bad.mkdir()
    for f in glob.glob(prefix + "*"):
        shutil.copy(f, bad)
    bad_prefix = str(bad / "ckpt-1")
    data = glob.glob(bad_prefix + ".data-*")[0]
    raw = bytearray(open(data, "rb").read())
    # Where the tensor's bytes are in its shard.
    entry_offset = bytes(raw).find(big[:64].tobytes())
    assert entry_offset >= 0
    raw[entry_offset + big.nbytes - 1000] ^= 0x01
    open(data, "wb").write(bytes(raw))
    # TensorFlow's Python reader raises its C++ DATA_LOSS status as a plain OpError (its
    # translation knows no "TensorBundle" prefix); ours is the DataLossError subclass of it.
    with pytest.raises(tf.errors.OpError) as theirs:
        tf.train.load_checkpoint(bad_prefix).get_tensor(key)
    with pytest.raises(tc.errors.DataLossError) as ours:
        tc.train.load_checkpoint(bad_prefix, mmap=mmap).get_tensor(key)
    assert isinstance(ours.value, tc.errors.OpError)
    assert "Checksum does not match" in str(ours.value)
    assert str(ours.value) == str(theirs.value)
