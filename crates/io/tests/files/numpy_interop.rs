//! numpy reads what tensorcast writes, and tensorcast reads what numpy writes (fixtures are
//! generated at test time by python3; the tests skip, saying so, where numpy is missing).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use tensorcast_core::{DataType, Tensor};
use tensorcast_io::{npy, npz, read_file, write_file_with, Format, NamedTensor, WriteOptions};

use crate::common::{pattern, py_path, python, NUMPY_DTYPES};

fn dtype_of(numpy_name: &str) -> DataType {
    NUMPY_DTYPES
        .iter()
        .find(|(_, n)| *n == numpy_name)
        .map(|(d, _)| *d)
        .unwrap()
}

/// numpy writes, for every dtype: C order, big-endian, Fortran order (2-d and 3-d), format
/// versions 2.0 and 3.0, a scalar, an empty array, and npz (stored and deflated); with each
/// file, the raw little-endian C-order bytes and the shape it should read as.
const NUMPY_WRITES: &str = r#"
import json, os, sys, numpy as np
d = sys.argv[1] if len(sys.argv) > 1 else DIR
names = NAMES
manifest = {}
def arr(name, shape):
    n = int(np.prod(shape))
    if name == 'bool':
        a = (np.arange(n) % 3 == 1)
    elif name.startswith('complex'):
        a = (np.arange(n) * 1.5 - 3 + 1j * (np.arange(n) - 0.25)).astype(name)
    elif name.startswith('float'):
        a = (np.arange(n) * 0.75 - 2).astype(name)
    else:
        a = (np.arange(n) * 37 - 11).astype(name)
    return a.reshape(shape)
def record(fname, a, name):
    manifest[fname] = {'dtype': name, 'shape': list(a.shape),
                       'raw': np.ascontiguousarray(a).astype(a.dtype.newbyteorder('<')).tobytes().hex()}
npz_members = {}
for name in names:
    a = arr(name, (2, 3))
    np.save(os.path.join(d, name + '.npy'), a); record(name + '.npy', a, name)
    be = a.astype(a.dtype.newbyteorder('>'))
    np.save(os.path.join(d, 'be_' + name + '.npy'), be); record('be_' + name + '.npy', a, name)
    f = np.asfortranarray(a)
    np.save(os.path.join(d, 'f_' + name + '.npy'), f); record('f_' + name + '.npy', a, name)
    a3 = arr(name, (2, 3, 4))
    np.save(os.path.join(d, 'f3_' + name + '.npy'), np.asfortranarray(a3)); record('f3_' + name + '.npy', a3, name)
    for v in [(2, 0), (3, 0)]:
        fn = 'v%d_%s.npy' % (v[0], name)
        with open(os.path.join(d, fn), 'wb') as fh:
            np.lib.format.write_array(fh, a, version=v)
        record(fn, a, name)
    s = arr(name, ())
    np.save(os.path.join(d, 's_' + name + '.npy'), s); record('s_' + name + '.npy', s, name)
    e = arr(name, (0, 4))
    np.save(os.path.join(d, 'e_' + name + '.npy'), e); record('e_' + name + '.npy', e, name)
    npz_members[name] = arr(name, (3,))
np.savez(os.path.join(d, 'all.npz'), **npz_members)
np.savez_compressed(os.path.join(d, 'all_z.npz'), **npz_members)
manifest['npz'] = {k: {'dtype': k, 'shape': list(v.shape), 'raw': v.astype(v.dtype.newbyteorder('<')).tobytes().hex()} for k, v in npz_members.items()}
print(json.dumps(manifest))
"#;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn check(t: &Tensor, want: &Value, what: &str) {
    let dtype = dtype_of(want["dtype"].as_str().unwrap());
    let shape: Vec<i64> = want["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_i64().unwrap())
        .collect();
    assert_eq!(t.dtype(), dtype, "{what}");
    assert_eq!(t.shape().dim_sizes(), &shape[..], "{what}");
    assert_eq!(
        hex(t.tensor_data().unwrap()),
        want["raw"].as_str().unwrap(),
        "{what}"
    );
}

