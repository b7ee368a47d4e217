"""Ray Data datasources: TFRecords, checkpoints and tensor files read in parallel by every
worker of a Ray cluster, decoded by tensorcast's Rust readers (GIL released), as Arrow blocks.

``read_tfrecords(paths, spec=..., compression=...)`` splits uncompressed files by record-offset
ranges (an index of the record headers, read once on the driver) and compressed ones by file;
each read task reads its range and parses it with ``tensorcast.io.parse_example`` into an Arrow
table (dense features of rank >= 1 as fixed-shape tensor columns, sparse and ragged features
as list columns). Without ``spec`` the rows are the raw records (a ``record`` binary column).

``read_checkpoint(prefix)`` and ``read_tensor_files(paths)`` give one row per tensor: ``name``,
``dtype`` (TensorFlow's name), ``shape`` and ``data`` (the raw little-endian element bytes;
for string tensors the serialized ``TensorProto``); ``tensorcast.ray.row_to_numpy(row)`` turns
a row back into a numpy array.

The same code runs on a multi-node cluster: only ``ray.init(address=...)`` changes, and the
files must be on a path every node sees (a shared file system).
"""

import glob
import os

import numpy as np

from tensorcast import io as _io
from tensorcast import train as _train


def _datasource_base():
    from ray.data import Datasource

    return Datasource


def _expand(paths, extensions=None):
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out = []
    for p in map(os.fspath, paths):
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for f in sorted(files):
                    if extensions is None or f.endswith(tuple(extensions)):
                        out.append(os.path.join(root, f))
        elif any(c in p for c in "*?["):
            out.extend(sorted(glob.glob(p)))
        else:
            out.append(p)
    if not out:
        raise FileNotFoundError(f"no files in {paths!r}")
    return sorted(out)


