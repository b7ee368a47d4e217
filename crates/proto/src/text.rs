//! The protobuf text format of TensorFlow's graph messages (`.pbtxt`, what
//! `tf.io.write_graph(..., as_text=True)` and `text_format` write), both ways.
//!
//! One schema table describes the messages a `GraphDef` can hold (nodes, attrs, tensors,
//! shapes, versions, function libraries with their signatures, debug info); a parser turns text
//! into the binary wire format through it, and a printer turns wire bytes into text through it.
//! So the text path decodes into exactly the same messages as the binary path (a function
//! library's every field included, not only the ones tensorcast interprets), and a GraphDef
//! read as text and written as binary is TensorFlow's deterministic encoding: fields in number
//! order, map entries sorted by key, repeated numbers packed (the messages are proto3).
//!
//! The parser takes what protobuf's text format allows: `name: value` and `name { ... }` (also
//! `name: { ... }` and `< ... >`), `,` or `;` between fields, `#` comments, strings in single
//! or double quotes with C escapes (adjacent strings join), `[a, b]` lists, enum values by
//! name or number, `inf`/`nan` floats. Nesting is bounded ([`crate::MAX_NESTING_DEPTH`]) and
//! every error names the line and column.
//!
//! ```
//! use tensorcast_proto::{graph_def_from_text, graph_def_to_text};
//! let text = r#"
//!   node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
//!   versions { producer: 2474 }
//! "#;
//! let gd = graph_def_from_text(text)?;
//! assert_eq!(gd.node[0].name, "x");
//! let again = graph_def_from_text(&graph_def_to_text(&gd)?)?;
//! assert_eq!(again, gd);
//! # Ok::<(), tensorcast_proto::ProtoError>(())
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

use prost::Message;

use crate::error::ProtoError;
use crate::graph::GraphDef;

/// How one field is encoded.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A `DataType` (its value names come from tensorcast's dtype table).
    DType,
    Int32,
    Int64,
    /// `sint64`: zigzag-encoded.
    SInt64,
    UInt32,
    UInt64,
    Fixed64,
    Float,
    Double,
    Bool,
    Str,
    Bytes,
    /// An enum, by the table of its value names.
    Enum(&'static [(&'static str, i32)]),
    /// A nested message, by its index in the schema table ([`message`]).
    Msg(usize),
}

#[derive(Debug)]
struct Field {
    name: &'static str,
    number: u32,
    kind: Kind,
    repeated: bool,
}

/// One message type: its name (for errors) and its fields.
#[derive(Debug)]
struct Schema {
    name: &'static str,
    fields: Vec<Field>,
    /// A map entry (`key`, `value`): entries are sorted by key when encoded.
    map_entry: bool,
}

use Kind::{
    Bool, Bytes as B, Double, Fixed64, Float, Int32, Int64, Msg, SInt64, Str, UInt32, UInt64,
};

/// `DataType`'s value names (`DT_FLOAT`...), from tensorcast's dtype table.
static DATA_TYPES: std::sync::LazyLock<Vec<(&'static str, i32)>> = std::sync::LazyLock::new(|| {
    let mut v: Vec<(&'static str, i32)> = Vec::new();
    for n in (0..=40).chain(101..=140) {
        if let Some(name) = tensorcast_core::DataType::from_number(n).proto_name() {
            v.push((Box::leak(name.into_boxed_str()), n));
        }
    }
    v
});

fn dtype_kind() -> Kind {
    Kind::Enum(DATA_TYPES.as_slice())
}

/// The schemas: the field tables of every message reachable from `GraphDef` and `SavedModel`,
/// generated from TensorFlow's own descriptors by `gen_text_schema.py` into a plain table
/// beside this file (its header says how it reads), parsed once, at first use.
const TEXT_SCHEMA: &str = include_str!("text_schema.txt");

/// Every message's schema, in the table's order, and each one's index by name.
fn schemas() -> &'static (Vec<Schema>, HashMap<&'static str, usize>) {
    static SCHEMAS: OnceLock<(Vec<Schema>, HashMap<&'static str, usize>)> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        read_schemas(TEXT_SCHEMA).unwrap_or_else(|e| panic!("text_schema.txt, {e}"))
    })
}

/// The schema of message `index`.
fn message(index: usize) -> &'static Schema {
    &schemas().0[index]
}

