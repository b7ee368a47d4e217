//! Throughput of the TFRecord reader and of `parse_example`, next to the baselines measured in
//! the same run (memcpy, `cat`, plain `read` of the same file, decompression alone).
//!
//!     cargo run --release -p tensorcast-records --example records_bench [MiB]
//!
//! Writes a TFRecord file of 4 KiB records (default 1024 MiB) and a GZIP one (a quarter of
//! that) under the system temporary directory, reads each once to warm the page cache, then
//! times each workload (best of 3). Figures are wall-clock on whatever else the machine does.

use std::io::Read;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tensorcast_core::DataType;
use tensorcast_proto::example::{feature::Kind, BytesList, Example, Feature, Features};
use tensorcast_proto::example::{FloatList, Int64List};
use tensorcast_proto::Message;
use tensorcast_records::{
    parse_example, slice_records, write_file, Compression, FeatureSpec, ReaderOptions, RecordReader,
};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed());
        out = Some(r);
    }
    (best, out.expect("runs > 0"))
}

fn gbps(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e9
}

fn main() {
    let mib: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    // RECORDS_BENCH_ONLY=parse skips the file workloads (for profiling the parser).
    let only_parse = std::env::var("RECORDS_BENCH_ONLY").is_ok_and(|v| v == "parse");
    if !only_parse {
        bench_files(mib);
    }
    bench_parse();
}

/// RECORDS_BENCH_DIR=<dir> keeps the files there (for TensorFlow's side,
/// `tf_records_bench.py`); otherwise a temporary directory.
fn bench_dir() -> (Option<tempfile::TempDir>, std::path::PathBuf) {
    match std::env::var_os("RECORDS_BENCH_DIR") {
        Some(d) => {
            std::fs::create_dir_all(&d).expect("bench dir");
            (None, d.into())
        }
        None => {
            let t = tempfile::tempdir().expect("temporary directory");
            let p = t.path().to_path_buf();
            (Some(t), p)
        }
    }
}

fn bench_files(mib: u64) {
    let (_keep, dir) = bench_dir();
    let path = dir.join("bench.tfrecord");
    let n_records = (mib << 20) / 4096;
    // Records of text-like bytes (a small alphabet from an LCG), each different, so that gzip
    // compresses them about as it does real data (3-4x) rather than to nothing.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut record = move || -> Vec<u8> {
        (0..4096)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"abcdefghijklmnop  0123456789,.;:"[(seed >> 59) as usize]
            })
            .collect()
    };
    let records: Vec<Vec<u8>> = (0..1024).map(|_| record()).collect();
    let payload = |i: u64| &records[(i % 1024) as usize];
    write_file(&path, Compression::None, (0..n_records).map(payload)).expect("write");
    let size = std::fs::metadata(&path).expect("stat").len();
    let gz_path = dir.join("bench.tfrecord.gz");
    write_file(&gz_path, Compression::Gzip, (0..n_records / 4).map(payload)).expect("write");
    let gz_raw = (n_records / 4) * (4096 + 16);
    println!(
        "file: {} records of 4 KiB, {:.1} MiB; gzip file {:.1} MiB holding {:.1} MiB",
        n_records,
        size as f64 / 1048576.0,
        std::fs::metadata(&gz_path).expect("stat").len() as f64 / 1048576.0,
        gz_raw as f64 / 1048576.0
    );

    // Baselines.
    let src = vec![1u8; 256 << 20];
    let mut dst = vec![0u8; 256 << 20];
    let (d, ()) = best(3, || {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
    });
    println!(
        "memcpy 256 MiB:                      {:>8.1} ms  {:>6.2} GB/s",
        d.as_secs_f64() * 1e3,
        gbps(256 << 20, d)
    );
    drop((src, dst));
    let _ = std::fs::read(&path).map(|v| v.len()); // warm the page cache
    let (d, ()) = best(3, || {
        let s = std::process::Command::new("cat")
            .arg(&path)
            .stdout(std::fs::File::create("/dev/null").expect("/dev/null"))
            .status()
            .expect("cat");
        assert!(s.success());
    });
    println!(
        "cat file > /dev/null:                {:>8.1} ms  {:>6.2} GB/s",
        d.as_secs_f64() * 1e3,
        gbps(size, d)
    );
    let (d, n) = best(3, || {
        let mut f = std::fs::File::open(&path).expect("open");
        let mut buf = vec![0u8; 256 << 10];
        let mut n = 0u64;
        loop {
            let k = f.read(&mut buf).expect("read");
            if k == 0 {
                break n;
            }
            n += k as u64;
        }
    });
    assert_eq!(n, size);
    let read_d = d;
    println!(
        "read() the file, 256 KiB buffer:     {:>8.1} ms  {:>6.2} GB/s",
        d.as_secs_f64() * 1e3,
        gbps(size, d)
    );

    // The reader.
    for (label, verify, prefetch) in [
        ("checksums verified", true, false),
        ("checksums skipped ", false, false),
        ("verified, prefetch ", true, true),
    ] {
        let (d, n) = best(3, || {
            let opts = ReaderOptions {
                verify_checksums: verify,
                prefetch,
                buffer_bytes: if prefetch { 1 << 20 } else { 256 << 10 },
                ..ReaderOptions::default()
            };
            let mut r = RecordReader::open(&path, opts).expect("open");
            let mut n = 0u64;
            while let Some(rec) = r.next_record().expect("read") {
                n += rec.len() as u64;
            }
            n
        });
        assert_eq!(n, n_records * 4096);
        println!(
            "RecordReader, {label}:   {:>8.1} ms  {:>6.2} GB/s  ({:.2}x the bandwidth of read())",
            d.as_secs_f64() * 1e3,
            gbps(size, d),
            read_d.as_secs_f64() / d.as_secs_f64()
        );
    }
    let data = Bytes::from(std::fs::read(&path).expect("read"));
    let (d, n) = best(3, || {
        slice_records(&data, true).expect("records").len() as u64
    });
    assert_eq!(n, n_records);
    println!(
        "slice_records, file in memory:       {:>8.1} ms  {:>6.2} GB/s",
        d.as_secs_f64() * 1e3,
        gbps(size, d)
    );
    let (d, ()) = best(3, || {
        std::hint::black_box(crc32c::crc32c(std::hint::black_box(&data)));
    });
    println!(
        "crc32c alone, file in memory:        {:>8.1} ms  {:>6.2} GB/s",
        d.as_secs_f64() * 1e3,
        gbps(size, d)
    );
    drop(data);

    // GZIP: decompression alone, then the reader.
    let _ = std::fs::read(&gz_path).map(|v| v.len());
    let (d, n) = best(3, || {
        let f = std::fs::File::open(&gz_path).expect("open");
        let mut dec = flate2::read::GzDecoder::new(std::io::BufReader::with_capacity(256 << 10, f));
        let mut buf = vec![0u8; 256 << 10];
        let mut n = 0u64;
        loop {
            let k = dec.read(&mut buf).expect("inflate");
            if k == 0 {
                break n;
            }
            n += k as u64;
        }
    });
    assert_eq!(n, gz_raw);
    println!(
        "gunzip alone (flate2/zlib-rs):       {:>8.1} ms  {:>6.2} GB/s of output",
        d.as_secs_f64() * 1e3,
        gbps(gz_raw, d)
    );
    let (d, n) = best(3, || {
        let mut r =
            RecordReader::open(&gz_path, ReaderOptions::with_compression(Compression::Gzip))
                .expect("open");
        let mut n = 0u64;
        while let Some(rec) = r.next_record().expect("read") {
            n += rec.len() as u64;
        }
        n
    });
    assert_eq!(n, (n_records / 4) * 4096);
    println!(
        "RecordReader GZIP, checksums:        {:>8.1} ms  {:>6.2} GB/s of output",
        d.as_secs_f64() * 1e3,
        gbps(gz_raw, d)
    );
}

