//! The byte reader the fuzz bodies decode their inputs with, and the tensors they build over
//! the bytes left.

use tensorcast_core::{buffer::Buffer, DataType, TString, Tensor, TensorShape};

/// Reads fuzz input front to back; once it runs out, every read gives zeros.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next byte.
    pub(crate) fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    /// The next 8 bytes as a little-endian `i64`.
    pub(crate) fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.array())
    }

    /// What is left.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.data
    }

    /// The dtypes of two operands: a byte `% 36` each, `255` on the second for the first's.
    pub(crate) fn dtype_pair(&mut self) -> (DataType, DataType) {
        let dx = DataType::from_number(i32::from(self.byte() % 36));
        let dy = match self.byte() {
            255 => dx,
            b => DataType::from_number(i32::from(b % 36)),
        };
        (dx, dy)
    }
}

/// Two operands of these dtypes and shapes over `bytes`, the second from its second byte on
/// (so that the two differ), each as [`tensor_over`] makes it with `bool`s reduced to 0/1.
pub(crate) fn operand_pair(
    (dx, sx): (DataType, &TensorShape),
    (dy, sy): (DataType, &TensorShape),
    bytes: &[u8],
    max_elements: usize,
) -> (Tensor, Tensor) {
    let y_bytes = bytes.get(1..).unwrap_or(&[]);
    (
        tensor_over(dx, sx, bytes, max_elements, true),
        tensor_over(dy, sy, y_bytes, max_elements, true),
    )
}

/// A tensor of `dtype` and `shape` over `bytes` (cycled), or an unallocated one when it is
/// larger than `max_elements` or its dtype has no byte form. With `bools_01`, `bool` bytes are
/// reduced to 0/1.
pub(crate) fn tensor_over(
    dtype: DataType,
    shape: &TensorShape,
    bytes: &[u8],
    max_elements: usize,
    bools_01: bool,
) -> Tensor {
    let n = shape.num_elements_usize();
    if n > max_elements || !dtype.is_supported() {
        return Tensor::unallocated(dtype, shape);
    }
    if dtype == DataType::STRING {
        let strings: Vec<TString> = (0..n)
            .map(|i| {
                let b = bytes.get(i % bytes.len().max(1)).copied().unwrap_or(0);
                TString::from(vec![b; usize::from(b % 3)])
            })
            .collect();
        return Tensor::from_vec(strings, shape)
            .unwrap_or_else(|_| Tensor::unallocated(dtype, shape));
    }
    if !dtype.can_use_memcpy() {
        return Tensor::unallocated(dtype, shape);
    }
    let len = n * dtype.size();
    let mut data: Vec<u8> = if bytes.is_empty() {
        vec![0; len]
    } else {
        bytes.iter().copied().cycle().take(len).collect()
    };
    if bools_01 && dtype == DataType::BOOL {
        data.iter_mut().for_each(|b| *b &= 1);
    }
    Buffer::copy_from_slice(&data)
        .ok()
        .and_then(|b| Tensor::from_buffer(dtype, shape, b).ok())
        .unwrap_or_else(|| Tensor::unallocated(dtype, shape))
}
