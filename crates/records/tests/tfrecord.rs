//! The TFRecord reader, writer and index on hand-made files.

use tensorcast_records::{
    masked_crc32c, read_records, slice_records, write_file, Code, Compression, ReaderOptions,
    RecordFile, RecordIndex, RecordReader, RecordWriter, RecordsError,
};

const ALL: [Compression; 3] = [Compression::None, Compression::Gzip, Compression::Zlib];

fn file_of(records: &[&[u8]], compression: Compression) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), compression).unwrap();
    for r in records {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn roundtrip_every_compression_gives_the_records_back() {
    let big = vec![7u8; 3 << 20];
    let recs: Vec<&[u8]> = vec![b"", b"a", &big, b"last"];
    for c in ALL {
        let file = file_of(&recs, c);
        let back = read_records(&file, ReaderOptions::with_compression(c)).unwrap();
        assert_eq!(back, recs, "{c:?}");
    }
}

#[test]
fn header_claiming_2_pow_60_bytes_is_too_large_not_an_allocation() {
    let len = (1u64 << 60).to_le_bytes();
    let mut file = len.to_vec();
    file.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    file.extend_from_slice(b"tiny");
    let err = read_records(&file, ReaderOptions::default()).unwrap_err();
    assert!(
        matches!(err, RecordsError::RecordTooLarge { offset: 0, .. }),
        "{err}"
    );
    assert_eq!(err.code(), Code::ResourceExhausted);
}

#[test]
fn header_claiming_more_than_arrives_is_truncated_and_allocates_little() {
    let len = (900u64 << 20).to_le_bytes();
    let mut file = len.to_vec();
    file.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    file.extend_from_slice(&[1; 100]);
    let err = read_records(&file, ReaderOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "truncated record at 0' failed with Read less bytes than requested"
    );
}

#[test]
fn corrupted_data_reports_the_data_offset() {
    let mut file = file_of(&[b"hello", b"world"], Compression::None);
    file[21 + 12] ^= 1;
    let mut r = RecordReader::new(&file[..], ReaderOptions::default());
    assert_eq!(r.next_record().unwrap(), Some(&b"hello"[..]));
    let err = r.next_record().unwrap_err();
    assert_eq!(err.to_string(), "corrupted record at 33");
    assert_eq!(err.code(), Code::DataLoss);
    assert_eq!(r.next_record().unwrap(), None);
}

#[test]
fn skipping_checksums_reads_corrupted_data() {
    let mut file = file_of(&[b"hello"], Compression::None);
    file[12] = b'j';
    let opts = ReaderOptions {
        verify_checksums: false,
        ..ReaderOptions::default()
    };
    assert_eq!(read_records(&file, opts).unwrap(), vec![&b"jello"[..]]);
}

#[test]
fn incomplete_tail_allowed_stops_at_last_complete_record() {
    for c in ALL {
        let file = file_of(&[b"one", b"two-two"], Compression::None);
        let cut = &file[..file.len() - 2];
        let bytes = match c {
            Compression::None => cut.to_vec(),
            // A compressed file being written: the compressed stream of the cut bytes.
            _ => {
                let mut w = RecordWriter::new(Vec::new(), Compression::None).unwrap();
                w.write_record(b"one").unwrap();
                let mut raw = w.finish().unwrap();
                raw.extend_from_slice(&file[raw.len()..file.len() - 2]);
                compress(&raw, c)
            }
        };
        let opts = ReaderOptions {
            allow_incomplete_tail: true,
            ..ReaderOptions::with_compression(c)
        };
        let mut r = RecordReader::new(&bytes[..], opts.clone());
        assert_eq!(r.next_record().unwrap(), Some(&b"one"[..]));
        assert_eq!(r.next_record().unwrap(), None, "{c:?}");
        assert_eq!(r.offset(), 19);
        let strict = ReaderOptions::with_compression(c);
        assert!(read_records(&bytes, strict).is_err(), "{c:?}");
    }
}

fn compress(raw: &[u8], c: Compression) -> Vec<u8> {
    use std::io::Write;
    match c {
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(raw).unwrap();
            e.finish().unwrap()
        }
        Compression::Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(raw).unwrap();
            e.finish().unwrap()
        }
        Compression::None => raw.to_vec(),
    }
}

