//! Tests of the checkpoint reader and writer on bundles made here (TensorFlow's own files are
//! replayed by the conformance runner, `tests/ops/checkpoint.rs`).

use std::path::Path;

use tensorcast_core::{bf16, f16, DataType, TString, Tensor, TensorShape};
use tensorcast_proto::tensor_slice_proto::Extent;
use tensorcast_proto::{
    shape_to_proto, BundleEntryProto, BundleHeaderProto, Message, TensorSliceProto, VersionDef,
};
use tensorcast_testkit::files::dir_entries;

use super::table::{mask, TableBuilder};
use super::*;
use crate::{ErrorKind, NamedTensor, ReadMode, ReadOptions};

fn modes() -> [ReadOptions; 2] {
    [
        ReadOptions::default(),
        ReadOptions {
            mode: ReadMode::Read,
            ..ReadOptions::default()
        },
    ]
}

fn header(num_shards: i32, endianness: i32) -> BundleHeaderProto {
    BundleHeaderProto {
        num_shards,
        endianness,
        version: Some(VersionDef {
            producer: 1,
            min_consumer: 0,
            bad_consumers: vec![],
        }),
    }
}

fn pod_entry(dtype: DataType, dims: &[i64], offset: i64, bytes: &[u8]) -> BundleEntryProto {
    BundleEntryProto {
        dtype: dtype.number(),
        shape: Some(shape_to_proto(&TensorShape::new(dims).unwrap())),
        shard_id: 0,
        offset,
        size: bytes.len() as i64,
        crc32c: mask(crc::crc32c(bytes)),
        slices: vec![],
    }
}

/// Writes a bundle with `entries` (sorted here) and the data shards given.
fn bundle(
    dir: &Path,
    header: &BundleHeaderProto,
    mut entries: Vec<(Vec<u8>, BundleEntryProto)>,
    shards: &[&[u8]],
) -> std::path::PathBuf {
    let prefix = dir.join("ckpt");
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut t = TableBuilder::new();
    t.add(b"", &header.encode_to_vec());
    for (k, e) in &entries {
        t.add(k, &e.encode_to_vec());
    }
    std::fs::write(dir.join("ckpt.index"), t.finish()).unwrap();
    for (i, s) in shards.iter().enumerate() {
        let name = data_file_name("ckpt", i as i32, shards.len() as i32);
        std::fs::write(dir.join(name), s).unwrap();
    }
    prefix
}

fn every_dtype() -> Vec<NamedTensor> {
    let mut v = vec![
        NamedTensor::new(
            "f32",
            Tensor::from_vec(vec![1.5f32, -2.0, 0.0, 7.25], [2i64, 2]).unwrap(),
        ),
        NamedTensor::new("f64", Tensor::vector(&[1e300f64, -0.5])),
        NamedTensor::new(
            "f16",
            Tensor::vector(&[f16::from_f32(0.5), f16::from_f32(-3.0)]),
        ),
        NamedTensor::new("bf16", Tensor::vector(&[bf16::from_f32(2.0)])),
        NamedTensor::new("i8", Tensor::vector(&[-1i8, 5])),
        NamedTensor::new("i64", Tensor::scalar_of(-7i64)),
        NamedTensor::new("u16", Tensor::vector(&[65535u16])),
        NamedTensor::new("bool", Tensor::vector(&[true, false, true])),
        NamedTensor::new(
            "c64",
            Tensor::vector(&[tensorcast_core::Complex32::new(1.0, -2.0)]),
        ),
        NamedTensor::new("empty", Tensor::new(DataType::FLOAT, [0i64, 3]).unwrap()),
        NamedTensor::new(
            "strings",
            Tensor::from_vec(
                vec![
                    TString::from(""),
                    TString::from(vec![0u8, 255, 10]),
                    TString::from("x".repeat(300)),
                ],
                [3i64],
            )
            .unwrap(),
        ),
        NamedTensor::new("string_scalar", Tensor::scalar_of(TString::from("hello"))),
        NamedTensor::new("no_strings", Tensor::new(DataType::STRING, [0i64]).unwrap()),
    ];
    for d in [
        DataType::QINT8,
        DataType::FLOAT8_E4M3FN,
        DataType::INT4,
        DataType::UINT32,
    ] {
        v.push(NamedTensor::new(d.name(), Tensor::new(d, [3i64]).unwrap()));
    }
    v
}

