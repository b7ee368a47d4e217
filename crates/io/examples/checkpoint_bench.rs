//! Checkpoint throughput next to memcpy of the same bytes, measured in the same run:
//! write a checkpoint of 64 float32 variables (1 GiB in all by default; `CKPT_BENCH_MIB` sets
//! the total), then read every tensor back from the page cache, CRC32C verified, mapped and
//! read; and open (list) it and a checkpoint of 10,000 variables.
//!
//!     cargo run --release -p tensorcast-io --example checkpoint_bench

use std::time::Instant;

use tensorcast_core::Tensor;
use tensorcast_io::checkpoint::{write_checkpoint, Checkpoint, CheckpointWriteOptions};
use tensorcast_io::{NamedTensor, ReadMode, ReadOptions};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// [`best`] with `before` run untimed before each run (removing what the last run wrote, so
/// that every write makes new files, as `cp` to a removed target does).
fn best_fresh<T>(runs: usize, mut before: impl FnMut(), mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            before();
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mib: usize = std::env::var("CKPT_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let total = mib << 20;
    let per = total / 64 / 4;
    let tensors: Vec<NamedTensor> = (0..64)
        .map(|i| {
            let v: Vec<f32> = (0..per).map(|j| (i * per + j) as f32).collect();
            NamedTensor::new(format!("layer_{i:02}/kernel"), Tensor::vector(&v))
        })
        .collect();
    let dir =
        tempfile::tempdir_in(std::env::var("CKPT_BENCH_DIR").unwrap_or("/tmp".into())).unwrap();
    let prefix = dir.path().join("ckpt");
    let src: Vec<u8> = vec![1u8; total];
    let mut dst: Vec<u8> = vec![0u8; total];
    let memcpy = best(5, || dst.copy_from_slice(&src));
    let memcpy_fresh = best(3, || src.clone());
    let plain = dir.path().join("plain");
    let rm = |paths: &[&std::path::Path]| {
        for p in paths {
            let _ = std::fs::remove_file(p);
        }
    };
    let data = dir.path().join("ckpt.data-00000-of-00001");
    let index = dir.path().join("ckpt.index");
    let write_plain = best_fresh(
        3,
        || rm(&[&plain]),
        || std::fs::write(&plain, &src).unwrap(),
    );
    // write_checkpoint can sync its files before renaming them: compare with a synced write.
    let write_synced = best_fresh(
        3,
        || rm(&[&plain]),
        || {
            use std::io::Write;
            let mut f = std::fs::File::create(&plain).unwrap();
            f.write_all(&src).unwrap();
            f.sync_all().unwrap();
        },
    );
    let write = best_fresh(
        3,
        || rm(&[&data, &index]),
        || write_checkpoint(&prefix, &tensors, &CheckpointWriteOptions::default()).unwrap(),
    );
    let synced = CheckpointWriteOptions {
        sync: true,
        ..CheckpointWriteOptions::default()
    };
    let write_sync = best_fresh(
        3,
        || rm(&[&data, &index]),
        || write_checkpoint(&prefix, &tensors, &synced).unwrap(),
    );
    let prefix = prefix.as_path();
    let read = |mode: ReadMode| {
        let opts = ReadOptions {
            mode,
            ..ReadOptions::default()
        };
        move || {
            let c = Checkpoint::open(prefix, &opts).unwrap();
            let all = c.read_all().unwrap();
            assert_eq!(all.len(), 64);
            all
        }
    };
    // Every tensor read (CRC verified) and dropped before the next: what a consumer that
    // uses each tensor in turn (a converter, a loader copying into its own memory) does.
    let each = |mode: ReadMode| {
        let opts = ReadOptions {
            mode,
            ..ReadOptions::default()
        };
        move || {
            let c = Checkpoint::open(prefix, &opts).unwrap();
            let mut n = 0usize;
            for e in c.entries() {
                n += std::hint::black_box(c.read(&e.key).unwrap()).num_elements() as usize;
            }
            n
        }
    };
    // Every tensor's bytes copied out piece by piece (CRC verified) into one reused buffer.
    let stream = |mode: ReadMode| {
        let opts = ReadOptions {
            mode,
            ..ReadOptions::default()
        };
        move || {
            let c = Checkpoint::open(prefix, &opts).unwrap();
            let mut sink = std::io::sink();
            c.entries()
                .iter()
                .map(|e| c.stream_bytes(&e.key, &mut sink).unwrap())
                .sum::<u64>()
        }
    };
    let _warm = read(ReadMode::Read)();
    let mapped = best(5, read(ReadMode::Map));
    let readm = best(3, read(ReadMode::Read));
    let each_read = best(5, each(ReadMode::Read));
    let each_map = best(5, each(ReadMode::Map));
    let streamed_read = best(5, stream(ReadMode::Read));
    let streamed_map = best(5, stream(ReadMode::Map));
    let list = best(5, || {
        Checkpoint::open(prefix, &ReadOptions::default())
            .unwrap()
            .entries()
            .len()
    });
    let gib = total as f64 / (1u64 << 30) as f64;
    let row = |name: &str, s: f64, base: f64| {
        println!(
            "{name:<44} {:>9.1} ms {:>7.2} GiB/s  {:>5.2}x memcpy",
            s * 1e3,
            gib / s,
            base / s
        )
    };
    println!("checkpoint of 64 float32 variables, {mib} MiB in all (best of runs)");
    row("memcpy into a faulted buffer", memcpy, memcpy);
    row("memcpy into a fresh allocation", memcpy_fresh, memcpy);
    row("read every tensor, mapped, CRC verified", mapped, memcpy);
    row("read every tensor, read(), CRC verified", readm, memcpy);
    row(
        "  the same, each dropped before the next",
        each_read,
        memcpy,
    );
    row("  mapped, each dropped before the next", each_map, memcpy);
    row(
        "stream_bytes of every tensor, read(), CRC",
        streamed_read,
        memcpy,
    );
    row(
        "stream_bytes of every tensor, mapped, CRC",
        streamed_map,
        memcpy,
    );
    row(
        "write the same bytes to one file (cp-like)",
        write_plain,
        memcpy,
    );
    row("the same, fsynced", write_synced, memcpy);
    row("write_checkpoint (atomic, as TensorFlow)", write, memcpy);
    row("write_checkpoint (atomic, fsynced)", write_sync, memcpy);
    println!("{:<44} {:>9.3} ms", "open (list 64 variables)", list * 1e3);
    // Listing 10,000 variables costs the index only.
    let many: Vec<NamedTensor> = (0..10_000)
        .map(|i| {
            NamedTensor::new(
                format!(
                    "model/layer_{:04}/sublayer_{}/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                    i / 4,
                    i % 4
                ),
                Tensor::vector(&[i as f32; 16]),
            )
        })
        .collect();
    let many_prefix = dir.path().join("many");
    write_checkpoint(&many_prefix, &many, &CheckpointWriteOptions::default()).unwrap();
    let list_many = best(5, || {
        Checkpoint::open(&many_prefix, &ReadOptions::default())
            .unwrap()
            .entries()
            .len()
    });
    println!(
        "{:<44} {:>9.3} ms",
        "open (list 10,000 variables)",
        list_many * 1e3
    );
}