#[test]
fn gzip_bomb_hits_the_record_limit() {
    // 64 MiB of one record's data claimed 60 MiB long, compressed to ~64 KiB.
    let len = (60u64 << 20).to_le_bytes();
    let mut raw = len.to_vec();
    raw.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    raw.resize(64 << 20, 0);
    let bomb = compress(&raw, Compression::Gzip);
    assert!(bomb.len() < 1 << 20);
    let opts = ReaderOptions {
        max_record_bytes: 1 << 20,
        ..ReaderOptions::with_compression(Compression::Gzip)
    };
    let err = read_records(&bomb, opts).unwrap_err();
    assert!(matches!(err, RecordsError::RecordTooLarge { .. }), "{err}");
}

#[test]
fn damaged_gzip_gives_zlibs_message() {
    let mut file = file_of(&[b"hello", b"", &[b'x'; 20]], Compression::Gzip);
    file[10..15].copy_from_slice(&[0xff; 5]);
    let err = read_records(&file, ReaderOptions::with_compression(Compression::Gzip)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "inflate() failed with error -3: invalid block type"
    );
}

#[test]
fn index_splits_and_ranges_read_every_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.tfrecord");
    let recs: Vec<Vec<u8>> = (0..100u32)
        .map(|i| vec![i as u8; (i * 7 % 50) as usize])
        .collect();
    write_file(&path, Compression::None, &recs).unwrap();
    let index = RecordIndex::build_file(&path).unwrap();
    assert_eq!(index.len(), 100);
    assert_eq!(index.end_offset(), std::fs::metadata(&path).unwrap().len());
    for parts in [1, 2, 3, 7, 100, 500] {
        let ranges = index.split(parts);
        assert_eq!(ranges.len(), parts.min(100));
        let mut next = 0;
        for range in ranges {
            assert_eq!(range.start, next);
            assert!(!range.is_empty());
            let mut r =
                RecordReader::open_at(&path, index.offset(range.start), ReaderOptions::default())
                    .unwrap();
            for i in range.clone() {
                assert_eq!(r.next_record().unwrap().unwrap(), &recs[i][..]);
            }
            next = range.end;
        }
        assert_eq!(next, 100);
    }
}

#[test]
fn index_of_corrupted_header_is_an_error() {
    let mut file = file_of(&[b"hello", b"world"], Compression::None);
    file[21] ^= 1;
    let err = RecordIndex::build(std::io::Cursor::new(file)).unwrap_err();
    assert_eq!(err.to_string(), "corrupted record at 21");
}

#[test]
fn atomic_write_replaces_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("y.tfrecord.gz");
    std::fs::write(&path, b"old").unwrap();
    write_file(&path, Compression::Gzip, [b"new"]).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let back = read_records(&bytes, ReaderOptions::with_compression(Compression::Gzip)).unwrap();
    assert_eq!(back, vec![&b"new"[..]]);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn slice_records_shares_the_input() {
    let file = bytes::Bytes::from(file_of(&[b"hello", b"world"], Compression::None));
    let recs = slice_records(&file, true).unwrap();
    assert_eq!(recs, vec![&b"hello"[..], &b"world"[..]]);
    assert!(file.as_ptr_range().contains(&recs[1].as_ptr()));
    let mut bad = file.to_vec();
    bad[12] ^= 1;
    let err = slice_records(&bad.into(), true).unwrap_err();
    assert_eq!(err.to_string(), "corrupted record at 12");
}

/// Everything a reader gives for a file: the records and the error that stopped it.
fn read_all(mut r: RecordReader<std::fs::File>) -> (Vec<Vec<u8>>, Option<String>) {
    let mut recs = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(x)) => recs.push(x.to_vec()),
            Ok(None) => return (recs, None),
            Err(e) => return (recs, Some(e.to_string())),
        }
    }
}

