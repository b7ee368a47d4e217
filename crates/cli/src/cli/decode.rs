//! Element decoding for statistics and `diff`: any numeric tensor's raw little-endian bytes,
//! a chunk at a time, as `f64`, exact integers (`i128`) or complex pairs.
//!
//! Working from [`Tensor::tensor_data`] rather than typed views means misaligned data (an
//! npy member that is not 64-byte aligned, say) needs no copy, and one loop serves every
//! dtype. Chunks keep the scratch memory bounded whatever the tensor's size.

use tensorcast::types::{
    Float4E2M1FN, Float8E4M3B11FNUZ, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ,
    Int2, Int4, UInt2, UInt4,
};
use tensorcast::{bf16, f16, DataType, Tensor};

/// Elements decoded per chunk (a few hundred KiB of scratch).
pub(crate) const CHUNK_ELEMS: usize = 1 << 15;

/// How the elements of a dtype are compared and summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Floating point (every float kind, through `f64`, which holds them all exactly).
    Float,
    /// Integers, quantized integers and bool (0/1), exactly, as `i128`.
    Int,
    /// complex64 / complex128 as `(re, im)` pairs of `f64`.
    Complex,
}

/// The decoding kind of `dtype`; `None` for strings, resources, variants and unknown values.
pub(crate) fn kind(dtype: DataType) -> Option<Kind> {
    if !dtype.can_use_memcpy() {
        return None;
    }
    if dtype.is_complex() {
        Some(Kind::Complex)
    } else if dtype.is_floating() {
        Some(Kind::Float)
    } else if dtype.is_integer() || dtype.is_quantized() || dtype == DataType::BOOL {
        Some(Kind::Int)
    } else {
        None
    }
}

/// One decoded chunk.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Chunk {
    /// Floating-point values.
    Float(Vec<f64>),
    /// Exact integer values.
    Int(Vec<i128>),
    /// Complex values.
    Complex(Vec<(f64, f64)>),
}

/// Reads `N` little-endian bytes at the start of `b` (callers pass `chunks_exact(N)` pieces).
fn le<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// Decodes raw element bytes of a numeric tensor chunk by chunk.
pub(crate) struct Decoder<'a> {
    dtype: DataType,
    kind: Kind,
    bytes: &'a [u8],
    size: usize,
    pos: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder over `tensor`'s elements; `None` when the dtype is not numeric.
    pub(crate) fn new(tensor: &'a Tensor) -> Option<Self> {
        let kind = kind(tensor.dtype())?;
        let bytes = tensor.tensor_data().ok()?;
        let size = tensor.dtype().size();
        // A tensor's bytes are exactly elements * size; never decode past them.
        let n = tensor.num_elements().max(0) as usize;
        let bytes = &bytes[..bytes.len().min(n.saturating_mul(size))];
        Some(Self {
            dtype: tensor.dtype(),
            kind,
            bytes,
            size,
            pos: 0,
        })
    }

    /// The kind of values this decoder yields.
    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Bytes per element.
    pub(crate) fn element_bytes(&self) -> usize {
        self.size
    }

    /// Decodes up to `max` more elements into `out` (replacing its contents); returns the
    /// number decoded, 0 at the end.
    pub(crate) fn next_chunk(&mut self, max: usize, out: &mut Chunk) -> usize {
        let end = self
            .bytes
            .len()
            .min(self.pos.saturating_add(max.saturating_mul(self.size)));
        let raw = &self.bytes[self.pos..end];
        self.pos = end;
        let n = raw.len() / self.size;
        match self.kind {
            Kind::Float => {
                let v = reuse_float(out);
                decode_float(self.dtype, raw, v);
            }
            Kind::Int => {
                let v = reuse_int(out);
                decode_int(self.dtype, raw, v);
            }
            Kind::Complex => {
                let v = reuse_complex(out);
                decode_complex(self.dtype, raw, v);
            }
        }
        n
    }
}

fn reuse_float(out: &mut Chunk) -> &mut Vec<f64> {
    if !matches!(out, Chunk::Float(_)) {
        *out = Chunk::Float(Vec::new());
    }
    match out {
        Chunk::Float(v) => {
            v.clear();
            v
        }
        _ => unreachable!("set to Float above"),
    }
}

fn reuse_int(out: &mut Chunk) -> &mut Vec<i128> {
    if !matches!(out, Chunk::Int(_)) {
        *out = Chunk::Int(Vec::new());
    }
    match out {
        Chunk::Int(v) => {
            v.clear();
            v
        }
        _ => unreachable!("set to Int above"),
    }
}

fn reuse_complex(out: &mut Chunk) -> &mut Vec<(f64, f64)> {
    if !matches!(out, Chunk::Complex(_)) {
        *out = Chunk::Complex(Vec::new());
    }
    match out {
        Chunk::Complex(v) => {
            v.clear();
            v
        }
        _ => unreachable!("set to Complex above"),
    }
}