/// The schema of the message named `name` (`GraphDef`, `SavedModel`: the roots).
fn root(name: &str) -> &'static Schema {
    message(schemas().1[name])
}

/// Reads a schema table: `enum NAME` and `VALUE NUMBER` lines, `message NAME` or `entry NAME`
/// and `[repeated] FIELD NUMBER TYPE` lines; blank lines and `#` comments are skipped. Types
/// name a scalar, `DataType`, or an enum or message declared anywhere in the table.
fn read_schemas(text: &'static str) -> Result<(Vec<Schema>, HashMap<&'static str, usize>), String> {
    // (keyword, name, its lines with their numbers) of each block.
    type Block = (&'static str, &'static str, Vec<(usize, &'static str)>);
    let mut blocks: Vec<Block> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once(' ') {
            Some((kw @ ("enum" | "message" | "entry"), name)) => {
                blocks.push((kw, name, Vec::new()))
            }
            _ => match blocks.last_mut() {
                Some(b) => b.2.push((i + 1, line)),
                None => return Err(format!("line {}: `{line}` outside a block", i + 1)),
            },
        }
    }
    let number = |n: usize, text: &str| {
        text.parse::<i64>()
            .map_err(|_| format!("line {n}: `{text}` is not a number"))
    };
    let mut enums: HashMap<&str, &'static [(&'static str, i32)]> = HashMap::new();
    let mut by_name: HashMap<&'static str, usize> = HashMap::new();
    for &(kw, name, ref lines) in &blocks {
        if kw == "enum" {
            let mut values = Vec::new();
            for &(n, line) in lines {
                let (value, v) = line
                    .split_once(' ')
                    .ok_or_else(|| format!("line {n}: `{line}`"))?;
                let v = i32::try_from(number(n, v)?).map_err(|e| format!("line {n}: {e}"))?;
                values.push((value, v));
            }
            enums.insert(name, values.leak());
        } else {
            let index = by_name.len();
            by_name.insert(name, index);
        }
    }
    let mut messages = Vec::with_capacity(by_name.len());
    for &(kw, name, ref lines) in &blocks {
        if kw == "enum" {
            continue;
        }
        let mut fields = Vec::with_capacity(lines.len());
        for &(n, line) in lines {
            let words: Vec<&'static str> = line.split(' ').collect();
            let (repeated, words) = match words.split_first() {
                Some((&"repeated", rest)) => (true, rest),
                _ => (false, &words[..]),
            };
            let &[field, num, ty] = words else {
                return Err(format!(
                    "line {n}: `{line}` is not `[repeated] FIELD NUMBER TYPE`"
                ));
            };
            let kind = match ty {
                "DataType" => Kind::DType,
                "int32" => Int32,
                "int64" => Int64,
                "sint64" => SInt64,
                "uint32" => UInt32,
                "uint64" => UInt64,
                "fixed64" => Fixed64,
                "float" => Float,
                "double" => Double,
                "bool" => Bool,
                "string" => Str,
                "bytes" => B,
                _ => match (enums.get(ty), by_name.get(ty)) {
                    (Some(values), _) => Kind::Enum(values),
                    (None, Some(&index)) => Msg(index),
                    (None, None) => return Err(format!("line {n}: no type `{ty}`")),
                },
            };
            let number = u32::try_from(number(n, num)?).map_err(|e| format!("line {n}: {e}"))?;
            fields.push(Field {
                name: field,
                number,
                kind,
                repeated,
            });
        }
        messages.push(Schema {
            name,
            fields,
            map_entry: kw == "entry",
        });
    }
    Ok((messages, by_name))
}

/// The kind a field really has (`DataType` resolved to the dtype table).
fn kind_of(field: &Field) -> Kind {
    match field.kind {
        Kind::DType => dtype_kind(),
        k => k,
    }
}

// ---- the parser ---------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(String),
    Str(Vec<u8>),
    Punct(char),
}

