//! The Examples of a TFRecord file parsed batch by batch ahead of the caller: `tf.data`'s
//! `TFRecordDataset(path).batch(n).map(parse_example).prefetch(..)` in one iterator.

use std::collections::VecDeque;
use std::fs::File;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use rayon::prelude::*;

use crate::error::{RecordsError, Result};
use crate::file::next_span;
use crate::parse::{parse_example, FeatureSpec, Parsed};
use crate::reader::{ReaderOptions, RecordReader};
use crate::Compression;

/// Batches handed to rayon's pool at a time.
const BATCHES_PER_WINDOW: usize = 4;
/// Windows being parsed while the next one is read.
const WINDOWS_AHEAD: usize = 2;
/// Parsed batches waiting for the caller.
const READY_BATCHES: usize = 8;

/// One parsed batch: a result per spec, as [`parse_example`] returns them.
pub type ParsedBatch = Vec<(String, Parsed)>;

/// The serialized `Example`s of a TFRecord file (or of records in memory) parsed as
/// [`parse_example`] parses them, `batch_size` at a time, in file order; the last batch may be
/// smaller.
///
/// A thread of its own reads the records (an uncompressed file is memory-mapped and walked
/// once, each checksum verified on the way; a compressed one is streamed) while rayon's pool
/// parses the batches read before, whole batches at a time on every core, so reading,
/// parsing and the caller's own work on earlier batches overlap. At most a few batches are
/// read ahead of the caller (memory is bounded by the batch size, not the file).
///
/// A damaged file yields the whole batches before the damage (as `tf.data`'s `batch`, not the
/// records of the batch it cuts short), then the error (TensorFlow's
/// `DataLoss` texts and offsets, as [`RecordReader`] reports them); a batch that does not
/// parse yields [`parse_example`]'s error. Nothing follows an error. Dropping the iterator
/// stops the reading thread.
///
/// ```
/// use tensorcast_core::DataType;
/// use tensorcast_proto::example::{feature::Kind, Example, Feature, Features, Int64List};
/// use tensorcast_proto::Message;
/// use tensorcast_records::{
///     write_file, Compression, ExampleBatches, FeatureSpec, Parsed, ReaderOptions,
/// };
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("ex.tfrecord");
/// let examples: Vec<Vec<u8>> = (0..5)
///     .map(|i| {
///         let mut f = Features::default();
///         let v = Feature { kind: Some(Kind::Int64List(Int64List { value: vec![i] })) };
///         f.feature.insert("label".into(), v);
///         Example { features: Some(f) }.encode_to_vec()
///     })
///     .collect();
/// write_file(&path, Compression::None, &examples)?;
/// let spec = FeatureSpec::FixedLen { shape: vec![], dtype: DataType::INT64, default_value: None };
/// let batches = ExampleBatches::open(&path, ReaderOptions::default(), 2, vec![("label".into(), spec)])?;
/// let mut labels = Vec::new();
/// for batch in batches {
///     let Parsed::Dense(t) = &batch?[0].1 else { unreachable!() };
///     labels.push(t.as_slice::<i64>().unwrap().to_vec());
/// }
/// assert_eq!(labels, [vec![0, 1], vec![2, 3], vec![4]]);
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
///
/// [`ExampleBatches::map`] runs a conversion of each parsed batch on the pool thread that
/// parsed it (tensorcast-arrow's record batches, for example), so that the caller receives
/// finished values.
pub struct ExampleBatches<T = ParsedBatch> {
    ready: Option<Receiver<Result<T>>>,
    worker: Option<JoinHandle<()>>,
}

/// What a pool thread does with each parsed batch before it is passed on.
type Finish<T> = Arc<dyn Fn(ParsedBatch) -> Result<T> + Send + Sync>;

/// Where the records come from.
enum Source {
    /// A mapped (or in-memory) uncompressed file, walked from `offset`.
    Mapped {
        data: Bytes,
        offset: usize,
        options: ReaderOptions,
    },
    /// A streamed (compressed) file.
    Reader(Box<RecordReader<File>>),
    /// Records already in memory, from `next`.
    Records { records: Vec<Bytes>, next: usize },
}