#[test]
fn written_checkpoints_read_back_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("model.ckpt");
    let ts = every_dtype();
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    assert_eq!(
        dir_entries(dir.path()),
        ["model.ckpt.data-00000-of-00001", "model.ckpt.index"]
    );
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        assert_eq!(c.entries().len(), ts.len());
        for nt in &ts {
            let e = c.entry(&nt.name).unwrap();
            assert_eq!(
                (e.dtype, &e.shape),
                (nt.tensor.dtype(), nt.tensor.shape()),
                "{}",
                nt.name
            );
            assert_eq!(c.read(&nt.name).unwrap(), nt.tensor, "{}", nt.name);
        }
        let all = c.read_all().unwrap();
        assert_eq!(all.len(), ts.len());
    }
    // In memory, the same bytes.
    let (index, data) = checkpoint_bytes(&ts, &CheckpointWriteOptions::default()).unwrap();
    assert_eq!(
        index,
        std::fs::read(dir.path().join("model.ckpt.index")).unwrap()
    );
    assert_eq!(
        data,
        std::fs::read(dir.path().join("model.ckpt.data-00000-of-00001")).unwrap()
    );
}

#[test]
fn mapped_reads_share_the_map_when_aligned() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let t = Tensor::vector(&[1.0f64, 2.0, 3.0]);
    write_checkpoint(
        &prefix,
        &[NamedTensor::new("a", t.clone())],
        &CheckpointWriteOptions::default(),
    )
    .unwrap();
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    let back = c.read("a").unwrap();
    assert_eq!(back, t);
    assert_eq!(back.buffer().unwrap().owner_name(), "mmap");
}

#[test]
fn a_failed_write_leaves_the_old_checkpoint_and_no_litter() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let old = vec![NamedTensor::new("a", Tensor::vector(&[1i32]))];
    write_checkpoint(&prefix, &old, &CheckpointWriteOptions::default()).unwrap();
    let listing = || dir_entries(dir.path());
    let before = listing();
    let dup = vec![
        NamedTensor::new("a", Tensor::vector(&[2i32])),
        NamedTensor::new("a", Tensor::vector(&[3i32])),
    ];
    let e = write_checkpoint(&prefix, &dup, &CheckpointWriteOptions::default()).unwrap_err();
    assert_eq!(e.to_string(), "Adding duplicate key: a");
    let res = Tensor::new(DataType::RESOURCE, [1i64]).unwrap();
    let e = write_checkpoint(
        &prefix,
        &[NamedTensor::new("r", res)],
        &CheckpointWriteOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(listing(), before);
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    assert_eq!(c.read("a").unwrap(), old[0].tensor);
}

#[test]
fn a_corrupted_tensor_is_tensorflows_error_unless_verification_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let t = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    write_checkpoint(
        &prefix,
        &[NamedTensor::new("a", t)],
        &CheckpointWriteOptions::default(),
    )
    .unwrap();
    let data = dir.path().join("ckpt.data-00000-of-00001");
    let mut b = std::fs::read(&data).unwrap();
    b[0] ^= 1;
    std::fs::write(&data, b).unwrap();
    let mut c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    let e = c.read("a").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "TensorBundle at {} shard 0 (12 bytes): Checksum does not match: stored 944629635 vs. \
             calculated on the restored bytes 154940339",
            prefix.display()
        )
    );
    c.set_verify_checksums(false);
    assert_eq!(c.read("a").unwrap().as_slice::<f32>().unwrap()[1], 2.0);
}

#[test]
fn big_endian_bundles_are_byte_swapped() {
    let dir = tempfile::tempdir().unwrap();
    let be: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    let c64: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_be_bytes()).collect();
    let mut data = be.clone();
    data.extend_from_slice(&c64);
    let entries = vec![
        (b"a".to_vec(), pod_entry(DataType::FLOAT, &[2], 0, &be)),
        (b"c".to_vec(), pod_entry(DataType::COMPLEX64, &[1], 8, &c64)),
    ];
    let prefix = bundle(dir.path(), &header(1, 1), entries, &[&data]);
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        assert_eq!(
            c.read("a").unwrap().as_slice::<f32>().unwrap(),
            &[1.5, -2.0]
        );
        let z = c.read("c").unwrap();
        assert_eq!(
            z.as_slice::<tensorcast_core::Complex32>().unwrap()[0],
            tensorcast_core::Complex32::new(1.0, 2.0)
        );
    }
}

