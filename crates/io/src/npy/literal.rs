//! A small parser for the Python literals an `.npy` header holds: `{'descr': '<f4',
//! 'fortran_order': False, 'shape': (2, 3), }`.
//!
//! numpy reads headers with `ast.literal_eval`; this accepts the subset a header can use
//! (dicts, tuples, lists, strings, integers, `True`/`False`/`None`) and nothing else, with a
//! nesting bound so that hostile input cannot exhaust the stack, and integers checked for
//! overflow. Input is bytes; strings are decoded by the caller's rule (latin-1 for format
//! versions 1 and 2, UTF-8 for version 3).

use crate::error::{IoError, Result};

/// Deepest nesting accepted (a header needs 2: a dict holding a tuple).
const MAX_DEPTH: usize = 16;

/// A parsed Python literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// How the value reads in an error message (short).
    pub(crate) fn describe(&self) -> String {
        match self {
            Value::Str(s) => format!("'{s}'"),
            Value::Int(i) => i.to_string(),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::None => "None".into(),
            Value::Tuple(_) => "a tuple".into(),
            Value::List(_) => "a list".into(),
            Value::Dict(_) => "a dict".into(),
        }
    }
}

/// How string bytes become characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Every byte is one character (format versions 1.0 and 2.0).
    Latin1,
    /// UTF-8 (format version 3.0).
    Utf8,
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    encoding: Encoding,
}

fn err(msg: impl std::fmt::Display, pos: usize) -> IoError {
    IoError::corrupt(format!(
        "bad npy header: {msg} at byte {pos} of the header dict"
    ))
}

