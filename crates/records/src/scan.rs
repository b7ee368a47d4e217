//! Every record of an uncompressed TFRecord file visited on several threads at once, the file
//! read with positional reads by the threads that use the bytes.
//!
//! [`scan`] cuts the file into chunks of a fixed size. Each thread takes the next chunk, reads
//! it into a buffer of its own (the copy out of the page cache runs on every core), waits for
//! the header walk of the chunk before it (a few hundred header hops, microseconds), walks
//! the headers of the records that start in its chunk, hands the next chunk's thread where
//! the next record starts, and only then checks each record's data checksum and calls the
//! visitor on it, while the other threads read, walk and visit chunks of their own. A record
//! that runs past its chunk's end is read whole, apart, by the thread of the chunk it starts
//! in. Each chunk's records are visited in file order into a state of the chunk's own; the
//! states come back in file order, so that a caller merging them gets what one pass would.
//!
//! The scan reports only files that read cleanly. At anything irregular (a damaged header or
//! checksum, a record cut short, a partial header at the end, a file that changed size, a
//! visitor that declines a record) it stops every thread and returns [`Scan::Irregular`]: the
//! caller reads the file again with [`crate::RecordReader`], which reports the damage with
//! TensorFlow's text and offset and keeps its edge behaviour. Errors are rare and the second
//! read is the price of keeping one statement of those rules.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::crc::masked_crc32c;
use crate::reader::{ReaderOptions, FOOTER_BYTES, HEADER_BYTES};

/// What [`scan`] made of a file.
#[derive(Debug)]
pub enum Scan<S> {
    /// Every record was visited: the states of the chunks in file order (chunks in which no
    /// record starts included), and the number of records.
    Done {
        /// One state per chunk, in file order.
        states: Vec<S>,
        /// The records visited.
        records: u64,
    },
    /// The file is damaged, changed while it was read, or a visitor declined a record: read
    /// it with [`crate::RecordReader`] to report why.
    Irregular,
}

/// Where the walk of the chunks has got to: chunk `walked` may be walked next, its first
/// record starting at `offset` and being record `index`.
struct Walk {
    walked: usize,
    offset: u64,
    index: u64,
}

/// Visits every record of the uncompressed TFRecord file `file` (`len` bytes long, its size
/// when opened) on `threads` threads, reading it in chunks of `chunk_bytes`: `start(i)` makes
/// the state of a chunk whose first record is record `i`, and `visit(state, i, record)` is
/// called on record `i` (its checksums checked as `options` say), in file order within each
/// chunk; `false` stops the scan as irregular.
///
/// `options.compression` must be none and `options.max_record_bytes` bounds a record (both
/// checked: otherwise the scan is [`Scan::Irregular`] from the start for the first, and at the
/// record for the second, as the reader would refuse it).
///
/// # Example
/// ```
/// use tensorcast_records::{scan, write_file, Compression, ReaderOptions, Scan};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("data.tfrecord");
/// let records: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; i as usize]).collect();
/// write_file(&path, Compression::None, records.iter().map(|r| &r[..]))?;
/// let file = std::fs::File::open(&path).unwrap();
/// let len = file.metadata().unwrap().len();
/// // Chunks of 256 bytes, so that many records run past their chunk's end.
/// let scan = scan(&file, len, &ReaderOptions::default(), 2, 256, |_| 0u64, |sum, _, r| {
///     *sum += r.len() as u64;
///     true
/// });
/// let Scan::Done { states, records: n } = scan else { panic!("a clean file") };
/// assert_eq!(n, 100);
/// assert_eq!(states.iter().sum::<u64>(), (0..100).sum::<u64>());
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
#[cfg(unix)]
pub fn scan<S: Send>(
    file: &File,
    len: u64,
    options: &ReaderOptions,
    threads: usize,
    chunk_bytes: usize,
    start: impl Fn(u64) -> S + Sync,
    visit: impl Fn(&mut S, u64, &[u8]) -> bool + Sync,
) -> Scan<S> {
    if options.compression != crate::Compression::None {
        return Scan::Irregular;
    }
    let chunk = chunk_bytes.max(HEADER_BYTES + FOOTER_BYTES) as u64;
    let Ok(chunks) = usize::try_from(len.div_ceil(chunk)) else {
        return Scan::Irregular;
    };
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let walk = (
        Mutex::new(Walk {
            walked: 0,
            offset: 0,
            index: 0,
        }),
        Condvar::new(),
    );
    let results: Mutex<Vec<Option<S>>> = Mutex::new((0..chunks).map(|_| None).collect());
    let job = Job {
        file,
        len,
        chunk,
        options,
        stop: &stop,
        walk: &walk,
    };
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, chunks.max(1)) {
            s.spawn(|| {
                let mut buf = Vec::new();
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= chunks || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    match job.chunk(k, &mut buf, &start, &visit) {
                        Some(done) => {
                            let mut r = results.lock().unwrap_or_else(|e| e.into_inner());
                            r[k] = Some(done);
                        }
                        None => {
                            job.halt();
                            return;
                        }
                    }
                }
            });
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Scan::Irregular;
    }
    let w = walk.0.into_inner().unwrap_or_else(|e| e.into_inner());
    if w.walked != chunks || w.offset != len {
        return Scan::Irregular;
    }
    let mut states = Vec::with_capacity(chunks);
    for r in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        match r {
            Some(s) => states.push(s),
            None => return Scan::Irregular,
        }
    }
    Scan::Done {
        states,
        records: w.index,
    }
}

