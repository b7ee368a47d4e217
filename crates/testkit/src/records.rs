//! Readers of the TensorFlow-recorded vectors: hex as the records spell bytes, JSON lines, and
//! where the vectors live. One copy for every test that reads them.

use std::path::{Path, PathBuf};

/// Lowercase hex of `bytes`, as the records and the Python peers write it.
pub fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of lowercase or uppercase hex.
///
/// # Errors
/// An odd length or a character that is not a hex digit.
pub fn hex_decode(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!("odd-length hex: {s:?}"));
    }
    s.as_bytes()
        .chunks_exact(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| format!("not hex: {:?}", String::from_utf8_lossy(p)))
        })
        .collect()
}

/// The folder of the TensorFlow-observed vectors: `$TENSORCAST_CONFORMANCE_DIR`, or the
/// workspace's own `tests/conformance`.
pub fn conformance_dir() -> PathBuf {
    match std::env::var_os("TENSORCAST_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance"),
    }
}

/// The records of a JSON-lines text, one object per non-empty line.
///
/// # Errors
/// The first line that is not JSON, with its number.
pub fn parse_jsonl(text: &str) -> Result<Vec<serde_json::Value>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// The records of the JSON-lines file at `path`.
///
/// # Errors
/// The file cannot be read, or a line is not JSON.
pub fn read_jsonl(path: &Path) -> Result<Vec<serde_json::Value>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_jsonl(&text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_refuses_garbage() {
        assert_eq!(hex_decode("00ffA0").unwrap(), [0, 255, 160]);
        assert_eq!(hex_encode(&[0, 255, 160]), "00ffa0");
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
        assert!(hex_decode("é1").is_err());
    }

    #[test]
    fn jsonl_skips_blank_lines_and_names_the_bad_one() {
        assert_eq!(parse_jsonl("{\"a\":1}\n\n{\"b\":2}\n").unwrap().len(), 2);
        assert_eq!(
            parse_jsonl("{}\nnot json\n").unwrap_err().split(':').next(),
            Some("line 2")
        );
    }
}
