//! TFRecord files in the CLI: told by the one detector ([`super::detect`]), shown by `inspect`
//! (compression, record count, then the tensors of `tf.io.serialize_tensor` records - listed
//! for a few records, summarised by dtype and shape for many - or the schema of
//! `tf.train.Example` / `SequenceExample` records, or an event file's tags), and read and
//! written by `convert` (serialize_tensor records to and from tensor files, TFRecord to
//! TFRecord with any compression, Examples parsed with a `--spec`).
//!
//! Memory: a record is held one at a time (the reader's buffer, bounded by the file's size,
//! or by `--max-memory` for a compressed file); a decoded tensor's bytes beyond its record's
//! (a TensorProto's fill, its string elements) are charged to the command's `--max-memory`
//! budget, and so are a compressed file's decompressed records beyond the file's own size
//! when their tensors are kept (`convert`); `inspect` gives back what it charged for a record
//! once it has added it to the statistics.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use bytes::Bytes;
use serde_json::{json, Value};
use tensorcast::io::{escaped, NamedTensor, ReadOptions};
use tensorcast::proto::example::{feature::Kind, Example, Feature, Features, SequenceExample};
use tensorcast::proto::{DecodeOptions, Message, TensorProto};
use tensorcast::{TString, Tensor};
use tensorcast_records::events::{decode_event, SummaryValue};
use tensorcast_records::{Compression, FeatureSpec, Parsed, ReaderOptions, RecordReader};

use super::inspect::{Args as InspectArgs, FileReport};
use super::progress::{self, human_bytes};
use super::record_summary::{Summariser, TensorSummary};
use super::stats::{Accum, Stats};
use super::table::{Align, Table};

/// Parses `--compression`: `none`, `gzip`, `zlib` (any case; TensorFlow's `""`, `GZIP`,
/// `ZLIB` too).
pub(crate) fn parse_compression(s: &str) -> Result<Compression> {
    match s.to_ascii_lowercase().as_str() {
        "" | "none" => Ok(Compression::None),
        "gzip" | "gz" => Ok(Compression::Gzip),
        "zlib" | "zz" => Ok(Compression::Zlib),
        _ => bail!("unknown compression '{s}' (none, gzip or zlib)"),
    }
}

/// How a compression is shown: `none`, `GZIP`, `ZLIB`.
fn compression_name(c: Compression) -> &'static str {
    match c {
        Compression::None => "none",
        c => c.tf_name(),
    }
}

/// What the records of a file are, from its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// No records.
    Empty,
    /// `tf.io.serialize_tensor` records (serialized `TensorProto`s).
    Tensors,
    /// `tf.train.Example`s.
    Examples,
    /// `tf.train.SequenceExample`s.
    SequenceExamples,
    /// A TensorBoard event file (`tensorflow.Event`s, the first `brain.Event:2`).
    Events,
    /// Anything else.
    Bytes,
}

impl Content {
    fn name(self) -> &'static str {
        match self {
            Content::Empty => "empty",
            Content::Tensors => "serialize_tensor",
            Content::Examples => "example",
            Content::SequenceExamples => "sequence_example",
            Content::Events => "events",
            Content::Bytes => "bytes",
        }
    }

    /// Tells a record's content: a TensorProto starts with its dtype (field 1, a varint) and
    /// decodes; an Example and a SequenceExample start with a message (field 1 or 2), the
    /// latter holding feature lists.
    fn of(record: &[u8]) -> Content {
        if decode_event(record).is_ok_and(|e| e.file_version.starts_with("brain.Event:")) {
            return Content::Events;
        }
        // The message, not the tensor: a record claiming a fill costs nothing to tell.
        if record.first() == Some(&0x08) && TensorProto::decode(record).is_ok() {
            return Content::Tensors;
        }
        if let Ok(s) = SequenceExample::decode(record) {
            if s.feature_lists.is_some() {
                return Content::SequenceExamples;
            }
        }
        if Example::decode(record).is_ok_and(|e| e.features.is_some()) {
            return Content::Examples;
        }
        Content::Bytes
    }
}

/// Decodes a serialize_tensor record, charging the tensor's bytes beyond the record's to the
/// budget of `options`; the tensor and the bytes charged.
pub(crate) fn decode_tensor(record: &[u8], options: &ReadOptions) -> Result<(Tensor, u64)> {
    decode_tensor_in(
        tensorcast::buffer::Buffer::copy_from_slice(record)?,
        options,
    )
}

