//! A walk over the Thrift compact encoding of a Parquet file's footer and page headers, before
//! the `parquet` crate reads them: the crate trusts what they claim (it allocates a claimed
//! dictionary, page or child count before reading it, and recurses once per schema level), so
//! every count, size and depth it would act on is checked here first against the bytes that
//! back it and the caller's limit ([`check_footer`], [`check_page_headers`]).
//!
//! The crate (60.x) skips an unknown field that holds a list, set or map of booleans by
//! looping over the declared element count while reading nothing (the compact protocol stores
//! one byte per boolean in a collection): a header of a few bytes declaring 2^31 elements costs
//! seconds, and nested ones hours (found by the `arrow_read` fuzz target). No footer or page
//! header that Parquet defines holds a collection of booleans, so the walk refuses any (and
//! any collection that declares more elements than the bytes left could hold); what it lets
//! through the crate's own reader walks in time linear in the bytes.

use crate::error::{Error, Result};

/// Structs nested deeper than this are refused (Parquet's deepest is a few levels).
const MAX_DEPTH: u32 = 32;

/// Compact-protocol type codes.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// A zigzag-encoded integer's value.
fn zigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

struct Walk<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl Walk<'_> {
    fn corrupt(&self, why: &str) -> Error {
        Error::Invalid(format!(
            "corrupt Parquet file: its {} {why} (at byte {} of it)",
            self.what, self.pos
        ))
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.corrupt("ends early"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt("holds an over-long varint"))
    }

    fn skip(&mut self, n: usize) -> Result<()> {
        if n > self.left() {
            return Err(self.corrupt("ends early"));
        }
        self.pos += n;
        Ok(())
    }

    /// A struct's fields up to its stop byte (none of them recorded).
    fn structure(&mut self, depth: u32) -> Result<()> {
        self.known_struct(None, depth, None, &mut Vec::new())
    }

    /// The next field's number and type code, `None` at the struct's stop byte (`last`: the
    /// previous field's number, which a short header counts from).
    fn field_header(&mut self, last: &mut i64) -> Result<Option<(i64, u8)>> {
        let h = self.byte()?;
        if h == 0 {
            return Ok(None);
        }
        let delta = i64::from(h >> 4);
        let id = if delta == 0 {
            zigzag(self.varint()?)
        } else {
            *last + delta
        };
        *last = id;
        Ok(Some((id, h & 0x0f)))
    }

    /// One value of type `ty` (a field's or a collection element's; booleans never reach
    /// here: a boolean field has no payload and a collection of booleans is refused).
    fn value(&mut self, ty: u8, depth: u32) -> Result<()> {
        match ty {
            BYTE => self.skip(1),
            I16 | I32 | I64 => self.varint().map(|_| ()),
            DOUBLE => self.skip(8),
            BINARY => {
                let n = self.varint()?;
                self.skip(usize::try_from(n).unwrap_or(usize::MAX))
            }
            LIST | SET => {
                let h = self.byte()?;
                if h == 0 {
                    return Ok(()); // an empty list some writers write with no element type
                }
                let mut n = u64::from(h >> 4);
                if n == 15 {
                    n = self.varint()?;
                }
                self.elements(n, &[h & 0x0f], depth)
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                self.elements(n, &[kv >> 4, kv & 0x0f], depth)
            }
            STRUCT => self.structure(depth + 1),
            UUID => self.skip(16),
            _ => Err(self.corrupt(&format!("holds an unknown type code {ty}"))),
        }
    }

    /// `n` elements, each one value of every type in `types` (a list's one, a map's two).
    fn elements(&mut self, n: u64, types: &[u8], depth: u32) -> Result<()> {
        if types.iter().any(|&t| t == BOOL_TRUE || t == BOOL_FALSE) {
            return Err(self.corrupt("holds a collection of booleans, which Parquet never writes"));
        }
        // Every element takes a byte at least.
        if n > self.left() as u64 {
            return Err(self.corrupt(&format!(
                "declares a collection of {n} elements in {} bytes",
                self.left()
            )));
        }
        for _ in 0..n {
            for &t in types {
                self.value(t, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// The structs of a page header whose fields the `parquet` crate reads by number, whatever
/// type the bytes give them: a known field under another type is read as its own type, so
/// the walk must refuse it or the two would part ways.
#[derive(Clone, Copy)]
enum Known {
    PageHeader,
    DataPageHeader,
    DictionaryPageHeader,
    DataPageHeaderV2,
    Statistics,
    SchemaElement,
}

impl Known {
    /// The type code field `id` must have, and the struct it holds (for struct fields).
    fn field(self, id: i64) -> Option<(u8, Option<Known>)> {
        use Known::*;
        Some(match (self, id) {
            (PageHeader, 1..=4) => (I32, None),
            (PageHeader, 5) => (STRUCT, Some(DataPageHeader)),
            (PageHeader, 6) => (STRUCT, None),
            (PageHeader, 7) => (STRUCT, Some(DictionaryPageHeader)),
            (PageHeader, 8) => (STRUCT, Some(DataPageHeaderV2)),
            (DataPageHeader, 1..=4) => (I32, None),
            (DataPageHeader, 5) => (STRUCT, Some(Statistics)),
            (DictionaryPageHeader, 1 | 2) => (I32, None),
            (DictionaryPageHeader, 3) => (BOOL_TRUE, None),
            (DataPageHeaderV2, 1..=6) => (I32, None),
            (DataPageHeaderV2, 7) => (BOOL_TRUE, None),
            (DataPageHeaderV2, 8) => (STRUCT, Some(Statistics)),
            (Statistics, 1 | 2 | 5 | 6) => (BINARY, None),
            (Statistics, 3 | 4) => (I64, None),
            (Statistics, 7 | 8) => (BOOL_TRUE, None),
            (SchemaElement, 1..=3 | 5..=9) => (I32, None),
            (SchemaElement, 4) => (BINARY, None),
            (SchemaElement, 10) => (STRUCT, None),
            _ => return None,
        })
    }
}

/// An i32 field a walk recorded: the number of the top-level field whose struct holds it (0
/// for a top-level field), its own number, and its value as the crate reads it.
type Field = (i64, i64, i64);

/// The value of the last i32 field `id` under top-level field `parent` (0: a top-level field):
/// the crate keeps the last of a field given twice.
fn field(fields: &[Field], parent: i64, id: i64) -> Option<i64> {
    fields
        .iter()
        .rev()
        .find(|&&(p, f, _)| p == parent && f == id)
        .map(|&(_, _, v)| v)
}

impl Walk<'_> {
    /// A struct, of a known kind or not (`None`: [`Walk::structure`]): a known field must have
    /// its own type (a boolean either code). With `parent` given (0 for the top level),
    /// `fields` gets the struct's i32 fields and those of the known structs it holds
    /// directly (under their field's number).
    fn known_struct(
        &mut self,
        kind: Option<Known>,
        depth: u32,
        parent: Option<i64>,
        fields: &mut Vec<Field>,
    ) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.corrupt("nests structs too deeply"));
        }
        let mut last = 0i64;
        while let Some((id, ty)) = self.field_header(&mut last)? {
            let is_bool = ty == BOOL_TRUE || ty == BOOL_FALSE;
            if let Some((want, sub)) = kind.and_then(|k| k.field(id)) {
                let same = ty == want || (is_bool && want == BOOL_TRUE);
                if !same {
                    return Err(self.corrupt(&format!(
                        "gives field {id} type code {ty} where Parquet has {want}"
                    )));
                }
                if let Some(sub) = sub {
                    let inner = (parent == Some(0)).then_some(id);
                    self.known_struct(Some(sub), depth + 1, inner, fields)?;
                    continue;
                }
            }
            if ty == I32 {
                let z = self.varint()?;
                if let Some(p) = parent {
                    // The crate keeps the low 32 bits of a longer varint.
                    fields.push((p, id, i64::from(zigzag(z) as i32)));
                }
            } else if !is_bool {
                self.value(ty, depth)?;
            }
        }
        Ok(())
    }
}

