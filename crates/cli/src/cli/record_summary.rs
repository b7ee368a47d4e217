//! `inspect`'s summary of a file of serialize_tensor records: the tensors grouped by dtype and
//! shape (records, bytes, statistics over every value), decoded on worker threads while the
//! caller reads on.
//!
//! The reader (the caller's thread, the read-ahead threads behind it, checksums included) hands
//! records over in batches of a few MiB; each worker decodes a batch's records one at a time,
//! adds each tensor to the batch's own summary and drops it, giving back what the decode
//! charged to the `--max-memory` budget; the batches' summaries are merged in file order, so
//! the result (groups in the order they first appear, the first failing record's error) is
//! the same as a single pass's. Memory: a few batches in flight and one tensor per worker.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, Sender, SyncSender};
use std::sync::{Arc, Mutex, RwLock};

use anyhow::{anyhow, Result};
use tensorcast::buffer::Buffer;
use tensorcast::io::ReadOptions;
use tensorcast::{DataType, Tensor, TensorShape};

use super::stats::Accum;

/// The serialize_tensor records of one dtype and shape, summarised.
pub(crate) struct Group {
    pub(crate) dtype: DataType,
    pub(crate) shape: TensorShape,
    pub(crate) records: u64,
    /// Their tensors' bytes together.
    pub(crate) bytes: u64,
    /// Statistics over every element of every record of the group (numeric dtypes).
    pub(crate) stats: Option<Accum>,
}

/// The tensors of a file's serialize_tensor records, grouped by dtype and shape in the order
/// the groups first appear.
#[derive(Default)]
pub(crate) struct TensorSummary {
    pub(crate) groups: Vec<Group>,
    index: HashMap<(DataType, Vec<i64>), usize>,
    /// The group of the last tensor added (the next is usually of the same).
    last: usize,
}

impl TensorSummary {
    /// Adds a tensor to its group (made if it is the first of its dtype and shape).
    pub(crate) fn add(&mut self, t: &Tensor) {
        let same = |g: &Group| g.dtype == t.dtype() && g.shape.dim_sizes() == t.shape().dim_sizes();
        let i = match self.groups.get(self.last) {
            Some(g) if same(g) => self.last,
            _ => self.group_of(t.dtype(), t.shape()),
        };
        self.last = i;
        let g = &mut self.groups[i];
        g.records += 1;
        g.bytes += t.total_bytes() as u64;
        if let Some(acc) = &mut g.stats {
            acc.add(t, &mut |_| {});
        }
    }

    /// Adds what `other` (the summary of later records) holds, its new groups after ours.
    pub(crate) fn merge(&mut self, other: TensorSummary) {
        for g in other.groups {
            let i = self.group_of(g.dtype, &g.shape);
            let mine = &mut self.groups[i];
            mine.records += g.records;
            mine.bytes += g.bytes;
            if let (Some(a), Some(b)) = (&mut mine.stats, &g.stats) {
                a.merge(b);
            }
        }
    }

    /// The index of the group of `dtype` and `shape`, made (empty) if there is none yet.
    fn group_of(&mut self, dtype: DataType, shape: &TensorShape) -> usize {
        let key = (dtype, shape.dim_sizes().to_vec());
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.groups.push(Group {
            dtype,
            shape: shape.clone(),
            records: 0,
            bytes: 0,
            stats: Accum::of(dtype),
        });
        self.index.insert(key, self.groups.len() - 1);
        self.groups.len() - 1
    }
}

/// The records a batch carries before it is handed to a worker.
const BATCH_BYTES: usize = 4 << 20;

/// Records handed over together: their bytes, each record starting at a multiple of 64 bytes
/// from `base` (so that a tensor's content sits where its decode can share it rather than
/// copy it, as in a file TensorFlow wrote), their spans, and the index of the first in the
/// file.
struct Batch {
    seq: usize,
    first: u64,
    bytes: Vec<u8>,
    /// Where the 64-byte-aligned part of `bytes` starts.
    base: usize,
    spans: Vec<(usize, usize)>,
}

impl Batch {
    /// A batch over `bytes` (a recycled batch's allocation), or a new allocation.
    fn new(seq: usize, bytes: Option<Vec<u8>>) -> Self {
        let mut bytes = bytes.unwrap_or_else(|| Vec::with_capacity(BATCH_BYTES + (64 << 10)));
        bytes.clear();
        // Past a reallocation (a record larger than the batch) the alignment is lost: the
        // decodes then copy, nothing worse.
        let base = bytes.as_ptr().align_offset(64).min(63);
        bytes.resize(base, 0);
        Batch {
            seq,
            first: 0,
            bytes,
            base,
            spans: Vec::new(),
        }
    }

    fn push(&mut self, record: &[u8]) {
        let at = self.base + (self.bytes.len() - self.base).next_multiple_of(64);
        self.bytes.resize(at, 0);
        self.bytes.extend_from_slice(record);
        self.spans.push((at, self.bytes.len()));
    }
}

/// What a worker made of a batch: its summary, or the first failing record and why.
type Done = (
    usize,
    std::result::Result<TensorSummary, (u64, anyhow::Error)>,
);

/// Summarises records handed to it ([`Summariser::add`]) on worker threads; the caller's
/// thread only copies each record into a batch.
pub(crate) struct Summariser {
    work: Option<SyncSender<Batch>>,
    done: Receiver<Done>,
    /// The allocations of batches summarised, for the next batches.
    recycled: Receiver<Vec<u8>>,
    workers: Vec<std::thread::JoinHandle<()>>,
    batch: Batch,
    sent: usize,
}

