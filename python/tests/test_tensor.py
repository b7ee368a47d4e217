"""tensorcast.Tensor and the hand-off to numpy, ml_dtypes and DLPack consumers."""

import gc
import weakref

import ml_dtypes
import numpy as np
import pytest

import tensorcast as tc

# Every dtype numpy and ml_dtypes hold that TensorFlow has, by TensorFlow's name.
NUMPY_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float16": np.float16,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "bool": np.bool_,
    "bfloat16": ml_dtypes.bfloat16,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float4_e2m1fn": ml_dtypes.float4_e2m1fn,
    "int4": ml_dtypes.int4,
    "uint4": ml_dtypes.uint4,
    "int2": ml_dtypes.int2,
    "uint2": ml_dtypes.uint2,
}

# The bits a dtype's storage byte may carry (sub-byte types keep their value in the low bits,
# sign-extended for the signed ones, as ml_dtypes stores them).
def random_array(name, dtype, rng, shape=(3, 5)):
    itemsize = np.dtype(dtype).itemsize
    n = int(np.prod(shape))
    raw = rng.integers(0, 256, size=n * itemsize, dtype=np.uint8)
    if name == "bool":
        raw = raw & 1
    elif name in ("int4", "uint4", "float4_e2m1fn"):
        raw = raw & 0x0F
    elif name in ("int2", "uint2"):
        raw = raw & 0x03
    if name in ("int4", "int2"):
        # canonical: the value's bit pattern as ml_dtypes builds it
        values = np.array([int(v) for v in raw], dtype=np.int64)
        bits = 4 if name == "int4" else 2
        values = np.where(values >= (1 << (bits - 1)), values - (1 << bits), values)
        return values.astype(dtype).reshape(shape)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("name", sorted(NUMPY_DTYPES))
def test_every_dtype_round_trips_bit_exactly(name):
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    a = random_array(name, NUMPY_DTYPES[name], rng)
    t = tc.Tensor(a)
    assert t.dtype == name
    assert t.shape == a.shape
    assert t.nbytes == a.nbytes
    # Adopted without a copy, and handed back as the same array.
    assert t.data_ptr == a.ctypes.data
    assert np.asarray(t) is a
    # A tensor made in Rust goes out as a view of its own memory, with the same dtype.
    view = t.reshape(list(a.shape))
    b = np.asarray(view)
    assert b.dtype == a.dtype
    assert b.shape == a.shape
    assert b.tobytes() == a.tobytes()
    assert np.shares_memory(b, a)
    # And a copy made in Rust (its own allocation) comes back bit-exact.
    c = np.asarray(t.deep_copy())
    assert not np.shares_memory(c, a)
    assert c.dtype == a.dtype and c.tobytes() == a.tobytes()


def test_dtype_arguments_in_every_spelling():
    x = np.zeros(2, np.float32)
    for spelling in ["bfloat16", ml_dtypes.bfloat16, np.dtype(ml_dtypes.bfloat16), 14]:
        assert tc.cast(x, spelling).dtype == "bfloat16"
    for spelling in ["float16", "half", np.float16]:
        assert tc.cast(x, spelling).dtype == "float16"
    with pytest.raises(tc.errors.InvalidArgumentError, match="Unknown dtype: nope"):
        tc.cast(x, "nope")


def test_adopted_array_is_kept_alive_and_shared():
    a = np.arange(1000, dtype=np.float64)
    alive = weakref.ref(a)
    t = tc.Tensor(a)
    del a
    gc.collect()
    assert alive() is not None  # the tensor holds the array
    arr = np.asarray(t)
    assert arr[999] == 999.0
    arr[0] = -1.0  # the adopted array is writable, and it is the tensor's memory
    assert np.asarray(tc.Tensor(t))[0] == -1.0
    del t, arr
    gc.collect()
    assert alive() is None  # and lets it go with the last handle


