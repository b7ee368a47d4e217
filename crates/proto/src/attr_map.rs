//! Hand-written `prost::Message` for the two messages holding a `map<string, AttrValue>`
//! ([`NodeDef`], [`NameAttrList`]), writing the map in TensorFlow's deterministic order.
//!
//! That order, as Python's `SerializeToString(deterministic=True)` (upb) writes it, is not plain
//! byte order: keys compare by their common prefix byte-wise, and when one key is a prefix of the
//! other the *longer* comes first (`Tidx` before `T`, `ab` before `a`, the empty key last).
//! Observed with protobuf 7.36 under TensorFlow 2.21; every GraphDef vector depends on it (`T`,
//! `Tidx`, `Tshape`). Every entry is written with both its key and its value, even when empty,
//! as TensorFlow does.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use prost::bytes::{Buf, BufMut};
use prost::encoding::{
    self, encode_key, encode_varint, encoded_len_varint, key_len, DecodeContext, WireType,
};
use prost::{DecodeError, Message};

use crate::graph::{AttrValue, NameAttrList, NodeDef};

/// TensorFlow's deterministic order of map keys (see the module docs).
pub(crate) fn deterministic_key_order(a: &str, b: &str) -> Ordering {
    let n = a.len().min(b.len());
    match a.as_bytes()[..n].cmp(&b.as_bytes()[..n]) {
        Ordering::Equal => b.len().cmp(&a.len()),
        o => o,
    }
}

fn entry_len(k: &str, v: &AttrValue) -> usize {
    let vl = v.encoded_len();
    key_len(1)
        + encoded_len_varint(k.len() as u64)
        + k.len()
        + key_len(2)
        + encoded_len_varint(vl as u64)
        + vl
}

fn sorted(map: &BTreeMap<String, AttrValue>) -> Vec<(&String, &AttrValue)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| deterministic_key_order(a.0, b.0));
    entries
}

fn encode_map(tag: u32, map: &BTreeMap<String, AttrValue>, buf: &mut impl BufMut) {
    for (k, v) in sorted(map) {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(entry_len(k, v) as u64, buf);
        encode_key(1, WireType::LengthDelimited, buf);
        encode_varint(k.len() as u64, buf);
        buf.put_slice(k.as_bytes());
        encode_key(2, WireType::LengthDelimited, buf);
        encode_varint(v.encoded_len() as u64, buf);
        v.encode_raw(buf);
    }
}

fn map_len(tag: u32, map: &BTreeMap<String, AttrValue>) -> usize {
    map.iter()
        .map(|(k, v)| {
            let l = entry_len(k, v);
            key_len(tag) + encoded_len_varint(l as u64) + l
        })
        .sum()
}

/// Merges one encoded map entry into `map` (a later value of a key replaces the earlier).
fn merge_map(
    map: &mut BTreeMap<String, AttrValue>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    encoding::btree_map::merge(
        encoding::string::merge,
        encoding::message::merge,
        map,
        buf,
        ctx,
    )
}

fn string_len(tag: u32, s: &str) -> usize {
    if s.is_empty() {
        0
    } else {
        encoding::string::encoded_len(tag, &s.to_string())
    }
}

impl Message for NodeDef {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if !self.name.is_empty() {
            encoding::string::encode(1, &self.name, buf);
        }
        if !self.op.is_empty() {
            encoding::string::encode(2, &self.op, buf);
        }
        encoding::string::encode_repeated(3, &self.input, buf);
        if !self.device.is_empty() {
            encoding::string::encode(4, &self.device, buf);
        }
        encode_map(5, &self.attr, buf);
        if let Some(d) = &self.experimental_debug_info {
            encoding::message::encode(6, d, buf);
        }
        if let Some(t) = &self.experimental_type {
            encoding::message::encode(7, t, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::string::merge(wire_type, &mut self.name, buf, ctx),
            2 => encoding::string::merge(wire_type, &mut self.op, buf, ctx),
            3 => encoding::string::merge_repeated(wire_type, &mut self.input, buf, ctx),
            4 => encoding::string::merge(wire_type, &mut self.device, buf, ctx),
            5 => merge_map(&mut self.attr, buf, ctx),
            6 => encoding::message::merge(
                wire_type,
                self.experimental_debug_info
                    .get_or_insert_with(Default::default),
                buf,
                ctx,
            ),
            7 => encoding::message::merge(
                wire_type,
                self.experimental_type.get_or_insert_with(Default::default),
                buf,
                ctx,
            ),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        string_len(1, &self.name)
            + string_len(2, &self.op)
            + encoding::string::encoded_len_repeated(3, &self.input)
            + string_len(4, &self.device)
            + map_len(5, &self.attr)
            + self
                .experimental_debug_info
                .as_ref()
                .map_or(0, |d| encoding::message::encoded_len(6, d))
            + self
                .experimental_type
                .as_ref()
                .map_or(0, |t| encoding::message::encoded_len(7, t))
    }

    fn clear(&mut self) {
        *self = NodeDef::default();
    }
}

impl Message for NameAttrList {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        if !self.name.is_empty() {
            encoding::string::encode(1, &self.name, buf);
        }
        encode_map(2, &self.attr, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::string::merge(wire_type, &mut self.name, buf, ctx),
            2 => merge_map(&mut self.attr, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        string_len(1, &self.name) + map_len(2, &self.attr)
    }

    fn clear(&mut self) {
        *self = NameAttrList::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_prefix_longer_first_matches_python_upb() {
        let mut keys = vec![
            "T", "Tidx", "a", "ab", "abc", "b", "Ta", "_x", "_", "T_", "",
        ];
        keys.sort_by(|a, b| deterministic_key_order(a, b));
        assert_eq!(
            keys,
            ["T_", "Ta", "Tidx", "T", "_x", "_", "abc", "ab", "a", "b", ""]
        );
    }

    #[test]
    fn empty_key_and_value_are_written() {
        let mut n = NodeDef::default();
        n.attr.insert(String::new(), AttrValue::of_int(1));
        n.attr.insert("e".into(), AttrValue::default());
        let hex: String = n
            .encode_to_vec()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hex, "2a050a016512002a060a0012021801");
    }
}