#[test]
fn tensorcast_reads_every_npy_and_npz_numpy_writes() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<&str> = NUMPY_DTYPES.iter().map(|(_, n)| *n).collect();
    let script = NUMPY_WRITES
        .replace("DIR", &py_path(dir.path()))
        .replace("NAMES", &format!("{names:?}"));
    let Some(out) = python(&["numpy"], &script) else {
        return;
    };
    let manifest: BTreeMap<String, Value> = serde_json::from_str(&out).unwrap();
    let mut files = 0;
    for (fname, want) in &manifest {
        if fname == "npz" {
            continue;
        }
        let ts = read_file(&dir.path().join(fname)).unwrap_or_else(|e| panic!("{fname}: {e}"));
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].name, fname.trim_end_matches(".npy"));
        check(&ts[0].tensor, want, fname);
        files += 1;
    }
    assert_eq!(files, 8 * NUMPY_DTYPES.len());
    for npz_name in ["all.npz", "all_z.npz"] {
        let ts = read_file(&dir.path().join(npz_name)).unwrap();
        assert_eq!(ts.len(), NUMPY_DTYPES.len());
        // Archive order is the order savez was given.
        for (t, (_, name)) in ts.iter().zip(NUMPY_DTYPES) {
            assert_eq!(&t.name, name);
            check(&t.tensor, &manifest["npz"][*name], npz_name);
        }
    }
}

#[test]
fn numpy_reads_what_tensorcast_writes_byte_identical_to_np_save() {
    let dir = tempfile::tempdir().unwrap();
    let shapes: &[&[i64]] = &[&[], &[0], &[7], &[2, 3], &[2, 1, 3], &[12345678901, 0]];
    let mut expect = BTreeMap::new();
    for &(dtype, name) in NUMPY_DTYPES {
        for (i, dims) in shapes.iter().enumerate() {
            let t = pattern(dtype, dims);
            let fname = format!("{name}_{i}.npy");
            std::fs::write(dir.path().join(&fname), npy::write(&t).unwrap()).unwrap();
            expect.insert(fname, (name, dims.to_vec(), hex(t.tensor_data().unwrap())));
        }
    }
    let script = format!(
        r#"
import io, os, numpy as np
d = {dir}
for f in sorted(os.listdir(d)):
    raw = open(os.path.join(d, f), 'rb').read()
    a = np.load(os.path.join(d, f))
    b = io.BytesIO(); np.save(b, a)
    print(f, a.dtype.name, list(a.shape), a.tobytes().hex(), b.getvalue() == raw)
"#,
        dir = py_path(dir.path())
    );
    let Some(out) = python(&["numpy"], &script) else {
        return;
    };
    let mut seen = 0;
    for line in out.lines() {
        let parts: Vec<&str> = line.splitn(2, ' ').collect();
        let (name, dims, raw) = &expect[parts[0]];
        let dims_s = format!("{dims:?}");
        let want = format!("{name} {dims_s} {raw} True");
        assert_eq!(parts[1], want, "{}", parts[0]);
        seen += 1;
    }
    assert_eq!(seen, expect.len());
}

#[test]
fn numpy_reads_npz_tensorcast_writes_stored_and_deflated() {
    let dir = tempfile::tempdir().unwrap();
    let tensors: Vec<NamedTensor> = NUMPY_DTYPES
        .iter()
        .map(|&(d, n)| NamedTensor::new(n, pattern(d, &[2, 5])))
        .collect();
    let mut want = String::new();
    for t in &tensors {
        want.push_str(&format!(
            "{} {} [2, 5] {}\n",
            t.name,
            t.name,
            hex(t.tensor.tensor_data().unwrap())
        ));
    }
    for (file, c) in [
        ("s.npz", npz::Compression::Stored),
        ("d.npz", npz::Compression::Deflated),
    ] {
        let path = dir.path().join(file);
        let opts = WriteOptions {
            npz_compression: c,
            ..Default::default()
        };
        write_file_with(&path, Format::Npz, &tensors, &opts).unwrap();
        let script = format!(
            r#"
import numpy as np
z = np.load({p})
for k in z.files:
    a = z[k]
    print(k, a.dtype.name, list(a.shape), a.tobytes().hex())
"#,
            p = py_path(&path)
        );
        let Some(out) = python(&["numpy"], &script) else {
            return;
        };
        assert_eq!(out, want, "{file}");
    }
}

#[test]
fn ml_dtypes_void_arrays_are_refused_with_their_descr() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bf.npy");
    let script = format!(
        "import numpy as np, ml_dtypes\nnp.save({}, np.array([1, 2], dtype=ml_dtypes.bfloat16))",
        py_path(&p)
    );
    if python(&["numpy", "ml_dtypes"], &script).is_none() {
        return;
    }
    let err = read_file(Path::new(&p)).unwrap_err();
    assert_eq!(err.to_string(), "unsupported dtype '<V2'");
}