struct Lexer<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
    col: usize,
}

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        Lexer {
            src: text.as_bytes(),
            pos: 0,
            line: 1,
            col: 1,
        }
    }

    fn err(&self, what: impl std::fmt::Display) -> ProtoError {
        ProtoError::Text(format!("{}:{}: {what}", self.line, self.col))
    }

    fn bump(&mut self) -> Option<u8> {
        let c = *self.src.get(self.pos)?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn skip_space(&mut self) {
        while let Some(&c) = self.src.get(self.pos) {
            if c == b'#' {
                while let Some(c) = self.bump() {
                    if c == b'\n' {
                        break;
                    }
                }
            } else if c.is_ascii_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Result<Option<Tok>, ProtoError> {
        let (pos, line, col) = (self.pos, self.line, self.col);
        let t = self.next();
        self.pos = pos;
        self.line = line;
        self.col = col;
        t
    }

    fn next(&mut self) -> Result<Option<Tok>, ProtoError> {
        self.skip_space();
        let Some(&c) = self.src.get(self.pos) else {
            return Ok(None);
        };
        if c == b'"' || c == b'\'' {
            // Adjacent strings join.
            let mut out = Vec::new();
            while let Some(&q) = self.src.get(self.pos).filter(|&&q| q == b'"' || q == b'\'') {
                self.bump();
                self.string_body(q, &mut out)?;
                self.skip_space();
            }
            return Ok(Some(Tok::Str(out)));
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = self.pos;
            while self
                .src
                .get(self.pos)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.')
            {
                self.bump();
            }
            let s = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
            return Ok(Some(Tok::Ident(s)));
        }
        if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' {
            let start = self.pos;
            self.bump();
            while self.src.get(self.pos).is_some_and(|c| {
                c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_')
            }) {
                // An exponent sign only directly after `e`.
                let c = self.src[self.pos];
                if (c == b'+' || c == b'-') && !matches!(self.src[self.pos - 1], b'e' | b'E') {
                    break;
                }
                self.bump();
            }
            let s = String::from_utf8_lossy(&self.src[start..self.pos]).into_owned();
            return Ok(Some(Tok::Num(s)));
        }
        if matches!(
            c,
            b'{' | b'}' | b'<' | b'>' | b'[' | b']' | b':' | b',' | b';'
        ) {
            self.bump();
            return Ok(Some(Tok::Punct(c as char)));
        }
        Err(self.err(format!("unexpected character {:?}", c as char)))
    }

    fn string_body(&mut self, quote: u8, out: &mut Vec<u8>) -> Result<(), ProtoError> {
        loop {
            let Some(c) = self.bump() else {
                return Err(self.err("unterminated string"));
            };
            match c {
                b'\n' => return Err(self.err("newline in a string")),
                c if c == quote => return Ok(()),
                b'\\' => {
                    let Some(e) = self.bump() else {
                        return Err(self.err("unterminated string"));
                    };
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'a' => out.push(7),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'v' => out.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                        b'x' | b'X' => {
                            let mut v = 0u32;
                            let mut n = 0;
                            while n < 2 && self.src.get(self.pos).is_some_and(u8::is_ascii_hexdigit)
                            {
                                let d = self.bump().unwrap_or(b'0');
                                v = v * 16 + (d as char).to_digit(16).unwrap_or(0);
                                n += 1;
                            }
                            if n == 0 {
                                return Err(self.err("\\x without hex digits"));
                            }
                            out.push(v as u8);
                        }
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            let mut n = 1;
                            while n < 3
                                && self
                                    .src
                                    .get(self.pos)
                                    .is_some_and(|c| (b'0'..=b'7').contains(c))
                            {
                                v = v * 8 + u32::from(self.bump().unwrap_or(b'0') - b'0');
                                n += 1;
                            }
                            out.push((v & 0xff) as u8);
                        }
                        other => {
                            return Err(self.err(format!("unknown escape \\{}", other as char)))
                        }
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// Protobuf wire helpers.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_key(out: &mut Vec<u8>, number: u32, wire: u8) {
    put_varint(out, (u64::from(number) << 3) | u64::from(wire));
}

/// One encoded field occurrence, kept with its number so a message's fields can be written in
/// number order.
struct Encoded {
    number: u32,
    /// For map entries: the key, to sort by.
    sort_key: MapKey,
    bytes: Vec<u8>,
}

/// A map entry's key as TensorFlow's deterministic serialization (Python's, upb, which writes
/// `saved_model.pb` and the GraphDefs of `as_graph_def`) orders it: numbers from the largest
/// down (upb encodes back to front), strings by their common prefix with the longer one first
/// when one is a prefix of the other (the order `attr_map.rs` documents).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum MapKey {
    #[default]
    None,
    Num(u64),
    Str(Vec<u8>),
}

impl MapKey {
    fn cmp(&self, other: &MapKey) -> std::cmp::Ordering {
        match (self, other) {
            (MapKey::Num(a), MapKey::Num(b)) => b.cmp(a),
            (MapKey::Str(a), MapKey::Str(b)) => {
                let n = a.len().min(b.len());
                a[..n].cmp(&b[..n]).then(b.len().cmp(&a.len()))
            }
            _ => std::cmp::Ordering::Equal,
        }
    }
}

fn scalar_value(lx: &Lexer<'_>, kind: Kind, tok: Tok) -> Result<Scalar, ProtoError> {
    let bad = |what: &str| lx.err(format!("expected {what}, found {tok:?}"));
    let int = |s: &str| -> Option<i128> {
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s.strip_prefix('+').unwrap_or(s)),
        };
        let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            i128::from_str_radix(h, 16).ok()?
        } else if body.len() > 1 && body.starts_with('0') {
            i128::from_str_radix(&body[1..], 8).ok()?
        } else {
            body.parse::<i128>().ok()?
        };
        Some(if neg { -v } else { v })
    };
    let float = |s: &str| -> Option<f64> {
        match s.to_ascii_lowercase().as_str() {
            "inf" | "infinity" | "+inf" | "inff" | "infinityf" => return Some(f64::INFINITY),
            "-inf" | "-infinity" | "-inff" | "-infinityf" => return Some(f64::NEG_INFINITY),
            "nan" | "-nan" | "nanf" => return Some(f64::NAN),
            _ => {}
        }
        let t = s.trim_end_matches(['f', 'F']);
        t.parse().ok().or_else(|| int(s).map(|v| v as f64))
    };
    Ok(match kind {
        Int32 | Int64 | SInt64 | UInt32 | UInt64 | Fixed64 => {
            let Tok::Num(s) = &tok else {
                return Err(bad("an integer"));
            };
            let v = int(s).ok_or_else(|| bad("an integer"))?;
            let ok = match kind {
                Int32 => i32::try_from(v).is_ok(),
                Int64 | SInt64 => i64::try_from(v).is_ok(),
                UInt32 => u32::try_from(v).is_ok(),
                _ => u64::try_from(v).is_ok(),
            };
            if !ok {
                return Err(lx.err(format!("integer {s} out of range")));
            }
            Scalar::Int(v)
        }
        Float | Double => match &tok {
            Tok::Num(s) | Tok::Ident(s) => Scalar::Float(float(s).ok_or_else(|| bad("a number"))?),
            _ => return Err(bad("a number")),
        },
        Bool => match &tok {
            Tok::Ident(s) if s == "true" || s == "True" || s == "t" => Scalar::Int(1),
            Tok::Ident(s) if s == "false" || s == "False" || s == "f" => Scalar::Int(0),
            Tok::Num(s) if s == "1" || s == "0" => Scalar::Int(i128::from(s == "1")),
            _ => return Err(bad("true or false")),
        },
        Str | B => match tok {
            Tok::Str(b) => {
                if matches!(kind, Str) && std::str::from_utf8(&b).is_err() {
                    return Err(lx.err("a string field holds bytes that are not UTF-8"));
                }
                Scalar::Bytes(b)
            }
            _ => return Err(bad("a string")),
        },
        Kind::Enum(table) => match &tok {
            Tok::Ident(s) => Scalar::Int(i128::from(
                table
                    .iter()
                    .find(|(n, _)| n == s)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| lx.err(format!("unknown enum value {s}")))?,
            )),
            Tok::Num(s) => Scalar::Int(
                int(s)
                    .filter(|v| i32::try_from(*v).is_ok())
                    .ok_or_else(|| bad("an enum value"))?,
            ),
            _ => return Err(bad("an enum value")),
        },
        Msg(_) | Kind::DType => return Err(bad("a message")),
    })
}