/// [`decode_tensor`] of a record held in `record` (the tensor may share its memory).
pub(crate) fn decode_tensor_in(
    record: tensorcast::buffer::Buffer,
    options: &ReadOptions,
) -> Result<(Tensor, u64)> {
    tensorcast::io::tensorproto::read_charged(record, options).map_err(|e| {
        if e.kind() == tensorcast::io::ErrorKind::TooLarge {
            anyhow!(e)
        } else {
            anyhow!(e).context("not a serialized TensorProto")
        }
    })
}

/// The file's name as errors show it.
fn shown(path: &Path) -> String {
    escaped(&path.display().to_string())
}

/// Reads every record of `path`, calling `each(index, record)`; a progress bar for large
/// files. Errors name the file (and carry the reader's TensorFlow text and offset).
pub(crate) fn for_each_record(
    path: &Path,
    compression: Compression,
    each: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<u64> {
    for_each_record_with(path, compression, true, each)
}

/// [`for_each_record`], reading ahead on threads of its own when `prefetch` (worth it when
/// `each` works on this thread; not when it hands the records to workers, which need the
/// cores).
fn for_each_record_with(
    path: &Path,
    compression: Compression,
    prefetch: bool,
    mut each: impl FnMut(u64, &[u8]) -> Result<()>,
) -> Result<u64> {
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    // A record of an uncompressed file is at most the file; a compressed file's records are
    // bounded by --max-memory (a gzip bomb stops there).
    let max_record_bytes = match compression {
        Compression::None => file_bytes.max(1),
        _ => super::source::read_options().max_memory,
    };
    let options = ReaderOptions {
        compression,
        prefetch,
        max_record_bytes,
        ..ReaderOptions::default()
    };
    let mut reader = RecordReader::open(path, options).with_context(|| shown(path))?;
    let pb = if compression == Compression::None {
        progress::bar(file_bytes, &format!("reading {}", path.display()))
    } else {
        progress::spinner(file_bytes, &format!("reading {}", path.display()))
    };
    let mut n = 0u64;
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                pb.finish_and_clear();
                return Err(e).with_context(|| shown(path));
            }
        };
        pb.inc(record.len() as u64 + 16);
        if let Err(e) = each(n, record) {
            pb.finish_and_clear();
            return Err(e).with_context(|| format!("{}: record {n}", shown(path)));
        }
        n += 1;
    }
    pb.finish_and_clear();
    Ok(n)
}

/// Every record of `path`, as shared bytes.
pub(crate) fn read_all(path: &Path, compression: Compression) -> Result<Vec<Bytes>> {
    let mut out = Vec::new();
    for_each_record(path, compression, |_, r| {
        out.push(Bytes::copy_from_slice(r));
        Ok(())
    })?;
    Ok(out)
}

/// The tensors of a file of serialize_tensor records, named `record_<i>`, all kept: each
/// tensor's bytes beyond its record's are charged to the `--max-memory` budget, and for a
/// compressed file the records' bytes beyond the file's own size too (a few KB of GZIP can
/// hold gigabytes of records).
pub(crate) fn read_tensors(path: &Path, compression: Compression) -> Result<Vec<NamedTensor>> {
    let options = super::source::read_options();
    let budget = options.read_budget();
    let file_bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    // What the file's own bytes pay for; past it, a compressed file's records are charged.
    let mut paid = match compression {
        Compression::None => u64::MAX,
        _ => file_bytes,
    };
    let mut out = Vec::new();
    let mut content = None;
    for_each_record(path, compression, |i, r| {
        let c = *content.get_or_insert_with(|| Content::of(r));
        if c != Content::Tensors {
            bail!(
                "the records are not tf.io.serialize_tensor records ({}){}",
                c.name(),
                if matches!(c, Content::Examples | Content::SequenceExamples) {
                    "; parse them into tensors with --spec SPEC.json"
                } else {
                    ""
                }
            );
        }
        let len = r.len() as u64;
        let unpaid = len.saturating_sub(paid);
        paid = paid.saturating_sub(len);
        budget.charge(
            unpaid,
            format_args!("the decompressed record {i} ({len} bytes)"),
        )?;
        let (t, _) = decode_tensor(r, &options)?;
        out.push(NamedTensor::new(format!("record_{i}"), t));
        Ok(())
    })?;
    Ok(out)
}

/// Writes records to `path` (`-`: standard output) with `compression`, atomically for a file.
pub(crate) fn write_records<'a>(
    path: &Path,
    compression: Compression,
    records: impl IntoIterator<Item = &'a [u8]>,
) -> Result<()> {
    if super::source::is_std(path) {
        let mut w = tensorcast_records::RecordWriter::new(std::io::stdout().lock(), compression)
            .context("-")?;
        for r in records {
            w.write_record(r).context("-")?;
        }
        std::io::Write::flush(&mut w.finish().context("-")?).context("-: cannot write")?;
        return Ok(());
    }
    tensorcast_records::write_file(path, compression, records).with_context(|| shown(path))
}

