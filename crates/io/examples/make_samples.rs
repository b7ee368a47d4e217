//! Writes the sample tensor files shipped in `samples/` at the repository root (what
//! `tensorcast inspect` shows with no arguments). The content is deterministic: running this
//! again gives byte-identical files.
//!
//! ```text
//! cargo run -p tensorcast-io --example make_samples [OUT_DIR]
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use tensorcast_core::types::Float8E4M3FN;
use tensorcast_core::{bf16, f16, Complex32, TString, Tensor, TensorShape};
use tensorcast_io::{write_file, write_file_with, Format, NamedTensor, WriteOptions};

fn shape(dims: &[i64]) -> TensorShape {
    TensorShape::new(dims).expect("valid sample shape")
}

fn tensor<T: tensorcast_core::Element>(values: Vec<T>, dims: &[i64]) -> Tensor {
    Tensor::from_vec(values, shape(dims)).expect("sample values match the shape")
}

/// `n` values `start, start + step, ...` (exact binary fractions, so identical everywhere).
fn ramp(n: usize, start: f32, step: f32) -> Vec<f32> {
    (0..n).map(|i| start + step * i as f32).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples"));
    std::fs::create_dir_all(&out)?;
    let out = out.canonicalize()?;

    // Model weights: several dtypes, as a checkpoint would hold them.
    let weights = vec![
        NamedTensor::new("embed.weight", tensor(ramp(32, -1.0, 0.0625), &[4, 8])),
        NamedTensor::new(
            "proj.weight",
            tensor(
                ramp(32, 0.5, -0.03125)
                    .into_iter()
                    .map(bf16::from_f32)
                    .collect(),
                &[8, 4],
            ),
        ),
        NamedTensor::new(
            "proj.scale_f8",
            tensor(
                [0.125f32, 0.25, 0.5, 1.0, 1.5, 2.0, -3.0, 448.0]
                    .into_iter()
                    .map(Float8E4M3FN::from_f32)
                    .collect(),
                &[8],
            ),
        ),
        NamedTensor::new(
            "lm_head.bias",
            tensor(
                ramp(8, -0.5, 0.125)
                    .into_iter()
                    .map(f16::from_f32)
                    .collect(),
                &[8],
            ),
        ),
        NamedTensor::new("step", Tensor::scalar_of(1000i64)),
        NamedTensor::new(
            "attention.mask",
            tensor((0..8).map(|i| i % 4 != 3).collect::<Vec<bool>>(), &[2, 4]),
        ),
    ];
    let mut metadata = BTreeMap::new();
    metadata.insert("format".to_string(), "pt".to_string());
    metadata.insert("source".to_string(), "tensorcast make_samples".to_string());
    let opts = WriteOptions {
        metadata,
        ..Default::default()
    };
    write_file_with(
        &out.join("weights.safetensors"),
        Format::Safetensors,
        &weights,
        &opts,
    )?;

    // One activation tensor, and a half-precision one, as numpy .npy.
    write_file(
        &out.join("activations.npy"),
        Format::Npy,
        &[NamedTensor::new(
            "activations",
            tensor(ramp(24, -1.5, 0.125), &[2, 3, 4]),
        )],
    )?;
    let logits: Vec<f16> = ramp(12, -3.0, 0.5).into_iter().map(f16::from_f32).collect();
    write_file(
        &out.join("logits_f16.npy"),
        Format::Npy,
        &[NamedTensor::new("logits", tensor(logits, &[3, 4]))],
    )?;

    // A batch of inputs as .npz (stored, so it reads without copying).
    let batch = vec![
        NamedTensor::new(
            "ids",
            tensor((0..10).map(|i| 100 + 7 * i).collect::<Vec<i32>>(), &[2, 5]),
        ),
        NamedTensor::new("lengths", tensor(vec![5i64, 3], &[2])),
        NamedTensor::new(
            "valid",
            tensor(
                (0..10).map(|i| i < 5 || i < 8).collect::<Vec<bool>>(),
                &[2, 5],
            ),
        ),
        NamedTensor::new(
            "weights",
            tensor(
                (0..10)
                    .map(|i| 1.0 / f64::from(1 << (i % 4)))
                    .collect::<Vec<f64>>(),
                &[2, 5],
            ),
        ),
        NamedTensor::new(
            "spectrum",
            tensor(
                (0..4)
                    .map(|i| Complex32::new(i as f32, -0.5 * i as f32))
                    .collect::<Vec<_>>(),
                &[4],
            ),
        ),
        NamedTensor::new(
            "pixels",
            tensor(
                (0..12u32).map(|i| (i * 21) as u8).collect::<Vec<u8>>(),
                &[2, 2, 3],
            ),
        ),
    ];
    write_file(&out.join("batch.npz"), Format::Npz, &batch)?;

    // Serialized TensorProtos, as tf.io.serialize_tensor writes them.
    write_file(
        &out.join("scalar.pb"),
        Format::TensorProto,
        &[NamedTensor::new("scalar", Tensor::scalar_of(3.25f32))],
    )?;
    let strings: Vec<TString> = ["hello", "tensorcast", "Grüße", ""]
        .into_iter()
        .map(TString::from)
        .collect();
    write_file(
        &out.join("strings.pb"),
        Format::TensorProto,
        &[NamedTensor::new("strings", tensor(strings, &[2, 2]))],
    )?;

    let mut files: Vec<_> = std::fs::read_dir(&out)?.collect::<Result<_, _>>()?;
    files.sort_by_key(|e| e.file_name());
    for e in files {
        println!("{:>8} bytes  {}", e.metadata()?.len(), e.path().display());
    }
    Ok(())
}