/// What every thread of a [`scan`] shares.
#[cfg(unix)]
struct Job<'a> {
    file: &'a File,
    len: u64,
    chunk: u64,
    options: &'a ReaderOptions,
    stop: &'a AtomicBool,
    walk: &'a (Mutex<Walk>, Condvar),
}

/// A record found by a chunk's walk: its data in the chunk's buffer, or read apart.
enum Span {
    InChunk(usize, usize),
    Apart(Vec<u8>, u32),
}

#[cfg(unix)]
impl Job<'_> {
    /// Stops every thread, waking those waiting for a walk.
    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _guard = self.walk.0.lock().unwrap_or_else(|e| e.into_inner());
        self.walk.1.notify_all();
    }

    /// Reads, walks and visits chunk `k`: its state, or `None`
    /// when the scan is irregular (or stopped).
    fn chunk<S>(
        &self,
        k: usize,
        buf: &mut Vec<u8>,
        start: &impl Fn(u64) -> S,
        visit: &impl Fn(&mut S, u64, &[u8]) -> bool,
    ) -> Option<S> {
        let from = k as u64 * self.chunk;
        let to = (from + self.chunk).min(self.len);
        // Within the chunk size, a usize.
        buf.resize((to - from) as usize, 0);
        if !read_exact_at(self.file, buf, from) {
            return None;
        }
        // Wait for the walk to reach this chunk.
        let (mut at, first) = {
            let mut w = self.walk.0.lock().unwrap_or_else(|e| e.into_inner());
            while w.walked != k {
                if self.stop.load(Ordering::Relaxed) {
                    return None;
                }
                w = self.walk.1.wait(w).unwrap_or_else(|e| e.into_inner());
            }
            (w.offset, w.index)
        };
        let mut spans = Vec::new();
        while at < to {
            let (span, end) = self.record_at(at, from, buf)?;
            spans.push(span);
            at = end;
        }
        {
            let mut w = self.walk.0.lock().unwrap_or_else(|e| e.into_inner());
            w.walked = k + 1;
            w.offset = at;
            w.index = first + spans.len() as u64;
            self.walk.1.notify_all();
        }
        let mut state = start(first);
        for (j, span) in spans.iter().enumerate() {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let (data, crc) = match span {
                Span::InChunk(s, e) => {
                    let f = &buf[*e..*e + FOOTER_BYTES];
                    (&buf[*s..*e], u32::from_le_bytes([f[0], f[1], f[2], f[3]]))
                }
                Span::Apart(v, crc) => (&v[..], *crc),
            };
            if self.options.verify_checksums && masked_crc32c(data) != crc {
                return None;
            }
            if !visit(&mut state, first + j as u64, data) {
                return None;
            }
        }
        Some(state)
    }

    /// The record whose header starts at file offset `at` (within the chunk that starts at
    /// `from` and is held in `buf`): its data, and where the next record starts; `None` when
    /// it is not a whole, sound record within the file's length.
    fn record_at(&self, at: u64, from: u64, buf: &[u8]) -> Option<(Span, u64)> {
        let end_of_header = at.checked_add(HEADER_BYTES as u64)?;
        if end_of_header > self.len {
            return None;
        }
        let in_chunk = |a: u64, b: u64| -> Option<(usize, usize)> {
            let (s, e) = (a.checked_sub(from)?, b.checked_sub(from)?);
            (e <= buf.len() as u64).then_some((s as usize, e as usize))
        };
        let mut header = [0u8; HEADER_BYTES];
        match in_chunk(at, end_of_header) {
            Some((s, e)) => header.copy_from_slice(&buf[s..e]),
            None => {
                if !read_exact_at(self.file, &mut header, at) {
                    return None;
                }
            }
        }
        let h = &header;
        let length = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        if self.options.verify_checksums
            && masked_crc32c(&h[..8]) != u32::from_le_bytes([h[8], h[9], h[10], h[11]])
        {
            return None;
        }
        if length > self.options.max_record_bytes {
            return None;
        }
        let data_end = end_of_header.checked_add(length)?;
        let end = data_end.checked_add(FOOTER_BYTES as u64)?;
        if end > self.len {
            return None;
        }
        if let Some((s, e)) = in_chunk(end_of_header, end) {
            return Some((Span::InChunk(s, e - FOOTER_BYTES), end));
        }
        // Runs past the chunk: read whole, apart (bounded by the file's length, checked).
        let mut data = vec![0u8; usize::try_from(length + FOOTER_BYTES as u64).ok()?];
        if !read_exact_at(self.file, &mut data, end_of_header) {
            return None;
        }
        let f = data.split_off(data.len() - FOOTER_BYTES);
        let crc = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
        Some((Span::Apart(data, crc), end))
    }
}

