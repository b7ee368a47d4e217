//! TensorBoard event files: a TFRecord file of `tensorflow.Event` protos, the first holding
//! `file_version: "brain.Event:2"`, the others a `Summary` of tagged values at a step.
//!
//! [`SummaryWriter`] writes them as TensorFlow 2's `tf.summary` does: every value a tensor
//! summary with its plugin's metadata - `scalars` (a float32 scalar), `histograms` (a float64
//! `[buckets, 3]` tensor of left edge, right edge, count, bucketed as TensorBoard's
//! `summary_v2._buckets`), `text` (a string scalar), `images` (a string vector: width,
//! height, then PNG images encoded with the `png` crate) - and plain tensors (no plugin).
//! Every event is flushed to the file as it is written, so a reader (TensorBoard) sees all of
//! them at any time. [`read_events`] reads an event file back, for `tensorcast inspect`.
//!
//! ```
//! use tensorcast_records::events::{read_events, SummaryWriter};
//! let dir = tempfile::tempdir()?;
//! let mut w = SummaryWriter::create(dir.path(), "host")?;
//! w.scalar("loss", 0.5, 1)?;
//! w.text("note", "hello", 1)?;
//! let path = w.path().to_path_buf();
//! drop(w);
//! let events = read_events(&std::fs::read(&path)?)?;
//! assert_eq!(events[0].file_version, "brain.Event:2");
//! assert_eq!(events[1].summary.as_ref().unwrap().value[0].tag, "loss");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bytes::Bytes;
use tensorcast_core::{TString, Tensor};
use tensorcast_proto::{Message, TensorProto};

use crate::error::{RecordsError, Result};
use crate::{Compression, ReaderOptions, RecordReader, RecordWriter};

/// `tensorflow.Event` (the fields event files use).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    /// Seconds since the epoch.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// The global step.
    #[prost(int64, tag = "2")]
    pub step: i64,
    /// `brain.Event:2` in the first event of a file.
    #[prost(string, tag = "3")]
    pub file_version: String,
    /// A serialized GraphDef.
    #[prost(bytes = "bytes", tag = "4")]
    pub graph_def: Bytes,
    /// Tagged values.
    #[prost(message, optional, tag = "5")]
    pub summary: Option<Summary>,
}

/// `tensorflow.Summary`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    /// The values.
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<SummaryValue>,
}

/// `tensorflow.Summary.Value` (TF1's image and audio messages are left undecoded).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryValue {
    /// The tag.
    #[prost(string, tag = "1")]
    pub tag: String,
    /// TF1's scalar.
    #[prost(float, optional, tag = "2")]
    pub simple_value: Option<f32>,
    /// TF1's histogram.
    #[prost(message, optional, tag = "5")]
    pub histo: Option<HistogramProto>,
    /// TF2's value: a tensor.
    #[prost(message, optional, tag = "8")]
    pub tensor: Option<TensorProto>,
    /// What the value is (its plugin).
    #[prost(message, optional, tag = "9")]
    pub metadata: Option<SummaryMetadata>,
}

/// `tensorflow.HistogramProto` (TF1's histograms).
#[derive(Clone, PartialEq, prost::Message)]
pub struct HistogramProto {
    /// Smallest value.
    #[prost(double, tag = "1")]
    pub min: f64,
    /// Largest value.
    #[prost(double, tag = "2")]
    pub max: f64,
    /// Value count.
    #[prost(double, tag = "3")]
    pub num: f64,
}

/// `tensorflow.SummaryMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryMetadata {
    /// The plugin that reads the value.
    #[prost(message, optional, tag = "1")]
    pub plugin_data: Option<PluginData>,
    /// Display name.
    #[prost(string, tag = "2")]
    pub display_name: String,
    /// Description.
    #[prost(string, tag = "3")]
    pub summary_description: String,
}

/// `tensorflow.SummaryMetadata.PluginData`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PluginData {
    /// `scalars`, `histograms`, `text`, `images`...
    #[prost(string, tag = "1")]
    pub plugin_name: String,
    /// The plugin's own serialized data (empty for version 0 of the built-in plugins).
    #[prost(bytes = "bytes", tag = "2")]
    pub content: Bytes,
}

impl SummaryValue {
    /// The plugin name of the value's metadata (`""` without one).
    pub fn plugin_name(&self) -> &str {
        self.metadata
            .as_ref()
            .and_then(|m| m.plugin_data.as_ref())
            .map_or("", |p| p.plugin_name.as_str())
    }
}

