//! Threads that read a file ahead in chunks, so that reading (the kernel's copy from the page
//! cache) and checking records (CRC32C) run on every core at once. The reader takes the chunks
//! themselves as its buffer: records inside a chunk are handed out as slices of it, only a
//! record that straddles two chunks is copied.
//!
//! On Unix two threads read alternate chunks with positional reads (`pread`), so that the copy
//! out of the page cache, the larger half of the work, is itself split over two cores while the
//! reader checks CRCs; elsewhere one thread reads the file in order.

use std::fs::File;
use std::io;
#[cfg(not(unix))]
use std::io::Read;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Chunks in flight between each thread and the reader (memory: about this many chunks per
/// thread plus the two the reader holds).
const IN_FLIGHT: usize = 2;

/// One reading thread's ends of its channels.
struct Lane {
    /// `None` only while dropping (dropped first, so that the thread's next send fails).
    chunks: Option<Receiver<io::Result<Vec<u8>>>>,
    recycle: SyncSender<Vec<u8>>,
    thread: Option<JoinHandle<()>>,
}

/// The reader's end of the read-ahead threads.
pub(crate) struct Prefetcher {
    lanes: Vec<Lane>,
    /// The lane the next chunk comes from (chunks are dealt round-robin).
    turn: usize,
    chunk: usize,
    /// A chunk shorter than `chunk` was received: the file ended there (a file still growing
    /// is read up to that point, never with a gap).
    ended: bool,
    /// The next chunk and how much of it was used.
    pub(crate) pending: Option<(Vec<u8>, usize)>,
}

/// A buffer of `chunk` bytes for the next chunk: a recycled one (not cleared: it is about to
/// be overwritten), or a new one; `None` when allocation fails.
fn buffer(recycled: &Receiver<Vec<u8>>, chunk: usize) -> Option<Vec<u8>> {
    let mut v = match recycled.try_recv() {
        Ok(v) => v,
        Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => Vec::new(),
    };
    if v.len() >= chunk {
        v.truncate(chunk);
    } else {
        v.clear();
        v.try_reserve(chunk).ok()?;
        v.resize(chunk, 0);
    }
    Some(v)
}

fn out_of_memory() -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        "cannot allocate a read-ahead chunk",
    )
}

/// Reads chunks `lane, lane + lanes, ...` of `file` with positional reads until a chunk comes
/// back short (the end of the file) or the reader is gone.
#[cfg(unix)]
fn read_lane(
    file: &File,
    lane: usize,
    lanes: usize,
    chunk: usize,
    tx: &SyncSender<io::Result<Vec<u8>>>,
    recycled: &Receiver<Vec<u8>>,
) {
    use std::os::unix::fs::FileExt;
    let mut index = lane as u64;
    loop {
        let Some(mut v) = buffer(recycled, chunk) else {
            let _ = tx.send(Err(out_of_memory()));
            return;
        };
        let mut got = 0usize;
        let at = index * chunk as u64;
        while got < chunk {
            match file.read_at(&mut v[got..], at + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
        v.truncate(got);
        // A short chunk is the last: the reader stops there.
        let last = got < chunk;
        if tx.send(Ok(v)).is_err() || last {
            return;
        }
        index += lanes as u64;
    }
}

impl Prefetcher {
    /// Starts reading `file` in chunks of `chunk` bytes.
    ///
    /// # Errors
    /// When a thread cannot be spawned.
    pub(crate) fn spawn(file: File, chunk: usize) -> io::Result<Self> {
        let lanes_n = if cfg!(unix) { 2 } else { 1 };
        let file = Arc::new(file);
        let mut lanes = Vec::with_capacity(lanes_n);
        for lane in 0..lanes_n {
            let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(IN_FLIGHT);
            let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
            let file = Arc::clone(&file);
            let thread = std::thread::Builder::new()
                .name("tfrecord-prefetch".into())
                .spawn(move || {
                    #[cfg(unix)]
                    read_lane(&file, lane, lanes_n, chunk, &tx, &recycle_rx);
                    #[cfg(not(unix))]
                    read_in_order(&file, chunk, &tx, &recycle_rx);
                    let _ = lane;
                })?;
            lanes.push(Lane {
                chunks: Some(rx),
                recycle: recycle_tx,
                thread: Some(thread),
            });
        }
        Ok(Self {
            lanes,
            turn: 0,
            chunk,
            ended: false,
            pending: None,
        })
    }

    /// The next chunk; `None` at the end of the file.
    pub(crate) fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        if self.ended {
            return Ok(None);
        }
        let lane = &self.lanes[self.turn];
        self.turn = (self.turn + 1) % self.lanes.len();
        match lane.chunks.as_ref().map(Receiver::recv) {
            Some(Ok(Ok(v))) => {
                if v.len() < self.chunk {
                    self.ended = true;
                }
                if v.is_empty() {
                    return Ok(None);
                }
                Ok(Some(v))
            }
            Some(Ok(Err(e))) => {
                self.ended = true;
                Err(e)
            }
            _ => {
                self.ended = true;
                Ok(None)
            }
        }
    }

    /// Hands a used chunk back for reuse (to the lane that reads next; dropped if it has
    /// enough).
    pub(crate) fn recycle(&self, v: Vec<u8>) {
        let _ = self.lanes[self.turn].recycle.try_send(v);
    }
}

/// Reads `file` in order, a chunk at a time (where positional reads are not available).
#[cfg(not(unix))]
fn read_in_order(
    mut file: &File,
    chunk: usize,
    tx: &SyncSender<io::Result<Vec<u8>>>,
    recycled: &Receiver<Vec<u8>>,
) {
    loop {
        let Some(mut v) = buffer(recycled, chunk) else {
            let _ = tx.send(Err(out_of_memory()));
            return;
        };
        v.clear();
        match (&mut file).take(chunk as u64).read_to_end(&mut v) {
            Ok(n) => {
                let last = n < chunk;
                if tx.send(Ok(v)).is_err() || last {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

impl Drop for Prefetcher {
    /// Stops the threads and waits for them (each ends at its next send, after at most one
    /// chunk's read), so that no thread outlives its reader.
    fn drop(&mut self) {
        for lane in &mut self.lanes {
            lane.chunks = None;
        }
        for lane in &mut self.lanes {
            if let Some(t) = lane.thread.take() {
                let _ = t.join();
            }
        }
    }
}
