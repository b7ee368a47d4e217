//! Times writing and reading 256 MiB of float32 in each format, next to a memcpy of the same
//! bytes measured in the same run (the machines are shared; ratios are what hold).
//!
//! ```text
//! cargo run --release -p tensorcast-io --example io_throughput [MiB]
//! ```

use std::time::{Duration, Instant};

use tensorcast_core::{Tensor, TensorShape};
use tensorcast_io::{npz, read_file, write_file_with, Format, NamedTensor, WriteOptions};

fn best_of(n: usize, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(256);
    let n = mib * 1024 * 1024 / 4;
    let values: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let t = Tensor::from_vec(values, &TensorShape::new(&[n as i64])?)?;
    let bytes = t.tensor_data()?;
    let gb = bytes.len() as f64 / 1e9;

    let mut dst = vec![0u8; bytes.len()];
    let memcpy = best_of(3, || dst.copy_from_slice(bytes));
    println!(
        "memcpy {mib} MiB: {:.1} ms ({:.1} GB/s)",
        memcpy.as_secs_f64() * 1e3,
        gb / memcpy.as_secs_f64()
    );

    let dir = tempfile::tempdir()?;
    let cases = [
        (Format::Npy, npz::Compression::Stored, "npy"),
        (Format::Safetensors, npz::Compression::Stored, "safetensors"),
        (Format::Npz, npz::Compression::Stored, "npz (stored)"),
        (Format::Npz, npz::Compression::Deflated, "npz (deflate)"),
        (Format::TensorProto, npz::Compression::Stored, "tensorproto"),
    ];
    for (format, c, label) in cases {
        let path = dir.path().join(format!("t.{}", format.extension()));
        let opts = WriteOptions {
            npz_compression: c,
            ..Default::default()
        };
        let ts = [NamedTensor::new("t", t.clone())];
        let reps = if c == npz::Compression::Deflated {
            1
        } else {
            3
        };
        let w = best_of(reps, || {
            write_file_with(&path, format, &ts, &opts).expect("write")
        });
        let mut sum = 0f64;
        let r = best_of(reps, || {
            let back = read_file(&path).expect("read");
            sum += f64::from(back[0].tensor.flat::<f32>().expect("aligned view")[n / 2]);
        });
        // Reading and then touching every byte (what a consumer of the mapped data pays).
        let rt = best_of(reps, || {
            let back = read_file(&path).expect("read");
            let v = back[0].tensor.flat::<f32>().expect("aligned view");
            sum += v.iter().map(|&x| f64::from(x)).sum::<f64>();
        });
        let back = read_file(&path)?;
        let owner = back[0]
            .tensor
            .buffer()
            .map_or("none", |b| b.owner_name())
            .to_string();
        assert_eq!(back[0].tensor, t);
        println!(
            "{label:>14}: write {:>8.1} ms ({:>5.2} x memcpy)  read {:>8.3} ms ({owner})  read+sum {:>8.1} ms",
            w.as_secs_f64() * 1e3,
            w.as_secs_f64() / memcpy.as_secs_f64(),
            r.as_secs_f64() * 1e3,
            rt.as_secs_f64() * 1e3,
        );
        std::hint::black_box(sum);
    }
    Ok(())
}