def test_tensor_views_are_read_only_numpy_views():
    t = tc.cast(np.arange(6, dtype=np.int32), "int64")
    a = t.numpy()
    assert a.dtype == np.int64 and not a.flags.writeable
    b = np.asarray(t)
    assert np.shares_memory(a, b)
    c = np.array(t)  # numpy's copy
    assert c.flags.writeable and not np.shares_memory(c, a)


def test_strings_as_object_and_bytes_arrays():
    t = tc.Tensor(np.array([[b"a", b"bc"], [b"", b"\xff"]], dtype=object))
    assert t.dtype == "string" and t.shape == (2, 2)
    back = t.numpy()
    assert back.dtype == object and back.tolist() == [[b"a", b"bc"], [b"", b"\xff"]]
    assert tc.Tensor(np.array([b"xy", b"z"])).numpy().tolist() == [b"xy", b"z"]
    assert tc.Tensor(np.array(["é"])).numpy().tolist() == ["é".encode()]
    assert repr(tc.Tensor(np.array([b"a", b"b"], dtype=object))) == 'Tensor<type: string shape: [2] values: a b>'


def test_non_contiguous_and_byte_swapped_arrays_are_copied_correctly():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    assert np.array_equal(np.asarray(tc.Tensor(a)), a)
    b = np.arange(4, dtype=">f4")
    t = tc.Tensor(b)
    assert t.dtype == "float32" and np.array_equal(np.asarray(t), b)


def test_members_and_debug_string():
    t = tc.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert repr(t) == "Tensor<type: float shape: [2,3] values: [0 1 2]...>"
    assert t.DebugString(6) == "Tensor<type: float shape: [2,3] values: [0 1 2][3 4 5]>"
    assert t.SummarizeValue(10) == "[0 1 2][3 4 5]"
    assert (t.ndim, t.size, t.nbytes, len(t), t.dtype_enum) == (2, 6, 24, 2, 1)
    assert t.NumElements() == 6 and t.TotalBytes() == 24
    s = t.SubSlice(1)
    assert s.shape == (3,) and s.SharesBufferWith(t) and np.array_equal(s.numpy(), [3, 4, 5])
    assert t.Slice(1, 2).shape == (1, 3)
    assert t.reshape([3, 2]).shape == (3, 2)
    assert t.tobytes() == np.arange(6, dtype=np.float32).tobytes()
    with pytest.raises(tc.errors.InvalidArgumentError):
        t.reshape([4])


def test_dlpack_to_numpy_shares_memory_both_ways():
    a = np.arange(8, dtype=np.float32)
    t = tc.Tensor(a)
    assert t.__dlpack_device__() == (1, 0)
    b = np.from_dlpack(t)
    assert np.shares_memory(a, b)
    a[3] = 42.0  # write through numpy's array, read through the DLPack consumer
    assert b[3] == 42.0 and np.asarray(t)[3] == 42.0
    # numpy -> tensorcast through DLPack: the same memory.
    c = tc.from_dlpack(a)
    assert c.data_ptr == a.ctypes.data
    a[0] = -7.0
    assert np.asarray(c)[0] == -7.0
    # A tensor tensorcast allocated goes out read-only (DLPack 1.x flag).
    r = np.from_dlpack(tc.cast(a, "float64"))
    assert not r.flags.writeable and r[0] == -7.0


