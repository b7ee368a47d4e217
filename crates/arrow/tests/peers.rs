//! The Arrow world's own readers and writers against ours: pyarrow reads our tensors back
//! bit-exactly (`FixedShapeTensorArray.to_numpy_ndarray()`), we read pyarrow's (with
//! `dim_names` and `permutation`), and DuckDB and Polars query the Parquet files we write.
//! Without the peers the tests skip, except with `CI=true`, where they fail.

use std::path::Path;
use std::process::Command;

use bytes::Bytes;
use tensorcast_arrow::{
    batches_to_tensors, parsed_to_batch, read_bytes, tensors_to_batch, write_file, FileKind,
    ReadLimits,
};
use tensorcast_core::{DataType, Tensor};
use tensorcast_records::{parse_example, Parsed};
use tensorcast_testkit::peers::{python_interpreter, python_with, stdout_of};

use crate::files::{example_specs, examples, sample_batch, sample_tensors};

/// Runs `script` with the arguments; panics with its standard error when it fails.
fn run(script: &str, args: &[&Path]) -> String {
    stdout_of(
        Command::new(python_interpreter())
            .args(["-c", script])
            .args(args),
    )
}

fn numpy_dtype(d: DataType) -> &'static str {
    match d {
        DataType::HALF => "float16",
        DataType::FLOAT => "float32",
        DataType::DOUBLE => "float64",
        DataType::INT8 => "int8",
        DataType::INT16 => "int16",
        DataType::INT32 => "int32",
        DataType::INT64 => "int64",
        DataType::UINT8 => "uint8",
        DataType::UINT16 => "uint16",
        DataType::UINT32 => "uint32",
        DataType::UINT64 => "uint64",
        DataType::BOOL => "bool",
        _ => "object",
    }
}

const PYARROW_READS: &str = r#"
import json, sys
import numpy as np, pyarrow as pa, pyarrow.ipc as ipc, pyarrow.parquet as pq
d = sys.argv[1]
want = json.load(open(d + "/want.json"))
tables = {"parquet": pq.read_table(d + "/t.parquet"), "arrow": ipc.open_file(d + "/t.arrow").read_all()}
for kind, table in tables.items():
    assert table.num_rows == want["rows"], (kind, table.num_rows)
    for w in want["columns"]:
        col = table.column(w["name"]).combine_chunks()
        where = f"{kind}: {w['name']}"
        if len(w["shape"]) > 1:
            assert isinstance(col.type, pa.FixedShapeTensorType), (where, col.type)
            assert col.type.shape == w["shape"][1:], (where, col.type.shape)
            assert col.type.permutation is None and col.type.dim_names is None, where
            if w["dtype"] in ("object", "bool"):
                # pyarrow's to_numpy_ndarray takes fixed-width numbers only: bit-packed
                # booleans and binary come through the storage.
                got = np.array(col.storage.flatten().to_pylist(), dtype=w["dtype"]).reshape(w["shape"])
            else:
                got = col.to_numpy_ndarray()
        else:
            got = col.to_numpy(zero_copy_only=False)
        assert list(got.shape) == w["shape"], (where, got.shape)
        if w["dtype"] == "object":
            assert [bytes(x).hex() for x in got.reshape(-1)] == w["hex"], where
        else:
            assert str(got.dtype) == w["dtype"], (where, got.dtype)
            assert np.ascontiguousarray(got).tobytes().hex() == w["hex"], where
print("ok")
"#;

#[test]
fn pyarrow_reads_our_tensors_back_bit_exactly() {
    if python_with("pyarrow, numpy").is_none() {
        return;
    }
    let tensors = sample_tensors();
    let batch = sample_batch();
    let dir = tempfile::tempdir().unwrap();
    for (kind, name) in [
        (FileKind::Parquet, "t.parquet"),
        (FileKind::ArrowFile, "t.arrow"),
    ] {
        write_file(
            &dir.path().join(name),
            kind,
            batch.schema(),
            std::slice::from_ref(&batch),
        )
        .unwrap();
    }
    let columns: Vec<serde_json::Value> = tensors
        .iter()
        .map(|(n, t)| {
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            let hex = if t.dtype() == DataType::STRING {
                let s = t.as_slice::<tensorcast_core::TString>().unwrap();
                serde_json::json!(s.iter().map(|x| hex(x.as_bytes())).collect::<Vec<_>>())
            } else {
                serde_json::json!(hex(t.tensor_data().unwrap()))
            };
            serde_json::json!({
                "name": n,
                "dtype": numpy_dtype(t.dtype()),
                "shape": t.shape().dim_sizes(),
                "hex": hex,
            })
        })
        .collect();
    let want = serde_json::json!({"rows": 3, "columns": columns});
    std::fs::write(dir.path().join("want.json"), want.to_string()).unwrap();
    assert_eq!(run(PYARROW_READS, &[dir.path()]).trim(), "ok");
}