enum Scalar {
    Int(i128),
    Float(f64),
    Bytes(Vec<u8>),
}

fn encode_scalar(kind: Kind, v: &Scalar, out: &mut Vec<u8>) {
    match (kind, v) {
        (Float, Scalar::Float(x)) => out.extend_from_slice(&(*x as f32).to_le_bytes()),
        (Double, Scalar::Float(x)) => out.extend_from_slice(&x.to_le_bytes()),
        (Fixed64, Scalar::Int(x)) => out.extend_from_slice(&(*x as u64).to_le_bytes()),
        (SInt64, Scalar::Int(x)) => {
            let v = *x as i64;
            put_varint(out, ((v << 1) ^ (v >> 63)) as u64);
        }
        (_, Scalar::Int(x)) => put_varint(out, *x as i64 as u64),
        (_, Scalar::Bytes(b)) => {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        }
        (_, Scalar::Float(_)) => {}
    }
}

fn wire_type(kind: Kind) -> u8 {
    match kind {
        Float => 5,
        Double | Fixed64 => 1,
        Str | B | Msg(_) => 2,
        _ => 0,
    }
}

fn parse_message(
    lx: &mut Lexer<'_>,
    schema: &Schema,
    close: Option<char>,
    depth: usize,
) -> Result<Vec<u8>, ProtoError> {
    if depth > crate::MAX_NESTING_DEPTH {
        return Err(lx.err("messages nested too deeply"));
    }
    let mut fields: Vec<Encoded> = Vec::new();
    // Packed repeated scalars: number -> their payload, written as one field.
    let mut packed: Vec<(u32, Vec<u8>)> = Vec::new();
    loop {
        let tok = lx.next()?;
        let name = match (tok, close) {
            (None, None) => break,
            (None, Some(c)) => return Err(lx.err(format!("missing '{c}' in {}", schema.name))),
            (Some(Tok::Punct(c)), Some(want)) if c == want => break,
            (Some(Tok::Punct(',' | ';')), _) => continue,
            (Some(Tok::Ident(n)), _) => n,
            (Some(t), _) => return Err(lx.err(format!("expected a field name, found {t:?}"))),
        };
        let field = schema
            .fields
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| lx.err(format!("{} has no field named {name}", schema.name)))?;
        let kind = kind_of(field);
        let mut colon = false;
        if lx.peek()? == Some(Tok::Punct(':')) {
            lx.next()?;
            colon = true;
        }
        // The values: one, or a `[..]` list.
        let list = if lx.peek()? == Some(Tok::Punct('[')) {
            lx.next()?;
            if !field.repeated {
                return Err(lx.err(format!("{name} is not a repeated field")));
            }
            true
        } else {
            false
        };
        loop {
            if list && lx.peek()? == Some(Tok::Punct(']')) {
                lx.next()?;
                break;
            }
            match kind {
                Msg(inner) => {
                    let inner = message(inner);
                    let open = lx.next()?;
                    let end = match open {
                        Some(Tok::Punct('{')) => '}',
                        Some(Tok::Punct('<')) => '>',
                        other => {
                            return Err(
                                lx.err(format!("expected '{{' after {name}, found {other:?}"))
                            )
                        }
                    };
                    let body = parse_message(lx, inner, Some(end), depth + 1)?;
                    let (body, sort_key) = if inner.map_entry {
                        let body = complete_entry(inner, body);
                        let key = map_key(inner, &body);
                        (body, key)
                    } else {
                        (body, MapKey::None)
                    };
                    let mut bytes = Vec::new();
                    put_key(&mut bytes, field.number, 2);
                    put_varint(&mut bytes, body.len() as u64);
                    bytes.extend_from_slice(&body);
                    fields.push(Encoded {
                        number: field.number,
                        sort_key,
                        bytes,
                    });
                }
                _ => {
                    if !colon && !list {
                        return Err(lx.err(format!("expected ':' after {name}")));
                    }
                    let tok = lx.next()?.ok_or_else(|| lx.err("unexpected end of text"))?;
                    let v = scalar_value(lx, kind, tok)?;
                    let packable = field.repeated && !matches!(kind, Str | B);
                    if packable {
                        let slot = match packed.iter().position(|(n, _)| *n == field.number) {
                            Some(i) => i,
                            None => {
                                packed.push((field.number, Vec::new()));
                                packed.len() - 1
                            }
                        };
                        encode_scalar(kind, &v, &mut packed[slot].1);
                    } else {
                        let mut bytes = Vec::new();
                        put_key(&mut bytes, field.number, wire_type(kind));
                        encode_scalar(kind, &v, &mut bytes);
                        fields.push(Encoded {
                            number: field.number,
                            sort_key: MapKey::None,
                            bytes,
                        });
                    }
                }
            }
            if !list {
                break;
            }
            match lx.next()? {
                Some(Tok::Punct(',')) => {}
                Some(Tok::Punct(']')) => break,
                other => return Err(lx.err(format!("expected ',' or ']', found {other:?}"))),
            }
        }
    }
    for (number, payload) in packed {
        let mut bytes = Vec::new();
        put_key(&mut bytes, number, 2);
        put_varint(&mut bytes, payload.len() as u64);
        bytes.extend_from_slice(&payload);
        fields.push(Encoded {
            number,
            sort_key: MapKey::None,
            bytes,
        });
    }
    // Number order (stable: repeated fields keep theirs), map entries by key.
    fields.sort_by(|a, b| a.number.cmp(&b.number).then(a.sort_key.cmp(&b.sort_key)));
    Ok(fields.into_iter().flat_map(|e| e.bytes).collect())
}