def aligned(n, dtype):
    """A 64-byte aligned numpy array (XLA's CPU client adopts only such memory)."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    return raw[off : off + n * itemsize].view(dtype)


def test_dlpack_with_jax_shares_memory(tmp_path):
    import jax
    import jax.numpy as jnp

    a = aligned(1024, np.float32)
    a[:] = np.arange(1024)
    t = tc.Tensor(a)
    j = jax.dlpack.from_dlpack(t)
    assert j.unsafe_buffer_pointer() == t.data_ptr == a.ctypes.data
    a[5] = 1234.0  # written through numpy, read through JAX
    assert float(j[5]) == 1234.0
    # JAX -> tensorcast: the same memory, bfloat16 included.
    for dtype in (jnp.float32, jnp.bfloat16, jnp.int8, jnp.bool_):
        x = jnp.arange(16).astype(dtype)
        tx = tc.from_dlpack(x)
        assert tx.data_ptr == x.unsafe_buffer_pointer()
        assert np.asarray(tx).tobytes() == np.asarray(x).tobytes()
    # A tensor made in Rust is read-only, and JAX asks for the legacy capsule, which cannot
    # say so: refused, as numpy refuses JAX its own read-only arrays.
    c = tc.cast(a, "bfloat16")
    for readonly in (c, np.asarray(c)):
        with pytest.raises(BufferError, match="Cannot export readonly array"):
            jax.dlpack.from_dlpack(readonly)
    # Memory tensorcast allocated (64-byte aligned) for a writable array goes to JAX without
    # a copy: a checkpoint read with mmap=False, as TensorFlow's reader, gives such arrays.
    prefix = str(tmp_path / "ckpt-1")
    tc.train.save_checkpoint(prefix, {"w": c})
    own = tc.train.load_checkpoint(prefix, mmap=False).get_tensor("w")
    assert own.flags.writeable
    jc = jax.dlpack.from_dlpack(tc.Tensor(own))
    assert jc.unsafe_buffer_pointer() == own.ctypes.data
    assert jc.dtype == jnp.bfloat16 and float(jc[5]) == 1232.0


def test_dlpack_refusals_are_clear():
    with pytest.raises(BufferError, match="DLPack has no type for string"):
        tc.Tensor(np.array([b"a"], dtype=object)).__dlpack__()
    with pytest.raises(TypeError, match="from_dlpack expects"):
        tc.from_dlpack(3)
    with pytest.raises(BufferError, match="CPU"):
        tc.Tensor(np.zeros(2)).__dlpack__(dl_device=(2, 0))


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2"])
def test_sub_byte_integers_refuse_dlpack_clearly_and_go_through_numpy(name):
    # DLPack's 4-bit (and 2-bit) integers are packed two (four) to a byte; TensorFlow's and
    # ml_dtypes' hold one value a byte. Sharing that memory as DLPack would be wrong, so the
    # export refuses, and says to use numpy (an ml_dtypes view of the same memory).
    import ml_dtypes

    dtype = getattr(ml_dtypes, name)
    a = np.array([1, 0, 1, 1], dtype)
    t = tc.Tensor(a)
    with pytest.raises(BufferError, match=f"DLPack packs sub-byte integers.*numpy.asarray"):
        t.__dlpack__()
    with pytest.raises(BufferError, match=f"DLPack has no type for {name}"):
        np.from_dlpack(t)
    v = np.asarray(t)
    assert v.dtype == dtype and np.shares_memory(v, a) and v.tolist() == a.tolist()


def test_jax_int4_does_not_cross_dlpack_either():
    # The peers agree: JAX has no DLPack spelling for its int4 either, so nothing can be
    # adopted from it; its numpy form (ml_dtypes.int4) can.
    import jax.numpy as jnp
    import ml_dtypes

    x = jnp.array([1, -2, 3], jnp.int4)
    with pytest.raises(Exception, match="no DLPack equivalent"):
        tc.from_dlpack(x)
    t = tc.Tensor(np.asarray(x))
    assert t.dtype == "int4" and np.asarray(t).tolist() == [1, -2, 3]
    assert np.asarray(t).dtype == ml_dtypes.int4


def mapped_file_of(address):
    """The file whose memory map holds `address` in this process (Linux), or None."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if lo <= address < hi:
                return parts[5].strip() if len(parts) == 6 else None
    return None


class LegacyOnly:
    """A consumer's view of a producer that speaks only the legacy capsule (what JAX 0.10's
    `from_dlpack` and older consumers ask for: `__dlpack__(stream=...)`, no `max_version`)."""

    def __init__(self, producer, **kwargs):
        self.producer, self.kwargs = producer, kwargs

    def __dlpack__(self, stream=None, **_):
        return self.producer.__dlpack__(**self.kwargs)

    def __dlpack_device__(self):
        return self.producer.__dlpack_device__()


