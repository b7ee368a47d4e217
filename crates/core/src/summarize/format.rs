//! TensorFlow's element printing for `SummarizeValue` / `DebugString`.
//!
//! - Floats use TensorFlow's "legacy precision": C `printf("%.6g")` for `f32` (`%.15g` for
//!   `f64`), and if that text does not read back as the same value, `%.9g` (`%.17g`).
//!   [`format_f32`] and [`format_f64`] do this; [`format_g`] is the underlying exact
//!   emulation of glibc's `%.{precision}g`.
//! - Strings use abseil's `Utf8SafeCEscape`: [`c_escape_utf8_safe_bytes`], as exact bytes
//!   (the escape passes invalid UTF-8 through unchanged).
//!
//! `format_g` relies on Rust's `{:.N$e}` formatting, which renders the exact binary value
//! correctly rounded to N+1 significant decimal digits, breaking exact ties to even, exactly
//! as glibc's printf does in the default rounding mode; only the layout (fixed or exponent
//! form, trailing zeros, `e+05`) is done here.

/// Exact emulation of glibc `printf("%.{precision}g", v)` (no `#` flag).
///
/// With `P = max(precision, 1)` and `X` the decimal exponent of `v` once rounded to `P`
/// significant digits: fixed notation with `P - 1 - X` decimals if `P > X >= -4`, otherwise
/// exponent notation with at least two exponent digits (`1e+05`, `1.5e-07`, `1e+100`). Trailing
/// zeros, and then a trailing decimal point, are removed. `-0.0` prints `-0`; NaN prints
/// `nan` or `-nan` by its sign bit; infinities print `inf` / `-inf`.
pub(crate) fn format_g(v: f64, precision: usize) -> String {
    let negative = v.is_sign_negative();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if v.is_nan() {
        out.push_str("nan");
        return out;
    }
    if v.is_infinite() {
        out.push_str("inf");
        return out;
    }
    // Beyond 1200 significant digits nothing changes: a double's exact decimal expansion has
    // at most 767 significant digits (the rest are zeros, which %g strips) and its decimal
    // exponent is at most 308 (so fixed notation is chosen exactly when X >= -4 either way).
    // Clamping keeps an absurd precision from allocating absurd buffers.
    let p = precision.clamp(1, 1200);
    // Exactly rounded to p significant digits: "d.ddde<X>" (or "de<X>" when p == 1).
    let sci = format!("{:.*e}", p - 1, v.abs());
    let (mantissa, exp) = sci
        .split_once('e')
        .expect("Rust's {:e} output always contains an exponent");
    let x: i64 = exp.parse().expect("Rust's {:e} exponent is an integer");
    let digits: Vec<u8> = mantissa.bytes().filter(|&b| b != b'.').collect();
    debug_assert_eq!(digits.len(), p);

    let p = p as i64;
    if x < p && x >= -4 {
        // Fixed notation with p - 1 - x decimals: the same p significant digits.
        let (int_part, frac_part): (Vec<u8>, Vec<u8>) = if x >= 0 {
            let split = (x + 1) as usize;
            (digits[..split].to_vec(), digits[split..].to_vec())
        } else {
            let mut frac = vec![b'0'; (-x - 1) as usize];
            frac.extend_from_slice(&digits);
            (vec![b'0'], frac)
        };
        push_ascii(&mut out, &int_part);
        push_fraction(&mut out, &frac_part);
    } else {
        push_ascii(&mut out, &digits[..1]);
        push_fraction(&mut out, &digits[1..]);
        out.push('e');
        out.push(if x < 0 { '-' } else { '+' });
        let magnitude = x.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    out
}

fn push_ascii(out: &mut String, digits: &[u8]) {
    out.extend(digits.iter().map(|&d| char::from(d)));
}

/// Appends `.` and the fraction digits without trailing zeros; nothing if all are zero.
fn push_fraction(out: &mut String, frac: &[u8]) {
    let kept = frac.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
    if kept > 0 {
        out.push('.');
        push_ascii(out, &frac[..kept]);
    }
}

/// TensorFlow's printing of an `f32` element (tsl `LegacyPrecision` / `FloatToBuffer`):
/// `%.6g`, or `%.9g` when the `%.6g` text does not parse back to exactly `v`.
/// NaN prints `nan` or `-nan` by its sign bit; infinities `inf` / `-inf`.
///
/// `half`, `bfloat16` and the float8/float4 types that TensorFlow prints are converted to
/// `f32` first and printed with this.
pub(crate) fn format_f32(v: f32) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    let short = format_g(f64::from(v), 6);
    if short.parse::<f32>() == Ok(v) {
        short
    } else {
        format_g(f64::from(v), 9)
    }
}