/// Parses `s` as exactly one literal, surrounded by optional whitespace.
pub(crate) fn parse(s: &[u8], encoding: Encoding) -> Result<Value> {
    let mut p = Parser {
        s,
        pos: 0,
        encoding,
    };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(err("unexpected text after the dict", p.pos));
    }
    Ok(v)
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(err("nesting too deep", self.pos));
        }
        match self.peek() {
            None => Err(err("unexpected end", self.pos)),
            Some(b'{') => self.dict(depth),
            Some(b'(') => self.seq(depth, b')').map(|(items, trailing_comma)| {
                // `(x)` is just `x` in Python; `(x,)` is a 1-tuple.
                if items.len() == 1 && !trailing_comma {
                    items.into_iter().next().unwrap_or(Value::None)
                } else {
                    Value::Tuple(items)
                }
            }),
            Some(b'[') => self.seq(depth, b']').map(|(items, _)| Value::List(items)),
            Some(q @ (b'\'' | b'"')) => self.string(q).map(Value::Str),
            Some(b'-' | b'+' | b'0'..=b'9') => self.int(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.name(),
            Some(c) => Err(err(
                format!("unexpected character {:?}", c as char),
                self.pos,
            )),
        }
    }

    /// A comma-separated sequence after the opening bracket, up to `close`; returns the items
    /// and whether a comma followed the last one.
    fn seq(&mut self, depth: usize, close: u8) -> Result<(Vec<Value>, bool)> {
        self.pos += 1; // the opening bracket
        let mut items = Vec::new();
        let mut trailing_comma = false;
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok((items, trailing_comma));
            }
            if !items.is_empty() && !trailing_comma {
                return Err(err("expected ',' or a closing bracket", self.pos));
            }
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            trailing_comma = self.peek() == Some(b',');
            if trailing_comma {
                self.pos += 1;
            }
        }
    }

    fn dict(&mut self, depth: usize) -> Result<Value> {
        self.pos += 1; // '{'
        let mut items = Vec::new();
        let mut comma = true;
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Value::Dict(items));
            }
            if !comma {
                return Err(err("expected ',' or '}'", self.pos));
            }
            let key = self.value(depth + 1)?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(err("expected ':'", self.pos));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            items.push((key, value));
            self.skip_ws();
            comma = self.peek() == Some(b',');
            if comma {
                self.pos += 1;
            }
        }
    }

    fn string(&mut self, quote: u8) -> Result<String> {
        let start = self.pos;
        self.pos += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(err("unterminated string", start));
            };
            self.pos += 1;
            if c == quote {
                break;
            }
            if c == b'\n' {
                return Err(err("newline in a string", self.pos - 1));
            }
            if c != b'\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return Err(err("unterminated string", start));
            };
            self.pos += 1;
            match e {
                b'\\' | b'\'' | b'"' => out.push(e),
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'0' => out.push(0),
                b'x' => {
                    let hex = self
                        .s
                        .get(self.pos..self.pos + 2)
                        .and_then(|h| std::str::from_utf8(h).ok())
                        .and_then(|h| u8::from_str_radix(h, 16).ok())
                        .ok_or_else(|| err("bad \\x escape", self.pos))?;
                    self.pos += 2;
                    match self.encoding {
                        Encoding::Latin1 => out.push(hex),
                        // In a Python 3 str, \xNN is the code point U+00NN.
                        Encoding::Utf8 => {
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(char::from(hex).encode_utf8(&mut buf).as_bytes())
                        }
                    }
                }
                _ => return Err(err(format!("unsupported escape \\{}", e as char), self.pos)),
            }
        }
        Ok(match self.encoding {
            Encoding::Latin1 => out.iter().map(|&b| char::from(b)).collect(),
            Encoding::Utf8 => {
                String::from_utf8(out).map_err(|_| err("string is not valid UTF-8", start))?
            }
        })
    }

    fn int(&mut self) -> Result<Value> {
        let start = self.pos;
        let negative = match self.peek() {
            Some(b'-') => {
                self.pos += 1;
                true
            }
            Some(b'+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let digits_start = self.pos;
        let mut v: i64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v
                .checked_mul(10)
                .and_then(|v| v.checked_add(i64::from(c - b'0')))
                .ok_or_else(|| err("integer too large", start))?;
            self.pos += 1;
        }
        if self.pos == digits_start {
            return Err(err("expected digits", self.pos));
        }
        // Python 2 wrote long integers with an `L` suffix (old numpy files have `(3L,)`).
        if let Some(b'L' | b'l') = self.peek() {
            self.pos += 1;
        }
        if let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' {
                return Err(err("expected an integer", start));
            }
        }
        Ok(Value::Int(if negative { -v } else { v }))
    }

    fn name(&mut self) -> Result<Value> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' {
                self.pos += 1;
            } else {
                break;
            }
        }
        match &self.s[start..self.pos] {
            b"True" => Ok(Value::Bool(true)),
            b"False" => Ok(Value::Bool(false)),
            b"None" => Ok(Value::None),
            other => Err(err(
                format!("unexpected name {:?}", String::from_utf8_lossy(other)),
                start,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Value> {
        parse(s.as_bytes(), Encoding::Latin1)
    }

    #[test]
    fn numpy_header_dict_parses() {
        let v = p("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }   \n").unwrap();
        assert_eq!(
            v,
            Value::Dict(vec![
                (Value::Str("descr".into()), Value::Str("<f4".into())),
                (Value::Str("fortran_order".into()), Value::Bool(false)),
                (
                    Value::Str("shape".into()),
                    Value::Tuple(vec![Value::Int(2), Value::Int(3)])
                ),
            ])
        );
    }

    #[test]
    fn tuples_of_zero_one_and_parenthesised_values_follow_python() {
        assert_eq!(p("()").unwrap(), Value::Tuple(vec![]));
        assert_eq!(p("(3,)").unwrap(), Value::Tuple(vec![Value::Int(3)]));
        assert_eq!(p("(3)").unwrap(), Value::Int(3));
        assert_eq!(
            p("(3L, 4L)").unwrap(),
            Value::Tuple(vec![Value::Int(3), Value::Int(4)])
        );
        assert_eq!(
            p("[1, -2]").unwrap(),
            Value::List(vec![Value::Int(1), Value::Int(-2)])
        );
    }

    #[test]
    fn strings_with_escapes_and_both_quotes_parse() {
        assert_eq!(p(r#""a'b""#).unwrap(), Value::Str("a'b".into()));
        assert_eq!(p(r"'a\'b\x41'").unwrap(), Value::Str("a'bA".into()));
    }

    #[test]
    fn malformed_literals_are_errors() {
        for bad in [
            "",
            "{",
            "{'a' 1}",
            "{'a': 1 'b': 2}",
            "(1 2)",
            "'unterminated",
            "99999999999999999999",
            "1.5",
            "foo",
            "{'a': 1} extra",
            "(,)",
            "-",
            "'\\q'",
        ] {
            assert!(p(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let s = "(".repeat(100_000);
        assert!(p(&s).unwrap_err().to_string().contains("nesting too deep"));
    }
}