/// Copies the records of `input` to `output` with `compression` (streamed; an uncompressed
/// copy of an uncompressed file is the same bytes).
pub(crate) fn copy_records(
    input: &Path,
    in_compression: Compression,
    output: &Path,
    compression: Compression,
) -> Result<()> {
    if super::source::is_std(output) {
        let mut w = tensorcast_records::RecordWriter::new(std::io::stdout().lock(), compression)
            .context("-")?;
        for_each_record(input, in_compression, |_, r| w.write_record(r).context("-"))?;
        std::io::Write::flush(&mut w.finish().context("-")?).context("-: cannot write")?;
        return Ok(());
    }
    let mut w = tensorcast_records::FileWriter::create(output, compression)
        .with_context(|| shown(output))?;
    for_each_record(input, in_compression, |_, r| {
        w.write_record(r).with_context(|| shown(output))
    })?;
    w.commit().with_context(|| shown(output))
}

/// Writes `tensors` as serialize_tensor records (`tf.io.serialize_tensor` of each, in order).
pub(crate) fn write_tensors(
    path: &Path,
    compression: Compression,
    tensors: &[NamedTensor],
) -> Result<()> {
    let mut records = Vec::with_capacity(tensors.len());
    for nt in tensors {
        let bytes = tensorcast::io::tensorproto::write(&nt.tensor)
            .with_context(|| format!("tensor '{}'", escaped(&nt.name)))?;
        records.push(bytes);
    }
    write_records(path, compression, records.iter().map(Vec::as_slice))
}

/// Parses the Example records of `path` with `specs` (as `tf.io.parse_example` of the whole
/// file as one batch) into named tensors, TensorFlow's output dict flattened: `name` for a
/// dense result, `name.indices` / `name.values` / `name.dense_shape` for a sparse one,
/// `name.flat_values` / `name.row_splits.0`... for a ragged one.
pub(crate) fn parse_file(
    path: &Path,
    compression: Compression,
    specs: &[(String, FeatureSpec)],
) -> Result<Vec<NamedTensor>> {
    Ok(flatten_parsed(parse_records(path, compression, specs)?))
}

/// Parses the Example records of `path` with `specs`, as `tf.io.parse_example` of the whole
/// file as one batch.
pub(crate) fn parse_records(
    path: &Path,
    compression: Compression,
    specs: &[(String, FeatureSpec)],
) -> Result<Vec<(String, Parsed)>> {
    let records = read_all(path, compression)?;
    tensorcast_records::parse_example(&records, None, specs).with_context(|| shown(path))
}

/// TensorFlow's output dict of `parse_example`, flattened to named tensors.
pub(crate) fn flatten_parsed(parsed: Vec<(String, Parsed)>) -> Vec<NamedTensor> {
    let mut out = Vec::new();
    for (name, p) in parsed {
        match p {
            Parsed::Dense(t) => out.push(NamedTensor::new(name, t)),
            Parsed::Sparse {
                indices,
                values,
                dense_shape,
            } => {
                out.push(NamedTensor::new(format!("{name}.indices"), indices));
                out.push(NamedTensor::new(format!("{name}.values"), values));
                out.push(NamedTensor::new(format!("{name}.dense_shape"), dense_shape));
            }
            Parsed::Ragged {
                flat_values,
                row_splits,
            } => {
                out.push(NamedTensor::new(format!("{name}.flat_values"), flat_values));
                for (i, s) in row_splits.into_iter().enumerate() {
                    out.push(NamedTensor::new(format!("{name}.row_splits.{i}"), s));
                }
            }
        }
    }
    out
}

/// What one feature looks like across the records.
#[derive(Debug, Default)]
struct FeatureStats {
    /// Kinds seen (`float_list`, `int64_list`, `bytes_list`, `none`), in first-seen order.
    kinds: Vec<&'static str>,
    /// Records holding the feature.
    examples: u64,
    /// Value count range (for a feature list: values per step).
    min_len: u64,
    max_len: u64,
    /// Whether a length was seen (`min_len` holds one).
    any_len: bool,
    /// Feature lists: steps per record.
    min_steps: u64,
    max_steps: u64,
    /// The first record's values (as a tensor, for its DebugString).
    first: Option<Tensor>,
}