/// TensorFlow's printing of an `f64` element (tsl `LegacyPrecision` / `DoubleToBuffer`):
/// `%.15g`, or `%.17g` when the `%.15g` text does not parse back to exactly `v`.
/// NaN prints `nan` or `-nan` by its sign bit; infinities `inf` / `-inf`.
pub(crate) fn format_f64(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    let short = format_g(v, 15);
    if short.parse::<f64>() == Ok(v) {
        short
    } else {
        format_g(v, 17)
    }
}

/// abseil's `Utf8SafeCEscape`, byte for byte, appended to `out`.
///
/// `\n` `\r` `\t` `"` `'` `\` become `\n` `\r` `\t` `\"` `\'` `\\`; any other byte below
/// 0x20, and 0x7f, becomes a three-digit octal escape (`\000`, `\177`); printable ASCII is
/// copied; bytes >= 0x80 are copied unchanged (so UTF-8 text stays readable, and invalid
/// UTF-8 stays invalid).
pub(crate) fn c_escape_utf8_safe_into(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len());
    for &b in bytes {
        match b {
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\'' => out.extend_from_slice(b"\\'"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x20..=0x7e | 0x80..=0xff => out.push(b),
            _ => out.extend_from_slice(&[
                b'\\',
                b'0' + (b >> 6),
                b'0' + ((b >> 3) & 7),
                b'0' + (b & 7),
            ]),
        }
    }
}