#[test]
fn prefetching_reader_equals_the_plain_reader_on_good_and_damaged_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.tfrecord");
    let mut seed = 7u64;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (seed >> 33) as usize
    };
    let recs: Vec<Vec<u8>> = (0..300)
        .map(|i| vec![i as u8; if i % 50 == 0 { 20_000 } else { next() % 700 }])
        .collect();
    let file = file_of(
        &recs.iter().map(|r| &r[..]).collect::<Vec<_>>(),
        Compression::None,
    );
    let mut variants = vec![file.clone()];
    for cut in [5, 12, 13, 1000, file.len() / 2, file.len() - 1] {
        variants.push(file[..cut].to_vec());
    }
    for flip in [8, 12, 3000, file.len() - 1] {
        let mut f = file.clone();
        f[flip] ^= 1;
        variants.push(f);
    }
    for bytes in &variants {
        std::fs::write(&path, bytes).unwrap();
        for chunk in [64, 100, 4096, 1 << 20] {
            for tail in [false, true] {
                let opts = ReaderOptions {
                    buffer_bytes: chunk,
                    allow_incomplete_tail: tail,
                    ..ReaderOptions::default()
                };
                let plain = read_all(RecordReader::open(&path, opts.clone()).unwrap());
                let pre = ReaderOptions {
                    prefetch: true,
                    ..opts
                };
                let ahead = read_all(RecordReader::open(&path, pre).unwrap());
                assert_eq!(plain, ahead, "chunk {chunk}, {} bytes", bytes.len());
            }
        }
    }
    // The good file reads back whole.
    std::fs::write(&path, &file).unwrap();
    let opts = ReaderOptions {
        prefetch: true,
        buffer_bytes: 4096,
        ..ReaderOptions::default()
    };
    assert_eq!(
        read_all(RecordReader::open(&path, opts).unwrap()),
        (recs, None)
    );
}

#[test]
fn dropping_a_prefetching_reader_early_stops_its_thread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.tfrecord");
    let rec = vec![3u8; 1000];
    write_file(&path, Compression::None, (0..5000).map(|_| &rec)).unwrap();
    for _ in 0..20 {
        let opts = ReaderOptions {
            prefetch: true,
            buffer_bytes: 4096,
            ..ReaderOptions::default()
        };
        let mut r = RecordReader::open(&path, opts).unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().len(), 1000);
        drop(r); // joins the read-ahead thread, which is blocked on a full channel
    }
}

/// `slice_records`' error is the first a record-by-record reader meets: a damaged record
/// before a damaged header wins, and the other way round.
#[test]
fn slice_records_reports_the_first_damage_in_file_order() {
    let records: Vec<Vec<u8>> = (0..5000u32)
        .map(|i| i.to_le_bytes().repeat((i % 7) as usize))
        .collect();
    let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
    let file = file_of(&refs, Compression::None);
    let whole = bytes::Bytes::from(file.clone());
    let got = slice_records(&whole, true).unwrap();
    assert_eq!(got.len(), records.len());
    assert!(got
        .iter()
        .zip(&records)
        .all(|(a, b)| a.as_ref() == b.as_slice()));
    // Where record i starts (its header) and its data.
    let mut starts = Vec::new();
    let mut at = 0usize;
    for r in &records {
        starts.push(at);
        at += 12 + r.len() + 4;
    }
    let damage_data = |f: &mut Vec<u8>, i: usize| f[starts[i] + 12] ^= 1; // a record with data
    let damage_header = |f: &mut Vec<u8>, i: usize| f[starts[i]] ^= 1;
    // Data damaged in records 4001 and 4500, a header in 4800: the first data error wins.
    let mut f = file.clone();
    damage_data(&mut f, 4001);
    damage_data(&mut f, 4500);
    damage_header(&mut f, 4800);
    let e = slice_records(&bytes::Bytes::from(f), true).unwrap_err();
    assert!(
        matches!(e, RecordsError::CorruptedData { offset } if offset == (starts[4001] + 12) as u64),
        "{e:?}"
    );
    // A header damaged before the damaged data: the header's error.
    let mut f = file.clone();
    damage_header(&mut f, 3000);
    damage_data(&mut f, 4001);
    let e = slice_records(&bytes::Bytes::from(f), true).unwrap_err();
    assert!(
        matches!(e, RecordsError::CorruptedLength { offset } if offset == starts[3000] as u64),
        "{e:?}"
    );
    // Without checksums nothing is checked.
    let mut f = file;
    damage_data(&mut f, 10);
    assert_eq!(
        slice_records(&bytes::Bytes::from(f), false).unwrap().len(),
        5000
    );
}