/// A map entry's key field (field 1) as it sorts.
fn map_key(schema: &Schema, entry: &[u8]) -> MapKey {
    let mut r = Reader { b: entry, pos: 0 };
    while let Some((number, wire)) = r.key() {
        let value = r.value(wire);
        if number == 1 {
            return match value {
                Some(Wire::Len(b)) => MapKey::Str(b.to_vec()),
                Some(Wire::Varint(v)) | Some(Wire::Fixed64(v)) => MapKey::Num(v),
                Some(Wire::Fixed32(v)) => MapKey::Num(u64::from(v)),
                None => MapKey::None,
            };
        }
    }
    match schema.fields.first().map(kind_of) {
        Some(Str | B) => MapKey::Str(Vec::new()),
        _ => MapKey::Num(0),
    }
}

/// A map entry with its key and value both written (proto3 writes a map entry's defaults).
fn complete_entry(schema: &Schema, body: Vec<u8>) -> Vec<u8> {
    let mut present = [false; 3];
    let mut r = Reader { b: &body, pos: 0 };
    while let Some((number, wire)) = r.key() {
        if r.value(wire).is_none() {
            break;
        }
        if let Some(p) = present.get_mut(number as usize) {
            *p = true;
        }
    }
    let default = |field: &Field, out: &mut Vec<u8>| {
        let kind = kind_of(field);
        put_key(out, field.number, wire_type(kind));
        match kind {
            Fixed64 | Double => out.extend_from_slice(&[0; 8]),
            Float => out.extend_from_slice(&[0; 4]),
            _ => out.push(0),
        }
    };
    let mut out = Vec::with_capacity(body.len() + 4);
    if !present[1] {
        if let Some(k) = schema.fields.first() {
            default(k, &mut out);
        }
    }
    out.extend_from_slice(&body);
    if !present[2] {
        if let Some(v) = schema.fields.get(1) {
            default(v, &mut out);
        }
    }
    out
}