impl FeatureStats {
    fn add_len(&mut self, kind: &'static str, len: u64) {
        if !self.kinds.contains(&kind) {
            self.kinds.push(kind);
        }
        if !self.any_len {
            (self.min_len, self.any_len) = (len, true);
        }
        self.min_len = self.min_len.min(len);
        self.max_len = self.max_len.max(len);
    }
}

fn kind_len(f: &Feature) -> (&'static str, u64) {
    match &f.kind {
        Some(Kind::FloatList(l)) => ("float_list", l.value.len() as u64),
        Some(Kind::Int64List(l)) => ("int64_list", l.value.len() as u64),
        Some(Kind::BytesList(l)) => ("bytes_list", l.value.len() as u64),
        None => ("none", 0),
    }
}

fn values_tensor(f: &Feature) -> Option<Tensor> {
    match &f.kind {
        Some(Kind::FloatList(l)) => Some(Tensor::vector(&l.value)),
        Some(Kind::Int64List(l)) => Some(Tensor::vector(&l.value)),
        Some(Kind::BytesList(l)) => {
            let v: Vec<TString> = l.value.iter().cloned().map(TString::from).collect();
            Tensor::from_vec(v.clone(), [v.len() as i64]).ok()
        }
        None => None,
    }
}

/// The schema of a file of Examples or SequenceExamples: per feature (context features, then
/// feature lists), its kinds, the records holding it and its length ranges.
#[derive(Debug, Default)]
struct Schema {
    features: BTreeMap<String, FeatureStats>,
    lists: BTreeMap<String, FeatureStats>,
}

impl Schema {
    fn add_features(map: &mut BTreeMap<String, FeatureStats>, f: Option<&Features>) {
        for (name, feature) in f.map(|f| &f.feature).into_iter().flatten() {
            let s = map.entry(name.clone()).or_default();
            let (kind, len) = kind_len(feature);
            s.add_len(kind, len);
            if s.examples == 0 {
                s.first = values_tensor(feature);
            }
            s.examples += 1;
        }
    }

    fn add_example(&mut self, e: &Example) {
        Self::add_features(&mut self.features, e.features.as_ref());
    }

    fn add_sequence(&mut self, e: &SequenceExample) {
        Self::add_features(&mut self.features, e.context.as_ref());
        let lists = e.feature_lists.as_ref().map(|l| &l.feature_list);
        for (name, list) in lists.into_iter().flatten() {
            let s = self.lists.entry(name.clone()).or_default();
            let steps = list.feature.len() as u64;
            if s.examples == 0 {
                s.min_steps = steps;
                s.first = list.feature.first().and_then(values_tensor);
            }
            s.min_steps = s.min_steps.min(steps);
            s.max_steps = s.max_steps.max(steps);
            for f in &list.feature {
                let (kind, len) = kind_len(f);
                s.add_len(kind, len);
            }
            s.examples += 1;
        }
    }
}

/// One tag of an event file: its kind, how many values, the step range, the last value.
#[derive(Debug)]
struct TagStats {
    kind: String,
    values: u64,
    first_step: i64,
    last_step: i64,
    last: String,
}

/// The last value of a summary value, as one short line. Its tensor is decoded within what is
/// left of the `--max-memory` budget (a few bytes of event can claim a fill of gigabytes: the
/// decode's fill and element allocations are bounded by it) and dropped once the line is
/// made; past the budget the error is returned, any other failure to decode is the line.
fn summary_text(v: &SummaryValue, values: i64, options: &ReadOptions) -> Result<(String, String)> {
    let budget = options.read_budget();
    let left = usize::try_from(budget.remaining_bytes()).unwrap_or(usize::MAX);
    let decode = DecodeOptions::new().with_max_fill_bytes(left);
    let tensor = v
        .tensor
        .as_ref()
        .map(|p| tensorcast::proto::tensor_from_proto_with(p, &decode));
    if let Some(Err(e)) = &tensor {
        if e.code() == tensorcast::Code::ResourceExhausted {
            return Err(anyhow!(
                "tag '{}': its tensor does not fit in what is left of --max-memory ({} of {} \
                 bytes): {e}",
                escaped(&v.tag),
                budget.remaining_bytes(),
                budget.limit_bytes()
            ));
        }
    }
    Ok(summary_line(
        v,
        tensor.map(|r| r.map_err(|e| e.to_string())),
        values,
    ))
}