/// The whole-file reader (mapped, CRCs checked on every core) gives what the streaming reader
/// gives for the same bytes and options: the same records, or the same first error (text and
/// offset), on good, cut-short and damaged files, with and without checksums, the incomplete
/// tail allowed or not, and a record-size limit.
#[test]
fn record_file_equals_the_streaming_reader_on_good_and_damaged_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tfrecord");
    let recs: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| i.to_le_bytes().repeat((i % 300) as usize))
        .collect();
    let file = file_of(
        &recs.iter().map(|r| &r[..]).collect::<Vec<_>>(),
        Compression::None,
    );
    let mut variants = vec![file.clone(), Vec::new(), file[..11].to_vec()];
    for cut in [12, 13, 1000, file.len() / 2, file.len() - 1] {
        variants.push(file[..cut].to_vec());
    }
    for flips in [
        vec![8],
        vec![12],
        vec![3000],
        vec![file.len() - 1],
        vec![file.len() / 2, file.len() * 3 / 4],
    ] {
        let mut f = file.clone();
        for i in flips {
            f[i] ^= 1;
        }
        variants.push(f);
    }
    for bytes in &variants {
        std::fs::write(&path, bytes).unwrap();
        for (verify, tail, limit) in [
            (true, false, u64::MAX),
            (true, true, u64::MAX),
            (false, false, u64::MAX),
            (true, false, 1000),
        ] {
            let opts = ReaderOptions {
                verify_checksums: verify,
                allow_incomplete_tail: tail,
                max_record_bytes: limit,
                ..ReaderOptions::default()
            };
            let (want, err) = read_all(RecordReader::open(&path, opts.clone()).unwrap());
            let got = RecordFile::open(&path, &opts);
            let what = format!("{} bytes, {opts:?}", bytes.len());
            match (got, err) {
                (Ok(f), None) => {
                    assert_eq!(f.len(), want.len(), "{what}");
                    assert!(f.iter().eq(want.iter()), "{what}");
                    assert_eq!(f.get(f.len()), None);
                    if let Some(r) = f.get(0) {
                        // A slice of the file's memory, not a copy.
                        assert!(f.bytes().as_ptr_range().contains(&r.as_ptr()));
                    }
                }
                (Err(e), Some(want)) => assert_eq!(e.to_string(), want, "{what}"),
                (got, want) => panic!("{what}: whole-file {got:?}, streaming {want:?}"),
            }
        }
    }
    // The whole good file: every record, its index and its end.
    std::fs::write(&path, &file).unwrap();
    let f = RecordFile::open(&path, &ReaderOptions::default()).unwrap();
    assert_eq!(f.to_vec(), recs);
    assert_eq!(f.end_offset(), file.len() as u64);
    assert_eq!(f.index(), &RecordIndex::build_file(&path).unwrap());
}

#[test]
fn record_file_refuses_a_compressed_file_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.tfrecord.gz");
    std::fs::write(&path, file_of(&[b"x"], Compression::Gzip)).unwrap();
    let e =
        RecordFile::open(&path, &ReaderOptions::with_compression(Compression::Gzip)).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.to_string().contains("RecordReader"), "{e}");
    let e = RecordFile::open(dir.path().join("missing"), &ReaderOptions::default()).unwrap_err();
    assert_eq!(e.code(), Code::Unknown);
}
