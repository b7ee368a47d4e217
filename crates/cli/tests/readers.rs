//! The read side under hostile input: one `--max-memory` budget per command (not per record),
//! every file read through one bounded input layer (procfs files that report no size), one
//! format detector for every command, optional SavedModel files, and `inspect` of large
//! record files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{ok, run_in, stderr, stdout, BIN};
use tensorcast::proto::Message;
use tensorcast::{Tensor, TensorShape};
use tensorcast_records::{write_file, Compression};

fn temp_dir(test: &str) -> PathBuf {
    crate::common::temp_dir(&format!("readers-{test}"))
}

/// A serialized TensorProto of float `[n]` carrying one value: the rest is filled (4n bytes of
/// memory from about 20 bytes).
fn fill_proto(n: u64) -> Vec<u8> {
    let mut dim = vec![0x08];
    put_varint(&mut dim, n);
    let mut shape = vec![0x12];
    put_varint(&mut shape, dim.len() as u64);
    shape.extend_from_slice(&dim);
    let mut p = vec![0x08, 0x01, 0x12];
    put_varint(&mut p, shape.len() as u64);
    p.extend_from_slice(&shape);
    p.extend_from_slice(&[0x2a, 0x04, 0, 0, 0x80, 0x3f]);
    p
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Runs the binary in `dir` under `ulimit -v` of `mib` MiB of address space.
fn run_bounded(dir: &Path, mib: u64, args: &[&str]) -> Output {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {}; exec '{BIN}' {}",
            mib << 10,
            quoted.join(" ")
        ))
        .current_dir(dir)
        .output()
        .unwrap()
}

fn one_line_exit_2(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    err
}

#[test]
fn max_memory_budget_spans_all_records_of_a_file() {
    let dir = temp_dir("budget");
    // 17 records of ~25 bytes, each claiming 2^22 floats (16 MiB of fill): 272 MiB in all,
    // against a budget of 40 MiB for the whole command.
    let record = fill_proto(1 << 22);
    assert!(record.len() < 30);
    let records = vec![record; 17];
    write_file(dir.join("fill.tfrecord"), Compression::None, &records).unwrap();
    let gz = dir.join("fill.tfrecord.gz");
    write_file(&gz, Compression::Gzip, &records).unwrap();
    assert!(std::fs::metadata(&gz).unwrap().len() < 200);
    for input in ["fill.tfrecord", "fill.tfrecord.gz"] {
        // convert keeps every tensor: the third does not fit what the first two left.
        let o = run_in(&dir, &["--max-memory", "40M", "convert", input, "out.npz"]);
        let err = one_line_exit_2(&o);
        assert!(err.contains("record 2"), "{err}");
        assert!(err.contains("--max-memory"), "{err}");
        assert!(!dir.join("out.npz").exists());
        // inspect lists the first records (kept until printed): the same.
        let o = run_in(&dir, &["--max-memory", "40M", "inspect", input]);
        let err = one_line_exit_2(&o);
        assert!(
            err.contains("record 2") && err.contains("--max-memory"),
            "{err}"
        );
        // Listing none, it keeps none: each record's fill is given back once counted.
        let out = ok(&run_in(
            &dir,
            &["--max-memory", "40M", "inspect", input, "--records", "0"],
        ));
        assert!(out.contains("17 serialize_tensor records"), "{out}");
        let row = out.lines().find(|l| l.contains("[4194304]")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells[..5],
            ["float", "[4194304]", "17", "285212672", "1"],
            "{out}"
        );
    }
    // With room for all of them, convert writes them.
    ok(&run_in(
        &dir,
        &[
            "--max-memory",
            "300M",
            "convert",
            "fill.tfrecord.gz",
            "out.npz",
        ],
    ));
    // The default budget (256M) holds for the whole command: 17 such records of nearly 2^26
    // floats (256 MiB each, 4 GiB together) fail at the second, under 1.5 GiB of address
    // space.
    let big = vec![fill_proto((1 << 26) - 1024); 17];
    write_file(dir.join("big.tfrecord"), Compression::None, &big).unwrap();
    for args in [
        &["convert", "big.tfrecord", "out.npz"][..],
        &["inspect", "big.tfrecord"][..],
    ] {
        let o = run_bounded(&dir, 1536, args);
        let err = one_line_exit_2(&o);
        assert!(
            err.contains("record 1") && err.contains("--max-memory (268435456 bytes"),
            "{err}"
        );
    }
}