#[test]
fn hostile_entries_are_errors_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    let data = [0u8; 16];
    let mut tera = pod_entry(DataType::FLOAT, &[1 << 38], 0, &data);
    tera.size = 4 << 38;
    let mut strings = pod_entry(DataType::STRING, &[1 << 40], 0, &data);
    strings.size = 16;
    let mut shard = pod_entry(DataType::INT8, &[4], 0, &data[..4]);
    shard.shard_id = 7;
    let mut negative = pod_entry(DataType::INT8, &[4], -4, &data[..4]);
    negative.offset = -4;
    let mut wrong_size = pod_entry(DataType::INT32, &[4], 0, &data[..4]);
    wrong_size.size = 4;
    let entries = vec![
        (b"tera".to_vec(), tera),
        (b"strings".to_vec(), strings),
        (b"shard".to_vec(), shard),
        (b"negative".to_vec(), negative),
        (b"wrong_size".to_vec(), wrong_size),
    ];
    let prefix = bundle(dir.path(), &header(1, 0), entries, &[&data]);
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        assert_eq!(c.entry("tera").unwrap().shape.num_elements(), 1 << 38);
        assert_eq!(
            c.read("tera").unwrap_err().to_string(),
            format!(
                "{}.data-00000-of-00001: Read less bytes than requested",
                prefix.display()
            )
        );
        assert_eq!(c.read("strings").unwrap_err().kind(), ErrorKind::Corrupt);
        assert!(c.read("shard").unwrap_err().to_string().contains("shard 7"));
        assert!(c.read("negative").is_err());
        assert_eq!(
            c.read("wrong_size").unwrap_err().to_string(),
            "Invalid size in bundle entry: key wrong_size; stored size 4; expected size 16"
        );
        assert_eq!(
            c.read("absent").unwrap_err().to_string(),
            "Key absent not found in checkpoint"
        );
    }
}

/// A slice's extents (start, length or whole) and its values.
type Part<'a> = (&'a [(i64, Option<i64>)], Vec<f32>);

fn sliced(dims: &[i64], parts: &[Part<'_>]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut data = Vec::new();
    let mut full = BundleEntryProto {
        dtype: DataType::FLOAT.number(),
        shape: Some(shape_to_proto(&TensorShape::new(dims).unwrap())),
        ..Default::default()
    };
    let mut entries = Vec::new();
    for (ext, vals) in parts {
        let slice = TensorSliceProto {
            extent: ext
                .iter()
                .map(|&(start, length)| Extent { start, length })
                .collect(),
        };
        let sdims: Vec<i64> = ext
            .iter()
            .zip(dims)
            .map(|(&(_, l), &d)| l.unwrap_or(d))
            .collect();
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        entries.push((
            slices::slice_key(b"p", &slice),
            pod_entry(DataType::FLOAT, &sdims, data.len() as i64, &bytes),
        ));
        data.extend_from_slice(&bytes);
        full.slices.push(slice);
    }
    entries.push((b"p".to_vec(), full));
    let prefix = bundle(dir.path(), &header(1, 0), entries, &[&data]);
    (dir, prefix)
}

#[test]
fn partitioned_tensors_are_reassembled() {
    let (_d, prefix) = sliced(
        &[2, 3],
        &[
            (&[(0, None), (2, Some(1))], vec![2.0, 5.0]),
            (&[(0, None), (0, Some(2))], vec![0.0, 1.0, 3.0, 4.0]),
        ],
    );
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        assert_eq!(c.keys().collect::<Vec<_>>(), ["p"]);
        let t = c.read("p").unwrap();
        assert_eq!(t.shape().dim_sizes(), &[2, 3]);
        assert_eq!(
            t.as_slice::<f32>().unwrap(),
            &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
        // inspect_checkpoint lists the slices, not the full tensor.
        assert_eq!(c.debug_string().split(|&b| b == b'\n').count(), 3);
    }
}

#[test]
fn slices_that_do_not_tile_are_errors() {
    // A gap: 4 of 6 elements.
    let (_d, prefix) = sliced(&[2, 3], &[(&[(0, None), (0, Some(2))], vec![0.0; 4])]);
    let e = Checkpoint::open(&prefix, &ReadOptions::default())
        .unwrap()
        .read("p")
        .unwrap_err();
    assert!(e.to_string().contains("do not tile"), "{e}");
    // Overlap with a gap elsewhere: the counts add up, the elements do not.
    let (_d, prefix) = sliced(
        &[1, 4],
        &[
            (&[(0, None), (0, Some(2))], vec![0.0; 2]),
            (&[(0, None), (1, Some(2))], vec![0.0; 2]),
        ],
    );
    let e = Checkpoint::open(&prefix, &ReadOptions::default())
        .unwrap()
        .read("p")
        .unwrap_err();
    assert!(e.to_string().contains("overlap"), "{e}");
    // Outside the shape.
    let (_d, prefix) = sliced(&[1, 4], &[(&[(0, None), (3, Some(4))], vec![0.0; 4])]);
    let e = Checkpoint::open(&prefix, &ReadOptions::default())
        .unwrap()
        .read("p")
        .unwrap_err();
    assert!(e.to_string().contains("outside"), "{e}");
}

#[test]
fn versions_are_checked_with_tensorflows_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut h = header(1, 0);
    h.version.as_mut().unwrap().min_consumer = 2;
    let prefix = bundle(dir.path(), &h, vec![], &[b""]);
    assert_eq!(
        Checkpoint::open(&prefix, &ReadOptions::default()).unwrap_err().to_string(),
        "Checkpoint min consumer version 2 above current version 1 for TensorFlow 2.21.0.  Please upgrade TensorFlow."
    );
    let mut h = header(1, 0);
    h.version.as_mut().unwrap().bad_consumers = vec![1];
    let prefix = bundle(dir.path(), &h, vec![], &[b""]);
    assert_eq!(
        Checkpoint::open(&prefix, &ReadOptions::default()).unwrap_err().to_string(),
        "Checkpoint disallows consumer version 1.  Please upgrade TensorFlow: this version is likely buggy."
    );
    let mut h = header(1, 0);
    h.version.as_mut().unwrap().producer = -1;
    let prefix = bundle(dir.path(), &h, vec![], &[b""]);
    assert!(Checkpoint::open(&prefix, &ReadOptions::default())
        .unwrap_err()
        .to_string()
        .starts_with("Checkpoint producer version -1 below min producer 0"));
}

