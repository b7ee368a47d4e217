//! Shared helpers: alignment, zero-copy-or-copy, byte transforms into new buffers.

use tensorcast_buffer::{cpu_allocator, AllocationAttributes, Buffer};
use tensorcast_core::{DataType, Tensor, TensorShape};

use crate::error::{IoError, Result};

/// The alignment a typed view of `dtype` needs: the element size, except complex numbers,
/// which need their component's.
pub(crate) fn element_alignment(dtype: DataType) -> usize {
    match dtype {
        DataType::COMPLEX64 => 4,
        DataType::COMPLEX128 => 8,
        d => d.size().max(1),
    }
}

/// Byte length of `shape` elements of the memcpy-able `dtype`, checked.
pub(crate) fn data_len(dtype: DataType, shape: &TensorShape) -> Result<usize> {
    let n = usize::try_from(shape.num_elements())
        .map_err(|_| IoError::corrupt(format!("bad element count for shape {shape}")))?;
    n.checked_mul(dtype.size())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            IoError::too_large(format!(
                "a {} tensor of shape {shape} would need more bytes than this machine can address",
                dtype.name()
            ))
        })
}

/// Errors unless every byte is 0 or 1 (the only valid `bool` bytes).
pub(crate) fn check_bools(bytes: &[u8]) -> Result<()> {
    match bytes.iter().position(|&b| b > 1) {
        None => Ok(()),
        Some(i) => Err(IoError::corrupt(format!(
            "invalid bool value {} at element {i} (only 0 and 1 are bools)",
            bytes[i]
        ))),
    }
}

/// A tensor over `data` without copying when its address suits `dtype`, over an aligned
/// copy otherwise. `data` must hold exactly the tensor's bytes. Returns whether it copied.
pub(crate) fn tensor_over(
    dtype: DataType,
    shape: &TensorShape,
    data: Buffer,
) -> Result<(Tensor, bool)> {
    if dtype == DataType::BOOL {
        check_bools(data.as_slice())?;
    }
    let (data, copied) = if data.is_aligned_to(element_alignment(dtype)) {
        (data, false)
    } else {
        (Buffer::copy_from_slice(data.as_slice())?, true)
    };
    Ok((Tensor::from_buffer(dtype, shape, data)?, copied))
}

/// A new 64-byte-aligned buffer of `len` bytes, written block by block: `fill(start, block)`
/// receives a scratch block to fill with the output bytes `start..start + block.len()`.
/// (No zero pass over the output: each block is written once.)
pub(crate) fn build_buffer(len: usize, mut fill: impl FnMut(usize, &mut [u8])) -> Result<Buffer> {
    const BLOCK: usize = 64 * 1024;
    let mut scratch = vec![0u8; BLOCK.min(len)];
    let buf = Buffer::new_with(
        &cpu_allocator(),
        len,
        &AllocationAttributes::default(),
        |w| {
            let mut start = 0;
            while start < len {
                let n = BLOCK.min(len - start);
                let block = &mut scratch[..n];
                fill(start, block);
                w.put_slice(block);
                start += n;
            }
        },
    )?;
    Ok(buf)
}

/// A copy of `src` with every `unit`-byte group reversed (big-endian to little-endian).
pub(crate) fn byte_swapped(src: &[u8], unit: usize) -> Result<Buffer> {
    build_buffer(src.len(), |start, block| {
        block.copy_from_slice(&src[start..start + block.len()]);
        if unit > 1 {
            // Blocks are multiples of 64 bytes except the last, so groups never straddle.
            for g in block.chunks_exact_mut(unit) {
                g.reverse();
            }
        }
    })
}

/// A row-major copy of column-major (Fortran-order) data of `dims`, `elem` bytes per element.
pub(crate) fn fortran_to_c(src: &[u8], dims: &[usize], elem: usize) -> Result<Buffer> {
    let rank = dims.len();
    // Column-major strides, in bytes.
    let mut strides = vec![0usize; rank];
    let mut s = elem;
    for (k, &d) in dims.iter().enumerate() {
        strides[k] = s;
        s = s.saturating_mul(d);
    }
    // Walk the output in row-major order with an odometer; `off` is the source offset.
    let mut idx = vec![0usize; rank];
    let mut off = 0usize;
    build_buffer(src.len(), |_, block| {
        for out in block.chunks_exact_mut(elem) {
            out.copy_from_slice(&src[off..off + elem]);
            for k in (0..rank).rev() {
                idx[k] += 1;
                off += strides[k];
                if idx[k] < dims[k] {
                    break;
                }
                off -= strides[k] * dims[k];
                idx[k] = 0;
            }
        }
    })
}

/// Adapts a [`Buffer`] to `bytes::Bytes::from_owner`, so a mapped file can be handed to
/// decoders that take `Bytes` without copying.
pub(crate) struct BufferOwner(pub(crate) Buffer);

impl AsRef<[u8]> for BufferOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// `Bytes` over the same memory as `buf` (no copy).
pub(crate) fn buffer_to_bytes(buf: Buffer) -> bytes::Bytes {
    if buf.is_empty() {
        return bytes::Bytes::new();
    }
    bytes::Bytes::from_owner(BufferOwner(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_to_c_transposes_a_2x3() {
        // Fortran order of [[0,1,2],[3,4,5]] is 0,3,1,4,2,5.
        let src = [0u8, 3, 1, 4, 2, 5];
        let out = fortran_to_c(&src, &[2, 3], 1).unwrap();
        assert_eq!(out.as_slice(), &[0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn fortran_to_c_handles_3d_and_wide_elements() {
        // dims [2,2,2], element k has value k in C order; Fortran offset = i + 2j + 4k.
        let dims = [2usize, 2, 2];
        let mut src = [0u16; 8];
        for i in 0..2 {
            for j in 0..2 {
                for k in 0..2 {
                    src[i + 2 * j + 4 * k] = (i * 4 + j * 2 + k) as u16;
                }
            }
        }
        let bytes: Vec<u8> = src.iter().flat_map(|v| v.to_le_bytes()).collect();
        let out = fortran_to_c(&bytes, &dims, 2).unwrap();
        let vals: Vec<u16> = out
            .as_slice()
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(vals, (0..8).collect::<Vec<u16>>());
    }

    #[test]
    fn byte_swapped_reverses_each_group_across_blocks() {
        let src: Vec<u8> = (0..200_000u32).flat_map(|v| v.to_be_bytes()).collect();
        let out = byte_swapped(&src, 4).unwrap();
        let back: Vec<u32> = out
            .as_slice()
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(back, (0..200_000u32).collect::<Vec<_>>());
    }

    #[test]
    fn misaligned_data_is_copied_and_aligned_data_is_shared() {
        let base = Buffer::copy_from_slice(&[0u8; 16]).unwrap();
        let shape = TensorShape::new(&[2]).unwrap();
        let (t, copied) = tensor_over(DataType::FLOAT, &shape, base.slice(1..9).unwrap()).unwrap();
        assert!(copied);
        assert!(!t.buffer().unwrap().shares_root_with(&base));
        let (t, copied) = tensor_over(DataType::FLOAT, &shape, base.slice(8..16).unwrap()).unwrap();
        assert!(!copied);
        assert!(t.buffer().unwrap().shares_root_with(&base));
    }

    #[test]
    fn bool_bytes_other_than_0_and_1_are_refused() {
        let b = Buffer::copy_from_slice(&[0u8, 1, 2]).unwrap();
        let shape = TensorShape::new(&[3]).unwrap();
        let err = tensor_over(DataType::BOOL, &shape, b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid bool value 2 at element 2 (only 0 and 1 are bools)"
        );
    }
}