def test_dlpack_legacy_export_of_readonly_tensor_is_refused(tmp_path):
    # A tensor of a memory-mapped checkpoint shard: its pages are mapped read-only, so a
    # consumer writing through a legacy capsule (which cannot say read-only) faulted the
    # interpreter (SIGSEGV). Refused as numpy refuses its own read-only arrays, with numpy's
    # BufferError and words; the versioned capsule carries the read-only flag.
    prefix = str(tmp_path / "ckpt-1")
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    tc.train.save_checkpoint(prefix, {"w": w})
    t = tc.train.load_checkpoint(prefix).get_tensorcast("w/.ATTRIBUTES/VARIABLE_VALUE")
    assert mapped_file_of(t.data_ptr).startswith(prefix + ".data-")
    readonly = np.arange(3, dtype=np.float32)
    readonly.flags.writeable = False
    for kwargs in ({}, {"max_version": None}, {"max_version": (0, 8)}, {"copy": False}):
        with pytest.raises(BufferError) as numpys:
            readonly.__dlpack__(**kwargs)
        with pytest.raises(BufferError) as ours:
            t.__dlpack__(**kwargs)
        assert str(ours.value) == str(numpys.value), kwargs
        assert "Cannot export readonly array" in str(ours.value)
    with pytest.raises(BufferError, match="Cannot export readonly array"):
        np.from_dlpack(LegacyOnly(t))
    # A tensor made in Rust is read-only too (other tensors may share its buffer).
    with pytest.raises(BufferError, match="Cannot export readonly array"):
        tc.cast(w, "float64").__dlpack__()
    # The versioned capsule shares the mapped memory, flagged read-only.
    v = np.from_dlpack(t)
    assert v.ctypes.data == t.data_ptr and not v.flags.writeable
    assert np.array_equal(v, w)
    with pytest.raises(ValueError, match="read-only"):
        v[0, 0] = 1.0
    # copy=True: a copy, in either capsule (numpy imports a legacy capsule read-only; the
    # versioned copy is writable, and writing it leaves the mapped tensor be).
    legacy = np.from_dlpack(LegacyOnly(t, copy=True))
    assert legacy.ctypes.data != t.data_ptr and np.array_equal(legacy, w)
    c = np.from_dlpack(LegacyOnly(t, max_version=(1, 1), copy=True))
    assert c.ctypes.data != t.data_ptr and c.flags.writeable
    c[0, 0] = -1.0
    assert np.asarray(t)[0, 0] == 0.0 and np.array_equal(c[1:], w[1:])
    # A tensor that adopted a writable array still goes out in the legacy capsule, sharing it.
    a = np.arange(4, dtype=np.float32)
    assert np.from_dlpack(LegacyOnly(tc.Tensor(a))).ctypes.data == a.ctypes.data


INT_OUT_OF_RANGE = "Can't convert Python sequence with out-of-range integer to Tensor."
FLOAT_OUT_OF_RANGE = "Can't convert Python sequence with a value out of range for a double-precision float."

# Python ints at and beyond the edges of every integer type, and of a double.
EDGE_INTS = [
    -1, 2**7, -(2**7) - 1, 2**8, 2**15, 2**16, 2**31, -(2**31) - 1, 2**32, 2**40,
    2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 2**200, 2**1030,
]
INTEGER_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                  "qint8", "quint8", "qint16", "quint16", "qint32"]
OTHER_DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128", "string"]