/// [`summary_text`] once the tensor is decoded (or not).
fn summary_line(
    v: &SummaryValue,
    tensor: Option<std::result::Result<Tensor, String>>,
    values: i64,
) -> (String, String) {
    let plugin = v.plugin_name();
    if let Some(x) = v.simple_value {
        return ("scalar".into(), x.to_string());
    }
    if let Some(h) = &v.histo {
        return (
            "histogram".into(),
            format!("{} values in [{}, {}]", h.num, h.min, h.max),
        );
    }
    let t = match tensor {
        None => return ("other".into(), "-".into()),
        Some(Ok(t)) => t,
        Some(Err(e)) => return ("tensor".into(), format!("(cannot decode: {e})")),
    };
    let kind = if plugin.is_empty() { "tensor" } else { plugin };
    let text = match plugin {
        "scalars" => t.summarize_value(1, false),
        "histograms" => match t.as_slice::<f64>() {
            Ok(rows) if t.shape().rank() == 2 && t.shape().dim_sizes()[1] == 3 => {
                let n: f64 = rows.chunks(3).map(|r| r[2]).sum();
                let lo = rows.first().copied().unwrap_or(0.0);
                let hi = rows
                    .get(rows.len().saturating_sub(2))
                    .copied()
                    .unwrap_or(0.0);
                format!("{n} values in {} buckets, [{lo}, {hi}]", rows.len() / 3)
            }
            _ => t.debug_string(values),
        },
        "images" => match t.as_slice::<TString>() {
            Ok([w, h, rest @ ..]) => format!(
                "{} image{} {}x{}",
                rest.len(),
                if rest.len() == 1 { "" } else { "s" },
                String::from_utf8_lossy(w.as_bytes()),
                String::from_utf8_lossy(h.as_bytes())
            ),
            _ => t.debug_string(values),
        },
        _ => t.summarize_value(values, false),
    };
    (kind.to_string(), text)
}

/// What `inspect` found in a TFRecord file.
pub(crate) struct RecordsReport {
    path: String,
    file_bytes: u64,
    compression: Compression,
    records: u64,
    content: Content,
    record_bytes: (u64, u64, u64),
    schema: Schema,
    tags: BTreeMap<String, TagStats>,
    /// serialize_tensor records: the report on the tensors listed one by one (the first
    /// `--records`), and the summary of all of them.
    tensors: Option<FileReport>,
    listed: u64,
    summary: TensorSummary,
    values: i64,
}

/// Runs `inspect` on the TFRecord file `path`.
///
/// serialize_tensor records are decoded one at a time (on worker threads, see
/// [`super::record_summary`]), added to their (dtype, shape) group's count and statistics and
/// dropped (what each charged to `--max-memory` given back), except the first `--records`,
/// whose tensors are kept and listed one by one as a tensor file's are.
pub(crate) fn inspect(
    path: &Path,
    compression: Compression,
    args: &InspectArgs,
) -> Result<RecordsReport> {
    let options = super::source::read_options();
    let list = u64::try_from(args.records).unwrap_or(u64::MAX);
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if let Some(report) = scan_tensors(path, compression, args, &options, list)? {
        return Ok(report);
    }
    let mut content = Content::Empty;
    let mut schema = Schema::default();
    let mut summary = TensorSummary::default();
    let mut listed = Vec::new();
    let mut tags: BTreeMap<String, TagStats> = BTreeMap::new();
    let (mut min_b, mut max_b, mut total_b) = (u64::MAX, 0u64, 0u64);
    // Records past the listed ones are summarised on worker threads while reading goes on.
    let mut summariser: Option<Summariser> = None;
    let read = for_each_record_with(path, compression, false, |i, r| {
        if i == 0 {
            content = Content::of(r);
        }
        let len = r.len() as u64;
        (min_b, max_b, total_b) = (min_b.min(len), max_b.max(len), total_b + len);
        match content {
            Content::Tensors if i < list => {
                let (t, _) = decode_tensor(r, &options)?;
                summary.add(&t);
                listed.push(NamedTensor::new(format!("record_{i}"), t));
            }
            Content::Tensors => {
                if summariser.is_none() {
                    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
                    summariser = Some(Summariser::start(threads, &options)?);
                }
                if let Some(s) = &mut summariser {
                    s.add(i, r);
                }
            }
            Content::Examples => {
                let e = Example::decode(r).map_err(|e| anyhow!("not a tf.train.Example: {e}"))?;
                schema.add_example(&e);
            }
            Content::SequenceExamples => {
                let e = SequenceExample::decode(r)
                    .map_err(|e| anyhow!("not a tf.train.SequenceExample: {e}"))?;
                schema.add_sequence(&e);
            }
            Content::Events => {
                let e = decode_event(r)?;
                for v in e.summary.iter().flat_map(|s| &s.value) {
                    let (kind, last) = summary_text(v, args.values, &options)?;
                    let t = tags.entry(v.tag.clone()).or_insert_with(|| TagStats {
                        kind: kind.clone(),
                        values: 0,
                        first_step: e.step,
                        last_step: e.step,
                        last: String::new(),
                    });
                    t.values += 1;
                    t.first_step = t.first_step.min(e.step);
                    t.last_step = t.last_step.max(e.step);
                    t.last = last;
                    if v.metadata.is_some() && t.kind != kind {
                        t.kind = kind;
                    }
                }
            }
            Content::Empty | Content::Bytes => {}
        }
        Ok(())
    });
    // A record that did not decode comes before any reading error (it was read).
    if let Some(s) = summariser {
        s.finish(&mut summary)
            .map_err(|(i, e)| e.context(format!("{}: record {i}", shown(path))))?;
    }
    let records = read?;
    if records == 0 {
        min_b = 0;
    }
    let listed_count = listed.len() as u64;
    let tensors = (content == Content::Tensors).then(|| {
        listed_report(
            path,
            file_bytes,
            compression,
            records,
            std::mem::take(&mut listed),
            args,
        )
    });
    Ok(RecordsReport {
        path: path.display().to_string(),
        file_bytes,
        compression,
        records,
        content,
        record_bytes: (min_b, max_b, total_b),
        schema,
        tags,
        tensors,
        listed: listed_count,
        summary,
        values: args.values,
    })
}