impl Summariser {
    /// A summariser with `threads` workers decoding with `options` (whose budget each decode
    /// charges, and gives back once the tensor is added).
    pub(crate) fn start(threads: usize, options: &ReadOptions) -> Result<Self> {
        let threads = threads.max(1);
        let (work, queue) = sync_channel::<Batch>(threads);
        let queue = Arc::new(Mutex::new(queue));
        let (done_tx, done) = std::sync::mpsc::channel::<Done>();
        let alone = Arc::new(RwLock::new(()));
        let (recycle, recycled) = std::sync::mpsc::channel::<Vec<u8>>();
        let mut workers = Vec::with_capacity(threads);
        for _ in 0..threads {
            let queue = Arc::clone(&queue);
            let done_tx = done_tx.clone();
            let options = options.clone();
            let alone = Arc::clone(&alone);
            let recycle = recycle.clone();
            let w = std::thread::Builder::new()
                .name("tensorcast-summary".into())
                .spawn(move || loop {
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(batch) = next else { return };
                    let seq = batch.seq;
                    let r = summarise(batch, &options, &alone, &recycle);
                    if done_tx.send((seq, r)).is_err() {
                        return;
                    }
                })
                .map_err(|e| anyhow!("cannot start a worker thread: {e}"))?;
            workers.push(w);
        }
        Ok(Self {
            work: Some(work),
            done,
            workers,
            batch: Batch::new(0, None),
            sent: 0,
            recycled,
        })
    }

    /// Adds record `i` (records are added in file order).
    pub(crate) fn add(&mut self, i: u64, record: &[u8]) {
        if self.batch.spans.is_empty() {
            self.batch.first = i;
        }
        self.batch.push(record);
        if self.batch.bytes.len() >= BATCH_BYTES {
            self.send();
        }
    }

    fn send(&mut self) {
        // A batch's allocation comes back once its records are summarised: reused, its pages
        // are not faulted in again.
        let next = Batch::new(self.sent + 1, self.recycled.try_recv().ok());
        let batch = std::mem::replace(&mut self.batch, next);
        if let Some(w) = &self.work {
            // A worker that stopped (it cannot, short of a panic) leaves the batch unread; the
            // missing summary is reported by `finish`.
            let _ = w.send(batch);
        }
        self.sent += 1;
    }

    /// Waits for every batch and merges their summaries in file order into `into`; the error
    /// of the first record that did not decode (and its index), if any.
    pub(crate) fn finish(
        mut self,
        into: &mut TensorSummary,
    ) -> std::result::Result<(), (u64, anyhow::Error)> {
        if !self.batch.spans.is_empty() {
            self.send();
        }
        drop(self.work.take());
        let mut results: Vec<Option<_>> = (0..self.sent).map(|_| None).collect();
        for _ in 0..self.sent {
            match self.done.recv() {
                Ok((seq, r)) => results[seq] = Some(r),
                Err(_) => break,
            }
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        for r in results {
            match r {
                Some(Ok(s)) => into.merge(s),
                Some(Err(e)) => return Err(e),
                None => {
                    return Err((
                        0,
                        anyhow!("a worker thread stopped before its batch was summarised"),
                    ))
                }
            }
        }
        Ok(())
    }
}

/// Decodes and summarises the records of `batch`, each tensor dropped (and what it charged
/// given back) once added. Decodes run side by side under `alone`'s read lock; one that does
/// not fit the budget is tried again alone (the write lock: every other decode has given
/// back its charge), so that whether a record fits does not depend on what the other workers
/// happen to hold at the time.
fn summarise(
    batch: Batch,
    options: &ReadOptions,
    alone: &RwLock<()>,
    recycle: &Sender<Vec<u8>>,
) -> std::result::Result<TensorSummary, (u64, anyhow::Error)> {
    let mut summary = TensorSummary::default();
    // The records are decoded from the batch's memory, not copied out of it; once every
    // tensor is dropped the allocation goes back to the reader.
    let all = Arc::new(batch.bytes);
    let r = summarise_spans(
        &all,
        &batch.spans,
        batch.first,
        options,
        alone,
        &mut summary,
    );
    if let Ok(v) = Arc::try_unwrap(all) {
        let _ = recycle.send(v);
    }
    r.map(|()| summary)
}

/// The records of `all` at `spans` (the first is record `first`) added to `summary`.
fn summarise_spans(
    all: &Arc<Vec<u8>>,
    spans: &[(usize, usize)],
    first: u64,
    options: &ReadOptions,
    alone: &RwLock<()>,
    summary: &mut TensorSummary,
) -> std::result::Result<(), (u64, anyhow::Error)> {
    let budget = options.read_budget();
    for (k, &(start, end)) in spans.iter().enumerate() {
        let i = first + k as u64;
        let record = || {
            Buffer::from_owner(SharedBatch(Arc::clone(all)))
                .slice(start..end)
                .unwrap_or_else(Buffer::empty)
        };
        let shared = alone.read().unwrap_or_else(|e| e.into_inner());
        let decoded = match super::tfrecord::decode_tensor_in(record(), options) {
            Err(e) if is_too_large(&e) => {
                drop(shared);
                let _only = alone.write().unwrap_or_else(|e| e.into_inner());
                let r = super::tfrecord::decode_tensor_in(record(), options);
                r.map(|(t, charged)| {
                    summary.add(&t);
                    charged
                })
            }
            r => r.map(|(t, charged)| {
                summary.add(&t);
                charged
            }),
        };
        budget.release(decoded.map_err(|e| (i, e))?);
    }
    Ok(())
}

/// A batch's bytes, shared by the buffers of its records.
struct SharedBatch(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBatch {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// True for an error of a decode that did not fit the memory budget.
fn is_too_large(e: &anyhow::Error) -> bool {
    e.downcast_ref::<tensorcast::io::IoError>()
        .is_some_and(|e| e.kind() == tensorcast::io::ErrorKind::TooLarge)
}
