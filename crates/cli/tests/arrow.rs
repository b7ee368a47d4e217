//! The binary with Parquet and Arrow IPC files: Examples parsed with `--spec` written as one
//! row per Example (checked against the same parse written to npz), tensors to and from
//! `.parquet` / `.arrow` as fixed-shape tensor columns, and clear errors (rows that differ, a
//! corrupt file) that leave no file behind.

use tensorcast::prelude::TensorOps;

use crate::common::{ok, run_in, samples};
use tensorcast::io::{read_file, write_file, Format, NamedTensor};
use tensorcast::Tensor;
use tensorcast_arrow::arrow_schema::DataType as ArrowType;
use tensorcast_arrow::{read_bytes, FileKind, ReadLimits};

fn tensor<'a>(ts: &'a [NamedTensor], name: &str) -> &'a Tensor {
    &ts.iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .tensor
}

#[test]
fn examples_with_a_spec_become_parquet_and_arrow_rows() {
    let dir = crate::common::temp_dir("arrow-spec");
    let ex = samples().join("examples.tfrecord").display().to_string();
    let spec = samples().join("examples_spec.json").display().to_string();
    ok(&run_in(
        &dir,
        &["convert", &ex, "flat.npz", "--spec", &spec],
    ));
    let flat = read_file(&dir.join("flat.npz")).unwrap();
    for (out, kind) in [
        ("ex.parquet", FileKind::Parquet),
        ("ex.arrow", FileKind::ArrowFile),
    ] {
        ok(&run_in(&dir, &["convert", &ex, out, "--spec", &spec]));
        let bytes = std::fs::read(dir.join(out)).unwrap();
        assert_eq!(FileKind::detect(&bytes), Some(kind));
        let (schema, batches) = read_bytes(bytes.into(), &ReadLimits::default()).unwrap();
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(
            rows as i64,
            tensor(&flat, "x").shape().dim_sizes()[0],
            "{out}"
        );
        let x = schema.field_with_name("x").unwrap();
        assert_eq!(
            x.metadata()["ARROW:extension:name"],
            "arrow.fixed_shape_tensor"
        );
        assert_eq!(x.metadata()["ARROW:extension:metadata"], r#"{"shape":[4]}"#);
        assert_eq!(
            schema.field_with_name("label").unwrap().data_type(),
            &ArrowType::Int64
        );
        assert!(matches!(
            schema.field_with_name("tags").unwrap().data_type(),
            ArrowType::List(f) if f.data_type() == &ArrowType::Binary
        ));
        // Read back by the binary: the same tensors as the npz (dense as they are; the sparse
        // feature's values and the ragged feature's flat values).
        let back_name = format!("{out}.npz");
        ok(&run_in(&dir, &["convert", out, &back_name]));
        let back = read_file(&dir.join(&back_name)).unwrap();
        assert_eq!(tensor(&back, "x"), tensor(&flat, "x"), "{out}");
        assert_eq!(tensor(&back, "label"), tensor(&flat, "label"), "{out}");
        assert_eq!(
            tensor(&back, "tags.flat_values"),
            tensor(&flat, "tags.values"),
            "{out}"
        );
        assert_eq!(
            tensor(&back, "tok.flat_values"),
            tensor(&flat, "tok.flat_values"),
            "{out}"
        );
        let splits = tensor(&flat, "tok.row_splits.1")
            .cast(tensorcast::DataType::INT64)
            .unwrap();
        assert_eq!(tensor(&back, "tok.row_splits.1"), &splits, "{out}");
    }
}

#[test]
fn tensors_go_to_parquet_and_arrow_and_come_back() {
    let dir = crate::common::temp_dir("arrow-tensors");
    let x = Tensor::from_vec((0..12).map(|v| v as f32 * 0.5).collect(), [3i64, 2, 2]).unwrap();
    let y = Tensor::from_vec(vec![1i64, -2, 3], [3i64]).unwrap();
    let tensors = vec![NamedTensor::new("x", x), NamedTensor::new("y", y)];
    write_file(&dir.join("in.safetensors"), Format::Safetensors, &tensors).unwrap();
    let sorted = |mut v: Vec<NamedTensor>| {
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    };
    for out in ["t.parquet", "t.arrow", "t.feather", "t.arrows"] {
        ok(&run_in(&dir, &["convert", "in.safetensors", out]));
        ok(&run_in(&dir, &["convert", out, "back.npz"]));
        let back = sorted(read_file(&dir.join("back.npz")).unwrap());
        assert_eq!(back, tensors, "{out}");
    }
    // --format names the kind whatever the extension; --cast applies on the way.
    ok(&run_in(
        &dir,
        &[
            "convert",
            "in.safetensors",
            "t.bin",
            "--format",
            "parquet",
            "--cast",
            "f64",
        ],
    ));
    assert!(std::fs::read(dir.join("t.bin"))
        .unwrap()
        .starts_with(b"PAR1"));
    ok(&run_in(&dir, &["convert", "t.bin", "back.safetensors"]));
    let back = sorted(read_file(&dir.join("back.safetensors")).unwrap());
    assert_eq!(back[0].tensor.dtype(), tensorcast::DataType::DOUBLE);
    assert_eq!(
        back[1].tensor,
        tensors[1]
            .tensor
            .cast(tensorcast::DataType::DOUBLE)
            .unwrap()
    );
}

#[test]
fn tensors_that_do_not_fit_and_corrupt_files_are_clear_errors() {
    let dir = crate::common::temp_dir("arrow-errors");
    let tensors = vec![
        NamedTensor::new("a", Tensor::from_vec(vec![1f32, 2.0], [2i64]).unwrap()),
        NamedTensor::new("b", Tensor::from_vec(vec![1f32, 2.0, 3.0], [3i64]).unwrap()),
    ];
    write_file(&dir.join("in.npz"), Format::Npz, &tensors).unwrap();
    let o = run_in(&dir, &["convert", "in.npz", "out.parquet"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("'a' has 2 rows and 'b' has 3"), "{err}");
    assert!(!dir.join("out.parquet").exists());
    // A Parquet file cut in half, and one damaged in its footer.
    let one = vec![tensors[0].clone()];
    write_file(&dir.join("one.npz"), Format::Npz, &one).unwrap();
    ok(&run_in(&dir, &["convert", "one.npz", "one.parquet"]));
    let good = std::fs::read(dir.join("one.parquet")).unwrap();
    std::fs::write(dir.join("cut.parquet"), &good[..good.len() / 2]).unwrap();
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 12] ^= 0xff;
    bad[n - 20] ^= 0xff;
    std::fs::write(dir.join("bad.parquet"), &bad).unwrap();
    for f in ["cut.parquet", "bad.parquet"] {
        let o = run_in(&dir, &["convert", f, "x.npz"]);
        assert_eq!(o.status.code(), Some(2), "{f}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with(&format!("tensorcast: {f}: ")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
