//! Fuzz target body: arbitrary bytes as an `.npy` file (header parser, data checks, byte
//! swapping, Fortran transposition, `|S<n>` bytes arrays as string tensors, the header-length
//! limit). Bad input must be an error; a file that reads must write back and read again to the
//! same tensor; a raised header limit accepts everything the default one does, identically.

use tensorcast_buffer::Buffer;

use tensorcast_io::{detect_format, npy, Format};

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let header = npy::parse_header(data);
    let raised = npy::parse_header_with(data, 1 << 20);
    if let Ok(h) = &header {
        assert_eq!(raised.as_ref().ok(), Some(h));
    }
    if data.starts_with(npy::MAGIC) {
        assert_eq!(detect_format(data, None), Some(Format::Npy));
    }
    // `from_vec` keeps the Vec's address, so misaligned data takes the copying path too.
    let Ok(t) = npy::read(Buffer::from_vec(data.to_vec())) else {
        return;
    };
    let header = header.expect("a file that reads has a valid header");
    assert_eq!(t.dtype(), header.dtype);
    assert_eq!(t.shape(), &header.shape);
    let again = npy::write(&t).expect("every dtype npy reads can be written");
    let back = npy::read(Buffer::from_vec(again)).expect("what npy writes reads back");
    assert_eq!(back, t);
}
