//! Fuzz target body: arbitrary bytes as a TFRecord file, the first byte choosing the
//! compression (none, GZIP, ZLIB), read with a 1 MiB record limit and at most 100,000 records
//! or 64 MiB of records, so a finding is a panic, a hang or an allocation the input does not
//! justify (a gzip bomb must stop at the record limit; run with `-malloc_limit_mb`). Checks
//! that the streaming reader, the read-ahead reader (from a temporary file, 64-byte chunks),
//! the in-memory slicer, the whole-file reader (`RecordFile`, same records or the same error
//! text) and the index agree on uncompressed input, and that records read back write to the
//! same bytes.

use tensorcast_records::{
    slice_records, Compression, ReaderOptions, RecordFile, RecordIndex, RecordReader, RecordWriter,
};

/// The record limit the target reads with.
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

fn options_of(first: u8) -> ReaderOptions {
    let compression = match first % 3 {
        0 => Compression::None,
        1 => Compression::Gzip,
        _ => Compression::Zlib,
    };
    ReaderOptions {
        max_record_bytes: MAX_RECORD_BYTES,
        verify_checksums: first & 0x80 == 0,
        allow_incomplete_tail: first & 0x40 != 0,
        buffer_bytes: 4096,
        ..ReaderOptions::with_compression(compression)
    }
}

/// The read-ahead reader (64-byte chunks, so records straddle them) gives the same records
/// and stops where the in-memory reader stopped.
fn prefetch_agrees(file: &[u8], options: &ReaderOptions, records: &[Vec<u8>], failed: bool) {
    let path =
        std::env::temp_dir().join(format!("tensorcast-fuzz-tfrecord-{}", std::process::id()));
    if std::fs::write(&path, file).is_err() {
        return;
    }
    let opts = ReaderOptions {
        prefetch: true,
        buffer_bytes: 64,
        ..options.clone()
    };
    let Ok(mut r) = RecordReader::open(&path, opts) else {
        return;
    };
    let mut n = 0;
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                assert_eq!(Some(rec), records.get(n).map(Vec::as_slice));
                n += 1;
            }
            Ok(None) => {
                assert!(!failed && n == records.len());
                break;
            }
            Err(_) => {
                assert!(failed && n == records.len());
                break;
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let Some((&first, file)) = data.split_first() else {
        return;
    };
    let options = options_of(first);
    let compression = options.compression;
    let verify = options.verify_checksums;
    let mut reader = RecordReader::new(file, options);
    let mut records = Vec::new();
    let mut total = 0usize;
    let mut failed = false;
    let mut error = None;
    while records.len() < 100_000 && total < 64 << 20 {
        match reader.next_record() {
            Ok(Some(r)) => {
                total += r.len();
                records.push(r.to_vec());
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(e.to_string());
                failed = true;
                break;
            }
        }
    }
    if compression == Compression::None && records.len() < 100_000 && total < 64 << 20 {
        // The whole-file reader (headers walked, CRCs checked in parallel) gives what the
        // streaming reader gave: the same records, or the same first error.
        let whole = RecordFile::from_bytes(bytes::Bytes::copy_from_slice(file), &options_of(first));
        match (&whole, &error) {
            (Ok(f), None) => assert!(f.iter().eq(records.iter().map(|r| &r[..]))),
            (Err(a), Some(b)) => assert_eq!(a.to_string(), *b),
            (a, b) => panic!("whole-file reader {a:?}, streaming reader {b:?}"),
        }
    }
    if compression == Compression::None && first & 0x40 == 0 && records.len() < 100_000 {
        // The in-memory slicer reads the same records where the streaming reader ended
        // cleanly (both end at a partial header, as TensorFlow does).
        let sliced = slice_records(&bytes::Bytes::copy_from_slice(file), verify);
        if let (false, Ok(s)) = (failed, &sliced) {
            assert_eq!(s.len(), records.len());
        }
        if verify {
            if let Ok(index) = RecordIndex::build(std::io::Cursor::new(file)) {
                assert!(index.len() >= records.len() || failed);
            }
        }
    }
    if compression == Compression::None && records.len() < 100_000 && total < 64 << 20 {
        prefetch_agrees(file, &options_of(first), &records, failed);
    }
    if !failed {
        let mut w = RecordWriter::new(Vec::new(), Compression::None).expect("in memory");
        for r in &records {
            w.write_record(r).expect("in memory");
        }
        let again = w.finish().expect("in memory");
        let back: Vec<Vec<u8>> = RecordReader::new(&again[..], ReaderOptions::default())
            .into_records()
            .map(|r| r.expect("our own file").to_vec())
            .collect();
        assert_eq!(back, records);
    }
}
