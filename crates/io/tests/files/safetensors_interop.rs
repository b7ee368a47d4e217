//! The reference safetensors implementation (Python package `safetensors`, with numpy and
//! ml_dtypes) reads what tensorcast writes and the other way round. Skipped, saying so, where
//! the packages are missing.

use std::collections::BTreeMap;

use serde_json::Value;
use tensorcast_core::DataType;
use tensorcast_io::{
    read_file_contents, safetensors, write_file_with, Format, NamedTensor, WriteOptions,
};

use crate::common::{pattern, py_path, python};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn tensorcast_reads_what_the_reference_writes_for_every_dtype() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ref.safetensors");
    let script = format!(
        r#"
import json, numpy as np, ml_dtypes
from safetensors.numpy import save_file
names = ['bool', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64',
         'float16', 'float32', 'float64', 'complex64', 'bfloat16', 'float8_e4m3fn',
         'float8_e5m2', 'float8_e4m3fnuz', 'float8_e5m2fnuz']
ts = {{}}
for i, n in enumerate(names):
    dt = getattr(ml_dtypes, n, None) or np.dtype(n)
    raw = (np.arange(6 * np.dtype(dt).itemsize) * 37 + 11).astype(np.uint8)
    if n == 'bool':
        raw = (np.arange(6) % 3 == 1).astype(np.uint8)
    ts['t.' + n] = raw.view(dt).reshape(2, 3)
save_file(ts, {path}, metadata={{'framework': 'np', 'n': str(len(names))}})
print(json.dumps({{k: [v.shape[0], v.shape[1], v.tobytes().hex()] for k, v in ts.items()}}))
"#,
        path = py_path(&path)
    );
    let Some(out) = python(&["numpy", "ml_dtypes", "safetensors"], &script) else {
        return;
    };
    let want: BTreeMap<String, Value> = serde_json::from_str(&out).unwrap();
    let c = read_file_contents(&path).unwrap();
    assert_eq!(c.format, Format::Safetensors);
    assert_eq!(c.metadata["framework"], "np");
    assert_eq!(c.tensors.len(), want.len());
    for t in &c.tensors {
        let w = &want[&t.name];
        assert_eq!(t.tensor.shape().dim_sizes(), &[2, 3], "{}", t.name);
        assert_eq!(
            hex(t.tensor.tensor_data().unwrap()),
            w[2].as_str().unwrap(),
            "{}",
            t.name
        );
        // The reference aligns every tensor: all are views of the map.
        assert_eq!(
            t.tensor.buffer().unwrap().owner_name(),
            "mmap",
            "{}",
            t.name
        );
    }
    let dt = |n: &str| {
        c.tensors
            .iter()
            .find(|t| t.name == n)
            .unwrap()
            .tensor
            .dtype()
    };
    assert_eq!(dt("t.bfloat16"), DataType::BFLOAT16);
    assert_eq!(dt("t.float8_e4m3fn"), DataType::FLOAT8_E4M3FN);
    assert_eq!(dt("t.float8_e5m2fnuz"), DataType::FLOAT8_E5M2FNUZ);
    assert_eq!(dt("t.complex64"), DataType::COMPLEX64);
}

#[test]
fn reference_reads_what_tensorcast_writes_for_every_dtype() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tc.safetensors");
    let mut tensors = Vec::new();
    let mut want = BTreeMap::new();
    for (name, dtype) in safetensors::DTYPES {
        let Some(dtype) = *dtype else { continue };
        let t = pattern(dtype, &[2, 4]);
        let data = if dtype == DataType::FLOAT4_E2M1FN {
            // Two per byte, low nibble first.
            t.tensor_data()
                .unwrap()
                .chunks(2)
                .map(|c| c[0] | (c[1] << 4))
                .collect::<Vec<u8>>()
        } else {
            t.tensor_data().unwrap().to_vec()
        };
        want.insert(format!("t.{name}"), format!("{name} [2, 4] {}", hex(&data)));
        tensors.push(NamedTensor::new(format!("t.{name}"), t));
    }
    let mut metadata = BTreeMap::new();
    metadata.insert("who".to_string(), "tensorcast".to_string());
    let opts = WriteOptions {
        metadata,
        ..Default::default()
    };
    write_file_with(&path, Format::Safetensors, &tensors, &opts).unwrap();
    let script = format!(
        r#"
from safetensors import deserialize, safe_open
raw = open({p}, 'rb').read()
for name, t in deserialize(raw):
    print(name, t['dtype'], t['shape'], bytes(t['data']).hex())
with safe_open({p}, framework='np') as f:
    print('metadata', f.metadata())
"#,
        p = py_path(&path)
    );
    let Some(out) = python(&["safetensors"], &script) else {
        return;
    };
    let mut lines = 0;
    for line in out.lines() {
        let (name, rest) = line.split_once(' ').unwrap();
        if name == "metadata" {
            assert_eq!(rest, "{'who': 'tensorcast'}");
        } else {
            assert_eq!(rest, want[name], "{name}");
        }
        lines += 1;
    }
    assert_eq!(lines, want.len() + 1);
}
