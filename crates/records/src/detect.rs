//! Telling a TFRecord file by its content: a first record header whose length checksum holds,
//! in the raw bytes or in the GZIP / ZLIB stream they start.

use std::io::Read;

use crate::crc::masked_crc32c;
use crate::inflate::Inflater;
use crate::reader::HEADER_BYTES;
use crate::Compression;

/// The compression of the TFRecord file that starts with `head` (its first bytes: 64 KiB is
/// plenty), or `None` when `head` does not start one.
///
/// A file is a TFRecord when its first 12 bytes (after decompression, for a GZIP stream -
/// magic `1f 8b` - or a ZLIB one - a valid two-byte zlib header) are a record header whose
/// masked CRC32C of the length matches: one chance in 2^32 for other bytes. An empty file has
/// no header and is not recognised (it is a valid, empty TFRecord file all the same).
///
/// ```
/// use tensorcast_records::{detect_compression, Compression, RecordWriter};
/// for c in [Compression::None, Compression::Gzip, Compression::Zlib] {
///     let mut w = RecordWriter::new(Vec::new(), c)?;
///     w.write_record(b"abc")?;
///     assert_eq!(detect_compression(&w.finish()?), Some(c));
/// }
/// assert_eq!(detect_compression(b"\x93NUMPY\x01\x00v\x00{'descr'"), None);
/// # Ok::<(), tensorcast_records::RecordsError>(())
/// ```
pub fn detect_compression(head: &[u8]) -> Option<Compression> {
    if is_header(head) {
        return Some(Compression::None);
    }
    let gzip = head.starts_with(&[0x1f, 0x8b]);
    let zlib = head.len() >= 2
        && head[0] & 0x0f == 8
        && head[0] >> 4 <= 7
        && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0;
    if !gzip && !zlib {
        return None;
    }
    let mut first = [0u8; HEADER_BYTES];
    let mut got = 0;
    let mut inflater = Inflater::new(head, gzip);
    while got < HEADER_BYTES {
        match inflater.read(&mut first[got..]) {
            Ok(0) | Err(_) => return None,
            Ok(n) => got += n,
        }
    }
    is_header(&first).then_some(if gzip {
        Compression::Gzip
    } else {
        Compression::Zlib
    })
}

fn is_header(b: &[u8]) -> bool {
    b.len() >= HEADER_BYTES && b[8..12] == masked_crc32c(&b[..8]).to_le_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_files_and_damaged_headers_are_not_tfrecords() {
        assert_eq!(detect_compression(b""), None);
        assert_eq!(detect_compression(b"PK\x03\x04 zip"), None);
        let mut w = crate::RecordWriter::new(Vec::new(), Compression::None).unwrap();
        w.write_record(b"x").unwrap();
        let mut f = w.finish().unwrap();
        f[9] ^= 1;
        assert_eq!(detect_compression(&f), None);
        // A gzip stream of something else.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, b"not a record header at all").unwrap();
        assert_eq!(detect_compression(&gz.finish().unwrap()), None);
    }

    #[test]
    fn a_head_cut_inside_the_compressed_stream_still_tells() {
        let mut w = crate::RecordWriter::new(Vec::new(), Compression::Gzip).unwrap();
        for _ in 0..1000 {
            w.write_record(&[7u8; 1000]).unwrap();
        }
        let f = w.finish().unwrap();
        assert_eq!(detect_compression(&f[..64]), Some(Compression::Gzip));
    }
}
