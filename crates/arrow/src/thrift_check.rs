//! A walk over the Thrift compact encoding of a Parquet file's footer and page headers, before
//! the `parquet` crate reads them.
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

    /// A struct's fields up to its stop byte; `fields` gets each top-level i32 field
    /// (number, value).
    fn structure(&mut self, depth: u32, fields: &mut Vec<(i64, i64)>) -> Result<()> {
        self.known_struct(None, depth, fields)
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
            STRUCT => self.structure(depth + 1, &mut Vec::new()),
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

impl Walk<'_> {
    /// A struct, of a known kind or not (`None`: [`Walk::structure`]): a known field must have
    /// its own type (a boolean either code); `fields` gets each top-level i32 field.
    fn known_struct(
        &mut self,
        kind: Option<Known>,
        depth: u32,
        fields: &mut Vec<(i64, i64)>,
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
                    self.known_struct(Some(sub), depth + 1, &mut Vec::new())?;
                    continue;
                }
            }
            if ty == I32 {
                let z = self.varint()?;
                fields.push((id, zigzag(z)));
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
    w.structure(0, &mut Vec::new())?;
    check_schema_children(footer)
}

/// The schema (`FileMetaData` field 2, a list of `SchemaElement`s) must not give an element
/// more children (`num_children`, field 5) than the list holds: the crate reserves room for
/// them before reading them (2^31 of them asked for 16 GiB; found by the `arrow_read` fuzz
/// target). The schema must be a list of structs, and each element's known fields must have
/// their own type codes: the crate reads them as their own types whatever the codes say, so a
/// `num_children` sent under another integer code got past the check (the ninth round's
/// finding, a 6 GB reservation). Called on a footer the generic walk has passed.
fn check_schema_children(footer: &[u8]) -> Result<()> {
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
        for _ in 0..n {
            let mut fields = Vec::new();
            w.known_struct(Some(Known::SchemaElement), 1, &mut fields)?;
            if let Some(&(_, children)) = fields.iter().rev().find(|(f, _)| *f == 5) {
                if children < 0 || children as u64 >= n {
                    return Err(w.corrupt(&format!(
                        "gives a schema element {children} children in a schema of {n} elements"
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Checks the page headers of the column chunk `bytes[start..end]`, walked as the crate walks
/// them: a header, then its page (`compressed_page_size`, field 3), then the next header. Each
/// page must lie within the chunk, and its `uncompressed_page_size` (field 2, which the crate
/// allocates before decompressing) must be at most `max_page_bytes`.
pub(crate) fn check_page_headers(
    bytes: &[u8],
    start: usize,
    end: usize,
    max_page_bytes: u64,
) -> Result<()> {
    let chunk = &bytes[start..end];
    let mut at = 0usize;
    while at < chunk.len() {
        let mut w = Walk {
            bytes: &chunk[at..],
            pos: 0,
            what: "page header",
        };
        let mut fields = Vec::new();
        w.known_struct(Some(Known::PageHeader), 0, &mut fields)?;
        let size = fields
            .iter()
            .rev()
            .find(|(id, _)| *id == 3)
            .map(|&(_, v)| v)
            .ok_or_else(|| w.corrupt("has no page size"))?;
        let size = usize::try_from(size).map_err(|_| w.corrupt("has a negative page size"))?;
        if let Some(&(_, full)) = fields.iter().rev().find(|(id, _)| *id == 2) {
            if u64::try_from(full).map_or(true, |f| f > max_page_bytes) {
                return Err(w.corrupt(&format!(
                    "gives an uncompressed page size of {full} bytes (the limit is \
                     {max_page_bytes})"
                )));
            }
        }
        at = at
            .checked_add(w.pos)
            .and_then(|a| a.checked_add(size))
            .filter(|&a| a <= chunk.len())
            .ok_or_else(|| w.corrupt("has a page that ends past its column chunk"))?;
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
