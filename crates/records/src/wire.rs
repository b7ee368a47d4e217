//! A direct decoder of serialized `tf.train.Example`s: walks the protobuf wire format and
//! hands out, for each feature name wanted, the bytes of its last `Feature` message, without
//! building any message. Values are then decoded straight into output columns.

use bytes::Bytes;

/// Malformed protobuf.
#[derive(Debug)]
pub(crate) struct WireError;

pub(crate) type WireResult<T> = Result<T, WireError>;

/// A byte range `(start, end)` of the input.
pub(crate) type Span = (usize, usize);

/// Called with each feature's key and the span of its `Feature` message.
pub(crate) type OnFeature<'f> = dyn FnMut(&[u8], Span) + 'f;

/// A cursor over protobuf bytes.
pub(crate) struct Cursor<'a> {
    pub(crate) data: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    pub(crate) fn done(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub(crate) fn varint(&mut self) -> WireResult<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.data.get(self.pos).ok_or(WireError)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(WireError)
    }

    /// A field's key: (field number, wire type).
    pub(crate) fn key(&mut self) -> WireResult<(u64, u8)> {
        let k = self.varint()?;
        let field = k >> 3;
        if field == 0 {
            return Err(WireError);
        }
        Ok((field, (k & 7) as u8))
    }

    /// The payload of a length-delimited field, as a range of `data`.
    pub(crate) fn len_delimited(&mut self) -> WireResult<(usize, usize)> {
        let n = self.varint()?;
        let start = self.pos;
        let n = usize::try_from(n).map_err(|_| WireError)?;
        let end = start.checked_add(n).ok_or(WireError)?;
        if end > self.data.len() {
            return Err(WireError);
        }
        self.pos = end;
        Ok((start, end))
    }

    pub(crate) fn fixed(&mut self, n: usize) -> WireResult<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(WireError)?;
        let s = self.data.get(self.pos..end).ok_or(WireError)?;
        self.pos = end;
        Ok(s)
    }

    /// Skips a field of `wire` type.
    pub(crate) fn skip(&mut self, wire: u8) -> WireResult<()> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.fixed(8).map(|_| ()),
            2 => self.len_delimited().map(|_| ()),
            5 => self.fixed(4).map(|_| ()),
            3 => self.skip_group(),
            // An end-group with no start, or wire types 6 and 7.
            _ => Err(WireError),
        }
    }

    /// Skips a (deprecated) group whose start tag was just read, as protobuf parsers do, up to
    /// a nesting of 100 (prost's recursion limit), iteratively so that no input can exhaust
    /// the stack.
    fn skip_group(&mut self) -> WireResult<()> {
        let mut depth = 1usize;
        while depth > 0 {
            let (_, wire) = self.key()?;
            match wire {
                3 => {
                    depth += 1;
                    if depth > 100 {
                        return Err(WireError);
                    }
                }
                4 => depth -= 1,
                w => self.skip(w)?,
            }
        }
        Ok(())
    }
}

/// The list a `Feature` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bytes,
    Float,
    Int64,
}

impl Kind {
    /// TensorFlow's name of the matching dtype (`string`, `float`, `int64`).
    pub(crate) fn tf_name(self) -> &'static str {
        match self {
            Kind::Bytes => "string",
            Kind::Float => "float",
            Kind::Int64 => "int64",
        }
    }
}

/// A borrowed list of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum VRef<'a> {
    Bytes(&'a [Bytes]),
    Float(&'a [f32]),
    Int64(&'a [i64]),
}

impl VRef<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            VRef::Bytes(v) => v.len(),
            VRef::Float(v) => v.len(),
            VRef::Int64(v) => v.len(),
        }
    }

    pub(crate) fn kind(&self) -> Kind {
        match self {
            VRef::Bytes(_) => Kind::Bytes,
            VRef::Float(_) => Kind::Float,
            VRef::Int64(_) => Kind::Int64,
        }
    }
}

/// The values of one wanted feature across a chunk of examples, in three flat buffers, and
/// for each example where its list starts and how long it is: decoding a batch allocates a
/// few buffers per chunk rather than one per feature and example.
#[derive(Debug, Default)]
pub(crate) struct ColumnBuf {
    pub(crate) floats: Vec<f32>,
    pub(crate) ints: Vec<i64>,
    pub(crate) bytes: Vec<Bytes>,
    /// Per example: `None` (absent, or a feature with no list) or (kind, start, len).
    pub(crate) entries: Vec<Option<(Kind, usize, usize)>>,
}