impl Source {
    /// Up to `n` more records, and the error that ended them (the records before it come
    /// first); an empty window and no error at the end. Each `group` records (a batch) share a
    /// reference count of their own: the views of a batch's strings are counted on the batch,
    /// not all on one count that every thread parsing the file would contend for.
    fn window(&mut self, n: usize, group: usize) -> (Vec<Bytes>, Option<RecordsError>) {
        let mut out = Vec::with_capacity(n);
        let group = group.max(1);
        match self {
            Source::Mapped {
                data,
                offset,
                options,
            } => {
                let mut spans = Vec::with_capacity(n.min(1 << 16));
                let mut error = None;
                while spans.len() < n {
                    match next_span(data, offset, options) {
                        Ok(Some(span)) => spans.push(span),
                        Ok(None) => break,
                        Err(e) => {
                            error = Some(e);
                            break;
                        }
                    }
                }
                for batch in spans.chunks(group) {
                    let (first, last) = (batch[0].0, batch[batch.len() - 1].1);
                    let view = Bytes::from_owner(MapView {
                        map: data.clone(),
                        range: first..last,
                    });
                    out.extend(batch.iter().map(|&(s, e)| view.slice(s - first..e - first)));
                }
                return (out, error);
            }
            Source::Reader(reader) => {
                // Copied into one block per batch.
                let mut error = None;
                while out.len() < n && error.is_none() {
                    let (mut block, mut ends) = (Vec::new(), Vec::with_capacity(group));
                    while ends.len() < group && out.len() + ends.len() < n {
                        match reader.next_record() {
                            Ok(Some(r)) => {
                                block.extend_from_slice(r);
                                ends.push(block.len());
                            }
                            Ok(None) => break,
                            Err(e) => {
                                error = Some(e);
                                break;
                            }
                        }
                    }
                    let short = ends.len() < group;
                    let block = Bytes::from(block);
                    let mut start = 0;
                    for end in ends {
                        out.push(block.slice(start..end));
                        start = end;
                    }
                    if short {
                        break;
                    }
                }
                return (out, error);
            }
            Source::Records { records, next } => {
                let end = (*next + n).min(records.len());
                out.extend_from_slice(&records[*next..end]);
                *next = end;
            }
        }
        (out, None)
    }
}

/// A range of a mapped file, the owner of one batch's record views.
struct MapView {
    map: Bytes,
    range: std::ops::Range<usize>,
}

impl AsRef<[u8]> for MapView {
    fn as_ref(&self) -> &[u8] {
        &self.map[self.range.clone()]
    }
}

impl ExampleBatches {
    /// Parses the Examples of the TFRecord file at `path`, read as `options` say
    /// (compression, checksums, record-size limit, incomplete tail), `batch_size` at a time.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the file cannot be opened (or mapped);
    /// [`RecordsError::InvalidArgument`] for a `batch_size` of 0. Damage and parse errors come
    /// from the iterator, in file order.
    pub fn open(
        path: impl AsRef<Path>,
        options: ReaderOptions,
        batch_size: usize,
        specs: Vec<(String, FeatureSpec)>,
    ) -> Result<Self> {
        Self::open_map(path, options, batch_size, specs, Ok)
    }

    /// Parses `records` (serialized `Example`s already in memory) `batch_size` at a time.
    ///
    /// # Errors
    /// [`RecordsError::InvalidArgument`] for a `batch_size` of 0.
    pub fn from_records(
        records: Vec<Bytes>,
        batch_size: usize,
        specs: Vec<(String, FeatureSpec)>,
    ) -> Result<Self> {
        Self::from_records_map(records, batch_size, specs, Ok)
    }
}

