//! Fuzz target body: arbitrary bytes read as a Parquet file or an Arrow IPC file or stream
//! (the first byte picks which magic is put in front, so that every reader is reached from
//! any input; inputs that already start with a magic are read as they are), then every column
//! turned into tensors. A finding is a panic, a hang or an allocation past the limit.
//!
//! One kind of panic is not a finding: a panic inside the `parquet` crate (60.x still panics
//! on some damaged pages that no check before decoding can see, such as a dictionary index past
//! a fixed-length byte array dictionary), which `read_bytes` catches and reports as a corrupt
//! file. The panic hook lets those through to `read_bytes` and hands every other panic to the
//! fuzzer's own hook (which aborts), so that a panic in our code, in arrow-rs, or anywhere but
//! the `parquet` crate's decoders is still found.

use bytes::Bytes;
use tensorcast_arrow::{batches_to_tensors, read_bytes, ReadLimits};

/// Decoded columns may take at most this much (the fuzzer's malloc limit is above it).
const LIMIT: u64 = 64 << 20;

/// Installs (once) the hook that lets panics inside the `parquet` crate unwind to
/// `read_bytes` and gives every other panic to the hook in place before.
fn contain_parquet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_parquet = info
                .location()
                .is_some_and(|l| l.file().contains("/parquet-"));
            if !in_parquet {
                previous(info);
            }
        }));
    });
}

/// Runs one input.
pub fn run(data: &[u8]) {
    contain_parquet_panics();
    let bytes = if tensorcast_arrow::FileKind::detect(data).is_some() || data.is_empty() {
        Bytes::copy_from_slice(data)
    } else {
        let (pick, rest) = (data[0], &data[1..]);
        let mut v = Vec::with_capacity(rest.len() + 16);
        match pick % 3 {
            0 => {
                v.extend_from_slice(b"PAR1");
                v.extend_from_slice(rest);
                v.extend_from_slice(b"PAR1");
            }
            1 => {
                v.extend_from_slice(b"ARROW1\0\0");
                v.extend_from_slice(rest);
                v.extend_from_slice(b"ARROW1");
            }
            _ => {
                v.extend_from_slice(&[0xff; 4]);
                v.extend_from_slice(rest);
            }
        }
        Bytes::from(v)
    };
    let limits = ReadLimits {
        max_decoded_bytes: LIMIT,
    };
    if let Ok((schema, batches)) = read_bytes(bytes, &limits) {
        let _ = batches_to_tensors(&schema, &batches);
    }
}