/// Parses a text-format `GraphDef`.
///
/// # Errors
/// [`ProtoError::Text`] naming the line and column of what does not parse (an unknown field,
/// a value of the wrong kind, an unterminated string, nesting past
/// [`crate::MAX_NESTING_DEPTH`]), and also when the result is not a valid `GraphDef`.
pub fn graph_def_from_text(text: &str) -> Result<GraphDef, ProtoError> {
    let bytes = graph_def_text_to_binary(text)?;
    GraphDef::decode(bytes.as_slice())
        .map_err(|e| ProtoError::Text(format!("the text is not a valid GraphDef: {e}")))
}

/// A text-format `GraphDef` as binary wire bytes (TensorFlow's deterministic encoding).
///
/// # Errors
/// As [`graph_def_from_text`], without the decode.
pub fn graph_def_text_to_binary(text: &str) -> Result<Vec<u8>, ProtoError> {
    let mut lx = Lexer::new(text);
    parse_message(&mut lx, root("GraphDef"), None, 0)
}

// ---- the printer --------------------------------------------------------------------------

enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'a [u8]),
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let c = *self.b.get(self.pos)?;
            self.pos += 1;
            v |= u64::from(c & 0x7f) << shift;
            if c < 0x80 {
                return Some(v);
            }
        }
        None
    }
    /// The next field's number and wire type; `None` at the end and for a key that does not
    /// decode (see [`Reader::at_end`]).
    fn key(&mut self) -> Option<(u32, u8)> {
        if self.pos >= self.b.len() {
            return None;
        }
        let k = self.varint()?;
        let number = u32::try_from(k >> 3).ok().filter(|&n| n > 0)?;
        Some((number, (k & 7) as u8))
    }

    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }
    fn value(&mut self, wire: u8) -> Option<Wire<'a>> {
        match wire {
            0 => self.varint().map(Wire::Varint),
            1 => {
                let s = self.b.get(self.pos..self.pos + 8)?;
                self.pos += 8;
                Some(Wire::Fixed64(u64::from_le_bytes(s.try_into().ok()?)))
            }
            5 => {
                let s = self.b.get(self.pos..self.pos + 4)?;
                self.pos += 4;
                Some(Wire::Fixed32(u32::from_le_bytes(s.try_into().ok()?)))
            }
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                let s = self.b.get(self.pos..self.pos.checked_add(n)?)?;
                self.pos += n;
                Some(Wire::Len(s))
            }
            _ => None,
        }
    }
}