const PYARROW_WRITES: &str = r#"
import json, sys
import numpy as np, pyarrow as pa, pyarrow.ipc as ipc, pyarrow.parquet as pq
d = sys.argv[1]
# A permuted tensor type with dimension names: physical shape [2, 3], logical [3, 2].
t = pa.fixed_shape_tensor(pa.int32(), [2, 3], dim_names=["h", "w"], permutation=[1, 0])
storage = pa.array([list(range(6)), list(range(6, 12))], pa.list_(pa.int32(), 6))
perm = pa.ExtensionArray.from_storage(t, storage)
# from_numpy_ndarray of a transposed array (pyarrow picks the permutation itself).
b = np.arange(24, dtype=np.float64).reshape(2, 3, 4).transpose(0, 2, 1)
fromnp = pa.FixedShapeTensorArray.from_numpy_ndarray(b)
plain = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(8, dtype=np.float32).reshape(2, 2, 2) / 3)
explicit = pa.ExtensionArray.from_storage(pa.fixed_shape_tensor(pa.float32(), [2, 2]),
                                          pa.array([[1, 2, 3, 4], [5, 6, 7, 8]], pa.list_(pa.float32(), 4)))
table = pa.table({"perm": perm, "fromnp": fromnp, "plain": plain, "explicit": explicit, "label": pa.array([7, 8], pa.int64()),
                  "name": pa.array(["a", "bé"])})
pq.write_table(table, d + "/py.parquet")
with ipc.new_file(d + "/py.arrow", table.schema) as w:
    w.write_table(table)
want = {}
for name in ["perm", "fromnp", "plain", "explicit"]:
    a = table.column(name).combine_chunks().to_numpy_ndarray()
    want[name] = {"shape": list(a.shape), "hex": np.ascontiguousarray(a).tobytes().hex()}
json.dump(want, open(d + "/want.json", "w"))
print(json.dumps({"perm": str(perm.type), "fromnp": [fromnp.type.shape, fromnp.type.permutation]}))
"#;

#[test]
fn we_read_pyarrows_tensors_with_dim_names_and_permutation() {
    if python_with("pyarrow, numpy").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let info = run(PYARROW_WRITES, &[dir.path()]);
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("want.json")).unwrap())
            .unwrap();
    assert!(
        info.contains("[[3, 4], [1, 0]]"),
        "pyarrow chose another layout: {info}"
    );
    for name in ["py.parquet", "py.arrow"] {
        let bytes = Bytes::from(std::fs::read(dir.path().join(name)).unwrap());
        let (schema, batches) = read_bytes(bytes, &ReadLimits::default()).unwrap();
        // pyarrow's metadata, byte for byte what we would write for the same type.
        let f = schema.field_with_name("perm").unwrap();
        assert_eq!(
            f.metadata()["ARROW:extension:metadata"],
            r#"{"shape":[2,3],"permutation":[1,0],"dim_names":["h","w"]}"#,
            "{name}"
        );
        let tt = tensorcast_arrow::TensorType::of_field(f).unwrap().unwrap();
        assert_eq!(f.metadata()["ARROW:extension:metadata"], tt.metadata_json());
        let plain = schema.field_with_name("plain").unwrap();
        // from_numpy_ndarray writes the identity permutation; a type made without one has
        // exactly the metadata we write.
        assert_eq!(
            plain.metadata()["ARROW:extension:metadata"],
            r#"{"shape":[2,2],"permutation":[0,1]}"#
        );
        let explicit = schema.field_with_name("explicit").unwrap();
        let ours = tensorcast_arrow::TensorType::new(
            tensorcast_arrow::arrow_schema::DataType::Float32,
            vec![2, 2],
        );
        assert_eq!(
            explicit.metadata()["ARROW:extension:metadata"],
            ours.metadata_json()
        );
        let tensors = batches_to_tensors(&schema, &batches).unwrap();
        for (n, t) in &tensors {
            let Some(w) = want.get(n.as_str()) else {
                continue;
            };
            let shape: Vec<i64> = serde_json::from_value(w["shape"].clone()).unwrap();
            assert_eq!(t.shape().dim_sizes(), &shape[..], "{name}: {n}");
            let hex: String = t
                .tensor_data()
                .unwrap()
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            assert_eq!(hex, w["hex"].as_str().unwrap(), "{name}: {n}");
        }
        let label = &tensors.iter().find(|(n, _)| n == "label").unwrap().1;
        assert_eq!(label.as_slice::<i64>().unwrap(), &[7, 8]);
        let names = &tensors.iter().find(|(n, _)| n == "name").unwrap().1;
        assert_eq!(names.dtype(), DataType::STRING);
        assert_eq!(
            names.as_slice::<tensorcast_core::TString>().unwrap()[1].as_bytes(),
            "bé".as_bytes()
        );
    }
}

