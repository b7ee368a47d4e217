"""tensorcast.ray on a local Ray cluster: equal to a single-process read; a worker killed
mid-read (Ray retries its task) loses and duplicates nothing."""

import os

import numpy as np
import pytest

import tensorcast as tc
import tensorcast.ray  # noqa: F401  (not imported by the package: it would import Ray)


@pytest.fixture(scope="module")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield ray
    ray.shutdown()


def example(i):
    """A tf.train.Example with x: 4 floats, label: int64, tags: bytes list, built by hand."""
    from tensorcast._testing import example_bytes

    return example_bytes(i)


@pytest.fixture(scope="module")
def tfrecords(tmp_path_factory):
    d = tmp_path_factory.mktemp("tfr")
    n = 0
    for shard in range(3):
        with tc.io.TFRecordWriter(str(d / f"part-{shard}.tfrecord")) as w:
            for _ in range(400 + 100 * shard):
                w.write(example(n))
                n += 1
    with tc.io.TFRecordWriter(str(d / "part-gz.tfrecord"), "GZIP") as w:
        for _ in range(250):
            w.write(example(n))
            n += 1
    return d, n


SPEC = {
    "x": tc.io.FixedLenFeature([4], "float32"),
    "label": tc.io.FixedLenFeature([], "int64"),
    "tags": tc.io.VarLenFeature("string"),
}


def single_process(d):
    rows = {}
    for f in sorted(os.listdir(d)):
        comp = "GZIP" if "gz" in f else ""
        out = tc.io.parse_example(tc.io.read_records(str(d / f), comp), SPEC)
        for i, label in enumerate(out["label"]):
            rows[int(label)] = out["x"][i]
    return rows


def read_rows(ray, paths, **kw):
    rows = {}
    count = 0
    import pyarrow as pa

    for batch in ray.data.Dataset.iter_batches(tc.ray.read_tfrecords(paths, spec=SPEC, **kw), batch_format="pyarrow"):
        # Arrow blocks: the dense feature is a fixed-shape tensor column.
        assert isinstance(batch.schema.field("x").type, pa.FixedShapeTensorType)
        assert batch.schema.field("x").type.shape == [4]
        labels = batch.column("label").to_pylist()
        xs = batch.column("x").combine_chunks().to_numpy_ndarray()
        for label, x in zip(labels, xs):
            assert label not in rows, f"record {label} read twice"
            rows[label] = x
            count += 1
    return rows, count


def test_read_tfrecords_equals_single_process(ray_cluster, tfrecords):
    d, n = tfrecords
    plain = sorted(str(d / f) for f in os.listdir(d) if "gz" not in f)
    expected = single_process(d)
    assert len(expected) == n
    rows, count = read_rows(ray_cluster, plain, override_num_blocks=7)
    expected_plain = {k: v for k, v in expected.items() if k < 1500}
    assert count == len(expected_plain) and rows.keys() == expected_plain.keys()
    for k, v in expected_plain.items():
        assert np.array_equal(rows[k], v)
    gz, gz_count = read_rows(ray_cluster, [str(d / "part-gz.tfrecord")], compression="GZIP")
    assert gz_count == 250 and all(np.array_equal(gz[k], expected[k]) for k in gz)


def test_raw_records_without_spec(ray_cluster, tfrecords):
    d, _ = tfrecords
    path = str(d / "part-0.tfrecord")
    ds = tc.ray.read_tfrecords(path, override_num_blocks=3)
    records = sorted(r["record"] for r in ds.take_all())
    assert records == sorted(tc.io.read_records(path).to_list())


def test_worker_killed_mid_read_loses_and_duplicates_nothing(ray_cluster, tfrecords, tmp_path):
    d, _ = tfrecords
    plain = sorted(str(d / f) for f in os.listdir(d) if "gz" not in f)
    rows, count = read_rows(ray_cluster, plain, override_num_blocks=6, _kill_once_dir=str(tmp_path))
    killed = [f for f in os.listdir(tmp_path) if f.startswith("killed-")]
    assert len(killed) >= 6, "every read task's first attempt killed its worker"
    assert count == 1500 and sorted(rows) == list(range(1500))
    # A compressed file is one task, read whole: killed once and retried too.
    gz_dir = tmp_path / "gz"
    gz_dir.mkdir()
    gz, gz_count = read_rows(ray_cluster, [str(d / "part-gz.tfrecord")], compression="GZIP", _kill_once_dir=str(gz_dir))
    assert len([f for f in os.listdir(gz_dir) if f.startswith("killed-")]) == 1
    assert gz_count == 250 and sorted(gz) == list(range(1500, 1750))


def test_read_checkpoint_and_tensor_files(ray_cluster, tmp_path):
    rng = np.random.default_rng(0)
    tensors = {f"layer{i}/kernel": rng.standard_normal((i + 1, 3)).astype(np.float32) for i in range(6)}
    tensors["vocab"] = np.array([b"a", b"bc"], dtype=object)
    prefix = str(tmp_path / "ckpt-1")
    tc.train.save_checkpoint(prefix, tensors)
    rows = tc.ray.read_checkpoint(prefix, override_num_blocks=3, _kill_once_dir=str(tmp_path)).take_all()
    assert len([f for f in os.listdir(tmp_path) if f.startswith("killed-")]) == 3, "each task killed once"
    assert len(rows) == len(tensors), "nothing lost or read twice"
    got = {r["name"].replace("/.ATTRIBUTES/VARIABLE_VALUE", ""): tc.ray.row_to_numpy(r) for r in rows}
    assert sorted(got) == sorted(tensors)
    for k, v in tensors.items():
        assert got[k].tolist() == v.tolist()
    tc.save(tmp_path / "a.safetensors", {"w": tensors["layer0/kernel"]})
    np.save(tmp_path / "b.npy", np.arange(5))
    files = tc.ray.read_tensor_files([str(tmp_path / "a.safetensors"), str(tmp_path / "b.npy")]).take_all()
    by_name = {r["name"]: tc.ray.row_to_numpy(r) for r in files}
    assert np.array_equal(by_name["a.safetensors/w"], tensors["layer0/kernel"])
    assert np.array_equal(by_name["b.npy"], np.arange(5))
