//! Throughput of the TFRecord reader, `parse_example` and Examples to Parquet, next to the
//! baselines measured in the same run (memcpy, `cat`, plain `read` of the same file,
//! decompression alone) and the peers (TensorFlow's `tf.data` and `tf.io.parse_example`,
//! pyarrow, the `tfrecord` PyPI reader), ending with issue 21's speed table in Markdown.
//!
//!     cargo run --release -p tensorcast-records --example records_bench [MiB]
//!
//! Writes a TFRecord file of 4 KiB records (default 1024 MiB), a GZIP one (a quarter of that)
//! and one of 100k Examples under the system temporary directory (or `RECORDS_BENCH_DIR`),
//! reads each once to warm the page cache, then times each workload (best of 3). The peers run
//! in `tf_records_bench.py` beside this file, with the interpreter `RECORDS_BENCH_PYTHON`, else
//! the repository's `.venv` (`RECORDS_BENCH_PEERS=0` skips them). Figures are wall-clock on
//! whatever else the machine does.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tensorcast_core::DataType;
use tensorcast_proto::example::{feature::Kind, BytesList, Example, Feature, Features};
use tensorcast_proto::example::{FloatList, Int64List};
use tensorcast_proto::Message;
use tensorcast_records::{
    parse_example, slice_records, write_file, Compression, ExampleBatches, FeatureSpec,
    ReaderOptions, RecordFile, RecordReader,
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

/// Seconds of each workload, by key (ours and the peers').
type Figures = BTreeMap<String, f64>;

fn main() {
    let mib: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    // RECORDS_BENCH_ONLY=parse skips the file workloads (for profiling the parser).
    let only_parse = std::env::var("RECORDS_BENCH_ONLY").is_ok_and(|v| v == "parse");
    let (_keep, dir) = bench_dir();
    let mut fig = Figures::new();
    if !only_parse {
        bench_files(&dir, mib, &mut fig);
    }
    bench_parse(&dir, &mut fig);
    if !only_parse {
        run_peers(&dir, &mut fig);
        print_table(&fig);
    }
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

fn bench_files(dir: &Path, mib: u64, fig: &mut Figures) {
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
    fig.insert("cat".into(), d.as_secs_f64());
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

    // The whole-file path: mapped, headers walked once, data CRCs on every core.
    let (d, n) = best(3, || {
        let f = RecordFile::open(&path, &ReaderOptions::default()).expect("open");
        f.iter().map(|r| r.len() as u64).sum::<u64>()
    });
    assert_eq!(n, n_records * 4096);
    fig.insert("read".into(), d.as_secs_f64());
    println!(
        "RecordFile::open (mapped), verified:  {:>8.1} ms  {:>6.2} GB/s  ({:.2}x the bandwidth of read())",
        d.as_secs_f64() * 1e3,
        gbps(size, d),
        read_d.as_secs_f64() / d.as_secs_f64()
    );

    let (d, _) = best(3, || {
        let opts = ReaderOptions {
            verify_checksums: false,
            ..ReaderOptions::default()
        };
        RecordFile::open(&path, &opts).expect("open").len()
    });
    println!(
        "RecordFile::open (mapped), unverified: {:>8.1} ms  (mapping, walking the headers, unmapping)",
        d.as_secs_f64() * 1e3
    );

    // The streaming reader.
    for (label, key, verify, prefetch) in [
        ("checksums verified", "read_stream", true, false),
        ("checksums skipped ", "read_unverified", false, false),
        ("verified, prefetch ", "read_prefetch", true, true),
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
        fig.insert(key.into(), d.as_secs_f64());
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
        std::hint::black_box(crc_fast::crc32_iscsi(std::hint::black_box(&data)));
    });
    println!(
        "CRC32C alone, file in memory:        {:>8.1} ms  {:>6.2} GB/s",
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
    fig.insert("gunzip".into(), d.as_secs_f64());
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
    fig.insert("read_gzip".into(), d.as_secs_f64());
    println!(
        "RecordReader GZIP, checksums:        {:>8.1} ms  {:>6.2} GB/s of output",
        d.as_secs_f64() * 1e3,
        gbps(gz_raw, d)
    );
}

fn bench_parse(dir: &Path, fig: &mut Figures) {
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
    let examples_path = dir.join("examples.tfrecord");
    write_file(&examples_path, Compression::None, &examples).expect("write examples");
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
    fig.insert("parse_whole".into(), d.as_secs_f64());
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
    fig.insert("parse".into(), d.as_secs_f64());
    println!(
        "parse_example batched by 1024:          {:>6.1} ms  {:>6.2} M examples/s",
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6
    );

    // Read + parse from the file (page cache), streamed as tf.data + parse_example does it:
    // the reader (checksums verified, reading ahead on its own threads as tf.data's reader
    // does, so that reading overlaps parsing) hands out records, 1024 of them are copied into
    // a batch of their own (so that parsed strings do not share one reference count between
    // threads) and parsed, with memory bounded by the batch.
    let _ = std::fs::read(&examples_path).map(|v| v.len());
    let (d, n) = best(3, || {
        let options = ReaderOptions {
            prefetch: true,
            ..ReaderOptions::default()
        };
        let mut r = RecordReader::open(&examples_path, options).expect("open");
        let mut batch: Vec<Bytes> = Vec::with_capacity(1024);
        let mut n = 0;
        loop {
            let rec = r.next_record().expect("read");
            if let Some(rec) = rec {
                batch.push(Bytes::copy_from_slice(rec));
            }
            if batch.len() == 1024 || (rec.is_none() && !batch.is_empty()) {
                n += parse_example(&batch, None, &specs).expect("parse").len();
                batch.clear();
            }
            if rec.is_none() {
                break n;
            }
        }
    });
    assert_eq!(n, 3 * 98);
    fig.insert("read_parse".into(), d.as_secs_f64());
    println!(
        "read + parse_example from the file:     {:>6.1} ms  {:>6.2} M examples/s",
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6
    );
    // The same through `ExampleBatches`: the file mapped and walked on a thread of its own,
    // whole batches parsed ahead on rayon's pool.
    let (d, n) = best(3, || {
        let batches = ExampleBatches::open(
            &examples_path,
            ReaderOptions::default(),
            1024,
            specs.clone(),
        )
        .expect("open");
        batches.map(|b| b.expect("parse").len()).sum::<usize>()
    });
    assert_eq!(n, 3 * 98);
    fig.insert("read_parse_batches".into(), d.as_secs_f64());
    println!(
        "read + parse with ExampleBatches:       {:>6.1} ms  {:>6.2} M examples/s",
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6
    );

    // Examples to Parquet: parse 1024 at a time (as the pyarrow side does), a record batch
    // each, all written to one file (Snappy, as pyarrow).
    let out_path = dir.join("examples.parquet");
    let (d, ()) = best(3, || {
        let batches: Vec<_> = examples
            .chunks(1024)
            .map(|c| {
                let parsed = parse_example(c, None, &specs).expect("parse");
                tensorcast_arrow::parsed_to_batch(&parsed).expect("batch")
            })
            .collect();
        tensorcast_arrow::write_file(
            &out_path,
            tensorcast_arrow::FileKind::Parquet,
            batches[0].schema(),
            &batches,
        )
        .expect("write parquet");
    });
    fig.insert("to_parquet".into(), d.as_secs_f64());
    println!(
        "Examples to Parquet (parse + write):    {:>6.1} ms  {:>6.2} M examples/s  ({:.1} MiB)",
        d.as_secs_f64() * 1e3,
        1e5 / d.as_secs_f64() / 1e6,
        std::fs::metadata(&out_path).map_or(0.0, |m| m.len() as f64 / 1048576.0)
    );
}

/// The peers' interpreter: `RECORDS_BENCH_PYTHON`, else the repository's `.venv`.
fn peers_python() -> Option<PathBuf> {
    if std::env::var("RECORDS_BENCH_PEERS").is_ok_and(|v| v == "0") {
        return None;
    }
    if let Some(p) = std::env::var_os("RECORDS_BENCH_PYTHON") {
        return Some(p.into());
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    venv.exists().then_some(venv)
}

/// Runs `tf_records_bench.py` (TensorFlow and pyarrow; then, in a process of its own, the
/// `tfrecord` PyPI reader) over the files in `dir`, printing its lines and collecting its
/// `RESULT key seconds` lines.
fn run_peers(dir: &Path, fig: &mut Figures) {
    let Some(py) = peers_python() else {
        println!("peers: skipped (no interpreter; set RECORDS_BENCH_PYTHON)");
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/tf_records_bench.py");
    for mode in ["tf", "pypi"] {
        let out = std::process::Command::new(&py)
            .arg(&script)
            .arg(mode)
            .env("RECORDS_BENCH_DIR", dir)
            .env("TF_CPP_MIN_LOG_LEVEL", "3")
            .output();
        let out = match out {
            Ok(o) if o.status.success() => o,
            Ok(o) => {
                println!(
                    "peers ({mode}) failed: {}",
                    String::from_utf8_lossy(&o.stderr)
                        .lines()
                        .last()
                        .unwrap_or("")
                );
                continue;
            }
            Err(e) => {
                println!("peers ({mode}): cannot run {}: {e}", py.display());
                continue;
            }
        };
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            match line.strip_prefix("RESULT ") {
                Some(r) => {
                    let mut it = r.split_whitespace();
                    if let (Some(k), Some(Ok(v))) = (it.next(), it.next().map(str::parse)) {
                        fig.insert(k.to_string(), v);
                    }
                }
                None => println!("{line}"),
            }
        }
    }
}

/// Issue 21's speed table, as the README shows it.
fn print_table(fig: &Figures) {
    let get = |k: &str| fig.get(k).copied();
    let ms = |k: &str| get(k).map_or("-".to_string(), |s| format!("{:.0} ms", s * 1e3));
    let ratio = |a: &str, b: &str| match (get(a), get(b)) {
        (Some(a), Some(b)) => Some(b / a),
        _ => None,
    };
    let yes = |ok: Option<bool>| match ok {
        Some(true) => "yes",
        Some(false) => "**no**",
        None => "-",
    };
    let x = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.2}x"));
    let kex = |k: &str| get(k).map_or("-".to_string(), |s| format!("{:.2}M/s", 1e5 / s / 1e6));
    println!();
    println!("| workload | tensorcast | baseline, same run | target | met? | peers, same run |");
    println!("|---|---|---|---|---|---|");
    // Speed ratios: baseline time / our time (above 1: we are faster). Row 1 counts the faster
    // of the two whole-file ways the API offers (named in the cell): RecordFile (mapped) and
    // the streaming reader with its read-ahead threads.
    let best_read = match (get("read"), get("read_prefetch")) {
        (Some(a), Some(b)) if b < a => "read_prefetch",
        _ => "read",
    };
    let vs_cat = ratio(best_read, "cat");
    let vs_tf = ratio(best_read, "tfdata_read");
    let vs_pypi = ratio(best_read, "pypi_read");
    let met = match (vs_cat, vs_tf, vs_pypi) {
        (Some(c), Some(t), Some(p)) => Some(c >= 0.8 && t >= 3.0 && p > 1.0),
        _ => None,
    };
    println!(
        "| read a 1 GiB TFRecord of 4 KiB records, checksums verified | {} ({}: {} the bandwidth of `cat`); `RecordFile::open` (mapped): {} ({}); `RecordReader` with read-ahead threads: {} ({}); plain `RecordReader`: {} ({}) | `cat`: {} | >= 0.8x `cat`; >= 3x `tf.data` (here {}); faster than the PyPI reader (here {}) | {} | `tf.data.TFRecordDataset` batched by 1024: {}; `tfrecord` (PyPI, no checksums): {} |",
        ms(best_read),
        if best_read == "read" { "`RecordFile::open`" } else { "`RecordReader` with read-ahead" },
        x(vs_cat),
        ms("read"), x(ratio("read", "cat")),
        ms("read_prefetch"), x(ratio("read_prefetch", "cat")),
        ms("read_stream"), x(ratio("read_stream", "cat")),
        ms("cat"), x(vs_tf), x(vs_pypi), yes(met),
        ms("tfdata_read"), ms("pypi_read")
    );
    let gz = ratio("gunzip", "read_gzip");
    println!(
        "| the same, GZIP (256 MiB of records) | {} | decompression alone (flate2/zlib-rs): {} | within 1.2x of decompression alone (here {}) | {} | `tf.data`: {}; `tfrecord` (PyPI): {} |",
        ms("read_gzip"), ms("gunzip"), x(gz), yes(gz.map(|g| g <= 1.2)),
        ms("tfdata_gzip"), ms("pypi_gzip")
    );
    let p_tf = ratio("parse", "tf_parse");
    let p_pypi = ratio("parse", "pypi_parse");
    let met = match (p_tf, p_pypi) {
        (Some(t), Some(p)) => Some(t >= 2.0 && p >= 20.0),
        _ => None,
    };
    println!(
        "| `parse_example` of 100k Examples (128 floats, an int64 label, a bytes list), batched by 1024 | {} ({}; {} as one batch) | `tf.io.parse_example` batched by 1024: {} ({}) | >= 2x `tf.io.parse_example` (here {}); >= 20x the PyPI reader (here {}) | {} | `tfrecord` (PyPI) loader, read + parse: {} ({}) |",
        ms("parse"), kex("parse"), ms("parse_whole"), ms("tf_parse"), kex("tf_parse"), x(p_tf), x(p_pypi), yes(met),
        ms("pypi_parse"), kex("pypi_parse")
    );
    let rp = ratio("read_parse", "tfdata_read_parse");
    println!(
        "| read + parse from the file, same data | {} ({}) | `tf.data` + `parse_example`, batched by 1024: {} ({}) | >= 3x (here {}) | {} | |",
        ms("read_parse"), kex("read_parse"), ms("tfdata_read_parse"), kex("tfdata_read_parse"), x(rp),
        yes(rp.map(|r| r >= 3.0))
    );
    let rpb = ratio("read_parse_batches", "tfdata_read_parse");
    println!(
        "| the same through `ExampleBatches` (batches parsed ahead on every core) | {} ({}) | as above | >= 3x (here {}) | {} | |",
        ms("read_parse_batches"), kex("read_parse_batches"), x(rpb), yes(rpb.map(|r| r >= 3.0))
    );
    let pq = ratio("to_parquet", "pyarrow_parquet");
    println!(
        "| Examples to Parquet, same data (parse, build the table, write with Snappy) | {} | pyarrow building the table from `tf.io.parse_example`'s output and writing it: {} | >= 3x (here {}) | {} | |",
        ms("to_parquet"), ms("pyarrow_parquet"), x(pq), yes(pq.map(|r| r >= 3.0))
    );
}