/// Checks the footer (`FileMetaData`) of the Parquet file in `bytes`. A file too short to
/// hold one is left to the crate, which refuses it.
pub(crate) fn check_footer(bytes: &[u8]) -> Result<()> {
    let n = bytes.len();
    if n < 12 {
        return Ok(());
    }
    let len = u32::from_le_bytes([bytes[n - 8], bytes[n - 7], bytes[n - 6], bytes[n - 5]]) as usize;
    let Some(start) = (n - 8).checked_sub(len) else {
        return Ok(()); // the crate refuses a footer longer than the file
    };
    let footer = &bytes[start..n - 8];
    let mut w = Walk {
        bytes: footer,
        pos: 0,
        what: "footer",
    };
    w.structure(0)?;
    check_schema(footer)
}

/// How deep a Parquet schema may nest, counting the root and the leaf: pyarrow's limit
/// ("Parquet schema too deeply nested, consider increasing schema depth limit (current limit
/// is 100)"). The `parquet` crate builds the schema, its column descriptors and the Arrow
/// schema by recursion, one frame per level: 2,000 levels in a 16 KB footer overflowed the
/// stack.
const MAX_SCHEMA_DEPTH: usize = 100;

/// The schema (`FileMetaData` field 2, a list of `SchemaElement`s) must not give an element
/// more children (`num_children`, field 5) than the list holds: the crate reserves room for
/// them before reading them (2^31 of them asked for 16 GiB; found by the `arrow_read` fuzz
/// target). The schema must be a list of structs, and each element's known fields must have
/// their own type codes: the crate reads them as their own types whatever the codes say, so a
/// `num_children` sent under another integer code got past the check (the ninth round's
/// finding, a 6 GB reservation). The tree the children counts make (elements in depth-first
/// order) must be at most [`MAX_SCHEMA_DEPTH`] deep. Called on a footer the generic walk has
/// passed.
fn check_schema(footer: &[u8]) -> Result<()> {
    let mut w = Walk {
        bytes: footer,
        pos: 0,
        what: "footer",
    };
    let mut last = 0;
    while let Some((id, ty)) = w.field_header(&mut last)? {
        if ty == BOOL_TRUE || ty == BOOL_FALSE {
            continue;
        }
        if id != 2 {
            w.value(ty, 0)?;
            continue;
        }
        // The crate reads field 2 as a list of schema elements whatever its type codes say.
        if ty != LIST {
            return Err(w.corrupt(&format!("gives the schema type code {ty}, not a list")));
        }
        let h = w.byte()?;
        let mut n = u64::from(h >> 4);
        if n == 15 {
            n = w.varint()?;
        }
        if h & 0x0f != STRUCT {
            return Err(w.corrupt(&format!(
                "gives the schema's elements type code {}, not a struct",
                h & 0x0f
            )));
        }
        // The children still to come of each group the next element lies in, outermost first.
        let mut open: Vec<i64> = Vec::new();
        for i in 0..n {
            let mut fields = Vec::new();
            w.known_struct(Some(Known::SchemaElement), 1, Some(0), &mut fields)?;
            let children = field(&fields, 0, 5).unwrap_or(0);
            if children < 0 || children as u64 >= n {
                return Err(w.corrupt(&format!(
                    "gives a schema element {children} children in a schema of {n} elements"
                )));
            }
            if let Some(left) = open.last_mut() {
                *left -= 1;
            }
            let depth = open.len() + 1;
            if depth > MAX_SCHEMA_DEPTH {
                return Err(Error::Unsupported(format!(
                    "Parquet schema too deeply nested: element {i} of the schema is {depth} \
                     levels deep, past the limit of {MAX_SCHEMA_DEPTH} (pyarrow's)"
                )));
            }
            if children > 0 {
                open.push(children);
            }
            while open.last() == Some(&0) {
                open.pop();
            }
        }
    }
    Ok(())
}