def outcome(convert):
    """What a conversion gives: ("ok", values as a list) or (exception class, message)."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's overflow-to-inf warning (float32 2**200)
            got = convert()
            return ("ok", (got.numpy() if hasattr(got, "numpy") else np.asarray(got)).tolist())
    except Exception as e:
        return (type(e).__name__, str(e))


def python_ints(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from python_ints(v)
    elif isinstance(value, int):
        yield value


def tensorflow_unsound(value, dtype):
    """Where TensorFlow's own conversion is unsound: ints it cannot take as uint64 raise a
    SystemError (an exception set under a result) or abort the interpreter (a failed CHECK);
    a float beyond a double among floats converted through a double raises a SystemError.
    tensorcast raises the ValueError TensorFlow raises for the same values as other types."""
    ints = list(python_ints(value))
    floats = isinstance(value, list) and any(isinstance(v, float) for v in value)
    double_converted = ("float16", "float32", "float64", "complex128", "uint64")
    if dtype in double_converted and floats and any(abs(i) >= 2**1024 for i in ints):
        return ("ValueError", FLOAT_OUT_OF_RANGE)
    if dtype == "uint64" and any(i < 0 or i >= 2**64 for i in ints):
        return ("ValueError", INT_OUT_OF_RANGE)
    return None


@pytest.mark.parametrize("dtype", INTEGER_DTYPES + OTHER_DTYPES + [None])
def test_python_int_out_of_dtype_range_raises_value_error(tf, dtype):
    # tf.constant(value, dtype): ints beyond int64 (uint64 for uint64, a double for half,
    # float, double and complex128, and for any float type when floats are among them) raise
    # TensorFlow's ValueError; ints within int64 wrap into a narrower integer type as
    # TensorFlow's conversion wraps them (tf.constant(-1, tf.uint8) is 255), where numpy 2
    # raises OverflowError. tensorcast gave -2**63 for tc.cast(2**63, "int64"), and a
    # misleading string-tensor error for tc.Tensor(2**64).
    tf_dtype = None if dtype is None else tf.as_dtype(dtype)
    compared = 0
    for value in EDGE_INTS + [[1, 2**63], [[-1], [300]], (5, 2**64), [1.5, 2**63], [1.5, 2**2000]]:
        ours = outcome(lambda: tc.Tensor(value, dtype))
        expected = tensorflow_unsound(value, dtype)
        if expected is not None:
            assert ours == expected, (value, dtype)
            continue
        theirs = outcome(lambda: tf.constant(value, tf_dtype))
        if theirs[0] == "TypeError":
            # TensorFlow refuses a float as an integer and an int as a string: a question of
            # type, not range (tensorcast converts the one as numpy does, refuses the other).
            assert ours[0] != "ok" or dtype != "string", (value, dtype)
            continue
        # (With no dtype, tensorcast infers numpy's int64 and float64 where TensorFlow infers
        # int32 and float32; the values of these cases are the same in either.)
        assert ours == theirs, (value, dtype)
        compared += 1
    assert compared >= 5


def test_python_int_out_of_range_in_ops_raises_value_error(tf):
    # An op's operand converts as tf.constant(value) does: tf.cast(2**63, tf.int64) raises.
    for ours, theirs in [
        (lambda: tc.cast(2**63, "int64"), lambda: tf.cast(2**63, tf.int64)),
        (lambda: tc.cast(2**63, "uint64"), lambda: tf.cast(2**63, tf.uint64)),
        (lambda: tc.cast(-1, "uint8"), lambda: tf.cast(-1, tf.uint8)),
        (lambda: tc.cast(2**40, "int32"), lambda: tf.cast(2**40, tf.int32)),
        (lambda: tc.add(2**63, 1), lambda: tf.add(2**63, 1)),
        (lambda: tc.broadcast_to(1, [2**63]), lambda: tf.broadcast_to(1, [2**63])),
        (lambda: tc.io.serialize_tensor(2**64), lambda: tf.io.serialize_tensor(2**64)),
        (lambda: tc.Tensor(2**64), lambda: tf.constant(2**64)),
    ]:
        assert outcome(ours) == outcome(theirs)
    assert outcome(lambda: tc.cast(2**63, "int64")) == ("ValueError", INT_OUT_OF_RANGE)


def test_python_int_dtype_number_out_of_range_raises_type_error(tf):
    # A dtype given as an int that is no dtype's number, however large: tf.as_dtype's error.
    for n in [0, -1, 1000, 2**31, 2**40, 2**70]:
        assert outcome(lambda: tc.Tensor(1.0, n)) == outcome(lambda: tf.as_dtype(n)), n
    assert tc.Tensor(1.0, 2).dtype == "float64"