/// The report on the tensors of the listed records of a file of `records` serialize_tensor
/// records, as a tensor file's tensors are reported.
fn listed_report(
    path: &Path,
    file_bytes: u64,
    compression: Compression,
    records: u64,
    listed: Vec<NamedTensor>,
    args: &InspectArgs,
) -> FileReport {
    super::inspect::tensors_report(
        path,
        file_bytes,
        format!(
            "tfrecord ({}), {records} serialize_tensor record{}",
            compression_name(compression),
            if records == 1 { "" } else { "s" }
        ),
        Vec::new(),
        listed,
        args,
    )
}

/// What the records of one chunk of a scanned file give `inspect` (see [`scan_tensors`]).
struct ChunkReport {
    lengths: (u64, u64, u64),
    listed: Vec<NamedTensor>,
    summary: TensorSummary,
}

/// The chunk size of [`scan_tensors`]: large enough that the positional reads cost nothing
/// beside the copy, small enough that the copy lands in the core's cache and a chunk's
/// records are still there when they are checked, decoded and summed (on the 1 GiB file of
/// `scripts/inspect_bench.py`: 0.68 s with 256 KiB against 0.91 s with 1 MiB and 1.04 s with
/// 4 MiB, whose copies went to memory).
const SCAN_CHUNK_BYTES: usize = 256 << 10;

/// `inspect` of an uncompressed regular file of serialize_tensor records, on every core: each
/// thread reads chunks of the file and checks, decodes and summarises their records itself
/// ([`tensorcast_records::scan`]), so that nothing is copied twice and no thread waits for
/// another's reading. The chunks' reports are merged in file order: the same report as the
/// one-record-at-a-time reading below. `None` when that reading must do it: another kind of
/// file or of records, or anything irregular (damage, a record that does not decode or fit
/// `--max-memory`), which it reports with TensorFlow's words.
fn scan_tensors(
    path: &Path,
    compression: Compression,
    args: &InspectArgs,
    options: &ReadOptions,
    list: u64,
) -> Result<Option<RecordsReport>> {
    if compression != Compression::None {
        return Ok(None);
    }
    let Ok(file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    let reader_options = ReaderOptions {
        max_record_bytes: len.max(1),
        ..ReaderOptions::default()
    };
    // The first record says what the records are (as the reading below decides).
    let first_is_tensor = RecordReader::open(path, reader_options.clone())
        .ok()
        .and_then(|mut r| r.next_record().ok().flatten().map(Content::of))
        == Some(Content::Tensors);
    if !first_is_tensor {
        return Ok(None);
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let pb = progress::bar(len, &format!("reading {}", path.display()));
    let budget = options.read_budget();
    let kept = std::sync::atomic::AtomicU64::new(0);
    let scanned = tensorcast_records::scan(
        &file,
        len,
        &reader_options,
        threads,
        SCAN_CHUNK_BYTES,
        |_| ChunkReport {
            lengths: (u64::MAX, 0, 0),
            listed: Vec::new(),
            summary: TensorSummary::default(),
        },
        |c, i, r| {
            let n = r.len() as u64;
            let (lo, hi, total) = c.lengths;
            c.lengths = (lo.min(n), hi.max(n), total + n);
            let Ok((t, charged)) = decode_tensor(r, options) else {
                return false;
            };
            c.summary.add(&t);
            if i < list {
                // Listed tensors are kept (and stay charged: given back below if the reading
                // has to start again).
                kept.fetch_add(charged, std::sync::atomic::Ordering::Relaxed);
                c.listed.push(NamedTensor::new(format!("record_{i}"), t));
            } else {
                drop(t);
                budget.release(charged);
            }
            pb.inc(n + 16);
            true
        },
    );
    pb.finish_and_clear();
    let tensorcast_records::Scan::Done { states, records } = scanned else {
        budget.release(kept.into_inner());
        return Ok(None);
    };
    let (mut min_b, mut max_b, mut total_b) = (u64::MAX, 0u64, 0u64);
    let mut summary = TensorSummary::default();
    let mut listed = Vec::new();
    for c in states {
        min_b = min_b.min(c.lengths.0);
        max_b = max_b.max(c.lengths.1);
        total_b += c.lengths.2;
        summary.merge(c.summary);
        listed.extend(c.listed);
    }
    let listed_count = listed.len() as u64;
    let tensors = listed_report(path, len, compression, records, listed, args);
    Ok(Some(RecordsReport {
        path: path.display().to_string(),
        file_bytes: len,
        compression,
        records,
        content: Content::Tensors,
        record_bytes: (min_b, max_b, total_b),
        schema: Schema::default(),
        tags: BTreeMap::new(),
        tensors: Some(tensors),
        listed: listed_count,
        summary,
        values: args.values,
    }))
}

fn range(a: u64, b: u64) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..{b}")
    }
}