impl ColumnBuf {
    pub(crate) fn get(&self, i: usize) -> Option<VRef<'_>> {
        let (kind, start, len) = self.entries[i]?;
        Some(match kind {
            Kind::Float => VRef::Float(&self.floats[start..start + len]),
            Kind::Int64 => VRef::Int64(&self.ints[start..start + len]),
            Kind::Bytes => VRef::Bytes(&self.bytes[start..start + len]),
        })
    }
}

/// Decodes the `Feature` message `whole[range]` onto the end of `col`'s buffers and records
/// its entry (the merge rules of [`decode_feature`]).
pub(crate) fn decode_feature_into(
    whole: &Bytes,
    range: (usize, usize),
    col: &mut ColumnBuf,
) -> WireResult<()> {
    let data = &whole[range.0..range.1];
    let mut c = Cursor::new(data);
    let mut entry: Option<(Kind, usize, usize)> = None;
    while !c.done() {
        let (field, wire) = c.key()?;
        if !(1..=3).contains(&field) || wire != 2 {
            c.skip(wire)?;
            continue;
        }
        let (s, e) = c.len_delimited()?;
        let list = &data[s..e];
        let kind = match field {
            1 => Kind::Bytes,
            2 => Kind::Float,
            _ => Kind::Int64,
        };
        // A list of the same kind as the previous one merges with it (its values are the
        // last ones in the buffer); another kind starts over.
        let start = match entry {
            Some((k, start, _)) if k == kind => start,
            _ => match kind {
                Kind::Bytes => col.bytes.len(),
                Kind::Float => col.floats.len(),
                Kind::Int64 => col.ints.len(),
            },
        };
        let mut lc = Cursor::new(list);
        match kind {
            Kind::Bytes => {
                let base = range.0 + s;
                while !lc.done() {
                    let (f, w) = lc.key()?;
                    if f == 1 && w == 2 {
                        let (a, b) = lc.len_delimited()?;
                        col.bytes.push(whole.slice(base + a..base + b));
                    } else {
                        lc.skip(w)?;
                    }
                }
            }
            Kind::Float => {
                while !lc.done() {
                    let (f, w) = lc.key()?;
                    match (f, w) {
                        (1, 2) => {
                            let (a, b) = lc.len_delimited()?;
                            let packed = &list[a..b];
                            if !packed.len().is_multiple_of(4) {
                                return Err(WireError);
                            }
                            extend_f32_le(&mut col.floats, packed);
                        }
                        (1, 5) => {
                            let c4 = lc.fixed(4)?;
                            col.floats
                                .push(f32::from_le_bytes([c4[0], c4[1], c4[2], c4[3]]));
                        }
                        _ => lc.skip(w)?,
                    }
                }
            }
            Kind::Int64 => {
                while !lc.done() {
                    let (f, w) = lc.key()?;
                    match (f, w) {
                        (1, 2) => {
                            let (a, b) = lc.len_delimited()?;
                            let mut pc = Cursor::new(&list[a..b]);
                            while !pc.done() {
                                col.ints.push(pc.varint()? as i64);
                            }
                        }
                        (1, 0) => col.ints.push(lc.varint()? as i64),
                        _ => lc.skip(w)?,
                    }
                }
            }
        }
        let end = match kind {
            Kind::Bytes => col.bytes.len(),
            Kind::Float => col.floats.len(),
            Kind::Int64 => col.ints.len(),
        };
        entry = Some((kind, start, end - start));
    }
    col.entries.push(entry);
    Ok(())
}

/// The decoded values of one feature.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Values {
    Bytes(Vec<Bytes>),
    Float(Vec<f32>),
    Int64(Vec<i64>),
}

impl Values {
    pub(crate) fn as_vref(&self) -> VRef<'_> {
        match self {
            Values::Bytes(v) => VRef::Bytes(v),
            Values::Float(v) => VRef::Float(v),
            Values::Int64(v) => VRef::Int64(v),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Values::Bytes(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Int64(v) => v.len(),
        }
    }
}

/// Decodes a `Feature` message (the bytes `whole[range]`): its kind (`None` for a feature
/// with no list) and values. Repeated list fields of one kind merge (protobuf's rule for a
/// message field seen twice); a later field of another kind replaces the earlier.
pub(crate) fn decode_feature(whole: &Bytes, range: (usize, usize)) -> WireResult<Option<Values>> {
    let mut col = ColumnBuf::default();
    decode_feature_into(whole, range, &mut col)?;
    // The entry's list is the last one in its kind's buffer: a list of another kind that an
    // earlier field left behind sits before it.
    fn from<T>(mut v: Vec<T>, start: usize) -> Vec<T> {
        v.drain(..start);
        v
    }
    let ColumnBuf {
        floats,
        ints,
        bytes,
        entries,
    } = col;
    Ok(entries[0].map(|(kind, start, _)| match kind {
        Kind::Bytes => Values::Bytes(from(bytes, start)),
        Kind::Float => Values::Float(from(floats, start)),
        Kind::Int64 => Values::Int64(from(ints, start)),
    }))
}