impl<T: Send + 'static> ExampleBatches<T> {
    /// [`ExampleBatches::open`], with `finish` run on each parsed batch by the pool thread
    /// that parsed it; an error it returns ends the iteration as a parse error does.
    ///
    /// # Errors
    /// As [`ExampleBatches::open`].
    pub fn open_map(
        path: impl AsRef<Path>,
        options: ReaderOptions,
        batch_size: usize,
        specs: Vec<(String, FeatureSpec)>,
        finish: impl Fn(ParsedBatch) -> Result<T> + Send + Sync + 'static,
    ) -> Result<Self> {
        check_batch_size(batch_size)?;
        let source = if options.compression == Compression::None {
            let file = File::open(path).map_err(|e| RecordsError::io("cannot open", e))?;
            let map = tensorcast_buffer::Buffer::map_file(&file)
                .map_err(|e| RecordsError::io("cannot map", e))?;
            Source::Mapped {
                data: map.into_bytes(),
                offset: 0,
                options,
            }
        } else {
            Source::Reader(Box::new(RecordReader::open(path, options)?))
        };
        Self::start(source, batch_size, specs, Arc::new(finish))
    }

    /// [`ExampleBatches::from_records`], with `finish` run on each parsed batch as
    /// [`ExampleBatches::open_map`] runs it.
    ///
    /// # Errors
    /// As [`ExampleBatches::from_records`].
    pub fn from_records_map(
        records: Vec<Bytes>,
        batch_size: usize,
        specs: Vec<(String, FeatureSpec)>,
        finish: impl Fn(ParsedBatch) -> Result<T> + Send + Sync + 'static,
    ) -> Result<Self> {
        check_batch_size(batch_size)?;
        let source = Source::Records { records, next: 0 };
        Self::start(source, batch_size, specs, Arc::new(finish))
    }

    fn start(
        source: Source,
        batch_size: usize,
        specs: Vec<(String, FeatureSpec)>,
        finish: Finish<T>,
    ) -> Result<Self> {
        let (tx, rx) = sync_channel(READY_BATCHES);
        let worker = std::thread::Builder::new()
            .name("tensorcast-example-batches".into())
            .spawn(move || produce(source, batch_size, specs, &finish, &tx))
            .map_err(|e| RecordsError::io("cannot start the reading thread", e))?;
        Ok(Self {
            ready: Some(rx),
            worker: Some(worker),
        })
    }
}

fn check_batch_size(batch_size: usize) -> Result<()> {
    if batch_size == 0 {
        return Err(RecordsError::invalid("batch_size must be at least 1"));
    }
    Ok(())
}

/// The reading thread: reads a window of records, hands it to rayon's pool to parse, and
/// passes finished windows on in order, keeping [`WINDOWS_AHEAD`] windows in the pool.
fn produce<T: Send + 'static>(
    mut source: Source,
    batch_size: usize,
    specs: Vec<(String, FeatureSpec)>,
    finish: &Finish<T>,
    out: &SyncSender<Result<T>>,
) {
    let specs = Arc::new(specs);
    let window_records = batch_size.saturating_mul(BATCHES_PER_WINDOW);
    let mut pending: VecDeque<Receiver<Vec<Result<T>>>> = VecDeque::new();
    loop {
        let (mut records, error) = source.window(window_records, batch_size);
        let at_end = error.is_some() || records.len() < window_records;
        if error.is_some() {
            // As `tf.data`'s `batch`: the records of a batch the damage cut short are not
            // yielded (the window starts on a batch boundary).
            records.truncate(records.len() / batch_size * batch_size);
        }
        if !records.is_empty() {
            let (tx, rx) = sync_channel(1);
            let specs = Arc::clone(&specs);
            let finish = Arc::clone(finish);
            rayon::spawn(move || {
                let parsed: Vec<Result<T>> = records
                    .par_chunks(batch_size)
                    .map(|batch| parse_example(batch, None, &specs).and_then(|p| finish(p)))
                    .collect();
                let _ = tx.send(parsed);
            });
            pending.push_back(rx);
        }
        while pending.len() > WINDOWS_AHEAD || (at_end && !pending.is_empty()) {
            let Some(done) = pending.pop_front().and_then(|rx| rx.recv().ok()) else {
                return;
            };
            for batch in done {
                let failed = batch.is_err();
                if out.send(batch).is_err() || failed {
                    return;
                }
            }
        }
        if at_end {
            if let Some(e) = error {
                let _ = out.send(Err(e));
            }
            return;
        }
    }
}

impl<T> Iterator for ExampleBatches<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        self.ready.as_ref()?.recv().ok()
    }
}

impl<T> Drop for ExampleBatches<T> {
    fn drop(&mut self) {
        // Closing the channel first makes the reading thread's next send fail, so it stops.
        self.ready.take();
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl<T> std::fmt::Debug for ExampleBatches<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExampleBatches").finish_non_exhaustive()
    }
}
