//! Temporary element formatting, replaced by the exact printf emulation.
#![allow(missing_docs)]
pub fn format_g(v: f64, precision: usize) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.max(1);
    let e = format!("{:.*e}", p - 1, v);
    let (mant, exp) = e.split_once('e').unwrap();
    let x: i32 = exp.parse().unwrap();
    let strip = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (x as i64) < p as i64 && x >= -4 {
        strip(format!("{:.*}", (p as i32 - 1 - x) as usize, v))
    } else {
        let m = strip(mant.to_string());
        format!("{}e{}{:02}", m, if x < 0 { '-' } else { '+' }, x.abs())
    }
}
pub fn format_f32(v: f32) -> String {
    let s = format_g(v as f64, 6);
    if v.is_finite() && s.parse::<f32>().ok() != Some(v) {
        format_g(v as f64, 9)
    } else {
        s
    }
}
pub fn format_f64(v: f64) -> String {
    let s = format_g(v, 15);
    if v.is_finite() && s.parse::<f64>().ok() != Some(v) {
        format_g(v, 17)
    } else {
        s
    }
}
pub fn c_escape_utf8_safe(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&c_escape_utf8_safe_bytes(bytes)).into_owned()
}
pub fn c_escape_utf8_safe_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        match b {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x20..=0x7e | 0x80..=0xff => out.push(b),
            _ => out.extend_from_slice(format!("\\{:03o}", b).as_bytes()),
        }
    }
    out
}