#[test]
fn max_memory_budget_spans_the_tensors_of_a_command() {
    // Two TensorProto files each claiming 24 MiB of fill: `diff` holds both at once.
    let dir = temp_dir("budget-diff");
    std::fs::write(dir.join("a.pb"), fill_proto(6 << 20)).unwrap();
    std::fs::write(dir.join("b.pb"), fill_proto(6 << 20)).unwrap();
    let o = run_in(&dir, &["--max-memory", "40M", "diff", "a.pb", "b.pb"]);
    let err = one_line_exit_2(&o);
    assert!(
        err.starts_with("tensorcast: b.pb: ") && err.contains("--max-memory"),
        "{err}"
    );
    let o = run_in(&dir, &["--max-memory", "60M", "diff", "a.pb", "b.pb"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // inspect shows one file at a time: what a file held is given back after it.
    ok(&run_in(
        &dir,
        &["--max-memory", "40M", "inspect", "a.pb", "b.pb"],
    ));
}

/// A copy of the sample SavedModel in `dir/sm`, with `link`'s file (if given) a symbolic link
/// to its target instead.
fn saved_model_with_link(dir: &Path, link: Option<(&str, &str)>) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/saved_model_affine");
    let sm = dir.join("sm");
    std::fs::create_dir_all(sm.join("variables")).unwrap();
    for f in [
        "saved_model.pb",
        "fingerprint.pb",
        "variables/variables.index",
        "variables/variables.data-00000-of-00001",
    ] {
        if let Some((_, target)) = link.filter(|(name, _)| *name == f) {
            std::os::unix::fs::symlink(target, sm.join(f)).unwrap();
        } else {
            std::fs::copy(src.join(f), sm.join(f)).unwrap();
        }
    }
    sm
}

#[test]
fn procfs_symlinked_saved_model_file_is_read_bounded() {
    // /proc/self/pagemap reports a size of 0 and holds 8 bytes per page of the reader's
    // address space (gigabytes). Read under 1 GiB of address space, each must stop at the
    // limit with one line, not when memory runs out.
    for (i, file) in ["saved_model.pb", "variables/variables.index"]
        .into_iter()
        .enumerate()
    {
        let dir = temp_dir(&format!("procfs-{i}"));
        let sm = saved_model_with_link(&dir, Some((file, "/proc/self/pagemap")));
        let o = run_bounded(&dir, 1024, &["saved-model", "show", "sm", "--all"]);
        let err = one_line_exit_2(&o);
        assert!(err.contains(file), "{err}");
        assert!(err.contains("reports a size of 0"), "{err}");
        assert!(err.contains("--max-memory (268435456 bytes)"), "{err}");
        let o = run_bounded(
            &dir,
            1024,
            &[
                "--max-memory",
                "1M",
                "graph",
                "inspect",
                sm.to_str().unwrap(),
            ],
        );
        let err = one_line_exit_2(&o);
        assert!(err.contains("--max-memory (1048576 bytes)"), "{err}");
    }
    // An optional fingerprint.pb that is such a link: warned about, and the model shown.
    let dir = temp_dir("procfs-fingerprint");
    saved_model_with_link(&dir, Some(("fingerprint.pb", "/proc/self/pagemap")));
    let o = run_bounded(&dir, 1024, &["saved-model", "show", "sm", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("signature_def['serving_default']"));
    assert!(
        stderr(&o).starts_with("tensorcast: warning: sm/fingerprint.pb: Fingerprint was found"),
        "{}",
        stderr(&o)
    );
    // A tensor input that is a procfs file: --max-stream applies.
    let o = run_bounded(
        &dir,
        1024,
        &["--max-stream", "1M", "inspect", "/proc/self/pagemap"],
    );
    let err = one_line_exit_2(&o);
    assert!(err.contains("reports a size of 0"), "{err}");
    let o = run_bounded(&dir, 1024, &["inspect", "/proc/self/pagemap"]);
    one_line_exit_2(&o);
}

/// An event file: the version event, then one summary value whose tensor is `tensor`.
fn event_file(tensor: &[u8]) -> Vec<Vec<u8>> {
    // Event { file_version: "brain.Event:2" } and Event { step: 1, summary { value { tag: "x",
    // tensor } } }.
    let first = tensorcast_records::events::Event {
        file_version: "brain.Event:2".into(),
        ..Default::default()
    };
    let value = tensorcast_records::events::SummaryValue {
        tag: "x".into(),
        tensor: Some(tensorcast::proto::TensorProto::decode(tensor).unwrap()),
        ..Default::default()
    };
    let second = tensorcast_records::events::Event {
        step: 1,
        summary: Some(tensorcast_records::events::Summary { value: vec![value] }),
        ..Default::default()
    };
    vec![first.encode_to_vec(), second.encode_to_vec()]
}

#[test]
fn event_summary_tensor_honours_max_memory() {
    let dir = temp_dir("events");
    // float [25 Mi]: 100 MiB of fill from a file of about 100 bytes.
    let records = event_file(&fill_proto(25 << 20));
    let path = dir.join("events.out.tfevents.1.host.v2");
    write_file(&path, Compression::None, &records).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() < 120);
    let name = path.file_name().unwrap().to_str().unwrap();
    let o = run_in(&dir, &["--max-memory", "1M", "inspect", name]);
    let err = one_line_exit_2(&o);
    assert!(
        err.contains("tag 'x'") && err.contains("--max-memory"),
        "{err}"
    );
    // Under 200 MiB of address space the default budget's 100 MiB would not fit twice; the
    // value is decoded once and dropped.
    let out = ok(&run_in(&dir, &["inspect", name]));
    assert!(out.contains("a TensorBoard event file"), "{out}");
}

/// A GZIP TFRecord file of `n` records of 1000 bytes each, damaged at compressed byte `at`.
fn damaged_gzip(dir: &Path, name: &str, at: usize) -> Vec<u8> {
    let records: Vec<Vec<u8>> = (0..200u32)
        .map(|i| (0..1000u32).map(|j| (i * 31 + j * 7) as u8).collect())
        .collect();
    let path = dir.join(name);
    write_file(&path, Compression::Gzip, &records).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at] ^= 0x55;
    bytes[at + 1] ^= 0xaa;
    std::fs::write(&path, &bytes).unwrap();
    bytes
}

