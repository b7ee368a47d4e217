//! TensorFlow's masked CRC32C (`tensorflow/core/lib/hash/crc32c.h`): a CRC of data that itself
//! holds CRCs is weak, so the stored value is rotated and offset.

/// `kMaskDelta`.
const MASK_DELTA: u32 = 0xa282_ead8;

/// The masked CRC32C of `data`, as stored in TFRecord headers and footers.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    mask(crc_fast::crc32_iscsi(data))
}

/// `Mask`: rotate right by 15 bits, add the delta.
pub(crate) fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_crc_of_length_five_matches_tensorflows_file() {
        // The first record TensorFlow wrote for b"hello": length 5, masked CRC eab2043e (LE).
        assert_eq!(masked_crc32c(&5u64.to_le_bytes()), 0x3e04_b2ea);
        assert_eq!(masked_crc32c(b"hello"), 0x191c_1fbb);
    }
}