/// Decodes every event of an event file's bytes (an uncompressed TFRecord file).
///
/// # Errors
/// The reader's [`RecordsError`] for a damaged file;
/// [`RecordsError::InvalidArgument`] for a record that is not an `Event`.
pub fn read_events(file: &[u8]) -> Result<Vec<Event>> {
    let mut out = Vec::new();
    let mut r = RecordReader::new(file, ReaderOptions::default());
    while let Some(rec) = r.next_record()? {
        out.push(decode_event(rec)?);
    }
    Ok(out)
}

/// Decodes one record as an `Event`.
///
/// # Errors
/// [`RecordsError::InvalidArgument`] when the bytes are not an `Event`.
pub fn decode_event(record: &[u8]) -> Result<Event> {
    Event::decode(record).map_err(|e| RecordsError::invalid(format!("not a tensorflow.Event: {e}")))
}

/// Writes a TensorBoard event file as TF2's `tf.summary` does (see the module docs).
#[derive(Debug)]
pub struct SummaryWriter {
    path: PathBuf,
    writer: RecordWriter<BufWriter<File>>,
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn metadata(plugin: &str) -> Option<SummaryMetadata> {
    Some(SummaryMetadata {
        plugin_data: Some(PluginData {
            plugin_name: plugin.to_string(),
            content: Bytes::new(),
        }),
        ..Default::default()
    })
}

impl SummaryWriter {
    /// Creates `dir/events.out.tfevents.<seconds>.<host>.<pid>.v2` (the directory too) and
    /// writes its first event (`brain.Event:2`).
    ///
    /// # Errors
    /// [`RecordsError::Io`] when the directory or file cannot be made or written.
    pub fn create(dir: impl AsRef<Path>, host: &str) -> Result<Self> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|e| RecordsError::io("cannot create", e))?;
        let wall = now();
        let name = format!(
            "events.out.tfevents.{}.{host}.{}.v2",
            wall as u64,
            std::process::id()
        );
        let path = dir.join(name);
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| RecordsError::io("cannot create", e))?;
        let writer = RecordWriter::new(BufWriter::new(file), Compression::None)?;
        let mut w = Self { path, writer };
        w.write_event(&Event {
            wall_time: wall.floor(),
            file_version: "brain.Event:2".into(),
            ..Default::default()
        })?;
        Ok(w)
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `event` and flushes it to the file.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn write_event(&mut self, event: &Event) -> Result<()> {
        self.writer.write_record(&event.encode_to_vec())?;
        self.writer.flush()
    }

    fn value(&mut self, tag: &str, step: i64, tensor: TensorProto, plugin: &str) -> Result<()> {
        let value = SummaryValue {
            tag: tag.to_string(),
            tensor: Some(tensor),
            metadata: if plugin.is_empty() {
                None
            } else {
                metadata(plugin)
            },
            ..Default::default()
        };
        self.write_event(&Event {
            wall_time: now(),
            step,
            summary: Some(Summary { value: vec![value] }),
            ..Default::default()
        })
    }

    /// `tf.summary.scalar(tag, value, step)`.
    ///
    /// # Errors
    /// As [`Self::write_event`].
    pub fn scalar(&mut self, tag: &str, value: f32, step: i64) -> Result<()> {
        let t = Tensor::scalar_of(value);
        let p = tensorcast_proto::as_proto_tensor_content(&t);
        self.value(tag, step, p, "scalars")
    }

    /// `tf.summary.text(tag, text, step)`.
    ///
    /// # Errors
    /// As [`Self::write_event`].
    pub fn text(&mut self, tag: &str, text: &str, step: i64) -> Result<()> {
        let t = Tensor::scalar_of(TString::from(text));
        let p = tensorcast_proto::as_proto_field(&t);
        self.value(tag, step, p, "text")
    }

    /// A tensor summary with no plugin (`tf.summary.write(tag, tensor, step)`).
    ///
    /// # Errors
    /// As [`Self::write_event`].
    pub fn tensor(&mut self, tag: &str, tensor: &Tensor, step: i64) -> Result<()> {
        let p = if tensor.dtype().can_use_memcpy() {
            tensorcast_proto::as_proto_tensor_content(tensor)
        } else {
            tensorcast_proto::as_proto_field(tensor)
        };
        self.value(tag, step, p, "")
    }

    /// `tf.summary.histogram(tag, data, step, buckets)`: `data` bucketed into `buckets`
    /// equal-width buckets between its minimum and maximum (TensorBoard's 30 by default).
    ///
    /// # Errors
    /// As [`Self::write_event`].
    pub fn histogram(&mut self, tag: &str, data: &[f64], step: i64, buckets: usize) -> Result<()> {
        let rows = histogram_buckets(data, buckets);
        let flat: Vec<f64> = rows.iter().flat_map(|r| r.iter().copied()).collect();
        let t = Tensor::from_vec(flat, [rows.len() as i64, 3])
            .map_err(|e| RecordsError::invalid(e.to_string()))?;
        self.value(
            tag,
            step,
            tensorcast_proto::as_proto_tensor_content(&t),
            "histograms",
        )
    }

    /// `tf.summary.image(tag, images, step)` for 8-bit images: each `height * width *
    /// channels` bytes (channels 1, 2, 3 or 4: gray, gray+alpha, RGB, RGBA), PNG-encoded.
    ///
    /// # Errors
    /// [`RecordsError::InvalidArgument`] for a wrong byte count or channel count; as
    /// [`Self::write_event`].
    pub fn image(
        &mut self,
        tag: &str,
        images: &[&[u8]],
        (height, width, channels): (u32, u32, u8),
        step: i64,
    ) -> Result<()> {
        let mut values = vec![
            TString::from(width.to_string()),
            TString::from(height.to_string()),
        ];
        for img in images {
            values.push(TString::from(encode_png(img, height, width, channels)?));
        }
        let n = values.len() as i64;
        let t = Tensor::from_vec(values, [n]).map_err(|e| RecordsError::invalid(e.to_string()))?;
        self.value(tag, step, tensorcast_proto::as_proto_field(&t), "images")
    }

    /// Flushes and closes the file.
    ///
    /// # Errors
    /// [`RecordsError::Io`] when writing fails.
    pub fn close(self) -> Result<()> {
        let mut w = self.writer.finish()?;
        w.flush().map_err(|e| RecordsError::io("cannot write", e))
    }
}

