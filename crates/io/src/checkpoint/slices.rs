//! Partitioned (sliced) tensors: the keys their slices are stored under and the reassembly of
//! the full tensor.
//!
//! A partitioned tensor's entry lists its slices (`BundleEntryProto.slices`); each slice is an
//! ordinary entry under the key `EncodeTensorNameSlice(name, slice)`
//! (`tensorflow/core/util/saved_tensor_slice_util.cc`): OrderedCode `WriteNumIncreasing(0)`,
//! `WriteString(name)`, `WriteNumIncreasing(rank)`, then per dimension
//! `WriteSignedNumIncreasing(start)` and `WriteSignedNumIncreasing(length)` (-1 for a whole
//! dimension).

use tensorcast_core::TensorShape;
use tensorcast_proto::TensorSliceProto;

use crate::error::{IoError, Result};

/// OrderedCode `WriteNumIncreasing`: a length byte, then the big-endian bytes.
fn write_num_increasing(out: &mut Vec<u8>, v: u64) {
    let n = 8 - (v.leading_zeros() / 8) as usize;
    out.push(n as u8);
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

/// OrderedCode `WriteString`: `0x00` escaped as `00 ff`, `0xff` as `ff 00`, then `00 01`.
fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            0x00 => out.extend_from_slice(&[0x00, 0xff]),
            0xff => out.extend_from_slice(&[0xff, 0x00]),
            b => out.push(b),
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// OrderedCode `WriteSignedNumIncreasing`: a length-prefixed two's-complement big-endian
/// encoding whose header bits grow with the length (1 to 10 bytes).
fn write_signed_num_increasing(out: &mut Vec<u8>, v: i64) {
    const HEADER: [[u8; 2]; 11] = [
        [0, 0],
        [0x80, 0],
        [0xc0, 0],
        [0xe0, 0],
        [0xf0, 0],
        [0xf8, 0],
        [0xfc, 0],
        [0xfe, 0],
        [0xff, 0],
        [0xff, 0x80],
        [0xff, 0xc0],
    ];
    let x = if v < 0 { !(v as u64) } else { v as u64 };
    if x < 64 {
        out.push(HEADER[1][0] ^ (v as u8));
        return;
    }
    let bits = 64 - x.leading_zeros() as usize;
    let len = (bits + 1).div_ceil(7);
    let sign = if v < 0 { 0xff } else { 0 };
    let mut buf = [sign; 10];
    buf[2..].copy_from_slice(&v.to_be_bytes());
    let begin = 10 - len;
    buf[begin] ^= HEADER[len][0];
    buf[begin + 1] ^= HEADER[len][1];
    out.extend_from_slice(&buf[begin..]);
}

/// `(start, length)` per dimension, `length = -1` for a whole dimension, as the proto says.
pub(crate) fn extents(slice: &TensorSliceProto) -> Vec<(i64, i64)> {
    slice
        .extent
        .iter()
        .map(|e| match e.length {
            Some(l) => (e.start, l),
            None => (0, -1),
        })
        .collect()
}

/// The key a slice of `name` is stored under.
pub(crate) fn slice_key(name: &[u8], slice: &TensorSliceProto) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 8 + 4 * slice.extent.len());
    write_num_increasing(&mut out, 0);
    write_string(&mut out, name);
    write_num_increasing(&mut out, slice.extent.len() as u64);
    for (start, len) in extents(slice) {
        write_signed_num_increasing(&mut out, start);
        write_signed_num_increasing(&mut out, len);
    }
    out
}

/// The slice's `(start, length)` per dimension of `full`, every length resolved, checked to lie
/// inside `full`.
pub(crate) fn resolve(slice: &TensorSliceProto, full: &TensorShape) -> Result<Vec<(usize, usize)>> {
    let dims = full.dims_usize();
    let ext = extents(slice);
    if ext.len() != dims.len() {
        return Err(IoError::corrupt(format!(
            "a slice of rank {} for a tensor of shape {full}",
            ext.len()
        )));
    }
    ext.iter()
        .zip(&dims)
        .map(|(&(start, len), &d)| {
            if len == -1 {
                return Ok((0, d));
            }
            let ok = start >= 0 && len >= 0 && (start as u128 + len as u128) <= d as u128;
            if !ok {
                return Err(IoError::corrupt(format!(
                    "slice extent (start {start}, length {len}) lies outside a dimension of {d} in shape {full}"
                )));
            }
            Ok((start as usize, len as usize))
        })
        .collect()
}

