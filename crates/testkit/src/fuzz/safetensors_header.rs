//! Fuzz target body: arbitrary bytes as a safetensors file (length prefix, JSON header,
//! offsets, dtypes, shapes). Bad input must be an error; a file that reads must write back and
//! read again to the same tensors and metadata.

use tensorcast_buffer::Buffer;

use tensorcast_io::safetensors;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let header = safetensors::parse_header(data);
    let Ok((tensors, metadata)) = safetensors::read_with_metadata(Buffer::from_vec(data.to_vec()))
    else {
        return;
    };
    let header = header.expect("a file that reads has a valid header");
    assert_eq!(header.entries.len(), tensors.len());
    let again = safetensors::write(&tensors, Some(&metadata))
        .expect("every dtype safetensors reads can be written");
    let (back, back_meta) = safetensors::read_with_metadata(Buffer::from_vec(again))
        .expect("what safetensors writes reads back");
    assert_eq!(back_meta, metadata);
    assert_eq!(back.len(), tensors.len());
    for t in &tensors {
        let b = back
            .iter()
            .find(|b| b.name == t.name)
            .expect("every name is kept");
        assert_eq!(b.tensor, t.tensor);
    }
}