/// Fills `buf` from `file` at `offset`; false if the file ends first (it shrank) or cannot be
/// read.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> bool {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset).is_ok()
}

/// Elsewhere than on Unix the scan is always irregular: callers read with
/// [`crate::RecordReader`].
#[cfg(not(unix))]
pub fn scan<S: Send>(
    _file: &File,
    _len: u64,
    _options: &ReaderOptions,
    _threads: usize,
    _chunk_bytes: usize,
    _start: impl Fn(u64) -> S + Sync,
    _visit: impl Fn(&mut S, u64, &[u8]) -> bool + Sync,
) -> Scan<S> {
    Scan::Irregular
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::{write_file, Compression, RecordReader};

    /// The records the reader gives, or None where it reports an error.
    fn read_all(path: &std::path::Path) -> Option<Vec<Vec<u8>>> {
        let mut r = RecordReader::open(path, ReaderOptions::default()).ok()?;
        let mut out = Vec::new();
        loop {
            match r.next_record() {
                Ok(Some(rec)) => out.push(rec.to_vec()),
                Ok(None) => return Some(out),
                Err(_) => return None,
            }
        }
    }

    fn scanned(path: &std::path::Path, threads: usize, chunk: usize) -> Option<Vec<Vec<u8>>> {
        let file = File::open(path).unwrap();
        let len = file.metadata().unwrap().len();
        let s = scan(
            &file,
            len,
            &ReaderOptions::default(),
            threads,
            chunk,
            |first| (first, Vec::new()),
            |(first, v): &mut (u64, Vec<Vec<u8>>), i, r| {
                assert_eq!(i, *first + v.len() as u64);
                v.push(r.to_vec());
                true
            },
        );
        match s {
            Scan::Done { states, records } => {
                let all: Vec<_> = states.into_iter().flat_map(|(_, v)| v).collect();
                assert_eq!(all.len() as u64, records);
                Some(all)
            }
            Scan::Irregular => None,
        }
    }

    /// A small deterministic generator (no dependency for a test).
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    #[test]
    fn scan_visits_every_record_in_order_at_any_chunk_size_and_thread_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.tfrecord");
        let mut seed = 7;
        let records: Vec<Vec<u8>> = (0..300)
            .map(|i| {
                let n = (lcg(&mut seed) % 700) as usize;
                (0..n).map(|j| (i + j) as u8).collect()
            })
            .collect();
        write_file(&path, Compression::None, records.iter().map(|r| &r[..])).unwrap();
        for chunk in [1, 12, 16, 17, 100, 999, 4096, 1 << 20] {
            for threads in [1, 2, 3, 8] {
                assert_eq!(
                    scanned(&path, threads, chunk).as_deref(),
                    Some(&records[..]),
                    "chunk {chunk}, {threads} threads"
                );
            }
        }
    }

    #[test]
    fn scan_of_an_empty_file_has_no_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.tfrecord");
        std::fs::write(&path, b"").unwrap();
        assert_eq!(scanned(&path, 2, 64), Some(vec![]));
    }

    #[test]
    fn scan_is_irregular_wherever_the_reader_reports_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.tfrecord");
        let records: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 37 + i as usize]).collect();
        write_file(&path, Compression::None, records.iter().map(|r| &r[..])).unwrap();
        let clean = std::fs::read(&path).unwrap();
        let mut seed = 11;
        // Every byte flipped in turn (the reader finds each), cuts at every length (a partial
        // header at the end reads cleanly: both must agree), and bytes appended.
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for at in 0..clean.len() {
            let mut b = clean.clone();
            b[at] ^= 1 << (lcg(&mut seed) % 8);
            cases.push(b);
        }
        for cut in 0..clean.len() {
            cases.push(clean[..cut].to_vec());
        }
        for extra in 1..30 {
            let mut b = clean.clone();
            b.extend((0..extra).map(|_| lcg(&mut seed) as u8));
            cases.push(b);
        }
        for bytes in cases {
            std::fs::write(&path, &bytes).unwrap();
            let want = read_all(&path);
            for chunk in [13, 64, 500] {
                let got = scanned(&path, 2, chunk);
                // A clean scan must equal the reader's records; an irregular one must be a file
                // the reader does not read the same way as a clean one (it is then re-read).
                if let Some(got) = got {
                    assert_eq!(Some(got), want, "chunk {chunk}");
                }
            }
        }
    }

    #[test]
    fn scan_stops_when_a_visitor_declines_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.tfrecord");
        let records: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; 100]).collect();
        write_file(&path, Compression::None, records.iter().map(|r| &r[..])).unwrap();
        let file = File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        let s = scan(
            &file,
            len,
            &ReaderOptions::default(),
            2,
            256,
            |_| (),
            |_, i, _| i != 33,
        );
        assert!(matches!(s, Scan::Irregular));
    }

    #[test]
    fn scan_refuses_a_record_beyond_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.tfrecord");
        write_file(&path, Compression::None, [&[1u8; 1000][..]]).unwrap();
        let file = File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        let options = ReaderOptions {
            max_record_bytes: 999,
            ..ReaderOptions::default()
        };
        let s = scan(&file, len, &options, 2, 64, |_| (), |_, _, _| true);
        assert!(matches!(s, Scan::Irregular));
    }
}
