//! Checks of an Arrow IPC file or stream's framing before arrow-ipc reads it.
//!
//! arrow-ipc trusts the offsets and lengths in a file: a block or buffer that points past the
//! data panics (slicing) or allocates what the file claims. These checks walk the same framing
//! first (the footer's blocks, each message's flatbuffer, verified, and its buffers) and refuse
//! anything that does not lie inside the bytes, so the reader only ever sees consistent
//! framing.
//!
//! arrow-data's validation also asserts (panics) where it views a buffer as typed values whose
//! size does not divide the buffer's length (an offsets buffer of 4k+1 bytes), and arrow-ipc
//! slices a union's buffers to the lengths its field node claims (and multiplies a fixed-size
//! list's length by its size with an `expect`). So each record batch's
//! buffers are walked with the schema's types, in the order arrow-ipc reads them, and a buffer
//! of fixed-width values whose length is not a multiple of the width, or a union buffer shorter
//! than its node says, is refused before arrow-rs sees it.

use std::collections::VecDeque;

use arrow_ipc::{Block, Message, MetadataVersion};
use arrow_schema::{DataType, Schema, UnionMode};

/// The marker before an IPC message's length (format 0.15 and later).
const CONTINUATION_MARKER: [u8; 4] = [0xff; 4];

use crate::error::{Error, Result};

fn bad(why: impl Into<String>) -> Error {
    Error::Invalid(format!("corrupt Arrow IPC data: {}", why.into()))
}

/// The flatbuffer of a message framed as `[0xFFFFFFFF] <i32 length> <flatbuffer>` at the start
/// of `bytes`, and the framing's total length.
fn message_at(bytes: &[u8]) -> Result<Option<(Message<'_>, usize)>> {
    if bytes.len() < 4 {
        return Err(bad("a message is cut short"));
    }
    let (prefix, rest): (usize, &[u8]) = if bytes[..4] == CONTINUATION_MARKER {
        if bytes.len() < 8 {
            return Err(bad("a message is cut short"));
        }
        (8, &bytes[4..8])
    } else {
        (4, &bytes[..4])
    };
    let len = i32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    if len == 0 {
        return Ok(None);
    }
    let len = usize::try_from(len).map_err(|_| bad(format!("metadata length {len}")))?;
    let end = prefix
        .checked_add(len)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("a message's metadata runs past the end"))?;
    let m = arrow_ipc::root_as_message(&bytes[prefix..end])
        .map_err(|e| bad(format!("a message's metadata is invalid ({e})")))?;
    Ok(Some((m, end)))
}

/// Checks that every buffer of a record batch (or dictionary) message lies within its body,
/// and that its buffers fit the types `schema` gives them.
fn check_body(m: &Message<'_>, body_len: u64, schema: Option<&Schema>) -> Result<()> {
    let (rb, dictionary) = match (m.header_as_record_batch(), m.header_as_dictionary_batch()) {
        (Some(rb), _) => (Some(rb), None),
        (None, Some(d)) => (
            Some(
                d.data()
                    .ok_or_else(|| bad("a dictionary batch without data"))?,
            ),
            Some(d.id()),
        ),
        _ => (None, None),
    };
    let Some(rb) = rb else { return Ok(()) };
    if rb.length() < 0 {
        return Err(bad("a negative row count"));
    }
    for b in rb.buffers().into_iter().flatten() {
        // The format puts every buffer at a multiple of 8 bytes (writers pad to 8 or 64); an
        // unaligned one is damage, and arrow-data's typed views assert alignment.
        if b.offset() % 8 != 0 {
            return Err(bad("a buffer is not 8-byte aligned"));
        }
        let ok = u64::try_from(b.offset())
            .ok()
            .zip(u64::try_from(b.length()).ok())
            .and_then(|(o, l)| o.checked_add(l))
            .is_some_and(|end| end <= body_len);
        if !ok {
            return Err(bad("a buffer lies outside its message's body"));
        }
    }
    for n in rb.nodes().into_iter().flatten() {
        if n.length() < 0 || n.null_count() < 0 || n.null_count() > n.length() {
            return Err(bad("a field node with a bad length or null count"));
        }
    }
    // Compressed buffers hold their own lengths (and this build of arrow-ipc has no codec: it
    // refuses them); a schema that does not convert is refused by arrow-ipc too.
    let Some(schema) = schema else { return Ok(()) };
    if rb.compression().is_some() {
        return Ok(());
    }
    let mut walk = Walk {
        nodes: rb
            .nodes()
            .into_iter()
            .flatten()
            .map(|n| n.length())
            .collect(),
        buffers: rb
            .buffers()
            .into_iter()
            .flatten()
            .map(|b| b.length())
            .collect(),
        variadic: rb.variadicBufferCounts().into_iter().flatten().collect(),
        before_v5: m.version() < MetadataVersion::V5,
    };
    match dictionary {
        None => {
            for f in schema.fields() {
                walk.field(f.data_type())?;
            }
        }
        Some(id) => {
            #[expect(
                deprecated,
                reason = "arrow-ipc finds a dictionary's type by the same id"
            )]
            let fields = schema.fields_with_dict_id(id);
            if let Some(DataType::Dictionary(_, values)) = fields.first().map(|f| f.data_type()) {
                walk.field(values)?;
            }
        }
    }
    Ok(())
}

