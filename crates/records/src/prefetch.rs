//! A thread that reads a file ahead in chunks, so that reading (the kernel's copy from the
//! page cache) and checking records (CRC32C) run on two cores at once. The reader takes the
//! chunks themselves as its buffer: records inside a chunk are handed out as slices of it,
//! only a record that straddles two chunks is copied.

use std::fs::File;
use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

/// Chunks in flight between the thread and the reader (memory: about this many chunks plus
/// the two the reader holds).
const IN_FLIGHT: usize = 2;

/// The reader's end of a prefetching thread.
pub(crate) struct Prefetcher {
    /// `None` only while dropping (dropped first, so that the thread's next send fails).
    chunks: Option<Receiver<io::Result<Vec<u8>>>>,
    recycle: SyncSender<Vec<u8>>,
    thread: Option<JoinHandle<()>>,
    /// The next chunk and how much of it was used.
    pub(crate) pending: Option<(Vec<u8>, usize)>,
}

impl Prefetcher {
    /// Starts reading `file` in chunks of `chunk` bytes.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn spawn(mut file: File, chunk: usize) -> io::Result<Self> {
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(IN_FLIGHT);
        let (recycle_tx, recycle_rx) = sync_channel::<Vec<u8>>(IN_FLIGHT + 2);
        let thread = std::thread::Builder::new()
            .name("tfrecord-prefetch".into())
            .spawn(move || loop {
                let mut v = match recycle_rx.try_recv() {
                    Ok(v) => v,
                    Err(TryRecvError::Empty) | Err(TryRecvError::Disconnected) => Vec::new(),
                };
                v.clear();
                if v.try_reserve(chunk).is_err() {
                    let _ = tx.send(Err(io::Error::new(
                        io::ErrorKind::OutOfMemory,
                        "cannot allocate a read-ahead chunk",
                    )));
                    return;
                }
                match (&mut file).take(chunk as u64).read_to_end(&mut v) {
                    Ok(0) => return, // end of file: dropping `tx` tells the reader
                    Ok(_) => {
                        if tx.send(Ok(v)).is_err() {
                            return; // the reader is gone
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks: Some(rx),
            recycle: recycle_tx,
            thread: Some(thread),
            pending: None,
        })
    }

    /// The next chunk; `None` at the end of the file.
    pub(crate) fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        match self.chunks.as_ref().map(Receiver::recv) {
            Some(Ok(r)) => r.map(Some),
            _ => Ok(None),
        }
    }

    /// Hands a used chunk back for reuse (dropped if the thread has enough).
    pub(crate) fn recycle(&self, v: Vec<u8>) {
        let _ = self.recycle.try_send(v);
    }
}

impl Drop for Prefetcher {
    /// Stops the thread and waits for it (it ends at its next send, after at most one chunk's
    /// read), so that no thread outlives its reader.
    fn drop(&mut self) {
        self.chunks = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
