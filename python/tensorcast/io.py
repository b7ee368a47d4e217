"""TFRecord files and ``tf.train.Example`` parsing, as ``tf.io`` does them, without TensorFlow.

>>> import numpy as np, tensorcast as tc, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "data.tfrecord")
>>> with tc.io.TFRecordWriter(path, "GZIP") as w:
...     w.write(b"first")
...     w.write(b"second")
>>> list(tc.io.tf_record_iterator(path, compression_type="GZIP"))
[b'first', b'second']
"""

import collections

from tensorcast._native import (
    RecordBatch,
    RecordIterator,
    TFRecordWriter,
    parse_example_arrow as _parse_example_arrow,
    parse_example_batches_native as _parse_example_batches_native,
    parse_example_native as _parse_example_native,
    parse_tensor,
    read_records,
    record_offsets,
    serialize_tensor,
    tf_record_iterator,
)


class TFRecordOptions:
    """``tf.io.TFRecordOptions``: only ``compression_type`` (``""``, ``"GZIP"``, ``"ZLIB"``)."""

    def __init__(self, compression_type=None):
        self.compression_type = compression_type or ""


def _dtype_name(dtype):
    name = getattr(dtype, "name", dtype)
    if not isinstance(name, str):
        import numpy as np

        name = np.dtype(dtype).name
    return {"float": "float32", "object": "string", "bytes": "string", "str": "string"}.get(name, name)


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """``tf.io.FixedLenFeature(shape, dtype, default_value=None)``: a dense ``[batch] + shape`` result."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """``tf.io.VarLenFeature(dtype)``: a sparse result (``SparseTensorValue``)."""


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """``tf.io.FixedLenSequenceFeature``: a dense ``[batch, max_rows] + shape`` result, padded."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class RaggedFeature(
    collections.namedtuple("RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])
):
    """``tf.io.RaggedFeature``: a ragged result (``RaggedTensorValue``).

    ``partitions`` (outermost first) split the values into more ragged dimensions, each read
    from a feature of the same example as TensorFlow spells them: ``RowSplits(key)``,
    ``RowLengths(key)``, ``RowStarts(key)``, ``RowLimits(key)``, ``ValueRowIds(key)``, or
    ``UniformRowLength(length)``. As in TensorFlow the partitions are not validated
    (``validate`` is accepted and ignored).

    >>> import tensorcast as tc
    >>> from tensorcast._testing import example_of
    >>> ex = example_of({"tok": [1, 2, 3, 4, 5], "rowids": [0, 0, 2, 2, 2]})
    >>> spec = {"r": tc.io.RaggedFeature("int64", "tok", [tc.io.RaggedFeature.ValueRowIds("rowids")])}
    >>> tc.io.parse_example([ex], spec)["r"].to_list()
    [[[1, 2], [], [3, 4, 5]]]
    >>> spec = {"r": tc.io.RaggedFeature("int64", "tok", [tc.io.RaggedFeature.RowStarts("starts")])}
    >>> tc.io.parse_example([example_of({"tok": [1, 2, 3], "starts": [0, 1]})], spec)["r"].to_list()
    [[[1], [2, 3]]]
    """

    RowSplits = collections.namedtuple("RowSplits", ["key"])
    RowLengths = collections.namedtuple("RowLengths", ["key"])
    RowStarts = collections.namedtuple("RowStarts", ["key"])
    RowLimits = collections.namedtuple("RowLimits", ["key"])
    ValueRowIds = collections.namedtuple("ValueRowIds", ["key"])
    UniformRowLength = collections.namedtuple("UniformRowLength", ["length"])

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype="int32", validate=False):
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype, validate)


SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])
SparseTensorValue.__doc__ = "A ``tf.SparseTensor``'s parts as numpy arrays."


class RaggedTensorValue:
    """A ``tf.RaggedTensor``'s parts as numpy arrays: ``flat_values`` and ``nested_row_splits``
    (outermost first; ``row_splits`` is the outermost)."""

    def __init__(self, flat_values, nested_row_splits):
        self.flat_values = flat_values
        self.nested_row_splits = tuple(nested_row_splits)

    @property
    def row_splits(self):
        return self.nested_row_splits[0]

    @property
    def values(self):
        if len(self.nested_row_splits) == 1:
            return self.flat_values
        return RaggedTensorValue(self.flat_values, self.nested_row_splits[1:])

    def to_list(self):
        """The nested Python lists ``tf.RaggedTensor.to_list()`` gives."""
        values = self.flat_values.tolist()
        for splits in reversed(self.nested_row_splits):
            values = [values[splits[i] : splits[i + 1]] for i in range(len(splits) - 1)]
        return values

    def __repr__(self):
        return f"RaggedTensorValue(flat_values={self.flat_values!r}, row_splits={self.nested_row_splits!r})"


