//! Checks of an Arrow IPC file or stream's framing before arrow-ipc reads it.
//!
//! arrow-ipc trusts the offsets and lengths in a file: a block or buffer that points past the
//! data panics (slicing) or allocates what the file claims. These checks walk the same framing
//! first (the footer's blocks, each message's flatbuffer, verified, and its buffers) and refuse
//! anything that does not lie inside the bytes, so the reader only ever sees consistent
//! framing.

use arrow_ipc::{Block, Message};

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

/// Checks that every buffer of a record batch (or dictionary) message lies within its body.
fn check_body(m: &Message<'_>, body_len: u64) -> Result<()> {
    let rb = match (m.header_as_record_batch(), m.header_as_dictionary_batch()) {
        (Some(rb), _) => Some(rb),
        (None, Some(d)) => Some(
            d.data()
                .ok_or_else(|| bad("a dictionary batch without data"))?,
        ),
        _ => None,
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
    Ok(())
}

fn check_block(bytes: &[u8], b: &Block) -> Result<()> {
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
    check_body(&m, declared)
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
    for list in [footer.dictionaries(), footer.recordBatches()]
        .into_iter()
        .flatten()
    {
        for b in list.iter() {
            check_block(bytes, b)?;
        }
    }
    Ok(())
}

/// Checks an IPC stream: messages one after another, each followed by its body.
pub(crate) fn check_stream(bytes: &[u8]) -> Result<()> {
    let mut at = 0usize;
    while at < bytes.len() {
        let Some((m, framed)) = message_at(&bytes[at..])? else {
            return Ok(());
        };
        let body = usize::try_from(m.bodyLength()).map_err(|_| bad("a negative body length"))?;
        let end = (at + framed)
            .checked_add(body)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| bad("a message's body runs past the end"))?;
        check_body(&m, body as u64)?;
        at = end;
    }
    Ok(())
}