#[test]
fn a_directory_opens_its_latest_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let t = NamedTensor::new("x", Tensor::vector(&[4u8]));
    write_checkpoint(
        &dir.path().join("ckpt-2"),
        std::slice::from_ref(&t),
        &CheckpointWriteOptions::default(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("checkpoint"),
        "model_checkpoint_path: \"ckpt-2\"\nall_model_checkpoint_paths: \"ckpt-2\"\n",
    )
    .unwrap();
    let c = Checkpoint::open(dir.path(), &ReadOptions::default()).unwrap();
    assert_eq!(c.prefix(), dir.path().join("ckpt-2"));
    assert_eq!(c.read("x").unwrap(), t.tensor);
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        Checkpoint::open(empty.path(), &ReadOptions::default())
            .unwrap_err()
            .kind(),
        ErrorKind::Io
    );
}

#[test]
fn a_shard_truncated_while_read_is_an_error_naming_it_and_a_replaced_one_reads_consistently() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let shard = dir.path().join("ckpt.data-00000-of-00001");
    let a = Tensor::vector(&[1.0f32; 64]);
    let b = Tensor::vector(&[2.0f32; 300_000]);
    let ts = [
        NamedTensor::new("a", a.clone()),
        NamedTensor::new("b", b.clone()),
    ];
    let short = format!("{}: Read less bytes than requested", shard.display());
    let opts = ReadOptions {
        mode: ReadMode::Read,
        ..ReadOptions::default()
    };
    // Missing when first read: TensorFlow's text.
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    let c = Checkpoint::open(&prefix, &opts).unwrap();
    std::fs::rename(&shard, dir.path().join("aside")).unwrap();
    assert_eq!(
        c.read("a").unwrap_err().to_string(),
        format!("{}; No such file or directory", shard.display())
    );
    // Truncated in place after the index was read (and after a first tensor came from it):
    // the next read is short, and the error names the shard.
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    let c = Checkpoint::open(&prefix, &opts).unwrap();
    assert_eq!(c.read("a").unwrap(), a);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&shard)
        .unwrap()
        .set_len(100)
        .unwrap();
    for key in ["a", "b"] {
        let e = c.read(key).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(e.to_string(), short);
        let e = c.stream_bytes(key, &mut Vec::new()).unwrap_err();
        assert_eq!(e.to_string(), short);
    }
    // Replaced by rename (as TensorFlow replaces checkpoints) while open: every tensor comes
    // from the file the checkpoint opened, so the read is consistent.
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    let c = Checkpoint::open(&prefix, &opts).unwrap();
    assert_eq!(c.read("a").unwrap(), a);
    let other = [
        NamedTensor::new("a", Tensor::vector(&[5.0f32; 64])),
        NamedTensor::new("b", Tensor::vector(&[6.0f32; 300_000])),
    ];
    write_checkpoint(&prefix, &other, &CheckpointWriteOptions::default()).unwrap();
    assert_eq!(c.read("b").unwrap(), b);
    let mut out = Vec::new();
    c.stream_bytes("b", &mut out).unwrap();
    assert_eq!(out, b.tensor_data().unwrap());
}