def _split(units, parallelism):
    """Splits (path, first, stop, offsets) record ranges into about `parallelism` pieces of
    similar byte size."""
    total = sum(offsets[stop] - offsets[first] for _, first, stop, offsets in units) or 1
    target = max(1, total // max(1, parallelism))
    pieces = []
    for path, first, stop, offsets in units:
        start = first
        while start < stop:
            end = start + 1
            while end < stop and offsets[end] - offsets[start] < target:
                end += 1
            pieces.append((path, offsets[start], end - start, offsets[end] - offsets[start]))
            start = end
    return pieces


def _kill_once(kill_dir, key):
    """Test hook: kill this worker process the first time it reads `key` (Ray retries)."""
    if kill_dir is None:
        return
    import hashlib

    # A stable name (str hashes differ between processes).
    marker = os.path.join(kill_dir, "killed-" + hashlib.sha1(repr(key).encode()).hexdigest())
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(1)


def _records_block(path, compression, offset, count, spec):
    import pyarrow as pa

    batch = _io.read_records(path, compression, offset, count)
    if spec is None:
        return pa.table({"record": pa.array(batch.to_list(), type=pa.binary())})
    return _io.parse_example(batch, spec, output="arrow")


class _TFRecordSource:
    """The TFRecord datasource (mixed into ``ray.data.Datasource`` by ``_instance``)."""

    def __init__(self, paths, spec=None, compression=None, _kill_once_dir=None):
        self._paths = _expand(paths)
        self._spec = spec
        self._compression = (compression or "").upper() if compression not in (None, "NONE") else ""
        self._kill_dir = _kill_once_dir
        self._units = None

    def _index(self):
        if self._units is None:
            units = []
            for p in self._paths:
                if self._compression:
                    units.append((p, None, None, os.path.getsize(p)))
                else:
                    offsets = _io.record_offsets(p)
                    units.append((p, 0, len(offsets) - 1, offsets))
            self._units = units
        return self._units

    def estimate_inmemory_data_size(self):
        return sum(os.path.getsize(p) for p in self._paths)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        from ray.data.block import BlockMetadata
        from ray.data.datasource import ReadTask

        units = self._index()
        whole = [(p, 0, None, size) for p, first, _, size in units if first is None]
        ranged = _split([u for u in units if u[1] is not None], parallelism)
        tasks = []
        spec, compression, kill_dir = self._spec, self._compression, self._kill_dir
        for path, offset, count, nbytes in ranged + whole:

            def read(path=path, offset=offset, count=count):
                _kill_once(kill_dir, (path, offset))
                yield _records_block(path, compression, offset, count, spec)

            meta = BlockMetadata(num_rows=count, size_bytes=nbytes, input_files=[path], exec_stats=None)
            tasks.append(ReadTask(read, meta, per_task_row_limit=per_task_row_limit))
        return tasks


def read_tfrecords(paths, *, spec=None, compression=None, override_num_blocks=None, **read_args):
    """A ``ray.data.Dataset`` of the Examples (or records) in TFRecord files.

    ``paths``: files, directories or globs. ``spec``: ``{name: tensorcast.io.FixedLenFeature
    | VarLenFeature | FixedLenSequenceFeature | RaggedFeature}`` (TensorFlow's spec objects
    work too); None gives the raw records. ``compression``: ``"GZIP"``, ``"ZLIB"`` or None.
    """
    import ray

    ds = _instance(_TFRecordSource, paths, spec, compression, read_args.pop("_kill_once_dir", None))
    return ray.data.read_datasource(ds, override_num_blocks=override_num_blocks, **read_args)


def _tensor_rows(named):
    import pyarrow as pa

    names, dtypes, shapes, datas = [], [], [], []
    for name, t in named:
        names.append(name)
        dtypes.append(t.dtype)
        shapes.append(list(t.shape))
        datas.append(_io.serialize_tensor(t) if t.dtype == "string" else t.tobytes())
    return pa.table(
        {
            "name": pa.array(names, pa.string()),
            "dtype": pa.array(dtypes, pa.string()),
            "shape": pa.array(shapes, pa.list_(pa.int64())),
            "data": pa.array(datas, pa.large_binary()),
        }
    )


def row_to_numpy(row):
    """A row of ``read_checkpoint`` / ``read_tensor_files`` as a numpy array."""
    if row["dtype"] == "string":
        return _io.parse_tensor(row["data"], "string").numpy()
    name = {"qint8": "int8", "quint8": "uint8", "qint16": "int16", "quint16": "uint16", "qint32": "int32"}.get(
        row["dtype"], row["dtype"]
    )
    try:
        dtype = np.dtype(name)
    except TypeError:
        import ml_dtypes

        dtype = np.dtype(getattr(ml_dtypes, name))
    return np.frombuffer(row["data"], dtype).reshape(row["shape"])


def _instance(cls, *args):
    """An instance of `cls` mixed into ``ray.data.Datasource`` (imported only when used, so
    that ``import tensorcast.ray`` does not import Ray)."""
    base = _datasource_base()
    impl = type(cls.__name__, (cls, base), {})
    obj = base.__new__(impl)
    base.__init__(obj)
    cls.__init__(obj, *args)
    return obj


class _GroupDatasource:
    """Tasks that each read a group of named tensors with `load(group) -> [(name, Tensor)]`."""

    def __init__(self, groups, sizes, load, kill_dir=None):
        self._groups, self._sizes, self._load, self._kill = groups, sizes, load, kill_dir

    def estimate_inmemory_data_size(self):
        return sum(self._sizes)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        from ray.data.block import BlockMetadata
        from ray.data.datasource import ReadTask

        n = max(1, min(parallelism, len(self._groups))) if parallelism > 0 else len(self._groups)
        buckets = [[] for _ in range(n)]
        loads = [0] * n
        for g, s in sorted(zip(self._groups, self._sizes), key=lambda x: -x[1]):
            i = loads.index(min(loads))
            buckets[i].append(g)
            loads[i] += s
        tasks = []
        load, kill = self._load, self._kill
        for bucket, size in zip(buckets, loads):
            if not bucket:
                continue

            def read(bucket=bucket):
                _kill_once(kill, tuple(map(str, bucket)))
                yield _tensor_rows([nt for g in bucket for nt in load(g)])

            tasks.append(ReadTask(read, BlockMetadata(num_rows=None, size_bytes=size, input_files=None, exec_stats=None), per_task_row_limit=per_task_row_limit))
        return tasks


def _load_checkpoint_keys(args):
    prefix, keys = args
    reader = _train.load_checkpoint(prefix)
    return [(k, reader.get_tensorcast(k)) for k in keys]


def read_checkpoint(prefix, *, include_object_graph=False, override_num_blocks=None, **read_args):
    """A ``ray.data.Dataset`` with one row per tensor of a checkpoint (``name``, ``dtype``,
    ``shape``, ``data``), tensors spread over the read tasks by size."""
    import ray

    reader = _train.load_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    keys = [k for k in reader.keys() if include_object_graph or k != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    sizes = [max(1, int(np.prod(shapes[k])) if shapes[k] else 1) for k in keys]
    groups = [(os.fspath(prefix), (k,)) for k in keys]
    ds = _instance(_GroupDatasource, groups, sizes, _load_checkpoint_keys, read_args.pop("_kill_once_dir", None))
    return ray.data.read_datasource(ds, override_num_blocks=override_num_blocks, **read_args)


def _load_tensor_file(path):
    import tensorcast as tc

    loaded = tc.load(path, mmap=False)
    if isinstance(loaded, dict):
        return [(f"{os.path.basename(path)}/{k}", v) for k, v in loaded.items()]
    return [(os.path.basename(path), loaded)]


def read_tensor_files(paths, *, override_num_blocks=None, **read_args):
    """A ``ray.data.Dataset`` with one row per tensor of npy / npz / safetensors / TensorProto
    files (``name`` is ``file`` or ``file/member``), one file per task."""
    import ray

    files = _expand(paths)
    sizes = [os.path.getsize(f) for f in files]
    ds = _instance(_GroupDatasource, files, sizes, _load_tensor_file, read_args.pop("_kill_once_dir", None))
    return ray.data.read_datasource(ds, override_num_blocks=override_num_blocks, **read_args)


__all__ = ["read_checkpoint", "read_tensor_files", "read_tfrecords", "row_to_numpy"]
