//! Element decoding for statistics and `diff`: any numeric tensor's raw bytes,
//! a chunk at a time, as `f64`, exact integers (`i128`) or complex pairs.
//!
//! Working from [`Tensor::tensor_data`] rather than typed views means misaligned data (an
//! npy member that is not 64-byte aligned, say) needs no copy, and one loop serves every
//! dtype. Chunks keep the scratch memory bounded whatever the tensor's size.

use tensorcast::{dispatch, DataType, Tensor};

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

/// `reuse_float` and `reuse_int`: `out`'s vector of one variant, emptied, so that a chunk's
/// allocation serves the next one (a new vector where `out` held the other variant).
macro_rules! reuse {
    ($($name:ident: $variant:ident($t:ty);)*) => {$(
        fn $name(out: &mut Chunk) -> &mut Vec<$t> {
            if !matches!(out, Chunk::$variant(_)) {
                *out = Chunk::$variant(Vec::new());
            }
            match out {
                Chunk::$variant(v) => {
                    v.clear();
                    v
                }
                _ => unreachable!(concat!("set to ", stringify!($variant), " above")),
            }
        }
    )*};
}

reuse! {
    reuse_float: Float(f64);
    reuse_int: Int(i128);
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

/// The elements of `raw` (whole elements of a tensor's bytes, in host order, maybe unaligned).
fn elems<T: bytemuck::Pod>(raw: &[u8]) -> impl Iterator<Item = T> + '_ {
    raw.chunks_exact(std::mem::size_of::<T>())
        .map(bytemuck::pod_read_unaligned::<T>)
}

#[allow(
    clippy::useless_conversion,
    reason = "one body for every width, `double` included"
)]
fn decode_float(dtype: DataType, raw: &[u8], out: &mut Vec<f64>) {
    // `kind` only sends floating dtypes here; anything else decodes to nothing.
    dispatch!(dtype, [float, minifloat] T => out.extend(elems::<T>(raw).map(f64::from)), _ => {})
}

fn decode_int(dtype: DataType, raw: &[u8], out: &mut Vec<i128>) {
    if dtype == DataType::BOOL {
        // Any nonzero byte is true.
        return out.extend(raw.iter().map(|&b| i128::from(b != 0)));
    }
    dispatch!(dtype, {INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64} T =>
        out.extend(elems::<T>(raw).map(i128::from)),
        // Quantized and sub-byte integers: their value.
        _ => dispatch!(dtype, {QINT8, QUINT8, QINT16, QUINT16, QINT32, INT4, UINT4, INT2, UINT2} T =>
            out.extend(elems::<T>(raw).map(|x| i128::from(x.value()))),
            _ => {}))
}

#[allow(
    clippy::useless_conversion,
    reason = "one body for every width, `double` included"
)]
fn decode_complex(dtype: DataType, raw: &[u8], out: &mut Vec<(f64, f64)>) {
    dispatch!(dtype, [complex] T =>
        out.extend(elems::<T>(raw).map(|z| (f64::from(z.re), f64::from(z.im)))),
        _ => {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast::bf16;
    use tensorcast::types::{Float8E4M3FN, Int4};
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
    fn every_numeric_dtype_decodes_one_value_per_element() {
        for dtype in DataType::all() {
            let Some(kind) = kind(dtype) else { continue };
            // One byte in, so that wider elements are misaligned.
            let bytes =
                tensorcast::buffer::Buffer::copy_from_slice(&vec![1u8; 1 + 5 * dtype.size()])
                    .unwrap()
                    .slice(1..1 + 5 * dtype.size())
                    .unwrap();
            let t = Tensor::from_buffer(dtype, &TensorShape::new(&[5]).unwrap(), bytes).unwrap();
            let n = match all(&t) {
                Chunk::Float(v) => (kind == Kind::Float, v.len()),
                Chunk::Int(v) => (kind == Kind::Int, v.len()),
                Chunk::Complex(v) => (kind == Kind::Complex, v.len()),
            };
            assert_eq!(n, (true, 5), "{dtype}");
        }
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