const QUERY: &str = r#"
import json, sys
import duckdb, polars as pl
path, want = sys.argv[1], json.loads(open(sys.argv[2]).read())
got = {}
r = duckdb.sql(f"SELECT count(*), sum(label), sum(len(tags)), sum(x[2]), sum(len(flatten(tok))), sum(len(tok)) FROM '{path}'").fetchall()[0]
got["duckdb"] = [int(r[0]), int(r[1]), int(r[2]), float(r[3]), int(r[4]), int(r[5])]
df = pl.read_parquet(path)
# Polars keeps the extension type (an Extension dtype over Array(Float32, 4)); its storage
# is the Array column.
assert "arrow.fixed_shape_tensor" in str(df.schema["x"]), df.schema["x"]
x = df["x"].ext.storage()
assert str(x.dtype) == "Array(Float32, shape=(4,))", x.dtype
got["polars"] = [df.height, int(df["label"].sum()), int(df["tags"].list.len().sum()),
                 float(x.arr.get(1).sum()), int(df["tok"].explode().list.len().sum()),
                 int(df["tok"].list.len().sum())]
tag = df["tags"][3].to_list()
assert tag == [b"t0", b"t1", b"t2"], tag
for k, v in got.items():
    assert v == want, (k, v, want)
print("ok")
"#;

#[test]
fn duckdb_and_polars_query_our_parquet() {
    if python_with("duckdb, polars").is_none() {
        return;
    }
    let n = 1000;
    let parsed = parse_example(&examples(n), None, &example_specs()).unwrap();
    let batch = parsed_to_batch(&parsed).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ex.parquet");
    write_file(&path, FileKind::Parquet, batch.schema(), &[batch]).unwrap();
    // What the queries must give, from the parsed tensors.
    let dense = |i: usize| match &parsed[i].1 {
        Parsed::Dense(t) => t.clone(),
        _ => panic!(),
    };
    let x: &Tensor = &dense(0);
    let x01: f64 = x
        .as_slice::<f32>()
        .unwrap()
        .chunks(4)
        .map(|r| f64::from(r[1]))
        .sum();
    let labels: i64 = dense(1).as_slice::<i64>().unwrap().iter().sum();
    let Parsed::Sparse { values, .. } = &parsed[2].1 else {
        panic!()
    };
    let Parsed::Ragged {
        flat_values,
        row_splits,
    } = &parsed[3].1
    else {
        panic!()
    };
    let inner_rows = row_splits[1].num_elements() - 1;
    let want = serde_json::json!([
        n,
        labels,
        values.num_elements(),
        x01,
        flat_values.num_elements(),
        inner_rows
    ]);
    let want_path = dir.path().join("want.json");
    std::fs::write(&want_path, want.to_string()).unwrap();
    assert_eq!(run(QUERY, &[&path, &want_path]).trim(), "ok");
}

const PYARROW_DUCKDB_ROW_GROUPS: &str = r#"
import sys
import numpy as np, pyarrow.parquet as pq, duckdb
p, out = sys.argv[1], sys.argv[2]
f = pq.ParquetFile(p)
t = f.read()
x = t.column("x").combine_chunks().to_numpy_ndarray()
open(out, "wb").write(np.ascontiguousarray(x).tobytes())
rows, total = duckdb.sql(f"select count(*), sum(label) from '{p}'").fetchall()[0]
print(f.metadata.num_row_groups, t.num_rows, int(t.column("label").to_numpy().sum()), rows, int(total))
"#;

