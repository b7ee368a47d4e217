//! TensorFlow's `SummarizeValue`, `DebugString` and `DeviceSafeDebugString`, character for
//! character.
//!
//! Two layouts, as TensorFlow has them:
//! - legacy (`print_v2 = false`): the first `max_entries` elements in total, nested in `[...]`
//!   per dimension with no separators between groups, then `...` if some were left out;
//! - print_v2: the first and last `max_entries` entries of *every* axis, with `...` between
//!   them, newlines between rows and strings in quotes (what `tf.print` shows).
//!
//! Elements print as TensorFlow prints them: floats with `%.6g` (`%.9g` when six digits do
//! not round-trip; `%.15g`/`%.17g` for doubles), half, bfloat16, float8 and float4 through
//! float, integers in decimal, bool as `0`/`1`, strings C-escaped. complex, qint32 and the
//! fnuz float8 types print `?` for every element, resource handles and variants their summary
//! in `<...>`: TensorFlow's "irregular" cases.

pub(crate) mod format;

use half::{bf16, f16};

use crate::element::{Element, Storage};
use crate::types::*;
use crate::{DataType, Tensor};

/// How one element prints.
trait PrintElement {
    /// False for TensorFlow's "irregular" types, which print `?` (complex, qint32, the fnuz
    /// float8 kinds) or their summary in `<...>` (resource, variant) from
    /// `summarize_irregular`.
    const REGULAR: bool = true;
    fn print(&self, print_v2: bool) -> String;
}

macro_rules! irregular {
    ($($t:ty),*) => {$(
        impl PrintElement for $t {
            const REGULAR: bool = false;
            fn print(&self, _: bool) -> String {
                "?".to_string()
            }
        }
    )*};
}
irregular!(
    num_complex::Complex<f32>,
    num_complex::Complex<f64>,
    QInt32,
    Float8E4M3FNUZ,
    Float8E5M2FNUZ,
    ResourceHandle,
    Variant
);

macro_rules! print_display {
    ($($t:ty),*) => {$(
        impl PrintElement for $t {
            fn print(&self, _: bool) -> String {
                self.to_string()
            }
        }
    )*};
}
print_display!(i8, u8, i16, u16, i32, u32, i64, u64);

impl PrintElement for bool {
    fn print(&self, _: bool) -> String {
        if *self { "1" } else { "0" }.to_string()
    }
}

// TensorFlow runs its kernels with the x86 "denormals are zero" flag set, so a subnormal
// value reaches `printf` as a zero of the same sign: observed in TensorFlow 2.21, `1e-40f`
// prints `0` and `-1e-310` prints `-0`.
use crate::x86::{daz32, daz64};

impl PrintElement for f32 {
    fn print(&self, _: bool) -> String {
        format::format_f32(daz32(*self))
    }
}

impl PrintElement for f64 {
    fn print(&self, _: bool) -> String {
        format::format_f64(daz64(*self))
    }
}

macro_rules! print_via_f32 {
    ($($t:ty),*) => {$(
        impl PrintElement for $t {
            fn print(&self, _: bool) -> String {
                format::format_f32(daz32(f32::from(*self)))
            }
        }
    )*};
}
print_via_f32!(
    f16,
    bf16,
    Float8E5M2,
    Float8E4M3FN,
    Float8E4M3B11FNUZ,
    Float4E2M1FN
);

macro_rules! print_value {
    ($($t:ty),*) => {$(
        impl PrintElement for $t {
            fn print(&self, _: bool) -> String {
                self.value().to_string()
            }
        }
    )*};
}
print_value!(QInt8, QUInt8, QInt16, QUInt16, Int4, UInt4, Int2, UInt2);

/// Text of bytes that may not be UTF-8: valid UTF-8 is kept, every other byte is written
/// `\xNN` (as Python's `backslashreplace` shows it). TensorFlow writes such bytes raw; a Rust
/// `String` cannot hold them, and this keeps the text lossless and readable.
pub fn lossless_utf8(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

impl PrintElement for TString {
    fn print(&self, print_v2: bool) -> String {
        let escaped = lossless_utf8(&format::c_escape_utf8_safe_bytes(self.as_bytes()));
        if print_v2 {
            format!("\"{escaped}\"")
        } else {
            escaped
        }
    }
}

/// Legacy layout: a walk with one global count of printed elements.
fn print_one_dim<T: PrintElement>(
    dim: usize,
    shape: &[usize],
    limit: usize,
    data: &[T],
    index: &mut usize,
    out: &mut String,
) {
    if *index >= limit {
        return;
    }
    let count = shape[dim];
    if dim == shape.len() - 1 {
        for i in 0..count {
            if *index >= limit {
                if dim != 0 {
                    out.push_str("...");
                }
                return;
            }
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&data[*index].print(false));
            *index += 1;
        }
        return;
    }
    for _ in 0..count {
        let opened = *index < limit;
        if opened {
            out.push('[');
        }
        print_one_dim(dim + 1, shape, limit, data, index, out);
        if *index < limit || opened {
            out.push(']');
        }
    }
}

fn print_dim_spacing(dim: usize, ndims: usize, out: &mut String) {
    if dim == ndims - 1 {
        out.push(' ');
        return;
    }
    for _ in 0..ndims - dim - 1 {
        out.push('\n');
    }
    for _ in 0..=dim {
        out.push(' ');
    }
}