/// TensorBoard's histogram buckets (`summary_v2._buckets`): `[left, right, count]` rows.
pub fn histogram_buckets(data: &[f64], buckets: usize) -> Vec<[f64; 3]> {
    if buckets == 0 {
        return Vec::new();
    }
    if data.is_empty() {
        return vec![[0.0; 3]; buckets];
    }
    let min = data.iter().copied().fold(f64::INFINITY, f64::min);
    let max = data.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = max - min;
    if range == 0.0 {
        let mut rows = vec![[max, max, 0.0]; buckets];
        rows[buckets - 1][2] = data.len() as f64;
        return rows;
    }
    let width = range / buckets as f64;
    let mut counts = vec![0.0f64; buckets];
    for &x in data {
        let i = ((x - min) / width).floor();
        let i = if i.is_nan() {
            0
        } else {
            (i as usize).min(buckets - 1)
        };
        counts[i] += 1.0;
    }
    // tf.linspace(min, max, buckets + 1): start + i * step, the last edge set to max.
    let step = range / buckets as f64;
    let edge = |i: usize| {
        if i == buckets {
            max
        } else {
            min + i as f64 * step
        }
    };
    (0..buckets)
        .map(|i| [edge(i), edge(i + 1), counts[i]])
        .collect()
}

fn encode_png(img: &[u8], height: u32, width: u32, channels: u8) -> Result<Vec<u8>> {
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        c => {
            return Err(RecordsError::invalid(format!(
                "an image has 1 to 4 channels, not {c}"
            )))
        }
    };
    let want = u64::from(height) * u64::from(width) * u64::from(channels);
    if img.len() as u64 != want {
        return Err(RecordsError::invalid(format!(
            "an image of {height}x{width}x{channels} has {want} bytes, not {}",
            img.len()
        )));
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc
            .write_header()
            .map_err(|e| RecordsError::invalid(format!("cannot encode PNG: {e}")))?;
        w.write_image_data(img)
            .map_err(|e| RecordsError::invalid(format!("cannot encode PNG: {e}")))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_match_tensorboards_for_the_sample() {
        // tf.summary.histogram of linspace(-1, 1, 16): 30 buckets, the first [-1, -0.9333, 1].
        let data: Vec<f64> = (0..16).map(|i| -1.0 + 2.0 * f64::from(i) / 15.0).collect();
        let b = histogram_buckets(&data, 30);
        assert_eq!(b.len(), 30);
        assert_eq!(b[0], [-1.0, -1.0 + 2.0 / 30.0, 1.0]);
        assert_eq!(b[29][1], 1.0);
        assert_eq!(b.iter().map(|r| r[2]).sum::<f64>(), 16.0);
        assert_eq!(histogram_buckets(&[2.0, 2.0], 3)[2], [2.0, 2.0, 2.0]);
        assert_eq!(histogram_buckets(&[], 2), vec![[0.0; 3]; 2]);
    }
}
