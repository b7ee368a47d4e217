//! Tensor names (`"op"`, `"op:1"`, `"^op"`), parsed by TensorFlow's one rule
//! (`ParseTensorName`, `tensorflow/core/graph/tensor_id.cc`): GraphDef inputs, function bodies,
//! session feeds and fetches, and the CLI all read names through [`parse_tensor_name`].

/// A parsed tensor name: the node it names and the output index, or [`TensorId::CONTROL`] for a
/// control input (`^op`).
///
/// ```
/// use tensorcast_graph::{parse_tensor_name, TensorId};
/// assert_eq!(parse_tensor_name("x"), TensorId { node: "x", index: 0 });
/// assert_eq!(parse_tensor_name("split:1"), TensorId { node: "split", index: 1 });
/// assert!(parse_tensor_name("^init").is_control());
/// assert_eq!(parse_tensor_name("^init").node, "init");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TensorId<'a> {
    /// The node's name.
    pub node: &'a str,
    /// The output index; [`TensorId::CONTROL`] (-1) for a control input.
    pub index: i32,
}

impl TensorId<'_> {
    /// TensorFlow's `Graph::kControlSlot`: the index of a control input.
    pub const CONTROL: i32 = -1;

    /// True for a control input (`^op`).
    pub fn is_control(&self) -> bool {
        self.index == Self::CONTROL
    }
}

impl std::fmt::Display for TensorId<'_> {
    /// `op:k`, or `^op` for a control input.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_control() {
            write!(f, "^{}", self.node)
        } else {
            write!(f, "{}:{}", self.node, self.index)
        }
    }
}

/// Parses a tensor name as TensorFlow's `ParseTensorName` does, so a name means here what it
/// means to TensorFlow:
///
/// * `name:digits` (split at the **last** colon, at least one digit, nothing else after it) is
///   output `digits` of node `name`; the node part may hold colons and may be empty
///   (`"a:b:2"` is node `a:b`, output 2). The index is read as an unsigned 64-bit number and
///   kept as TensorFlow keeps it, truncated to an `int` (`"a:4294967296"` is `a:0`); a number
///   past 64 bits is no index at all.
/// * otherwise a leading `^` makes a control input of the rest (`"^a"`; note that `"^a:1"` is
///   output 1 of a node named `^a`, as in TensorFlow);
/// * otherwise the whole string is the node and the index is 0 (`"a:"`, `"a:-1"`, `"a:x"` are
///   node names, which no valid graph has, so they fail as unknown nodes).
///
/// ```
/// use tensorcast_graph::{parse_tensor_name, TensorId};
/// assert_eq!(parse_tensor_name("a:b:2"), TensorId { node: "a:b", index: 2 });
/// assert_eq!(parse_tensor_name("a:-1"), TensorId { node: "a:-1", index: 0 });
/// assert_eq!(parse_tensor_name("a:4294967297"), TensorId { node: "a", index: 1 });
/// assert_eq!(parse_tensor_name("^a:1"), TensorId { node: "^a", index: 1 });
/// assert_eq!(parse_tensor_name("^a").to_string(), "^a");
/// ```
pub fn parse_tensor_name(name: &str) -> TensorId<'_> {
    if let Some((node, digits)) = name.rsplit_once(':') {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(k) = digits.parse::<u64>() {
                // TensorFlow stores the 64-bit value in an `int`: truncation is its rule.
                #[allow(clippy::cast_possible_truncation)]
                return TensorId {
                    node,
                    index: k as u32 as i32,
                };
            }
        }
    }
    match name.strip_prefix('^') {
        Some(node) => TensorId {
            node,
            index: TensorId::CONTROL,
        },
        None => TensorId {
            node: name,
            index: 0,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(node: &str, index: i32) -> TensorId<'_> {
        TensorId { node, index }
    }

    #[test]
    fn tensorflows_rules() {
        // Plain names, indices, control inputs.
        assert_eq!(parse_tensor_name("x"), id("x", 0));
        assert_eq!(parse_tensor_name("x:0"), id("x", 0));
        assert_eq!(parse_tensor_name("scope/x:12"), id("scope/x", 12));
        assert_eq!(parse_tensor_name("^x"), id("x", TensorId::CONTROL));
        assert_eq!(parse_tensor_name("x:00"), id("x", 0));
        // The last colon splits; the node part keeps the others, and may be empty.
        assert_eq!(parse_tensor_name("a:b:2"), id("a:b", 2));
        assert_eq!(parse_tensor_name(":1"), id("", 1));
        // No digits after the last colon (or anything else there): the whole is the node.
        for s in ["x:", "x:-1", "x:+1", "x:0x", "x: 1", "x:1 ", "x:١"] {
            assert_eq!(parse_tensor_name(s), id(s, 0), "{s:?}");
        }
        // A caret with an index is output k of a node named with the caret.
        assert_eq!(parse_tensor_name("^x:1"), id("^x", 1));
        assert_eq!(parse_tensor_name("^"), id("", TensorId::CONTROL));
        assert_eq!(parse_tensor_name(""), id("", 0));
        // 64-bit reading, kept in an `int` (truncated); past 64 bits, no index at all.
        assert_eq!(parse_tensor_name("x:2147483647"), id("x", i32::MAX));
        assert_eq!(parse_tensor_name("x:4294967296"), id("x", 0));
        assert_eq!(parse_tensor_name("x:4294967297"), id("x", 1));
        assert_eq!(parse_tensor_name("x:18446744073709551615"), id("x", -1));
        let huge = "x:18446744073709551616";
        assert_eq!(parse_tensor_name(huge), id(huge, 0));
        // Display is TensorFlow's `ToString` (with the caret for a control input).
        assert_eq!(parse_tensor_name("x").to_string(), "x:0");
        assert_eq!(parse_tensor_name("^x").to_string(), "^x");
    }
}