/// print_v2 layout: the first and last `ends` entries of every axis.
fn print_one_dim_v2<T: PrintElement>(
    dim: usize,
    shape: &[usize],
    ends: usize,
    data: &[T],
    start: usize,
    out: &mut String,
) {
    if dim == shape.len() {
        out.push_str(&data[start].print(true));
        return;
    }
    out.push('[');
    let count = shape[dim];
    let per: usize = shape[dim + 1..].iter().product();
    for i in 0..ends.min(count) {
        if i > 0 {
            print_dim_spacing(dim, shape.len(), out);
        }
        print_one_dim_v2(dim + 1, shape, ends, data, start + per * i, out);
    }
    if count > ends.saturating_mul(2) {
        print_dim_spacing(dim, shape.len(), out);
        out.push_str("...");
    }
    for i in ends.max(count.saturating_sub(ends))..count {
        print_dim_spacing(dim, shape.len(), out);
        print_one_dim_v2(dim + 1, shape, ends, data, start + per * i, out);
    }
    out.push(']');
}

fn summarize_array<T: PrintElement>(
    limit: usize,
    num_elts: usize,
    shape: &[usize],
    data: &[T],
    print_v2: bool,
) -> String {
    let mut out = String::new();
    if shape.is_empty() {
        for (i, x) in data.iter().take(limit).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(&x.print(print_v2));
        }
        if num_elts > limit {
            out.push_str("...");
        }
        return out;
    }
    if print_v2 {
        print_one_dim_v2(0, shape, limit, data, 0, &mut out);
    } else {
        let mut index = 0;
        print_one_dim(0, shape, limit, data, &mut index, &mut out);
        if num_elts > limit {
            out.push_str("...");
        }
    }
    out
}

/// The "irregular" dtypes: `?` per element (or a handle's or variant's summary), flat.
fn summarize_irregular(t: &Tensor, limit: usize, max_entries: usize, print_v2: bool) -> String {
    let n = t.num_elements() as usize;
    let mut out = String::new();
    let bracket = print_v2 && t.dims() > 0;
    if bracket {
        out.push('[');
    }
    for i in 0..limit {
        if i > 0 {
            out.push(' ');
        }
        match t.storage() {
            Storage::Resources(_) => {
                let s = t.flat_slice::<ResourceHandle>().map(|v| v[i].summarize());
                out.push_str(&format!("<{}>", s.unwrap_or_default()));
            }
            Storage::Variants(_) => {
                let s = t.flat_slice::<Variant>().map(|v| v[i].summarize());
                out.push_str(&format!("<{}>", s.unwrap_or_default()));
            }
            _ => out.push('?'),
        }
    }
    if max_entries < n {
        out.push_str("...");
    }
    if bracket {
        out.push(']');
    }
    out
}

impl Tensor {
    fn summarize_typed<T: Element + PrintElement>(
        &self,
        limit: usize,
        num_elts: usize,
        print_v2: bool,
    ) -> String {
        let shape = self.shape().dims_usize();
        match self.flat_slice::<T>() {
            Ok(data) => summarize_array(limit, num_elts, &shape, data, print_v2),
            Err(_) => {
                // Bytes no typed view accepts (a bool tensor holding a 2, or a misaligned
                // buffer): print what the bytes say element by element.
                match T::read_unaligned(self.bytes_or_empty()) {
                    Ok(v) => summarize_array(limit, num_elts, &shape, &v, print_v2),
                    Err(_) => {
                        let raw = self.bytes_or_empty();
                        summarize_array(limit, num_elts, &shape, raw, print_v2)
                    }
                }
            }
        }
    }

    /// TensorFlow's `SummarizeValue(max_entries, print_v2)`: the first `max_entries` values
    /// (all of them when negative), laid out as described in the module docs.
    ///
    /// ```
    /// use tensorcast_core::{Tensor, TensorShape};
    /// let t = Tensor::from_vec((1..=12).collect::<Vec<i32>>(), &TensorShape::new(&[3, 4]).unwrap()).unwrap();
    /// assert_eq!(t.summarize_value(3, false), "[1 2 3...]...");
    /// assert_eq!(t.summarize_value(1, true), "[[1 ... 4]\n ...\n [9 ... 12]]");
    /// ```
    pub fn summarize_value(&self, max_entries: i64, print_v2: bool) -> String {
        let num_elts = self.num_elements().max(0) as usize;
        let max_entries = if max_entries < 0 {
            num_elts
        } else {
            max_entries as usize
        };
        let limit = max_entries.min(num_elts);
        if limit > 0 && !self.is_initialized_with_data() {
            return format!(
                "uninitialized Tensor of {num_elts} elements of type {}",
                self.dtype().number()
            );
        }
        // Observed in TensorFlow 2.21: a bool tensor of rank >= 1 summarised with no entries
        // prints nothing at all in both layouts (every other dtype prints `...`).
        if self.dtype() == DataType::BOOL && limit == 0 && self.dims() > 0 {
            return String::new();
        }
        let irregular = || summarize_irregular(self, limit, max_entries, print_v2);
        crate::dispatch!(
            self.dtype(),
            T => if T::REGULAR {
                self.summarize_typed::<T>(limit, num_elts, print_v2)
            } else {
                irregular()
            },
            _ => irregular()
        )
    }

    fn is_initialized_with_data(&self) -> bool {
        !matches!(self.storage(), Storage::None)
    }

    /// TensorFlow's `DebugString(num_values)`:
    /// `Tensor<type: float shape: [2,3] values: [1 2 3...]...>`. TensorFlow's default is 3.
    pub fn debug_string(&self, num_values: i64) -> String {
        format!(
            "Tensor<type: {} shape: {} values: {}>",
            self.dtype().name(),
            self.shape(),
            self.summarize_value(num_values, false)
        )
    }

    /// TensorFlow's `DeviceSafeDebugString`: `Tensor<type: float shape: [2,3]>` (no values).
    pub fn device_safe_debug_string(&self) -> String {
        format!(
            "Tensor<type: {} shape: {}>",
            self.dtype().name(),
            self.shape()
        )
    }
}
