//! Fuzz target body: arbitrary bytes as a TensorBoard event file, read as `tensorcast inspect`
//! reads one: every record decoded as an `Event` (1 MiB record limit, at most 100,000
//! records), every summary value's tensor decoded with a 16 MiB fill budget. A finding is a
//! panic, a hang or an allocation the input does not justify (run with `-malloc_limit_mb`).

use tensorcast_proto::DecodeOptions;
use tensorcast_records::events::decode_event;
use tensorcast_records::{ReaderOptions, RecordReader};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let options = ReaderOptions {
        max_record_bytes: 1 << 20,
        ..ReaderOptions::default()
    };
    let decode = DecodeOptions::new().with_max_fill_bytes(16 << 20);
    let mut reader = RecordReader::new(data, options);
    for _ in 0..100_000 {
        let Ok(Some(record)) = reader.next_record() else {
            return;
        };
        let Ok(event) = decode_event(record) else {
            continue;
        };
        for v in event.summary.iter().flat_map(|s| &s.value) {
            let _ = v.plugin_name();
            if let Some(p) = &v.tensor {
                if let Ok(t) = tensorcast_proto::tensor_from_proto_with(p, &decode) {
                    let _ = t.summarize_value(3, false);
                }
            }
        }
    }
}