/// C-escaped text of `b` in double quotes, as protobuf's text printer writes bytes (octal for
/// what is not printable ASCII).
fn quoted(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() + 2);
    s.push('"');
    for &c in b {
        match c {
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            b'"' => s.push_str("\\\""),
            b'\'' => s.push_str("\\'"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => {
                let _ = write!(s, "\\{c:03o}");
            }
        }
    }
    s.push('"');
    s
}

fn float_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

fn scalar_text(kind: Kind, w: &Wire<'_>) -> Option<String> {
    Some(match (kind, w) {
        (Float, Wire::Fixed32(v)) => float_text(f64::from(f32::from_bits(*v))),
        (Double, Wire::Fixed64(v)) => float_text(f64::from_bits(*v)),
        (Fixed64, Wire::Fixed64(v)) => v.to_string(),
        (Bool, Wire::Varint(v)) => (*v != 0).to_string(),
        (Int32, Wire::Varint(v)) => (*v as i32).to_string(),
        (Int64, Wire::Varint(v)) => (*v as i64).to_string(),
        (SInt64, Wire::Varint(v)) => ((*v >> 1) as i64 ^ -((*v & 1) as i64)).to_string(),
        (UInt32, Wire::Varint(v)) => (*v as u32).to_string(),
        (UInt64, Wire::Varint(v)) => v.to_string(),
        (Kind::Enum(table), Wire::Varint(v)) => {
            let n = *v as i32;
            table
                .iter()
                .find(|(_, x)| *x == n)
                .map_or_else(|| n.to_string(), |(name, _)| (*name).to_string())
        }
        (Str | B, Wire::Len(b)) => quoted(b),
        _ => return None,
    })
}

/// Reads the scalars of a packed payload.
fn packed_values<'a>(kind: Kind, payload: &'a [u8]) -> Option<Vec<Wire<'a>>> {
    let mut r = Reader { b: payload, pos: 0 };
    let wire = wire_type(kind);
    let mut out = Vec::new();
    while r.pos < payload.len() {
        out.push(r.value(wire)?);
    }
    Some(out)
}

fn print_message(
    bytes: &[u8],
    schema: &Schema,
    indent: usize,
    out: &mut String,
    depth: usize,
) -> Result<(), ProtoError> {
    if depth > crate::MAX_NESTING_DEPTH {
        return Err(ProtoError::Text("messages nested too deeply".into()));
    }
    let bad = || ProtoError::Text(format!("{} does not decode", schema.name));
    let pad = "  ".repeat(indent);
    let mut r = Reader { b: bytes, pos: 0 };
    loop {
        if r.at_end() {
            break;
        }
        let Some((number, wire)) = r.key() else {
            return Err(bad());
        };
        let value = r.value(wire).ok_or_else(bad)?;
        let Some(field) = schema.fields.iter().find(|f| f.number == number) else {
            return Err(ProtoError::Text(format!(
                "{} has a field {number} the text writer does not know",
                schema.name
            )));
        };
        let kind = kind_of(field);
        match (kind, &value) {
            (Msg(inner), Wire::Len(b)) => {
                let _ = writeln!(out, "{pad}{} {{", field.name);
                print_message(b, message(inner), indent + 1, out, depth + 1)?;
                let _ = writeln!(out, "{pad}}}");
            }
            (k, Wire::Len(b)) if field.repeated && !matches!(k, Str | B) => {
                for v in packed_values(k, b).ok_or_else(bad)? {
                    let t = scalar_text(k, &v).ok_or_else(bad)?;
                    let _ = writeln!(out, "{pad}{}: {t}", field.name);
                }
            }
            (k, v) => {
                let t = scalar_text(k, v).ok_or_else(bad)?;
                let _ = writeln!(out, "{pad}{}: {t}", field.name);
            }
        }
    }
    Ok(())
}