/// How the pages of a column chunk are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// Uncompressed: the crate takes a page's `compressed_page_size` bytes as they are.
    Stored,
    /// Snappy: the crate allocates `uncompressed_page_size` bytes and decompresses into them.
    Snappy,
    /// A codec this build lacks (the crate refuses the chunk when it opens it).
    Other,
}

/// Snappy writes at least 3 bytes for every 64 it gives back (its longest copy), so no page
/// decompresses to more than this many times its compressed size (plus a few bytes of slack
/// for tiny pages).
const SNAPPY_MAX_EXPANSION: u64 = 22;

/// What the page checks know of one column chunk, from the footer the crate has parsed.
#[derive(Debug)]
pub(crate) struct Chunk<'a> {
    /// The column and row group, for errors (`column "x" of row group 0`).
    pub(crate) name: &'a str,
    /// The chunk's bytes in the file.
    pub(crate) range: std::ops::Range<usize>,
    /// The chunk's `num_values` (levels, nulls included), which its data pages share.
    pub(crate) num_values: i64,
    /// The column's physical type and, for `FIXED_LEN_BYTE_ARRAY`, its length.
    pub(crate) physical: parquet::basic::Type,
    pub(crate) type_length: i32,
    pub(crate) codec: Codec,
    /// The caller's limit on decoded bytes.
    pub(crate) max_decoded_bytes: u64,
}

