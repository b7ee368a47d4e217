//! Zero-copy reads: tensors whose data lies inside the memory-mapped file; copies where the
//! data is misaligned, compressed, byte-swapped or transposed.

use std::fs::File;

use tensorcast_buffer::Buffer;
use tensorcast_core::DataType;
use tensorcast_io::{npy, npz, read_file, safetensors, write_file, Format, NamedTensor};

use crate::common::{is_inside, pattern};

fn mapped(path: &std::path::Path) -> (Buffer, std::ops::Range<usize>) {
    let buf = Buffer::map_file(&File::open(path).unwrap()).unwrap();
    let start = buf.as_ptr() as usize;
    let range = start..start + buf.len();
    (buf, range)
}

#[test]
fn safetensors_tensors_are_slices_of_the_map() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("w.safetensors");
    let ts: Vec<NamedTensor> = [
        DataType::FLOAT,
        DataType::BFLOAT16,
        DataType::FLOAT8_E4M3FN,
        DataType::INT64,
        DataType::BOOL,
        DataType::COMPLEX64,
        DataType::UINT16,
    ]
    .iter()
    .enumerate()
    .map(|(i, &d)| NamedTensor::new(format!("t{i}"), pattern(d, &[3, 5])))
    .collect();
    write_file(&p, Format::Safetensors, &ts).unwrap();
    let (buf, range) = mapped(&p);
    for t in safetensors::read(buf.clone()).unwrap() {
        assert!(is_inside(&t.tensor, range.clone()), "{}", t.name);
        assert!(t.tensor.buffer().unwrap().shares_root_with(&buf));
        // Aligned for a typed view.
        assert!(t.tensor.buffer().unwrap().address_alignment() >= t.tensor.dtype().size().min(8));
    }
    // read_file maps too.
    for t in read_file(&p).unwrap() {
        assert_eq!(t.tensor.buffer().unwrap().owner_name(), "mmap");
    }
}

#[test]
fn npy_data_is_a_slice_of_the_map_and_64_aligned() {
    let dir = tempfile::tempdir().unwrap();
    for &d in &[
        DataType::DOUBLE,
        DataType::COMPLEX128,
        DataType::HALF,
        DataType::BOOL,
    ] {
        let p = dir.path().join("a.npy");
        write_file(
            &p,
            Format::Npy,
            &[NamedTensor::new("a", pattern(d, &[4, 4]))],
        )
        .unwrap();
        let (buf, range) = mapped(&p);
        let t = npy::read(buf).unwrap();
        assert!(is_inside(&t, range), "{}", d.name());
        assert!(t.is_aligned(), "{}", d.name());
        assert_eq!(t.flat::<u8>().err().is_some(), d != DataType::UINT8);
    }
}

#[test]
fn stored_npz_members_are_slices_of_the_map_and_deflated_ones_copies() {
    let dir = tempfile::tempdir().unwrap();
    let ts: Vec<NamedTensor> = [DataType::FLOAT, DataType::INT64, DataType::UINT8]
        .iter()
        .enumerate()
        .map(|(i, &d)| NamedTensor::new(format!("m{i}"), pattern(d, &[100])))
        .collect();
    let p = dir.path().join("s.npz");
    write_file(&p, Format::Npz, &ts).unwrap();
    let (buf, range) = mapped(&p);
    for t in npz::read(buf).unwrap() {
        assert!(is_inside(&t.tensor, range.clone()), "{}", t.name);
        assert!(
            t.tensor.is_aligned(),
            "stored members are 64-aligned: {}",
            t.name
        );
    }
    let bytes = npz::write(&ts, npz::Compression::Deflated).unwrap();
    let p = dir.path().join("d.npz");
    std::fs::write(&p, bytes).unwrap();
    let (buf, range) = mapped(&p);
    let back = npz::read(buf).unwrap();
    assert_eq!(back, ts);
    for t in back {
        assert!(!is_inside(&t.tensor, range.clone()));
        assert!(t.tensor.is_aligned());
    }
}

#[test]
fn misaligned_npy_data_is_copied_into_an_aligned_buffer() {
    // A hand-made v1 header of 61 bytes: data at offset 71, misaligned for float64.
    let header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }   \n";
    assert_eq!(header.len(), 61);
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header);
    for v in [1.5f64, -2.0, 3.25] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("odd.npy");
    std::fs::write(&p, &bytes).unwrap();
    let (buf, range) = mapped(&p);
    let t = npy::read(buf).unwrap();
    assert!(!is_inside(&t, range));
    assert_eq!(t.flat::<f64>().unwrap().to_vec(), vec![1.5, -2.0, 3.25]);
}