# TensorFlow's partition class names (its classes are accepted too) and the native names.
_PARTITION_KINDS = {
    "RowSplits": "row_splits",
    "RowLengths": "row_lengths",
    "RowStarts": "row_starts",
    "RowLimits": "row_limits",
    "ValueRowIds": "value_rowids",
}


def _spec_tuple(name, spec):
    if isinstance(spec, FixedLenFeature):
        return ("fixed", name, [int(d) for d in spec.shape], _dtype_name(spec.dtype), spec.default_value)
    if isinstance(spec, VarLenFeature):
        return ("varlen", name, _dtype_name(spec.dtype))
    if isinstance(spec, FixedLenSequenceFeature):
        return (
            "fixedseq",
            name,
            [int(d) for d in spec.shape],
            _dtype_name(spec.dtype),
            bool(spec.allow_missing),
            spec.default_value,
        )
    if isinstance(spec, RaggedFeature):
        parts = []
        for p in spec.partitions:
            kind = type(p).__name__
            if kind in _PARTITION_KINDS:
                parts.append((_PARTITION_KINDS[kind], p.key))
            elif kind == "UniformRowLength":
                parts.append(("uniform_row_length", int(p.length)))
            else:
                raise ValueError(f"Unsupported RaggedFeature partition: {kind}")
        return ("ragged", name, _dtype_name(spec.dtype), spec.value_key, parts, _dtype_name(spec.row_splits_dtype))
    # TensorFlow's own feature classes, converted by their field names.
    kind = type(spec).__name__
    fields = {f: getattr(spec, f) for f in getattr(spec, "_fields", ())}
    if kind == "FixedLenFeature":
        return _spec_tuple(name, FixedLenFeature(**fields))
    if kind == "VarLenFeature":
        return _spec_tuple(name, VarLenFeature(**fields))
    if kind == "FixedLenSequenceFeature":
        return _spec_tuple(name, FixedLenSequenceFeature(**fields))
    if kind == "RaggedFeature":
        return _spec_tuple(name, RaggedFeature(**fields))
    raise TypeError(f"Unsupported feature spec for {name!r}: {spec!r}")


def parse_example(serialized, features, example_names=None, name=None, *, output="numpy"):
    """``tf.io.parse_example(serialized, features)``: a dict of numpy arrays (dense features),
    ``SparseTensorValue`` (``VarLenFeature``) and ``RaggedTensorValue`` (``RaggedFeature``).

    ``serialized`` is a list of ``bytes`` or a ``RecordBatch`` (``read_records``), parsed with
    the GIL released. ``output="arrow"`` returns a ``pyarrow.Table`` instead: one row per
    example, dense features of rank > 1 as fixed-shape tensor columns, sparse and ragged ones
    as list columns.

    >>> import tensorcast as tc
    >>> from tensorcast._testing import example_bytes  # x: floats i, i+1; tags: i % 3 strings
    >>> out = tc.io.parse_example(
    ...     [example_bytes(1, width=2), example_bytes(2, width=2)],
    ...     {"x": tc.io.FixedLenFeature([2], "float32"), "tags": tc.io.VarLenFeature("string")},
    ... )
    >>> out["x"]
    array([[1., 2.],
           [2., 3.]], dtype=float32)
    >>> out["tags"].values
    array([b't0', b't0', b't1'], dtype=object)
    """
    del name
    if output not in ("numpy", "arrow"):
        raise ValueError(f"output must be 'numpy' or 'arrow', not {output!r}")
    specs = _spec_tuples(features)
    names = None if example_names is None else [str(n) for n in example_names]
    if output == "arrow":
        return _arrow_table(_parse_example_arrow(serialized, specs, names))
    # The native side makes the numpy arrays (views of the parsed tensors' memory).
    return _assemble(_parse_example_native(serialized, specs, names, True))