/// abseil's `Utf8SafeCEscape` as exact bytes (see [`c_escape_utf8_safe_into`]). The result is
/// valid UTF-8 exactly when the input is.
pub(crate) fn c_escape_utf8_safe_bytes(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    c_escape_utf8_safe_into(bytes, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escape as a `String`, invalid UTF-8 shown as U+FFFD.
    fn c_escape_utf8_safe(bytes: &[u8]) -> String {
        String::from_utf8_lossy(&c_escape_utf8_safe_bytes(bytes)).into_owned()
    }

    #[test]
    fn format_f32_tensorflow_examples_exact() {
        let cases: &[(f32, &str)] = &[
            (1.0, "1"),
            (0.5, "0.5"),
            (1e10, "1e+10"),
            (123_456_789.0, "123456792"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333343"),
            (1e-5, "1e-05"),
            (100_000.0, "100000"),
            (1e6, "1e+06"),
            (999_999.0, "999999"),
            (1_234_567.0, "1234567"),
            (16_777_217.0, "16777216"),
            (f32::MAX, "3.40282347e+38"),
            (f32::MIN, "-3.40282347e+38"),
            (f32::MIN_POSITIVE, "1.17549435e-38"),
            (f32::from_bits(1), "1.4013e-45"),
            (f32::from_bits(0x007f_ffff), "1.17549421e-38"),
            (-0.0, "-0"),
            (0.0, "0"),
            (42.0, "42"),
            (-1.5, "-1.5"),
            (0.2, "0.2"),
            (0.3, "0.3"),
            (3.0001, "3.0001"),
            (1e-4, "0.0001"),
            // 2^-13 = 0.0001220703125 is an exact tie at six digits: even wins.
            (f32::from_bits(0x3900_0000), "0.000122070312"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (-f32::NAN, "-nan"),
        ];
        for &(v, want) in cases {
            assert_eq!(format_f32(v), want, "{v:e}");
        }
    }

    #[test]
    fn format_f64_examples_exact() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1"),
            (0.5, "0.5"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.0 / 3.0, "0.33333333333333331"),
            (2.0 / 3.0, "0.66666666666666663"),
            (16_777_217.0, "16777217"),
            (9_007_199_254_740_993.0, "9007199254740992"),
            (123_456_789.0, "123456789"),
            (1e15, "1e+15"),
            (1e16, "1e+16"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (f64::from_bits(1), "4.94065645841247e-324"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
        ];
        for &(v, want) in cases {
            assert_eq!(format_f64(v), want, "{v:e}");
        }
    }

    #[test]
    fn format_g_layout_and_rounding_exact() {
        let cases: &[(f64, usize, &str)] = &[
            // Fixed vs exponent: fixed while P > X >= -4.
            (100_000.0, 6, "100000"),
            (1_000_000.0, 6, "1e+06"),
            (999_999.5, 6, "1e+06"),
            (999_999.4, 6, "999999"),
            (0.0001, 6, "0.0001"),
            (0.00001, 6, "1e-05"),
            (0.000_099_999_95, 6, "0.0001"),
            (1e100, 6, "1e+100"),
            (1.5e-7, 6, "1.5e-07"),
            (123.456, 2, "1.2e+02"),
            (123.456, 3, "123"),
            // Precision 0 means 1.
            (123.456, 0, "1e+02"),
            (0.5, 0, "0.5"),
            // Exact binary ties go to even, as glibc does.
            (0.5, 1, "0.5"),
            (2.5, 1, "2"),
            (3.5, 1, "4"),
            (0.125, 2, "0.12"),
            (0.375, 2, "0.38"),
            (1.25, 2, "1.2"),
            (12.5, 2, "12"),
            (13.5, 2, "14"),
            (2.5e1, 1, "2e+01"),
            // Not exact ties: decided by the binary value (2.675 is 2.67499999...).
            (2.675, 3, "2.67"),
            (0.15, 1, "0.1"),
            (0.35, 1, "0.3"),
            // Long outputs are exact decimal expansions.
            (0.1, 20, "0.10000000000000000555"),
            (5e-324, 3, "4.94e-324"),
            (1e23, 17, "9.9999999999999992e+22"),
            (-0.0, 6, "-0"),
            (0.0, 17, "0"),
            (-f64::NAN, 6, "-nan"),
            (f64::NEG_INFINITY, 3, "-inf"),
        ];
        for &(v, p, want) in cases {
            assert_eq!(format_g(v, p), want, "{v:e} at precision {p}");
        }
    }

    #[test]
    fn format_g_huge_precision_is_the_exact_expansion() {
        // glibc `%.5000g` of the smallest subnormal, 2^-1074: all 751 significant digits.
        let exact = concat!(
            "4.940656458412465441765687928682213723650598026143247644255856825006755072702087",
            "51865299836361635992379796564695445717730926656710355939796398774796010781878126",
            "30071319031140452784581716784898210368871863605699873072305000638740915356498438",
            "73124733972731696151400317153853980741262385655911710266585566867681870395603106",
            "24931945271591492455329305456544401127480129709999541931989409080416563324524757",
            "14786901472678015935523861155013480352649347201937902681071074917033322268447533",
            "35720832431936092382893458368060106011506169809753078342277318329247904982524730",
            "77637592724787465608477820373446969953364701797267771758512566055119913150489110",
            "14510378627381672509558373897335989936648099411642057026370902792427675445652290",
            "87538682506419718265533447265625e-324",
        );
        assert_eq!(format_g(f64::from_bits(1), 5000), exact);
        assert_eq!(format_g(f64::from_bits(1), usize::MAX), exact);
        assert_eq!(format_g(-0.1, 100_000), format_g(-0.1, 1200));
        assert_eq!(
            format_g(0.1, 60),
            "0.1000000000000000055511151231257827021181583404541015625"
        );
    }

    /// The rows of a recorded fixture (`fixtures/`, each file's header says how it was
    /// printed): whitespace-separated fields, the number bits first; `#` comments skipped.
    fn fixture(text: &'static str) -> Vec<(u64, Vec<&'static str>)> {
        let rows: Vec<_> = text
            .lines()
            .filter_map(|l| l.split('#').next())
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter_map(|f| {
                let (bits, rest) = f.split_first()?;
                let bits = u64::from_str_radix(bits.strip_prefix("0x")?, 16).ok()?;
                Some((bits, rest.to_vec()))
            })
            .collect();
        assert!(!rows.is_empty());
        rows
    }

    #[test]
    fn format_g_matches_glibc_fixture() {
        for (bits, row) in fixture(include_str!("fixtures/glibc_g.txt")) {
            let [p, want] = row[..] else {
                panic!("{row:?}")
            };
            let p: usize = p.parse().unwrap();
            let v = f64::from_bits(bits);
            assert_eq!(
                format_g(v, p),
                want,
                "{bits:#018x} ({v:e}) at precision {p}"
            );
        }
    }

    #[test]
    fn format_f32_matches_tensorflow_logic_in_c_fixture() {
        for (bits, row) in fixture(include_str!("fixtures/tf_f32.txt")) {
            let bits = u32::try_from(bits).unwrap();
            assert_eq!(format_f32(f32::from_bits(bits)), row[0], "{bits:#010x}");
        }
    }

    #[test]
    fn format_f64_matches_tensorflow_logic_in_c_fixture() {
        for (bits, row) in fixture(include_str!("fixtures/tf_f64.txt")) {
            assert_eq!(format_f64(f64::from_bits(bits)), row[0], "{bits:#018x}");
        }
    }

    #[test]
    fn c_escape_escapes_exactly_like_abseil() {
        assert_eq!(c_escape_utf8_safe(b"plain text 123"), "plain text 123");
        assert_eq!(
            c_escape_utf8_safe(b"a\nb\rc\td\"e'f\\g"),
            r#"a\nb\rc\td\"e\'f\\g"#
        );
        assert_eq!(
            c_escape_utf8_safe(b"\x00\x01\x07\x1f\x7f"),
            r"\000\001\007\037\177"
        );
        assert_eq!(c_escape_utf8_safe(b"\x0b\x0c\x08"), r"\013\014\010");
        // A digit after an octal escape is not escaped (that only happens for hex escapes).
        assert_eq!(c_escape_utf8_safe(b"\x001"), r"\0001");
        assert_eq!(c_escape_utf8_safe(b" ~?"), " ~?");
        // Bytes >= 0x80 pass through: valid UTF-8 stays as is...
        assert_eq!(c_escape_utf8_safe("héllo ✓\n".as_bytes()), "héllo ✓\\n");
        // ...and invalid UTF-8 stays invalid in the byte version.
        assert_eq!(c_escape_utf8_safe_bytes(b"\xff\xfe\n"), b"\xff\xfe\\n");
        assert_eq!(c_escape_utf8_safe(b"\xff\n"), "\u{fffd}\\n");
        assert_eq!(c_escape_utf8_safe(b""), "");
        let mut out = b"x=".to_vec();
        c_escape_utf8_safe_into(b"\t", &mut out);
        assert_eq!(out, b"x=\\t");
    }

    #[test]
    fn c_escape_every_byte_has_the_abseil_length() {
        for b in 0..=255u8 {
            let want = match b {
                b'\n' | b'\r' | b'\t' | b'"' | b'\'' | b'\\' => 2,
                0x20..=0x7e | 0x80..=0xff => 1,
                _ => 4,
            };
            assert_eq!(c_escape_utf8_safe_bytes(&[b]).len(), want, "{b:#04x}");
        }
    }
}