/// A write large enough to be cut into row groups encoded on several cores: pyarrow reads the
/// tensors back bit-exactly and DuckDB sums the same labels.
#[test]
fn pyarrow_and_duckdb_read_our_parquet_encoded_in_parallel_row_groups() {
    if python_with("pyarrow, numpy, duckdb").is_none() {
        return;
    }
    let rows = 150_000i64;
    let x = Tensor::from_vec(
        (0..rows * 64).map(|i| (i % 9973) as f32 * 0.25).collect(),
        [rows, 64],
    )
    .unwrap();
    let labels: Vec<i64> = (0..rows).map(|i| i % 10).collect();
    let want_sum: i64 = labels.iter().sum();
    let y = Tensor::from_vec(labels, [rows]).unwrap();
    let batch = tensors_to_batch([("x", &x), ("label", &y)]).unwrap();
    // Batches of 1000 rows, as a streaming caller hands them over.
    let batches: Vec<_> = (0..rows as usize)
        .step_by(1000)
        .map(|at| batch.slice(at, 1000.min(rows as usize - at)))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    write_file(&path, FileKind::Parquet, batch.schema(), &batches).unwrap();
    let out = dir.path().join("x.bin");
    let got = run(PYARROW_DUCKDB_ROW_GROUPS, &[&path, &out]);
    let f: Vec<i64> = got.split_whitespace().map(|v| v.parse().unwrap()).collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= 2 && std::env::var_os("RAYON_NUM_THREADS").is_none() {
        assert_eq!(f[0], 2, "row groups ({got})");
    }
    assert_eq!(&f[1..], &[rows, want_sum, rows, want_sum], "{got}");
    assert!(std::fs::read(&out).unwrap() == x.tensor_data().unwrap());
    // And we read it back ourselves.
    let (schema, back) = read_bytes(
        Bytes::from(std::fs::read(&path).unwrap()),
        &ReadLimits::default(),
    )
    .unwrap();
    let t = batches_to_tensors(&schema, &back).unwrap();
    assert_eq!(t, vec![("x".to_string(), x), ("label".to_string(), y)]);
}

/// pyarrow writes one table (nulls, lists, strings, fixed-size binary, booleans, numbers) in
/// every encoding it has, data pages of version 1 and 2, Snappy and uncompressed, pages of
/// 2 KB (so delta streams span blocks and chunks many pages). The page checks before decoding
/// (value counts against the chunk, dictionary sizes, Snappy's expansion, the delta streams'
/// counts) refuse none of them, and every file reads to the same columns.
const PYARROW_WRITES_EVERY_ENCODING: &str = r#"
import sys, itertools
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
n = 5000
rng = np.random.default_rng(7)
ints = rng.integers(-1000, 1000, n).astype(np.int32)
valid = rng.random(n) > 0.1
words = [None if not v else ("w%d" % (i % 97)) * (1 + i % 5) for i, v in enumerate(valid)]
table = pa.table({
    "i32": pa.array(ints, mask=~valid),
    "i64": pa.array(np.cumsum(ints).astype(np.int64)),
    "f32": pa.array(rng.random(n).astype(np.float32)),
    "f64": pa.array(rng.random(n)),
    "s": pa.array(words, pa.string()),
    "b": pa.array([bytes([i % 256, 7, i % 13]) for i in range(n)], pa.binary(3)),
    "flag": pa.array(valid),
    "l": pa.array([list(range(i % 4)) if i % 7 else None for i in range(n)], pa.list_(pa.int32())),
})
kinds = ["plain", "dict", "delta", "delta_bytes", "split"]
for version, codec, kind in itertools.product(["1.0", "2.0"], ["snappy", "none"], kinds):
    kw = dict(data_page_version=version, compression=codec, data_page_size=2048,
              use_dictionary=kind == "dict")
    if kind.startswith("delta"):
        kw["column_encoding"] = {
            "i32": "DELTA_BINARY_PACKED", "i64": "DELTA_BINARY_PACKED", "b": "DELTA_BYTE_ARRAY",
            "s": "DELTA_LENGTH_BYTE_ARRAY" if kind == "delta" else "DELTA_BYTE_ARRAY"}
    elif kind == "split":
        kw["column_encoding"] = {c: "BYTE_STREAM_SPLIT" for c in ["i32", "f32", "f64", "b"]}
    pq.write_table(table, f"{d}/{version}_{codec}_{kind}.parquet", **kw)
print("ok")
"#;

#[test]
fn we_read_pyarrows_parquet_in_every_encoding_past_the_page_checks() {
    use tensorcast_arrow::arrow_array::RecordBatch;

    if python_with("pyarrow, numpy").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    run(PYARROW_WRITES_EVERY_ENCODING, &[dir.path()]);
    let mut first: Option<(String, RecordBatch)> = None;
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 20);
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let (schema, batches) =
            read_bytes(bytes, &ReadLimits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let all = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
        assert_eq!(all.num_rows(), 5000, "{name}");
        match &first {
            None => first = Some((name, all)),
            Some((first_name, want)) => assert!(
                all.columns() == want.columns(),
                "{name} reads to other columns than {first_name}"
            ),
        }
    }
}
