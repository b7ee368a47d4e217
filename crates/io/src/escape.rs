//! [`escaped`]: names from files made safe to print.

use std::fmt::Write;

/// `name` with every control character (C0, DEL and C1, which terminals act on: escape
/// sequences, carriage returns, bells) written as a C escape: `\n`, `\t`, `\r`, `\\`, or `\xNN`
/// / `\u{NNNN}` for the rest; printable text, non-ASCII letters included, is kept as it is.
/// Tensor names, npz member names, variant type names and npy `descr` strings come from
/// untrusted files; they are printed through this.
///
/// ```
/// use tensorcast_io::escaped;
/// assert_eq!(escaped("weights"), "weights");
/// assert_eq!(escaped("a\x1b[2Jb"), "a\\x1b[2Jb");
/// assert_eq!(escaped("é\u{9b}"), "é\\u{9b}");
/// ```
pub fn escaped(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escaped;

    #[test]
    fn escaped_control_characters_become_escapes() {
        assert_eq!(escaped("\x07\x08\x7f"), "\\x07\\x08\\x7f");
        assert_eq!(escaped("a\\b"), "a\\\\b");
        assert_eq!(escaped("\r\n\t"), "\\r\\n\\t");
        assert_eq!(escaped("日本"), "日本");
    }
}