/// The field nodes' lengths and buffers' lengths of one record batch, consumed in the order
/// arrow-ipc's reader consumes them (`RecordBatchDecoder::create_array`).
struct Walk {
    nodes: VecDeque<i64>,
    buffers: VecDeque<i64>,
    variadic: VecDeque<i64>,
    /// Unions carry a validity buffer before metadata version 5.
    before_v5: bool,
}

impl Walk {
    fn node(&mut self) -> Result<i64> {
        self.nodes
            .pop_front()
            .ok_or_else(|| bad("fewer field nodes than the schema has fields"))
    }

    /// The next buffer's length, which must hold whole values of `width` bytes.
    fn buffer(&mut self, width: usize) -> Result<i64> {
        let len = self
            .buffers
            .pop_front()
            .ok_or_else(|| bad("fewer buffers than the schema's types need"))?;
        if width > 1 && !(len as u64).is_multiple_of(width as u64) {
            return Err(bad(format!(
                "a buffer of {width}-byte values is {len} bytes long"
            )));
        }
        Ok(len)
    }

    fn field(&mut self, t: &DataType) -> Result<()> {
        use DataType as T;
        match t {
            T::Null => {
                self.node()?;
            }
            T::Boolean | T::FixedSizeBinary(_) => {
                self.node()?;
                self.buffer(1)?;
                self.buffer(1)?;
            }
            T::Utf8 | T::Binary | T::LargeUtf8 | T::LargeBinary => {
                let w = if matches!(t, T::Utf8 | T::Binary) {
                    4
                } else {
                    8
                };
                self.node()?;
                self.buffer(1)?;
                self.buffer(w)?;
                self.buffer(1)?;
            }
            T::Utf8View | T::BinaryView => {
                let count = self
                    .variadic
                    .pop_front()
                    .and_then(|c| usize::try_from(c).ok())
                    .ok_or_else(|| bad("a view column without a valid variadic buffer count"))?;
                if count > self.buffers.len() {
                    return Err(bad("a view column claims more buffers than there are"));
                }
                self.node()?;
                self.buffer(1)?;
                self.buffer(16)?;
                for _ in 0..count {
                    self.buffer(1)?;
                }
            }
            T::List(child) | T::Map(child, _) | T::LargeList(child) => {
                self.node()?;
                self.buffer(1)?;
                self.buffer(if matches!(t, T::LargeList(_)) { 8 } else { 4 })?;
                self.field(child.data_type())?;
            }
            T::ListView(child) | T::LargeListView(child) => {
                let w = if matches!(t, T::ListView(_)) { 4 } else { 8 };
                self.node()?;
                self.buffer(1)?;
                self.buffer(w)?;
                self.buffer(w)?;
                self.field(child.data_type())?;
            }
            T::FixedSizeList(child, size) => {
                // arrow-data multiplies the length by the list size with an `expect`.
                let rows = self.node()? as u64;
                let fits = u64::try_from(*size)
                    .ok()
                    .and_then(|s| rows.checked_mul(s))
                    .is_some_and(|n| usize::try_from(n).is_ok());
                if !fits {
                    return Err(bad("a fixed-size list's length times its size overflows"));
                }
                self.buffer(1)?;
                self.field(child.data_type())?;
            }
            T::Struct(fields) => {
                self.node()?;
                self.buffer(1)?;
                for f in fields {
                    self.field(f.data_type())?;
                }
            }
            T::RunEndEncoded(run_ends, values) => {
                self.node()?;
                self.field(run_ends.data_type())?;
                self.field(values.data_type())?;
            }
            T::Dictionary(key, _) => {
                self.node()?;
                self.buffer(1)?;
                self.buffer(key.primitive_width().unwrap_or(1))?;
            }
            T::Union(fields, mode) => {
                // arrow-ipc slices the type ids (and a dense union's offsets) to the node's
                // length without checking that the buffers are that long.
                let rows = self.node()? as u64;
                if self.before_v5 {
                    self.buffer(1)?;
                }
                let short = || bad("a union's buffers are shorter than its length");
                if (self.buffer(1)? as u64) < rows {
                    return Err(short());
                }
                if *mode == UnionMode::Dense && (self.buffer(4)? as u64) < rows.saturating_mul(4) {
                    return Err(short());
                }
                for (_, f) in fields.iter() {
                    self.field(f.data_type())?;
                }
            }
            other => {
                self.node()?;
                self.buffer(1)?;
                self.buffer(other.primitive_width().unwrap_or(1))?;
            }
        }
        Ok(())
    }
}

