//! Fuzz target body: arbitrary bytes read as a Parquet file or an Arrow IPC file or stream
//! (the first byte picks which magic is put in front, so that every reader is reached from
//! any input; inputs that already start with a magic are read as they are), then every column
//! turned into tensors. A finding is a panic, a hang or an allocation past the limit.

use bytes::Bytes;
use tensorcast_arrow::{batches_to_tensors, read_bytes, ReadLimits};

/// Decoded columns may take at most this much (the fuzzer's malloc limit is above it).
const LIMIT: u64 = 64 << 20;

/// Runs one input.
pub fn run(data: &[u8]) {
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