#[test]
fn streamed_bytes_equal_the_tensor_and_a_corrupted_one_is_tensorflows_error() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let big: Vec<f64> = (0..100_000).map(f64::from).collect();
    let ts = [
        NamedTensor::new("big", Tensor::vector(&big)),
        NamedTensor::new("s", Tensor::vector(&[TString::from("x")])),
        NamedTensor::new("z", Tensor::from_vec(Vec::<i8>::new(), [0i64]).unwrap()),
    ];
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        let mut out = Vec::new();
        assert_eq!(c.stream_bytes("big", &mut out).unwrap(), 800_000);
        assert_eq!(out, ts[0].tensor.tensor_data().unwrap());
        assert!(!c.is_streamable("s"));
        assert_eq!(
            c.stream_bytes("s", &mut out).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
        assert_eq!(c.stream_bytes("z", &mut Vec::new()).unwrap(), 0);
    }
    // Flip one byte in the middle of `big`: the same error as `read`.
    let shard = dir.path().join("ckpt.data-00000-of-00001");
    let mut data = std::fs::read(&shard).unwrap();
    data[400_001] ^= 1;
    std::fs::write(&shard, &data).unwrap();
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        let want = c.read("big").unwrap_err().to_string();
        assert!(want.contains("Checksum does not match"), "{want}");
        let got = c.stream_bytes("big", &mut Vec::new()).unwrap_err();
        assert_eq!(got.to_string(), want);
    }
}

#[test]
fn written_slices_reassemble_and_bad_slices_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let full = TensorShape::new(&[2, 3]).unwrap();
    let part = |start: i64, len: i64, vals: &[i32]| BundleItem::Slice {
        name: "p".into(),
        full_shape: full.clone(),
        slice: TensorSliceProto {
            extent: vec![
                Extent {
                    start,
                    length: Some(len),
                },
                Extent {
                    start: 0,
                    length: None,
                },
            ],
        },
        tensor: Tensor::from_vec(vals.to_vec(), [len, 3]).unwrap(),
    };
    let items = vec![
        part(1, 1, &[3, 4, 5]),
        BundleItem::Tensor(NamedTensor::new("q", Tensor::vector(&[9i64]))),
        part(0, 1, &[0, 1, 2]),
    ];
    write_bundle(&prefix, &items, &CheckpointWriteOptions::default()).unwrap();
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    assert_eq!(c.keys().collect::<Vec<_>>(), ["p", "q"]);
    assert_eq!(
        c.read("p").unwrap().as_slice::<i32>().unwrap(),
        &[0, 1, 2, 3, 4, 5]
    );
    assert_eq!(c.slices("p").unwrap().len(), 2);
    // Slices keep the order given, in the data file too.
    let first = c.slice_entry("p", &c.slices("p").unwrap()[0]).unwrap();
    assert_eq!((first.offset, first.shape.dim_sizes()), (0, &[1i64, 3][..]));
    // A name both whole and sliced, and a slice whose tensor is not its extents' shape.
    let mut bad = items.clone();
    bad.push(BundleItem::Tensor(NamedTensor::new(
        "p",
        Tensor::vector(&[1i32]),
    )));
    assert!(bundle_bytes(&bad, &CheckpointWriteOptions::default())
        .unwrap_err()
        .to_string()
        .starts_with("Adding duplicate key"));
    let mut wrong = part(0, 1, &[0, 1, 2]);
    if let BundleItem::Slice { tensor, .. } = &mut wrong {
        *tensor = Tensor::vector(&[0i32, 1, 2]);
    }
    let wrong = vec![wrong];
    assert!(bundle_bytes(&wrong, &CheckpointWriteOptions::default()).is_err());
}

#[test]
fn sharded_bundles_read_back_with_slices_across_shards() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let full = TensorShape::new(&[3, 2]).unwrap();
    let row = |r: i64, vals: [f64; 2]| BundleItem::Slice {
        name: "w".into(),
        full_shape: full.clone(),
        slice: TensorSliceProto {
            extent: vec![
                Extent {
                    start: r,
                    length: Some(1),
                },
                Extent {
                    start: 0,
                    length: None,
                },
            ],
        },
        tensor: Tensor::from_vec(vals.to_vec(), [1i64, 2]).unwrap(),
    };
    let shards = vec![
        vec![
            row(2, [4.0, 5.0]),
            BundleItem::Tensor(NamedTensor::new("b", Tensor::vector(&[1u8]))),
        ],
        vec![],
        vec![row(0, [0.0, 1.0]), row(1, [2.0, 3.0])],
    ];
    write_sharded_bundle(&prefix, &shards, &CheckpointWriteOptions::default()).unwrap();
    for i in 0..3 {
        assert!(dir.path().join(data_file_name("ckpt", i, 3)).is_file());
    }
    for opts in modes() {
        let c = Checkpoint::open(&prefix, &opts).unwrap();
        assert_eq!(c.num_shards(), 3);
        assert_eq!(
            c.read("w").unwrap().as_slice::<f64>().unwrap(),
            &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
        );
        assert_eq!(c.read("b").unwrap().as_slice::<u8>().unwrap(), &[1]);
        // The slices are listed shard by shard.
        let s = c.slices("w").unwrap();
        let shard_of = |sl| c.slice_entry("w", sl).unwrap().shard_id;
        assert_eq!(s.iter().map(shard_of).collect::<Vec<_>>(), [0, 2, 2]);
    }
    // A name stored whole in two shards is a duplicate.
    let dup = vec![
        vec![BundleItem::Tensor(NamedTensor::new(
            "b",
            Tensor::vector(&[1u8]),
        ))],
        vec![BundleItem::Tensor(NamedTensor::new(
            "b",
            Tensor::vector(&[2u8]),
        ))],
    ];
    assert!(sharded_bundle_bytes(&dup, &CheckpointWriteOptions::default()).is_err());
}