def parse_example_batches(source, features, batch_size=1024, compression_type=None, *, verify_checksums=True, output="numpy"):
    """The Examples of a TFRecord file parsed ``batch_size`` at a time: an iterator of what
    ``parse_example`` returns for each batch, in file order (the last batch may be smaller).

    What ``tf.data.TFRecordDataset(path, compression_type).batch(batch_size).map(lambda s:
    tf.io.parse_example(s, features)).prefetch(...)`` yields, without TensorFlow: a thread of
    its own reads the file (an uncompressed one is memory-mapped, every checksum verified)
    while every core parses the batches ahead of the loop, with the GIL released, so that
    reading, parsing and the loop's own work overlap. A few batches are parsed ahead at
    most. ``source`` is a path or a ``RecordBatch`` (``read_records``). A damaged file yields
    the whole batches before the damage, then raises ``DataLossError`` (as ``tf.data`` does);
    an Example that does not parse raises ``parse_example``'s error at its batch.
    ``output="arrow"`` yields a ``pyarrow.Table`` per batch instead.

    >>> import tensorcast as tc, tempfile, os
    >>> from tensorcast._testing import example_bytes  # x: floats i, i+1; tags: i % 3 strings
    >>> path = os.path.join(tempfile.mkdtemp(), "ex.tfrecord")
    >>> with tc.io.TFRecordWriter(path) as w:
    ...     for i in range(5):
    ...         w.write(example_bytes(i, width=2))
    >>> spec = {"x": tc.io.FixedLenFeature([2], "float32"), "tags": tc.io.VarLenFeature("string")}
    >>> [b["x"].shape for b in tc.io.parse_example_batches(path, spec, batch_size=2)]
    [(2, 2), (2, 2), (1, 2)]
    >>> [t.num_rows for t in tc.io.parse_example_batches(path, spec, 4, output="arrow")]
    [4, 1]
    """
    if output not in ("numpy", "arrow"):
        raise ValueError(f"output must be 'numpy' or 'arrow', not {output!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
    specs = _spec_tuples(features)
    arrow = output == "arrow"
    native = _parse_example_batches_native(source, specs, batch_size, compression_type, verify_checksums, not arrow, arrow)
    if arrow:
        return (_arrow_table(b) for b in native)
    return (_assemble(items) for items in native)


def _assemble(items):
    """TensorFlow's result dict from the native items of a parsed batch."""
    out = {}
    for item in items:
        key, kind = item[0], item[1]
        if kind == "dense":
            out[key] = item[2]
        elif kind == "sparse":
            out[key] = SparseTensorValue(item[2], item[3], item[4])
        else:
            out[key] = RaggedTensorValue(item[2], item[3])
    return out


_SPEC_CACHE = {}


def _freeze(v):
    """A hashable key of a spec: lists become tuples, every value keeps its type (an array
    raises TypeError)."""
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(_freeze(x) for x in v))
    hash(v)
    return (type(v), v)


def _spec_tuples(features):
    """The native specs of a features dict, sorted by key; remembered for hashable specs (a
    loop parsing batch after batch with one dict converts it once)."""
    try:
        key = tuple((k, _freeze(features[k])) for k in sorted(features))
        cached = _SPEC_CACHE.get(key)
    except TypeError:  # a default value that is an array
        return [_spec_tuple(k, features[k]) for k in sorted(features)]
    if cached is None:
        cached = [_spec_tuple(k, features[k]) for k in sorted(features)]
        if len(_SPEC_CACHE) > 64:
            _SPEC_CACHE.clear()
        _SPEC_CACHE[key] = cached
    return cached


def parse_single_example(serialized, features, example_names=None, name=None):
    """``tf.io.parse_single_example``: ``parse_example`` of one example, without the batch
    dimension."""
    del example_names, name
    batch = parse_example([serialized], features)
    out = {}
    for k, v in batch.items():
        if isinstance(v, SparseTensorValue):
            out[k] = SparseTensorValue(v.indices[:, 1:], v.values, v.dense_shape[1:])
        elif isinstance(v, RaggedTensorValue):
            splits = v.nested_row_splits
            if len(splits) == 1:
                out[k] = v.flat_values
            else:
                out[k] = RaggedTensorValue(v.flat_values, splits[1:])
        else:
            out[k] = v[0]
    return out


def _arrow_table(native):
    """A ``pyarrow.Table`` of a native ``ArrowBatch`` (built on the parsing thread and taken
    through the Arrow C data interface, sharing its memory)."""
    import pyarrow as pa

    return pa.Table.from_batches([pa.record_batch(native)])


__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "RaggedTensorValue",
    "RecordBatch",
    "RecordIterator",
    "SparseTensorValue",
    "TFRecordOptions",
    "TFRecordWriter",
    "VarLenFeature",
    "parse_example",
    "parse_example_batches",
    "parse_single_example",
    "parse_tensor",
    "read_records",
    "record_offsets",
    "serialize_tensor",
    "tf_record_iterator",
]