impl RecordsReport {
    /// True when the records' tensors are summarised (some are not listed one by one).
    fn summarised(&self) -> bool {
        self.tensors.is_some() && self.listed < self.records
    }

    /// The summary of serialize_tensor records: the groups by dtype and shape, then the
    /// records listed one by one.
    fn summarised_text(&self, listed: &FileReport) -> String {
        let (lo, hi, _) = self.record_bytes;
        let mut s = format!(
            "{}: tfrecord ({}), {} serialize_tensor records, {}\n  record bytes: {}\n",
            escaped(&self.path),
            compression_name(self.compression),
            self.records,
            human_bytes(self.file_bytes),
            range(lo, hi)
        );
        let mut table = Table::new(
            &[
                &[
                    ("dtype", Align::Left),
                    ("shape", Align::Left),
                    ("records", Align::Right),
                    ("bytes", Align::Right),
                ][..],
                &Stats::COLUMNS,
            ]
            .concat(),
        );
        for g in &self.summary.groups {
            let mut row = vec![
                g.dtype.name(),
                g.shape.to_string(),
                g.records.to_string(),
                g.bytes.to_string(),
            ];
            let stats = g.stats.as_ref().and_then(Accum::finish);
            row.extend(Stats::cells(stats.as_ref(), g.dtype));
            table.row(row);
        }
        s.push_str(&table.render("  "));
        if self.listed > 0 {
            s.push_str(&format!(
                "  the first {} record{} (--records N lists more, -1 all):\n",
                self.listed,
                if self.listed == 1 { "" } else { "s" }
            ));
            s.push_str(&listed.body_text());
        }
        s
    }