/// The fewest bits a value of a column takes PLAIN-encoded (as a dictionary page holds it),
/// and the bytes one takes in the decoded dictionary (the crate sizes the dictionary of a
/// fixed-width column at `num_values` entries before it reads a byte of the page; a byte
/// array dictionary read as views takes 16 bytes an entry).
fn value_sizes(physical: parquet::basic::Type, type_length: i32) -> (u64, u64) {
    use parquet::basic::Type as T;
    match physical {
        T::BOOLEAN => (1, 1),
        T::INT32 | T::FLOAT => (32, 4),
        T::INT64 | T::DOUBLE => (64, 8),
        T::INT96 => (96, 12),
        T::BYTE_ARRAY => (32, 16),
        T::FIXED_LEN_BYTE_ARRAY => {
            let len = u64::try_from(type_length).unwrap_or(0);
            (len.saturating_mul(8), len.max(1))
        }
    }
}

/// Checks the page headers of a column chunk, walked as the crate walks them (a header, then
/// its page of `compressed_page_size` bytes, then the next header), before the crate reads
/// any: what each claims must be what its bytes and the caller's limit can hold, since the
/// crate allocates what a header claims before it looks at the page.
///
/// - Each page lies within the chunk; its `uncompressed_page_size` is at most the limit and,
///   for Snappy, at most [`SNAPPY_MAX_EXPANSION`] times its compressed size (the crate
///   allocates and zeroes the uncompressed size before decompressing).
/// - A dictionary page holds its `num_values`: at least that many values' PLAIN bytes (the
///   crate resized an int32 dictionary to a claimed 2^31 - 1 entries, 8 GiB zeroed, for a
///   122-byte file), and its decoded entries fit the limit.
/// - The data pages (version 1 and 2) claim no more values, together, than the chunk's
///   `num_values`, which the caller has counted against the limit; a version-2 page's nulls
///   and rows are at most its values, and its level bytes lie within the page.
pub(crate) fn check_page_headers(bytes: &[u8], chunk: &Chunk<'_>) -> Result<()> {
    let body = &bytes[chunk.range.clone()];
    let (plain_bits, memory_bytes) = value_sizes(chunk.physical, chunk.type_length);
    let bad = |why: String| {
        Error::Invalid(format!(
            "corrupt Parquet file: a page of {} {why}",
            chunk.name
        ))
    };
    let mut data_values = 0i64;
    let mut at = 0usize;
    while at < body.len() {
        let mut w = Walk {
            bytes: &body[at..],
            pos: 0,
            what: "page header",
        };
        let mut fields = Vec::new();
        w.known_struct(Some(Known::PageHeader), 0, Some(0), &mut fields)?;
        let get = |parent, id| field(&fields, parent, id);
        let size = get(0, 3).ok_or_else(|| w.corrupt("has no page size"))?;
        let size = usize::try_from(size).map_err(|_| w.corrupt("has a negative page size"))?;
        let next = at
            .checked_add(w.pos)
            .and_then(|a| a.checked_add(size))
            .filter(|&a| a <= body.len())
            .ok_or_else(|| w.corrupt("has a page that ends past its column chunk"))?;
        // The crate refuses a header without its required fields itself.
        let Some(full) = get(0, 2) else {
            at = next;
            continue;
        };
        let full = u64::try_from(full)
            .ok()
            .filter(|&f| f <= chunk.max_decoded_bytes)
            .ok_or_else(|| {
                w.corrupt(&format!(
                    "gives an uncompressed page size of {full} bytes (the limit is {})",
                    chunk.max_decoded_bytes
                ))
            })?;
        let size = size as u64;
        if chunk.codec == Codec::Snappy
            && full > size.saturating_mul(SNAPPY_MAX_EXPANSION).saturating_add(64)
        {
            return Err(bad(format!(
                "claims {full} bytes uncompressed from {size} Snappy-compressed bytes (Snappy \
                 expands at most {SNAPPY_MAX_EXPANSION} times)"
            )));
        }
        // The bytes the crate hands the decoders: the page as stored, or what it decompresses.
        let page_bytes = if chunk.codec == Codec::Stored {
            size.min(full)
        } else {
            full
        };
        // The crate takes the levels' lengths from a version-2 header whatever the page's type.
        let (def, rep) = (get(8, 5).unwrap_or(0), get(8, 6).unwrap_or(0));
        if def < 0 || rep < 0 || (def + rep) as u64 > size.min(full) {
            return Err(bad(format!(
                "claims {rep} + {def} bytes of repetition and definition levels in {} bytes",
                size.min(full)
            )));
        }
        match get(0, 1) {
            // DICTIONARY_PAGE
            Some(2) => {
                let n = get(7, 1).unwrap_or(0);
                let n = u64::try_from(n)
                    .map_err(|_| bad(format!("claims a dictionary of {n} values")))?;
                let need_bytes = n.saturating_mul(plain_bits).div_ceil(8);
                if need_bytes > page_bytes {
                    return Err(Error::Invalid(format!(
                        "corrupt Parquet file: the dictionary page of {} claims {n} values, \
                         which take at least {need_bytes} bytes, in a page of {page_bytes} bytes",
                        chunk.name
                    )));
                }
                let decoded = n.saturating_mul(memory_bytes);
                if decoded > chunk.max_decoded_bytes {
                    return Err(Error::Unsupported(format!(
                        "the dictionary page of {} claims {n} values, which decode to {decoded} \
                         bytes, more than the limit of {} bytes",
                        chunk.name, chunk.max_decoded_bytes
                    )));
                }
            }
            // DATA_PAGE and DATA_PAGE_V2
            Some(t @ (0 | 3)) => {
                let n = if t == 0 { get(5, 1) } else { get(8, 1) }.unwrap_or(0);
                if n < 0 {
                    return Err(bad(format!("claims {n} values")));
                }
                if t == 3 {
                    for (what, v) in [("nulls", get(8, 2)), ("rows", get(8, 3))] {
                        let v = v.unwrap_or(0);
                        if v < 0 || v > n {
                            return Err(bad(format!("claims {v} {what} in {n} values")));
                        }
                    }
                }
                data_values = data_values.saturating_add(n);
                if data_values > chunk.num_values {
                    return Err(Error::Invalid(format!(
                        "corrupt Parquet file: the data pages of {} claim more values than the \
                         column chunk's {} (at least {data_values})",
                        chunk.name, chunk.num_values
                    )));
                }
            }
            _ => {}
        }
        at = next;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn footer(body: &[u8]) -> Vec<u8> {
        let mut f = b"PAR1".to_vec();
        f.extend_from_slice(body);
        f.extend_from_slice(&(body.len() as u32).to_le_bytes());
        f.extend_from_slice(b"PAR1");
        f
    }

    #[test]
    fn a_collection_of_booleans_is_refused_before_the_crate_loops_over_it() {
        // Field 1 of FileMetaData-like struct: a list (type 9) of booleans (1) with 2^31 - 1
        // elements (size nibble 15, then the varint), then stop.
        let body = [0x19, 0xf1, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        let e = check_footer(&footer(&body)).unwrap_err().to_string();
        assert!(e.contains("collection of booleans"), "{e}");
        // The same with i32 elements: more elements than bytes.
        let body = [0x19, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
        let e = check_footer(&footer(&body)).unwrap_err().to_string();
        assert!(e.contains("2147483647 elements"), "{e}");
        // A map of bool to bool.
        let body = [0x1b, 0x05, 0x11, 1, 1, 1, 1, 1, 0x00];
        let e = check_footer(&footer(&body)).unwrap_err().to_string();
        assert!(e.contains("collection of booleans"), "{e}");
    }

    #[test]
    fn well_formed_structs_pass() {
        // i32 field 1 = 3, field 10 a list of two strings, field 11 a nested struct with a
        // bool field, stop. (Field 2, the schema, must be a list of structs: see below.)
        let body = [
            0x15, 0x06, 0x99, 0x28, 1, b'a', 1, b'b', 0x1c, 0x11, 0x00, 0x00,
        ];
        check_footer(&footer(&body)).unwrap();
        // An empty list written with header 0, and an empty schema (a list of no structs).
        check_footer(&footer(&[0xa9, 0x00, 0x00])).unwrap();
        check_footer(&footer(&[0x29, 0x0c, 0x00])).unwrap();
    }

    #[test]
    fn a_schema_that_is_not_a_list_of_structs_is_refused() {
        // Field 2 as a list of strings, and as a map (the crate reads either as the schema).
        let e = check_footer(&footer(&[0x29, 0x28, 1, b'a', 1, b'b', 0x00]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("elements type code 8, not a struct"), "{e}");
        let e = check_footer(&footer(&[0x2b, 0x00, 0x00]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("gives the schema type code 11, not a list"),
            "{e}"
        );
    }
}