#[test]
fn a_checkpoint_can_be_shared_across_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Checkpoint>();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let ts: Vec<NamedTensor> = (0..8)
        .map(|i| NamedTensor::new(format!("v{i}"), Tensor::vector(&[i as f32; 100])))
        .collect();
    write_checkpoint(&prefix, &ts, &CheckpointWriteOptions::default()).unwrap();
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    std::thread::scope(|s| {
        for nt in &ts {
            let c = &c;
            s.spawn(move || assert_eq!(c.read(&nt.name).unwrap(), nt.tensor));
        }
    });
}

#[test]
fn a_variant_claiming_a_huge_nested_tensor_is_refused() {
    use tensorcast_proto::{DataType as PD, TensorProto, VariantTensorDataProto};
    let mut nested = TensorProto {
        tensor_shape: Some(shape_to_proto(&TensorShape::new(&[1 << 32]).unwrap())),
        ..Default::default()
    };
    nested.set_dtype(PD::DtFloat);
    let body = VariantTensorDataProto {
        type_name: "tensorflow::Tensor".into(),
        metadata: Default::default(),
        tensors: vec![nested],
    }
    .encode_to_vec();
    let mut data = Vec::new();
    super::table::put_varint(&mut data, body.len() as u64);
    let mut crc = crc::crc32c(&(body.len() as u64).to_le_bytes());
    crc = crc::crc32c_append(crc, &body);
    data.extend_from_slice(&body);
    data.extend_from_slice(&mask(crc).to_le_bytes());
    crc = crc::crc32c_append(crc, &mask(crc).to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let mut e = pod_entry(DataType::VARIANT, &[], 0, &data);
    e.crc32c = mask(crc);
    let prefix = bundle(
        dir.path(),
        &header(1, 0),
        vec![(b"v".to_vec(), e)],
        &[&data],
    );
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    let err = c.read("v").unwrap_err();
    assert!(err.to_string().starts_with("variant element 0:"), "{err}");
    assert!(err.to_string().contains("more than the limit"), "{err}");
}

#[test]
fn streamed_writes_equal_whole_writes_and_refuse_a_source_unlike_its_plan() {
    use crate::safetensors::PlannedTensor;
    let dir = tempfile::tempdir().unwrap();
    let kernel = "model/k/.ATTRIBUTES/VARIABLE_VALUE";
    let ts = vec![
        NamedTensor::new(
            kernel,
            Tensor::from_vec((0..600_000).map(|i| i as f32).collect(), [600i64, 1000]).unwrap(),
        ),
        NamedTensor::new(
            "names",
            Tensor::vector(&[TString::from("a"), TString::from("bcd")]),
        ),
        NamedTensor::new("b", Tensor::vector(&[1u8, 2, 3])),
    ];
    let options = CheckpointWriteOptions {
        object_graph: Some(ObjectGraph::from_keys([kernel])),
        ..CheckpointWriteOptions::default()
    };
    let planned: Vec<PlannedTensor> = ts.iter().map(PlannedTensor::of).collect();
    let prefix = dir.path().join("s");
    write_checkpoint_streamed(&prefix, &planned, &options, &mut |i, out| {
        let t = &ts[i].tensor;
        if t.dtype() == DataType::STRING {
            return Ok(Some(t.clone()));
        }
        // Copied in odd pieces, as a reader of another file would.
        for piece in t.tensor_data()?.chunks(100_003) {
            out.write_all(piece).unwrap();
        }
        Ok(None)
    })
    .unwrap();
    let (index, data) = checkpoint_bytes(&ts, &options).unwrap();
    assert_eq!(std::fs::read(dir.path().join("s.index")).unwrap(), index);
    assert_eq!(
        std::fs::read(dir.path().join("s.data-00000-of-00001")).unwrap(),
        data
    );
    // A source that copies too few bytes, or a string's bytes: refused, nothing left behind.
    let bad = dir.path().join("bad");
    for plan in [&planned[2..], &planned[1..2]] {
        let e = write_checkpoint_streamed(&bad, plan, &options, &mut |_, out| {
            out.write_all(&[1, 2]).unwrap();
            Ok(None)
        })
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Corrupt, "{e}");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("bad"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// Every tensor of the checkpoint at `prefix`, read (each checksum verified), by key.
fn read_back(prefix: &Path) -> std::result::Result<Vec<(String, Tensor)>, crate::IoError> {
    let c = Checkpoint::open(prefix, &ReadOptions::default())?;
    c.read_all()
        .map(|v| v.into_iter().map(|nt| (nt.name, nt.tensor)).collect())
}

fn by_key(ts: &[NamedTensor]) -> Vec<(String, Tensor)> {
    let mut v: Vec<(String, Tensor)> = ts
        .iter()
        .map(|nt| (nt.name.clone(), nt.tensor.clone()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn checkpoint_overwrite_killed_between_steps_keeps_a_readable_checkpoint() {
    use super::commit::{Step, STOP_AFTER};
    // The old and the new checkpoint differ in every byte of their data and in their keys,
    // so a mix of the two cannot read.
    let old = vec![
        NamedTensor::new("a", Tensor::vector(&[1.0f32, 2.0, 3.0])),
        NamedTensor::new("s", Tensor::vector(&[TString::from("old")])),
    ];
    let new = vec![
        NamedTensor::new("b", Tensor::vector(&[7i64, 8])),
        NamedTensor::new("a", Tensor::vector(&[-4.0f32, 5.5, 6.0, 0.25])),
    ];
    let opts = CheckpointWriteOptions::default();
    for (step, expect_new) in [
        (Step::Staged, false),
        (Step::StagedIndex, true),
        (Step::ShardsInPlace, true),
        (Step::IndexInPlace, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("ckpt");
        write_checkpoint(&prefix, &old, &opts).unwrap();
        STOP_AFTER.with(|s| s.set(Some(step)));
        let r = write_checkpoint(&prefix, &new, &opts);
        STOP_AFTER.with(|s| s.set(None));
        assert!(r.is_err(), "{step:?}: the hook stops the write");
        // What a reader finds at that instant: one whole checkpoint.
        let want = by_key(if expect_new { &new } else { &old });
        assert_eq!(read_back(&prefix).unwrap(), want, "{step:?}");
        // The next write completes and leaves the two files only.
        write_checkpoint(&prefix, &new, &opts).unwrap();
        assert_eq!(read_back(&prefix).unwrap(), by_key(&new), "{step:?}");
        assert_eq!(
            dir_entries(dir.path()),
            ["ckpt.data-00000-of-00001", "ckpt.index"],
            "{step:?}"
        );
        // Byte for byte the checkpoint written from scratch.
        let (index, data) = checkpoint_bytes(&new, &opts).unwrap();
        assert_eq!(std::fs::read(dir.path().join("ckpt.index")).unwrap(), index);
        assert_eq!(
            std::fs::read(dir.path().join("ckpt.data-00000-of-00001")).unwrap(),
            data
        );
    }
}

#[test]
fn checkpoint_overwrite_of_a_sharded_bundle_killed_between_steps_keeps_a_readable_checkpoint() {
    use super::commit::{Step, STOP_AFTER};
    let items = |base: i32| {
        vec![
            vec![BundleItem::Tensor(NamedTensor::new(
                "x",
                Tensor::vector(&[base, base + 1]),
            ))],
            vec![BundleItem::Tensor(NamedTensor::new(
                "y",
                Tensor::vector(&[base as f64 * 0.5; 3]),
            ))],
        ]
    };
    let flat = |shards: &[Vec<BundleItem>]| {
        let mut v: Vec<(String, Tensor)> = shards
            .iter()
            .flatten()
            .map(|i| match i {
                BundleItem::Tensor(nt) => (nt.name.clone(), nt.tensor.clone()),
                BundleItem::Slice { .. } => unreachable!(),
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let opts = CheckpointWriteOptions::default();
    for step in [
        Step::Staged,
        Step::StagedIndex,
        Step::ShardsInPlace,
        Step::IndexInPlace,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("ckpt");
        write_sharded_bundle(&prefix, &items(1), &opts).unwrap();
        STOP_AFTER.with(|s| s.set(Some(step)));
        let r = write_sharded_bundle(&prefix, &items(100), &opts);
        STOP_AFTER.with(|s| s.set(None));
        assert!(r.is_err());
        let got = read_back(&prefix).unwrap();
        let want = if step == Step::Staged {
            items(1)
        } else {
            items(100)
        };
        assert_eq!(got, flat(&want), "{step:?}");
        write_sharded_bundle(&prefix, &items(100), &opts).unwrap();
        assert_eq!(
            dir_entries(dir.path()),
            [
                "ckpt.data-00000-of-00002",
                "ckpt.data-00001-of-00002",
                "ckpt.index"
            ],
            "{step:?}"
        );
        assert_eq!(read_back(&prefix).unwrap(), flat(&items(100)));
    }
}

#[test]
fn checkpoint_data_symlink_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let opts = CheckpointWriteOptions::default();
    let old = vec![NamedTensor::new("a", Tensor::vector(&[1u8, 2, 3]))];
    let new = vec![NamedTensor::new("a", Tensor::vector(&[9u16, 8]))];
    // The data file and the index are links to files in another directory.
    let data = elsewhere.path().join("real.data");
    let index = elsewhere.path().join("real.index");
    for fresh in [true, false] {
        if fresh {
            // Links to files that do not exist yet.
            std::os::unix::fs::symlink(&data, dir.path().join("ckpt.data-00000-of-00001")).unwrap();
            std::os::unix::fs::symlink(&index, dir.path().join("ckpt.index")).unwrap();
            write_checkpoint(&prefix, &old, &opts).unwrap();
        } else {
            // Overwritten in place, through the links.
            write_checkpoint(&prefix, &new, &opts).unwrap();
        }
        let want = if fresh { &old } else { &new };
        for link in ["ckpt.data-00000-of-00001", "ckpt.index"] {
            let m = std::fs::symlink_metadata(dir.path().join(link)).unwrap();
            assert!(m.file_type().is_symlink(), "{link} is still a link");
        }
        let (want_index, want_data) = checkpoint_bytes(want, &opts).unwrap();
        assert_eq!(std::fs::read(&data).unwrap(), want_data);
        assert_eq!(std::fs::read(&index).unwrap(), want_index);
        assert_eq!(read_back(&prefix).unwrap(), by_key(want));
        assert_eq!(
            dir_entries(dir.path()),
            ["ckpt.data-00000-of-00001", "ckpt.index"]
        );
        assert_eq!(dir_entries(elsewhere.path()), ["real.data", "real.index"]);
    }
}

#[test]
fn checkpoint_output_keeps_a_replaced_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    let opts = CheckpointWriteOptions::default();
    let ts = vec![NamedTensor::new("a", Tensor::vector(&[1u8]))];
    write_checkpoint(&prefix, &ts, &opts).unwrap();
    let data = dir.path().join("ckpt.data-00000-of-00001");
    let index = dir.path().join("ckpt.index");
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::set_permissions(&index, std::fs::Permissions::from_mode(0o604)).unwrap();
    write_checkpoint(&prefix, &ts, &opts).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&data), mode(&index)), (0o640, 0o604));
}

#[test]
fn checkpoint_rewrite_with_empty_tensor_is_byte_identical() {
    // TensorFlow's order: "m", then the empty "e" (offset 8, no bytes), then "b" at offset 8
    // too, then a partitioned "p" whose slices were added bottom row first, with an empty
    // string tensor between them.
    let full = TensorShape::new(&[2, 2]).unwrap();
    let row = |r: i64, v: [f32; 2]| BundleItem::Slice {
        name: "p".into(),
        full_shape: full.clone(),
        slice: TensorSliceProto {
            extent: vec![
                Extent {
                    start: r,
                    length: Some(1),
                },
                Extent {
                    start: 0,
                    length: None,
                },
            ],
        },
        tensor: Tensor::from_vec(v.to_vec(), [1i64, 2]).unwrap(),
    };
    let t = |name: &str, tensor: Tensor| BundleItem::Tensor(NamedTensor::new(name, tensor));
    let items = vec![
        t("m", Tensor::vector(&[1.0f64])),
        t("e", Tensor::new(DataType::FLOAT, [0i64, 3]).unwrap()),
        t("b", Tensor::vector(&[5i32, 6])),
        row(1, [3.0, 4.0]),
        t("z", Tensor::new(DataType::INT64, [0i64]).unwrap()),
        t("d", Tensor::new(DataType::INT8, [2i64, 0]).unwrap()),
        row(0, [1.0, 2.0]),
    ];
    let opts = CheckpointWriteOptions::default();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("ckpt");
    write_bundle(&prefix, &items, &opts).unwrap();
    let c = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap();
    assert_eq!(
        (c.entry("e").unwrap().offset, c.entry("b").unwrap().offset),
        (8, 8)
    );
    let shards = stored_items(&c).unwrap();
    assert_eq!(shards.len(), 1);
    let (index, data) = bundle_bytes(&shards[0], &opts).unwrap();
    assert_eq!(index, std::fs::read(dir.path().join("ckpt.index")).unwrap());
    assert_eq!(
        data,
        std::fs::read(dir.path().join("ckpt.data-00000-of-00001")).unwrap()
    );
}

#[test]
fn missing_checkpoint_index_keeps_the_operating_systems_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("none-1");
    let e = Checkpoint::open(&prefix, &ReadOptions::default()).unwrap_err();
    let io = std::error::Error::source(&e)
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    assert_eq!(io, Some(std::io::ErrorKind::NotFound), "{e}");
    assert_eq!(
        e.to_string(),
        format!(
            "{}.index: No such file or directory (os error 2)",
            prefix.display()
        )
    );
}