/// `gd` in the protobuf text format (two-space indents, one field a line), which TensorFlow's
/// `text_format.Parse` reads back to the same `GraphDef`.
///
/// # Errors
/// [`ProtoError::Text`] when the GraphDef holds a field the text writer does not know (in a
/// function library or debug info kept from another writer).
pub fn graph_def_to_text(gd: &GraphDef) -> Result<String, ProtoError> {
    graph_def_binary_to_text(&gd.encode_to_vec())
}

/// Binary `GraphDef` wire bytes in the text format (see [`graph_def_to_text`]).
///
/// # Errors
/// [`ProtoError::Text`] for bytes that do not decode as a `GraphDef`.
pub fn graph_def_binary_to_text(bytes: &[u8]) -> Result<String, ProtoError> {
    let mut out = String::new();
    print_message(bytes, root("GraphDef"), 0, &mut out, 0)?;
    Ok(out)
}

/// Parses a text-format `SavedModel` (`saved_model.pbtxt`, as TensorFlow's
/// `SavedModelBuilder.save(as_text=True)` writes it) into binary wire bytes, which decode as
/// the binary `saved_model.pb` does. Every message a SavedModel holds (meta graphs, their
/// GraphDefs and function libraries, signatures, collections, saver, the object graph and its
/// structured values) is known, so nothing in the file is dropped.
///
/// # Errors
/// [`ProtoError::Text`] naming the line and column of what does not parse, as
/// [`graph_def_from_text`].
pub fn saved_model_text_to_binary(text: &str) -> Result<Vec<u8>, ProtoError> {
    let mut lx = Lexer::new(text);
    parse_message(&mut lx, root("SavedModel"), None, 0)
}

/// Binary `SavedModel` wire bytes in the text format, which TensorFlow's `text_format.Parse`
/// reads back to the same message.
///
/// # Errors
/// [`ProtoError::Text`] for bytes that do not decode as a `SavedModel`.
pub fn saved_model_binary_to_text(bytes: &[u8]) -> Result<String, ProtoError> {
    let mut out = String::new();
    print_message(bytes, root("SavedModel"), 0, &mut out, 0)?;
    Ok(out)
}

/// True when `bytes` look like a text-format GraphDef (UTF-8 text whose first field is one of
/// `GraphDef`'s, after comments and space) rather than binary wire bytes.
pub fn looks_like_graph_def_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(4096)];
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => match std::str::from_utf8(&head[..e.valid_up_to()]) {
            Ok(t) if e.valid_up_to() + 4 > head.len() => t,
            _ => return false,
        },
    };
    let mut lx = Lexer::new(text);
    matches!(lx.next(), Ok(Some(Tok::Ident(n))) if root("GraphDef").fields.iter().any(|f| f.name == n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_table_reads_and_resolves_every_type() {
        let (messages, by_name) = schemas();
        assert_eq!(messages.len(), by_name.len());
        let node = root("GraphDef").fields.iter().find(|f| f.name == "node");
        let node = node.expect("GraphDef.node");
        assert!(node.repeated && node.number == 1);
        assert!(matches!(node.kind, Msg(i) if message(i).name == "NodeDef"));
        assert!(message(by_name["NodeDef.AttrEntry"]).map_entry);
        assert!(root("SavedModel")
            .fields
            .iter()
            .any(|f| f.name == "meta_graphs"));
    }

    #[test]
    fn schema_table_malformed_is_refused() {
        for bad in [
            "  x 1 int32",
            "message M\n  x one int32",
            "message M\n  x 1 Nothing",
            "message M\n  x 1",
            "enum E\n  A",
            "message M\n  x -1 int32",
        ] {
            assert!(read_schemas(bad).is_err(), "{bad}");
        }
        let (m, _) = read_schemas("message M\n  repeated e 2 E\n  m 3 M\nenum E\n  A 0").unwrap();
        assert!(m[0].fields[0].repeated && matches!(m[0].fields[1].kind, Msg(0)));
    }
}