/// Walks a `Features` message (`data[range]`), calling `found(key, feature_range)` for each map
/// entry (a later entry of the same key overrides an earlier one: the caller keeps the last).
pub(crate) fn walk_features(
    data: &[u8],
    range: (usize, usize),
    found: &mut OnFeature<'_>,
) -> WireResult<()> {
    let mut c = Cursor {
        data: &data[..range.1],
        pos: range.0,
    };
    while !c.done() {
        let (field, wire) = c.key()?;
        if field != 1 || wire != 2 {
            c.skip(wire)?;
            continue;
        }
        let (s, e) = c.len_delimited()?;
        let mut ec = Cursor {
            data: &data[..e],
            pos: s,
        };
        let mut key: &[u8] = &[];
        let mut value = (e, e);
        while !ec.done() {
            let (f, w) = ec.key()?;
            match (f, w) {
                (1, 2) => {
                    let (a, b) = ec.len_delimited()?;
                    key = &data[a..b];
                }
                (2, 2) => value = ec.len_delimited()?,
                _ => ec.skip(w)?,
            }
        }
        found(key, value);
    }
    Ok(())
}

/// The packed values of the `Feature` message `data` when it is exactly one list of `kind`
/// (float or int64) holding exactly one packed `value` field: the packed bytes. `None` for
/// every other shape, malformed ones included (the general decoder then decides, and reports).
pub(crate) fn single_packed(data: &[u8], kind: Kind) -> Option<&[u8]> {
    let want = match kind {
        Kind::Float => 2,
        Kind::Int64 => 3,
        Kind::Bytes => return None,
    };
    let mut c = Cursor::new(data);
    let (field, wire) = c.key().ok()?;
    if field != want || wire != 2 {
        return None;
    }
    let (s, e) = c.len_delimited().ok()?;
    if !c.done() {
        return None;
    }
    let list = &data[s..e];
    let mut lc = Cursor::new(list);
    let (f, w) = lc.key().ok()?;
    if f != 1 || w != 2 {
        return None;
    }
    let (a, b) = lc.len_delimited().ok()?;
    lc.done().then_some(&list[a..b])
}

/// Walks an `Example` message, calling `found` for each feature of its `features` (several
/// `features` fields merge, as protobuf merges a message field seen twice).
pub(crate) fn walk_example(data: &[u8], found: &mut OnFeature<'_>) -> WireResult<()> {
    let mut c = Cursor::new(data);
    while !c.done() {
        let (field, wire) = c.key()?;
        if field == 1 && wire == 2 {
            let r = c.len_delimited()?;
            walk_features(data, r, found)?;
        } else {
            c.skip(wire)?;
        }
    }
    Ok(())
}

/// Appends the little-endian `f32`s of `packed` (a multiple of 4 bytes long): one copy of the
/// bytes on a little-endian machine, where they are already the floats' memory.
fn extend_f32_le(dst: &mut Vec<f32>, packed: &[u8]) {
    let n = packed.len() / 4;
    if cfg!(target_endian = "little") {
        let start = dst.len();
        dst.resize(start + n, 0.0);
        bytemuck::cast_slice_mut::<f32, u8>(&mut dst[start..]).copy_from_slice(&packed[..n * 4]);
    } else {
        dst.extend(
            packed
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_lists_of_one_kind_merge_and_another_kind_starts_over() {
        let mut feature = vec![0x0a, 3, 0x0a, 1, b'a'];
        feature.extend([0x12, 6, 0x0a, 4]);
        feature.extend(1.5f32.to_le_bytes());
        feature.extend([0x0a, 3, 0x0a, 1, b'b', 0x0a, 3, 0x0a, 1, b'c']);
        let whole = Bytes::from(feature);
        let got = decode_feature(&whole, (0, whole.len())).unwrap();
        let want = vec![Bytes::from_static(b"b"), Bytes::from_static(b"c")];
        assert_eq!(got, Some(Values::Bytes(want)));
        let ints = Bytes::from_static(&[0x12, 0, 0x1a, 2, 0x08, 7, 0x1a, 3, 0x0a, 1, 9]);
        let got = decode_feature(&ints, (0, ints.len())).unwrap();
        assert_eq!(got, Some(Values::Int64(vec![7, 9])));
        assert_eq!(decode_feature(&ints, (0, 0)).unwrap(), None);
    }
}