/// Copies a slice's row-major bytes (`src`, extents `ext` of `full_dims`) into the full
/// tensor's bytes `dst`, marking each element in `covered`; an element covered twice is an
/// error (the slices overlap).
pub(crate) fn copy_slice(
    dst: &mut [u8],
    covered: &mut [u64],
    full_dims: &[usize],
    ext: &[(usize, usize)],
    src: &[u8],
    elem: usize,
) -> Result<()> {
    let rank = full_dims.len();
    let count: usize = ext.iter().map(|e| e.1).product();
    if count == 0 {
        return Ok(());
    }
    // Row-major strides of the full tensor, in elements.
    let mut strides = vec![1usize; rank];
    for k in (0..rank.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * full_dims[k + 1];
    }
    let run = if rank == 0 { 1 } else { ext[rank - 1].1 };
    let runs = count / run;
    let mut idx = vec![0usize; rank.saturating_sub(1)];
    let mut s = 0usize;
    for _ in 0..runs {
        let mut base = 0usize;
        for k in 0..rank.saturating_sub(1) {
            base += (ext[k].0 + idx[k]) * strides[k];
        }
        if rank > 0 {
            base += ext[rank - 1].0;
        }
        for e in base..base + run {
            let (w, b) = (e / 64, 1u64 << (e % 64));
            if covered[w] & b != 0 {
                return Err(IoError::corrupt(
                    "the slices of a partitioned tensor overlap",
                ));
            }
            covered[w] |= b;
        }
        dst[base * elem..(base + run) * elem].copy_from_slice(&src[s..s + run * elem]);
        s += run * elem;
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < ext[k].1 {
                break;
            }
            idx[k] = 0;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_proto::tensor_slice_proto::Extent;

    #[test]
    fn slice_keys_are_tensorflows() {
        // Recorded from TensorFlow 2.21 (`inspect_checkpoint`'s debug string).
        let s = TensorSliceProto {
            extent: vec![
                Extent {
                    start: 2,
                    length: Some(2),
                },
                Extent {
                    start: 0,
                    length: None,
                },
            ],
        };
        assert_eq!(
            slice_key(b"p", &s),
            b"\x00p\x00\x01\x01\x02\x82\x82\x80\x7f"
        );
        let s = TensorSliceProto {
            extent: vec![
                Extent {
                    start: 4,
                    length: Some(3),
                },
                Extent {
                    start: 0,
                    length: Some(4),
                },
            ],
        };
        assert_eq!(
            slice_key(b"a/.ATTRIBUTES/VARIABLE_VALUE", &s),
            b"\x00a/.ATTRIBUTES/VARIABLE_VALUE\x00\x01\x01\x02\x84\x83\x80\x84"
        );
    }

    #[test]
    fn signed_numbers_encode_in_order() {
        let vals = [
            i64::MIN,
            -1 << 40,
            -70_000,
            -8193,
            -8192,
            -65,
            -64,
            -1,
            0,
            1,
            63,
            64,
            8191,
            8192,
            70_000,
            1 << 40,
            i64::MAX,
        ];
        let enc: Vec<Vec<u8>> = vals
            .iter()
            .map(|&v| {
                let mut o = Vec::new();
                write_signed_num_increasing(&mut o, v);
                o
            })
            .collect();
        for w in enc.windows(2) {
            assert!(w[0] < w[1], "{:?} !< {:?}", w[0], w[1]);
        }
        let mut o = Vec::new();
        write_signed_num_increasing(&mut o, 64);
        assert_eq!(o, [0xc0, 0x40]);
    }
}