fn decode_float(dtype: DataType, raw: &[u8], out: &mut Vec<f64>) {
    macro_rules! byte_float {
        ($t:ty) => {
            out.extend(raw.iter().map(|&b| <$t>::from_bits(b).to_f64()))
        };
    }
    match dtype {
        DataType::FLOAT => out.extend(
            raw.chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes(le(b)))),
        ),
        DataType::DOUBLE => out.extend(raw.chunks_exact(8).map(|b| f64::from_le_bytes(le(b)))),
        DataType::HALF => out.extend(
            raw.chunks_exact(2)
                .map(|b| f16::from_bits(u16::from_le_bytes(le(b))).to_f64()),
        ),
        DataType::BFLOAT16 => out.extend(
            raw.chunks_exact(2)
                .map(|b| bf16::from_bits(u16::from_le_bytes(le(b))).to_f64()),
        ),
        DataType::FLOAT8_E5M2 => byte_float!(Float8E5M2),
        DataType::FLOAT8_E4M3FN => byte_float!(Float8E4M3FN),
        DataType::FLOAT8_E4M3FNUZ => byte_float!(Float8E4M3FNUZ),
        DataType::FLOAT8_E4M3B11FNUZ => byte_float!(Float8E4M3B11FNUZ),
        DataType::FLOAT8_E5M2FNUZ => byte_float!(Float8E5M2FNUZ),
        DataType::FLOAT4_E2M1FN => byte_float!(Float4E2M1FN),
        // `kind` only sends floating dtypes here; anything else decodes to nothing.
        _ => {}
    }
}

fn decode_int(dtype: DataType, raw: &[u8], out: &mut Vec<i128>) {
    macro_rules! ints {
        ($t:ty, $n:literal) => {
            out.extend(
                raw.chunks_exact($n)
                    .map(|b| i128::from(<$t>::from_le_bytes(le(b)))),
            )
        };
    }
    match dtype {
        DataType::INT8 | DataType::QINT8 => out.extend(raw.iter().map(|&b| i128::from(b as i8))),
        DataType::UINT8 | DataType::QUINT8 => out.extend(raw.iter().map(|&b| i128::from(b))),
        DataType::BOOL => out.extend(raw.iter().map(|&b| i128::from(b != 0))),
        DataType::INT16 | DataType::QINT16 => ints!(i16, 2),
        DataType::UINT16 | DataType::QUINT16 => ints!(u16, 2),
        DataType::INT32 | DataType::QINT32 => ints!(i32, 4),
        DataType::UINT32 => ints!(u32, 4),
        DataType::INT64 => ints!(i64, 8),
        DataType::UINT64 => ints!(u64, 8),
        DataType::INT4 => out.extend(raw.iter().map(|&b| i128::from(Int4(b as _).value()))),
        DataType::UINT4 => out.extend(raw.iter().map(|&b| i128::from(UInt4(b as _).value()))),
        DataType::INT2 => out.extend(raw.iter().map(|&b| i128::from(Int2(b as _).value()))),
        DataType::UINT2 => out.extend(raw.iter().map(|&b| i128::from(UInt2(b as _).value()))),
        _ => {}
    }
}

fn decode_complex(dtype: DataType, raw: &[u8], out: &mut Vec<(f64, f64)>) {
    match dtype {
        DataType::COMPLEX64 => out.extend(raw.chunks_exact(8).map(|b| {
            (
                f64::from(f32::from_le_bytes(le(&b[..4]))),
                f64::from(f32::from_le_bytes(le(&b[4..]))),
            )
        })),
        DataType::COMPLEX128 => out.extend(raw.chunks_exact(16).map(|b| {
            (
                f64::from_le_bytes(le(&b[..8])),
                f64::from_le_bytes(le(&b[8..])),
            )
        })),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast::{Complex32, TensorShape};

    fn all(t: &Tensor) -> Chunk {
        let mut d = Decoder::new(t).unwrap();
        let mut c = Chunk::Int(vec![]);
        d.next_chunk(usize::MAX / 64, &mut c);
        c
    }

    #[test]
    fn floats_of_every_width_decode_exactly() {
        let t = Tensor::vector(&[1.5f32, -0.25, f32::INFINITY]);
        assert_eq!(all(&t), Chunk::Float(vec![1.5, -0.25, f64::INFINITY]));
        let t = Tensor::vector(&[bf16::from_f32(-3.0), bf16::from_f32(0.5)]);
        assert_eq!(all(&t), Chunk::Float(vec![-3.0, 0.5]));
        let t = Tensor::vector(&[Float8E4M3FN(0x7e)]);
        assert_eq!(all(&t), Chunk::Float(vec![448.0]));
    }

    #[test]
    fn ints_decode_exactly_even_past_f64_precision() {
        let t = Tensor::vector(&[i64::MAX, i64::MIN]);
        assert_eq!(
            all(&t),
            Chunk::Int(vec![i128::from(i64::MAX), i128::from(i64::MIN)])
        );
        let t = Tensor::vector(&[u64::MAX]);
        assert_eq!(all(&t), Chunk::Int(vec![i128::from(u64::MAX)]));
        let t = Tensor::vector(&[Int4::new(-3), Int4::new(7)]);
        assert_eq!(all(&t), Chunk::Int(vec![-3, 7]));
    }

    #[test]
    fn chunks_cover_every_element_once() {
        let v: Vec<u16> = (0..1000).collect();
        let t = Tensor::from_vec(v, TensorShape::new(&[10, 100]).unwrap()).unwrap();
        let mut d = Decoder::new(&t).unwrap();
        let mut c = Chunk::Float(vec![]);
        let mut seen = vec![];
        loop {
            let n = d.next_chunk(333, &mut c);
            if n == 0 {
                break;
            }
            let Chunk::Int(v) = &c else { panic!() };
            assert_eq!(v.len(), n);
            seen.extend_from_slice(v);
        }
        assert_eq!(seen, (0..1000).collect::<Vec<i128>>());
    }

    #[test]
    fn complex_and_strings() {
        let t = Tensor::vector(&[Complex32::new(1.0, -2.0)]);
        assert_eq!(all(&t), Chunk::Complex(vec![(1.0, -2.0)]));
        assert!(Decoder::new(&Tensor::from("abc")).is_none());
    }
}