    pub(crate) fn to_text(&self) -> String {
        if let Some(t) = &self.tensors {
            return if self.summarised() {
                self.summarised_text(t)
            } else {
                t.to_text()
            };
        }
        let what = match self.content {
            Content::Examples => " of tf.train.Example",
            Content::SequenceExamples => " of tf.train.SequenceExample",
            Content::Events => " (a TensorBoard event file)",
            Content::Bytes => " (neither serialize_tensor records nor Examples)",
            _ => "",
        };
        let (lo, hi, _) = self.record_bytes;
        let mut s = format!(
            "{}: tfrecord ({}), {} record{}{what}, {}\n",
            escaped(&self.path),
            compression_name(self.compression),
            self.records,
            if self.records == 1 { "" } else { "s" },
            human_bytes(self.file_bytes)
        );
        if self.records > 0 {
            s.push_str(&format!("  record bytes: {}\n", range(lo, hi)));
        }
        if !self.tags.is_empty() {
            let mut table = Table::new(&[
                ("tag", Align::Left),
                ("kind", Align::Left),
                ("values", Align::Right),
                ("steps", Align::Right),
                ("last value", Align::Left),
            ]);
            for (tag, t) in &self.tags {
                table.row(vec![
                    escaped(tag),
                    t.kind.clone(),
                    t.values.to_string(),
                    if t.first_step == t.last_step {
                        t.first_step.to_string()
                    } else {
                        format!("{}..{}", t.first_step, t.last_step)
                    },
                    super::source::terminal_safe(&escaped(&t.last)),
                ]);
            }
            s.push_str(&table.render("  "));
        }
        let sections = [
            ("feature", &self.schema.features, false),
            ("feature list", &self.schema.lists, true),
        ];
        for (label, map, lists) in sections {
            if map.is_empty() {
                continue;
            }
            let mut cols = vec![
                (label, Align::Left),
                ("kind", Align::Left),
                ("records", Align::Right),
            ];
            if lists {
                cols.push(("steps", Align::Right));
            }
            cols.push(("length", Align::Right));
            let mut table = Table::new(&cols);
            for (name, f) in map {
                let mut row = vec![
                    escaped(name),
                    f.kinds.join("|"),
                    format!("{}/{}", f.examples, self.records),
                ];
                if lists {
                    row.push(range(f.min_steps, f.max_steps));
                }
                row.push(range(f.min_len, f.max_len));
                table.row(row);
            }
            s.push_str(&table.render("  "));
            for (name, f) in map {
                if let Some(t) = &f.first {
                    s.push_str(&format!(
                        "  {}: {}\n",
                        escaped(name),
                        super::source::terminal_safe(&t.summarize_value(self.values, false))
                    ));
                }
            }
        }
        s
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut doc = match &self.tensors {
            Some(t) => t.to_json(),
            None => json!({
                "path": self.path,
                "file_bytes": self.file_bytes,
            }),
        };
        let feature_json = |map: &BTreeMap<String, FeatureStats>, lists: bool| -> Vec<Value> {
            map.iter()
                .map(|(name, f)| {
                    let mut v = json!({
                        "name": name,
                        "kinds": f.kinds,
                        "records": f.examples,
                        "min_length": f.min_len,
                        "max_length": f.max_len,
                        "first_values": f.first.as_ref().map(|t| t.summarize_value(self.values, false)),
                    });
                    if lists {
                        v["min_steps"] = json!(f.min_steps);
                        v["max_steps"] = json!(f.max_steps);
                    }
                    v
                })
                .collect()
        };
        let (lo, hi, total) = self.record_bytes;
        doc["format"] = json!("tfrecord");
        doc["compression"] = json!(compression_name(self.compression));
        doc["records"] = json!(self.records);
        doc["content"] = json!(self.content.name());
        doc["record_bytes"] = json!({"min": lo, "max": hi, "total": total});
        if matches!(self.content, Content::Examples | Content::SequenceExamples) {
            doc["features"] = json!(feature_json(&self.schema.features, false));
        }
        if self.content == Content::Events {
            let tags: Vec<Value> = self
                .tags
                .iter()
                .map(|(tag, t)| {
                    json!({
                        "tag": tag,
                        "kind": t.kind,
                        "values": t.values,
                        "first_step": t.first_step,
                        "last_step": t.last_step,
                        "last_value": t.last,
                    })
                })
                .collect();
            doc["tags"] = json!(tags);
        }
        if self.content == Content::SequenceExamples {
            doc["feature_lists"] = json!(feature_json(&self.schema.lists, true));
        }
        if self.content == Content::Tensors {
            let groups: Vec<Value> = self
                .summary
                .groups
                .iter()
                .map(|g| {
                    json!({
                        "dtype": g.dtype.name(),
                        "shape": g.shape.dim_sizes(),
                        "records": g.records,
                        "bytes": g.bytes,
                        "stats": g.stats.as_ref().and_then(Accum::finish).map(|st| st.to_json(g.dtype)),
                    })
                })
                .collect();
            doc["groups"] = json!(groups);
            doc["listed_records"] = json!(self.listed);
        }
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressions_parse() {
        assert_eq!(parse_compression("GZIP").unwrap(), Compression::Gzip);
        assert_eq!(parse_compression("none").unwrap(), Compression::None);
        assert_eq!(parse_compression("zlib").unwrap(), Compression::Zlib);
        assert!(parse_compression("lz4").is_err());
    }

    #[test]
    fn record_contents_are_told_apart() {
        let t = tensorcast::io::tensorproto::write(&Tensor::vector(&[1.0f32, 2.0])).unwrap();
        assert_eq!(Content::of(&t), Content::Tensors);
        let e = Example {
            features: Some(Features::default()),
        };
        assert_eq!(Content::of(&e.encode_to_vec()), Content::Examples);
        let s = SequenceExample {
            context: None,
            feature_lists: Some(Default::default()),
        };
        assert_eq!(Content::of(&s.encode_to_vec()), Content::SequenceExamples);
        assert_eq!(Content::of(b"\xff\xff"), Content::Bytes);
    }
}