#[test]
fn damaged_gzip_tfrecord_reports_inflate_error() {
    let dir = temp_dir("damaged-gzip");
    let bytes = damaged_gzip(&dir, "d.tfrecord.gz", 40);
    // TensorFlow's text (tf.data.TFRecordDataset(..., "GZIP") on the same bytes).
    let inflate = "inflate() failed with error -3: ";
    for args in [
        &["inspect", "d.tfrecord.gz"][..],
        &["convert", "d.tfrecord.gz", "out.npz"][..],
        &["convert", "d.tfrecord.gz", "copy.tfrecord"][..],
    ] {
        let err = one_line_exit_2(&run_in(&dir, args));
        assert!(err.starts_with("tensorcast: d.tfrecord.gz: "), "{err}");
        assert!(err.contains(inflate), "{args:?}: {err}");
        assert!(!err.contains("unknown format"), "{err}");
    }
    // The same stream under another name is still a GZIP stream, read as the compressed
    // TFRecord file tensorcast reads GZIP as.
    std::fs::write(dir.join("d.bin"), &bytes).unwrap();
    let err = one_line_exit_2(&run_in(&dir, &["inspect", "d.bin"]));
    assert!(err.contains(inflate), "{err}");
    // A .tfrecord whose first header is damaged: TensorFlow's words for it.
    write_file(dir.join("h.tfrecord"), Compression::None, [&b"abc"[..]]).unwrap();
    let mut h = std::fs::read(dir.join("h.tfrecord")).unwrap();
    h[8] ^= 1;
    std::fs::write(dir.join("h.tfrecord"), h).unwrap();
    let err = one_line_exit_2(&run_in(&dir, &["inspect", "h.tfrecord"]));
    assert!(
        err.ends_with("corrupted record at 0 (Is this even a TFRecord file?)\n"),
        "{err}"
    );
}