fn bench_parse() {
    // parse_example: 100k Examples of 128 floats, an int64 label, a variable-length bytes list.
    let examples: Vec<Bytes> = (0..100_000u32)
        .map(|i| {
            let mut f = Features::default();
            let feat = |k| Feature { kind: Some(k) };
            f.feature.insert(
                "x".into(),
                feat(Kind::FloatList(FloatList {
                    value: (0..128).map(|j| (i + j) as f32).collect(),
                })),
            );
            f.feature.insert(
                "label".into(),
                feat(Kind::Int64List(Int64List {
                    value: vec![i64::from(i % 10)],
                })),
            );
            f.feature.insert(
                "tags".into(),
                feat(Kind::BytesList(BytesList {
                    value: (0..i % 4).map(|j| Bytes::from(format!("tag{j}"))).collect(),
                })),
            );
            Bytes::from(Example { features: Some(f) }.encode_to_vec())
        })
        .collect();
    let bytes: usize = examples.iter().map(Bytes::len).sum();
    if let Some(d) = std::env::var_os("RECORDS_BENCH_DIR") {
        let p = std::path::Path::new(&d).join("examples.tfrecord");
        write_file(&p, Compression::None, &examples).expect("write examples");
    }
    let specs = vec![
        (
            "x".to_string(),
            FeatureSpec::FixedLen {
                shape: vec![128],
                dtype: DataType::FLOAT,
                default_value: None,
            },
        ),
        (
            "label".to_string(),
            FeatureSpec::FixedLen {
                shape: vec![],
                dtype: DataType::INT64,
                default_value: None,
            },
        ),
        (
            "tags".to_string(),
            FeatureSpec::VarLen {
                dtype: DataType::STRING,
            },
        ),
    ];
    let (d, out) = best(3, || parse_example(&examples, None, &specs).expect("parse"));
    assert_eq!(out.len(), 3);
    println!(
        "parse_example 100k Examples ({:.1} MiB): {:>6.1} ms  {:>6.2} M examples/s  {:>6.2} GB/s",
        bytes as f64 / 1048576.0,
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6,
        gbps(bytes as u64, d)
    );
    let (d, _) = best(3, || {
        for chunk in examples.chunks(1024) {
            parse_example(chunk, None, &specs).expect("parse");
        }
    });
    println!(
        "parse_example batched by 1024:          {:>6.1} ms  {:>6.2} M examples/s",
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6
    );
}
