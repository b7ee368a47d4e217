//! The sample files shipped in `samples/` (written by `examples/make_samples.rs`) read back
//! with the formats, names and dtypes the CLI's first command shows.

use std::path::PathBuf;

use tensorcast_core::DataType;
use tensorcast_io::{read_file_contents, Format};

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

/// A sample file, its format, and its tensors' names and dtypes.
type Sample = (&'static str, Format, &'static [(&'static str, DataType)]);

#[test]
fn every_sample_reads_with_its_format_and_dtypes() {
    let expect: &[Sample] = &[
        (
            "weights.safetensors",
            Format::Safetensors,
            &[
                ("embed.weight", DataType::FLOAT),
                ("proj.weight", DataType::BFLOAT16),
                ("proj.scale_f8", DataType::FLOAT8_E4M3FN),
                ("lm_head.bias", DataType::HALF),
                ("step", DataType::INT64),
                ("attention.mask", DataType::BOOL),
            ],
        ),
        (
            "activations.npy",
            Format::Npy,
            &[("activations", DataType::FLOAT)],
        ),
        (
            "logits_f16.npy",
            Format::Npy,
            &[("logits_f16", DataType::HALF)],
        ),
        (
            "batch.npz",
            Format::Npz,
            &[
                ("ids", DataType::INT32),
                ("lengths", DataType::INT64),
                ("valid", DataType::BOOL),
                ("weights", DataType::DOUBLE),
                ("spectrum", DataType::COMPLEX64),
                ("pixels", DataType::UINT8),
            ],
        ),
        (
            "scalar.pb",
            Format::TensorProto,
            &[("scalar", DataType::FLOAT)],
        ),
        (
            "strings.pb",
            Format::TensorProto,
            &[("strings", DataType::STRING)],
        ),
    ];
    for (file, format, tensors) in expect {
        let c = read_file_contents(&samples_dir().join(file)).unwrap();
        assert_eq!(c.format, *format, "{file}");
        let mut got: Vec<(&str, DataType)> = c
            .tensors
            .iter()
            .map(|t| (t.name.as_str(), t.tensor.dtype()))
            .collect();
        let mut want = tensors.to_vec();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{file}");
    }
    let c = read_file_contents(&samples_dir().join("weights.safetensors")).unwrap();
    assert_eq!(c.metadata["source"], "tensorcast make_samples");
    let s = read_file_contents(&samples_dir().join("strings.pb")).unwrap();
    assert_eq!(
        s.tensors[0].tensor.debug_string(10),
        "Tensor<type: string shape: [2,2] values: [hello tensorcast][Grüße ]>"
    );
}