fn check_block(bytes: &[u8], b: &Block, schema: Option<&Schema>) -> Result<()> {
    let offset = usize::try_from(b.offset()).map_err(|_| bad("a negative block offset"))?;
    let meta =
        usize::try_from(b.metaDataLength()).map_err(|_| bad("a negative metadata length"))?;
    let body = usize::try_from(b.bodyLength()).map_err(|_| bad("a negative body length"))?;
    offset
        .checked_add(meta)
        .and_then(|x| x.checked_add(body))
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("a block runs past the end of the file"))?;
    let (m, _) = message_at(&bytes[offset..offset + meta])?.ok_or_else(|| bad("an empty block"))?;
    let declared = u64::try_from(m.bodyLength()).map_err(|_| bad("a negative body length"))?;
    if declared > body as u64 {
        return Err(bad("a message's body is longer than its block"));
    }
    check_body(&m, declared, schema)
}

/// Checks an IPC file (`ARROW1` ... footer ... `ARROW1`).
pub(crate) fn check_file(bytes: &[u8]) -> Result<()> {
    let n = bytes.len();
    if n < 6 + 2 + 10 || &bytes[n - 6..] != b"ARROW1" {
        return Err(bad("no ARROW1 footer (a cut-short file?)"));
    }
    let footer_len = i32::from_le_bytes([bytes[n - 10], bytes[n - 9], bytes[n - 8], bytes[n - 7]]);
    let footer_len =
        usize::try_from(footer_len).map_err(|_| bad(format!("footer length {footer_len}")))?;
    let start = (n - 10)
        .checked_sub(footer_len)
        .ok_or_else(|| bad("the footer is longer than the file"))?;
    let footer = arrow_ipc::root_as_footer(&bytes[start..n - 10])
        .map_err(|e| bad(format!("the footer is invalid ({e})")))?;
    let schema = footer
        .schema()
        .and_then(|s| arrow_ipc::convert::try_fb_to_schema(s).ok());
    for list in [footer.dictionaries(), footer.recordBatches()]
        .into_iter()
        .flatten()
    {
        for b in list.iter() {
            check_block(bytes, b, schema.as_ref())?;
        }
    }
    Ok(())
}

/// Checks an IPC stream: messages one after another, each followed by its body.
pub(crate) fn check_stream(bytes: &[u8]) -> Result<()> {
    let mut at = 0usize;
    let mut schema = None;
    while at < bytes.len() {
        let Some((m, framed)) = message_at(&bytes[at..])? else {
            return Ok(());
        };
        let body = usize::try_from(m.bodyLength()).map_err(|_| bad("a negative body length"))?;
        let end = (at + framed)
            .checked_add(body)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("a message's body runs past the end"))?;
        if let Some(s) = m.header_as_schema() {
            schema = arrow_ipc::convert::try_fb_to_schema(s).ok();
        }
        check_body(&m, body as u64, schema.as_ref())?;
        at = end;
    }
    Ok(())
}