#[test]
fn one_detector_reads_a_file_the_same_for_every_command() {
    let dir = temp_dir("detector");
    // A TFRecord whose first length is 0x1_ffff_ffff: it starts ff ff ff ff 01, as an Arrow
    // IPC stream's first message does. Its CRC holds: a TFRecord, for inspect and convert.
    let len = 0x1_ffff_ffffu64.to_le_bytes();
    let mut f = len.to_vec();
    f.extend_from_slice(&tensorcast_records::masked_crc32c(&len).to_le_bytes());
    f.extend_from_slice(&[0u8; 64]);
    std::fs::write(dir.join("ff.bin"), &f).unwrap();
    let a = one_line_exit_2(&run_in(&dir, &["inspect", "ff.bin"]));
    let b = one_line_exit_2(&run_in(&dir, &["convert", "ff.bin", "out.npz"]));
    for err in [&a, &b] {
        assert!(err.contains("record at 0"), "{err}");
        assert!(!err.contains("Arrow"), "{err}");
    }
    // Parquet and Arrow files: inspect shows their schema, rows and columns' tensors.
    let x = Tensor::from_vec(
        (0..12).map(|i| i as f32).collect::<Vec<_>>(),
        TensorShape::new(&[3, 4]).unwrap(),
    )
    .unwrap();
    tensorcast::io::write_file(
        &dir.join("t.npz"),
        tensorcast::io::Format::Npz,
        &[
            tensorcast::io::NamedTensor::new("x", x),
            tensorcast::io::NamedTensor::new("label", Tensor::vector(&[7i64, 8, 9])),
        ],
    )
    .unwrap();
    for (out, kind) in [("t.parquet", "parquet"), ("t.arrow", "arrow")] {
        ok(&run_in(&dir, &["convert", "t.npz", out]));
        let text = ok(&run_in(&dir, &["inspect", out]));
        assert!(
            text.starts_with(&format!("{out}: {kind}, 3 rows, 2 columns, 2 tensors, ")),
            "{text}"
        );
        assert!(text.contains("  column x: FixedSizeList"), "{text}");
        assert!(text.contains("(tensor cells of shape [4])"), "{text}");
        assert!(text.contains("  column label: Int64"), "{text}");
        assert!(text.contains(" x "), "{text}");
        assert!(text.contains("[3,4]"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&ok(&run_in(&dir, &["inspect", out, "--json"]))).unwrap();
        let file = &json["files"][0];
        assert_eq!(file["rows"], 3, "{file}");
        assert_eq!(file["schema"][1]["name"], "label", "{file}");
        // And every command reads them: diff against the npz they came from.
        let o = run_in(&dir, &["diff", "t.npz", out]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

#[test]
fn corrupt_optional_fingerprint_warns_and_runs() {
    let dir = temp_dir("fingerprint");
    let sm = saved_model_with_link(&dir, None);
    std::fs::write(sm.join("fingerprint.pb"), b"\xff\xff\xff garbage").unwrap();
    let sm = sm.to_str().unwrap();
    let warning = format!(
        "tensorcast: warning: {sm}/fingerprint.pb: Fingerprint was found, but there was an \
         error when reading the proto. Saved model loading will continue."
    );
    let o = run_in(&dir, &["saved-model", "show", sm, "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with(&warning), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stdout(&o).contains("signature_def['serving_default']"));
    assert!(!stdout(&o).contains("Fingerprint:"));
    // Run: the signature computes as with a sound fingerprint.
    let x = dir.join("x.npy");
    tensorcast::io::write_file(
        &x,
        tensorcast::io::Format::Npy,
        &[tensorcast::io::NamedTensor::new(
            "x",
            Tensor::from_vec(vec![1.0f32, 2.0, 3.0], TensorShape::new(&[1, 3]).unwrap()).unwrap(),
        )],
    )
    .unwrap();
    let input = format!("x={}", x.display());
    let o = run_in(&dir, &["graph", "run", sm, "--input", &input]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).starts_with(&warning), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("y: Tensor<type: float shape: [1,3]"),
        "{}",
        stdout(&o)
    );
    // The same run with the sound fingerprint prints the same values, and no warning.
    let sound = saved_model_with_link(&temp_dir("fingerprint-sound"), None);
    let o2 = run_in(
        &dir,
        &["graph", "run", sound.to_str().unwrap(), "--input", &input],
    );
    assert_eq!((stdout(&o2), stderr(&o2)), (stdout(&o), String::new()));
}

#[test]
fn inspect_large_record_file_summarises() {
    let dir = temp_dir("summary");
    // 1000 records of float [16] holding i*16 .. i*16+15, and 3 of int32 [2].
    let mut records: Vec<Vec<u8>> = (0..1000)
        .map(|i| {
            let v: Vec<f32> = (0..16).map(|j| (i * 16 + j) as f32).collect();
            tensorcast::io::tensorproto::write(&Tensor::vector(&v)).unwrap()
        })
        .collect();
    for i in 0..3 {
        records.push(tensorcast::io::tensorproto::write(&Tensor::vector(&[i, -i])).unwrap());
    }
    write_file(dir.join("r.tfrecord"), Compression::None, &records).unwrap();
    let out = ok(&run_in(&dir, &["inspect", "r.tfrecord"]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() < 40, "{out}");
    assert!(
        lines[0].starts_with("r.tfrecord: tfrecord (none), 1003 serialize_tensor records, "),
        "{out}"
    );
    // One row per dtype and shape, the statistics over every record's values.
    let row = lines.iter().find(|l| l.contains("[16]")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["float", "[16]", "1000", "64000", "0", "15999", "7999.5", "0"]
    );
    let row = lines.iter().find(|l| l.contains("int32")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["int32", "[2]", "3", "24", "-2", "2", "0", "0"]);
    // The first 10 listed, as a tensor file's tensors are.
    assert!(out.contains("the first 10 records"), "{out}");
    assert!(out.contains("  record_9: Tensor<type: float shape: [16] values: 144 145 146...>"));
    assert!(!out.contains("record_10"), "{out}");
    let none = ok(&run_in(&dir, &["inspect", "r.tfrecord", "--records", "0"]));
    assert!(!none.contains("record_0"), "{none}");
    let all = ok(&run_in(&dir, &["inspect", "r.tfrecord", "--records", "-1"]));
    assert!(all.contains("record_1002: "), "{all}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&run_in(&dir, &["inspect", "r.tfrecord", "--json"]))).unwrap();
    let file = &json["files"][0];
    assert_eq!(file["records"], 1003);
    assert_eq!(file["listed_records"], 10);
    assert_eq!(file["tensors"].as_array().unwrap().len(), 10);
    assert_eq!(file["groups"][0]["records"], 1000);
    assert_eq!(file["groups"][0]["stats"]["max"], 15999.0);
    // A file of a few records is still shown tensor by tensor.
    write_file(dir.join("s.tfrecord"), Compression::None, &records[..3]).unwrap();
    let small = ok(&run_in(&dir, &["inspect", "s.tfrecord"]));
    assert!(
        small.starts_with("s.tfrecord: tfrecord (none), 3 serialize_tensor records, 3 tensors"),
        "{small}"
    );
}

/// The summary of a file read on every core in chunks (an uncompressed file) is the one
/// record-at-a-time reading gives (the same records gzipped), over many chunks, records that
/// run past their chunk, several dtypes and shapes, and NaNs; damage anywhere is reported with
/// the same words and offset as that reading's.
#[test]
fn inspect_chunked_summary_matches_the_sequential_reading() {
    let dir = temp_dir("chunked");
    // About 9 MiB: 2,200 records of float [1000] (4 KiB each, so records cross the 1 MiB
    // chunks), some of int64 [3] and of float [2, 5] with a NaN, in a repeating order.
    let records: Vec<Vec<u8>> = (0..2300)
        .map(|i| {
            let t = match i % 23 {
                7 => Tensor::vector(&[i as i64, -(i as i64), 3]),
                13 => {
                    let mut v: Vec<f32> = (0..10).map(|j| (i * j) as f32 * 0.5).collect();
                    v[i % 10] = f32::NAN;
                    Tensor::from_vec(v, TensorShape::new(&[2, 5]).unwrap()).unwrap()
                }
                _ => {
                    let v: Vec<f32> = (0..1000).map(|j| (i * 1000 + j) as f32 * 0.25).collect();
                    Tensor::vector(&v)
                }
            };
            tensorcast::io::tensorproto::write(&t).unwrap()
        })
        .collect();
    write_file(dir.join("c.tfrecord"), Compression::None, &records).unwrap();
    write_file(dir.join("c.tfrecord.gz"), Compression::Gzip, &records).unwrap();
    // The listed tensors' `align` column is where their memory happens to lie: left out.
    let tail = |out: String| {
        out.lines()
            .skip(1)
            .map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                if cells.len() == 10 && cells[0].starts_with("record_") {
                    [&cells[..4], &cells[5..]].concat().join(" ")
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
    };
    for extra in [&[][..], &["--records", "30"][..], &["--json"][..]] {
        let chunked = ok(&run_in(
            &dir,
            &[&["inspect", "c.tfrecord"][..], extra].concat(),
        ));
        let plain = ok(&run_in(
            &dir,
            &[&["inspect", "c.tfrecord.gz"][..], extra].concat(),
        ));
        if extra == ["--json"] {
            let (mut a, mut b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_str(&chunked).unwrap(),
                serde_json::from_str(&plain).unwrap(),
            );
            for v in [&mut a, &mut b] {
                let f = &mut v["files"][0];
                for k in ["path", "compression", "file_bytes", "format"] {
                    f.as_object_mut().unwrap().remove(k);
                }
                // Where the listed tensors' memory happens to lie: left out.
                for t in f["tensors"].as_array_mut().unwrap() {
                    t.as_object_mut()
                        .unwrap()
                        .retain(|k, _| !k.contains("align"));
                }
            }
            assert_eq!(a, b);
            assert_eq!(a["files"][0]["records"], 2300);
        } else {
            assert!(
                chunked.contains("2300 serialize_tensor records"),
                "{chunked}"
            );
            assert_eq!(tail(chunked), tail(plain), "{extra:?}");
        }
    }
    // Damage in the middle of the file (a data byte, then a length byte): the same error as
    // the record-at-a-time reader's.
    let clean = std::fs::read(dir.join("c.tfrecord")).unwrap();
    for at in [5 << 20, (5 << 20) + 4097, clean.len() - 3] {
        let mut bytes = clean.clone();
        bytes[at] ^= 0x10;
        std::fs::write(dir.join("d.tfrecord"), &bytes).unwrap();
        let o = run_in(&dir, &["inspect", "d.tfrecord"]);
        assert!(!o.status.success());
        let err = stderr(&o);
        assert!(err.contains("corrupted record at "), "{err}");
        // The reader walks to the damage itself: the offset is where the record-at-a-time
        // reader finds it.
        let mut r = tensorcast_records::RecordReader::open(
            dir.join("d.tfrecord"),
            tensorcast_records::ReaderOptions::default(),
        )
        .unwrap();
        let want = loop {
            match r.next_record() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the damage at {at} was not found"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(err.contains(&want), "{err} / {want}");
    }
}
