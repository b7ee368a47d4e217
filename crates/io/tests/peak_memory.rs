//! Peak memory of each decoder on hostile input: a decode may allocate at most a small constant
//! times its input plus what the caller's limit ([`ReadOptions::max_memory`]) allows.
//!
//! Its own test binary because it installs a counting global allocator (every heap allocation
//! of the process is counted, so tests here run one at a time under a lock and measure the
//! peak above the level at which they start).

use std::io::Write;
use std::sync::Mutex;

use tensorcast_buffer::testing::CountingGlobalAlloc;
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_io::{npz, read_as_with, ErrorKind, Format, NamedTensor, ReadOptions};

/// Every heap allocation of this test binary, counted (the counting allocator lives in the
/// buffer crate, the only crate with `unsafe`).
#[global_allocator]
static GLOBAL: CountingGlobalAlloc = CountingGlobalAlloc::new();

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the peak of live heap bytes above the starting level.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    // Blocks the CPU allocator keeps for reuse would hide allocations: give them back first.
    tensorcast_buffer::cpu_allocator().release_cached_memory();
    let start = GLOBAL.reset_peak();
    let r = f();
    (r, GLOBAL.peak_bytes().saturating_sub(start))
}

const MIB: usize = 1 << 20;

/// The bound every decode must meet: `k` times the input, plus the limit, plus 1 MiB of slack
/// (scratch buffers, the zip reader's tables).
fn assert_bounded(what: &str, peak: usize, input: usize, k: usize, limit: usize) {
    let bound = k * input + limit + MIB;
    println!("{what}: input {input} B, peak {peak} B, bound {bound} B");
    assert!(
        peak <= bound,
        "{what}: peak {peak} B is past {k} x input ({input} B) + limit ({limit} B) + 1 MiB"
    );
}

fn read(bytes: Vec<u8>, format: Format, options: &ReadOptions) -> (Result<usize, String>, usize) {
    let buf = Buffer::from_vec(bytes);
    peak_of(|| {
        read_as_with(buf, format, "x", options)
            .map(|c| c.tensors.len())
            .map_err(|e| format!("{} ({})", e, e.kind()))
    })
}

fn options(max_memory: u64) -> ReadOptions {
    ReadOptions {
        max_memory,
        ..ReadOptions::default()
    }
}

/// A zip archive with one deflated member `name` whose content is `content`.
fn deflated_zip(name: &str, content: &[u8]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    w.start_file(name, opts).unwrap();
    w.write_all(content).unwrap();
    w.finish().unwrap().into_inner()
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("signature")
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn npz_claimed_sizes_the_bytes_do_not_deliver_cost_no_memory() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // An .npy header claiming 1 GiB of float32, then a few data bytes; the zip directory
    // claims the whole size (and a compressed size that passes the deflate-ratio check).
    let claimed_elems = 1i64 << 28;
    let header = tensorcast_io::npy::header_bytes(
        DataType::FLOAT,
        &TensorShape::new(&[claimed_elems]).unwrap(),
    )
    .unwrap();
    let mut content = header.clone();
    content.extend_from_slice(&[0u8; 64]);
    let mut zip = deflated_zip("x.npy", &content);
    let size = header.len() as u32 + (claimed_elems as u32) * 4;
    let compressed = size / 1000;
    let local = find(&zip, b"PK\x03\x04");
    put_u32(&mut zip, local + 18, compressed);
    put_u32(&mut zip, local + 22, size);
    let central = find(&zip, b"PK\x01\x02");
    put_u32(&mut zip, central + 20, compressed);
    put_u32(&mut zip, central + 24, size);
    let input = zip.len();
    // A limit that would allow the claim: only delivered bytes may cost memory.
    let (r, peak) = read(zip, Format::Npz, &options(4 << 30));
    assert!(r.is_err(), "{r:?}");
    println!("{}", r.unwrap_err());
    assert_bounded("npz claimed size", peak, input, 16, 0);
}

#[test]
fn npz_overlapping_members_are_refused_before_decompressing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // One real member (8 MiB of zeros, deflated), listed 16 times in the central directory:
    // every entry points at the same compressed bytes.
    let t = Tensor::from_vec(vec![0f32; 2 << 20], TensorShape::new(&[2 << 20]).unwrap()).unwrap();
    let one = npz::write(&[NamedTensor::new("a", t)], npz::Compression::Deflated).unwrap();
    let cd = find(&one, b"PK\x01\x02");
    let eocd = find(&one, b"PK\x05\x06");
    let entry = &one[cd..eocd];
    let mut bomb = one[..cd].to_vec();
    for i in 0..16u8 {
        let mut e = entry.to_vec();
        // Rename the copy (`a.npy` -> `a.npy` with its first letter changed) so names differ.
        let name_at = 46;
        e[name_at] = b'a' + i;
        bomb.extend_from_slice(&e);
    }
    let mut end = one[eocd..].to_vec();
    end[8..10].copy_from_slice(&16u16.to_le_bytes());
    end[10..12].copy_from_slice(&16u16.to_le_bytes());
    put_u32(&mut end, 12, (entry.len() * 16) as u32);
    put_u32(&mut end, 16, cd as u32);
    bomb.extend_from_slice(&end);
    let input = bomb.len();
    let (r, peak) = read(bomb, Format::Npz, &options(1 << 30));
    let err = r.unwrap_err();
    assert!(err.contains("overlap"), "{err}");
    assert_bounded("npz overlapping members", peak, input, 16, 0);
}

#[test]
fn npz_deflated_members_past_the_limit_are_refused_and_within_it_read() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let t = Tensor::from_vec(vec![0f32; 1 << 20], TensorShape::new(&[1 << 20]).unwrap()).unwrap();
    let bytes = npz::write(&[NamedTensor::new("z", t)], npz::Compression::Deflated).unwrap();
    let input = bytes.len();
    let (r, peak) = read(bytes.clone(), Format::Npz, &options(1 << 20));
    let err = r.unwrap_err();
    assert!(
        err.contains("memory limit") && err.contains("too large"),
        "{err}"
    );
    assert_bounded("npz past the limit", peak, input, 16, 0);
    // Within the limit: the 4 MiB member is read; it costs its size twice at most (the
    // growing vector and the aligned buffer).
    let (r, peak) = read(bytes, Format::Npz, &options(8 << 20));
    assert_eq!(r, Ok(1));
    assert_bounded("npz within the limit", peak, input, 16, 2 * (4 << 20));
}

/// A safetensors file whose header has `n` entries of zero-length tensors.
fn safetensors_empty_entries(n: usize) -> Vec<u8> {
    let mut h = String::from("{");
    for i in 0..n {
        if i > 0 {
            h.push(',');
        }
        h.push_str(&format!(
            "\"{i:x}\":{{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}}"
        ));
    }
    h.push('}');
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(h.as_bytes());
    out
}

#[test]
fn safetensors_many_empty_entries_cost_a_small_multiple_of_the_header() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = safetensors_empty_entries(100_000);
    let input = bytes.len();
    let (r, peak) = read(bytes, Format::Safetensors, &ReadOptions::default());
    assert_eq!(r, Ok(100_000));
    assert_bounded("safetensors empty entries", peak, input, 16, 0);
}

#[test]
fn safetensors_a_long_header_refused_at_its_end_costs_a_small_multiple() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // 8 MB of `[[[[...` nesting is refused by the JSON parser; a long string value, too.
    let mut h = String::from("{\"a\":\"");
    h.push_str(&"x".repeat(8 << 20));
    h.push_str("\"}");
    let mut bytes = (h.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(h.as_bytes());
    let input = bytes.len();
    let (r, peak) = read(bytes, Format::Safetensors, &ReadOptions::default());
    assert!(r.is_err());
    assert_bounded("safetensors long header", peak, input, 4, 0);
}

/// Protobuf helpers: a varint, a field key.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A TensorProto of `dtype` and shape `[dim]` followed by `body` (further fields).
fn tensor_proto(dtype: u64, dim: u64, body: &[u8]) -> Vec<u8> {
    let mut dim_msg = vec![0x08];
    varint(dim, &mut dim_msg);
    let mut shape = vec![0x12];
    varint(dim_msg.len() as u64, &mut shape);
    shape.extend_from_slice(&dim_msg);
    let mut p = vec![0x08];
    varint(dtype, &mut p);
    p.push(0x12);
    varint(shape.len() as u64, &mut p);
    p.extend_from_slice(&shape);
    p.extend_from_slice(body);
    p
}

#[test]
fn tensorproto_fill_is_bounded_by_the_callers_limit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // 2^26 floats, one value carried: the fill is 256 MiB.
    let mut body = vec![0x2a, 4];
    body.extend_from_slice(&1f32.to_le_bytes());
    let bytes = tensor_proto(1, 1 << 26, &body);
    let input = bytes.len();
    let (r, peak) = read(bytes.clone(), Format::TensorProto, &options(16 << 20));
    let err = r.unwrap_err();
    assert!(err.contains("too large"), "{err}");
    assert_bounded("tensorproto fill past the limit", peak, input, 16, 0);
    let bytes = tensor_proto(1, 1 << 20, &body);
    let (r, peak) = read(bytes, Format::TensorProto, &options(16 << 20));
    assert_eq!(r, Ok(1));
    assert_bounded(
        "tensorproto fill within the limit",
        peak,
        input,
        16,
        4 << 20,
    );
}

/// `n` empty values of field `field` (length-delimited).
fn empties(field: u8, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(2 * n);
    for _ in 0..n {
        v.extend_from_slice(&[(field << 3) | 2, 0]);
    }
    v
}

#[test]
fn tensorproto_object_elements_count_against_the_limit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let limit = 8 << 20;
    // string (7), resource (20), variant (21): 4 MiB of empty values, for as many elements
    // and for a one-element tensor (the surplus is ignored by TensorFlow).
    for (dtype, field) in [(7u64, 8u8), (20, 14), (21, 15)] {
        let n = 2 << 20;
        let vals = empties(field, n);
        for dim in [n as u64, 1] {
            let bytes = tensor_proto(dtype, dim, &vals);
            let input = bytes.len();
            let (r, peak) = read(bytes, Format::TensorProto, &options(limit as u64));
            println!("dtype {dtype} dim {dim}: {r:?}");
            assert!(r.unwrap_err().contains("too large"));
            assert_bounded(
                &format!("tensorproto dtype {dtype}, {n} values, shape [{dim}]"),
                peak,
                input,
                16,
                limit,
            );
        }
    }
}

#[test]
fn tensorproto_object_elements_within_the_limit_decode() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let limit = 512usize << 20;
    let n = 1 << 20;
    let bytes = tensor_proto(7, n as u64, &empties(8, n));
    let input = bytes.len();
    let (r, peak) = read(bytes, Format::TensorProto, &options(limit as u64));
    assert_eq!(r, Ok(1));
    assert_bounded("tensorproto 1M empty strings", peak, input, 16, limit);
}

#[test]
fn tensorproto_string_content_elements_count_against_the_limit() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let limit = 8 << 20;
    // tensor_content: 4M zero lengths, one byte each, for 4M strings.
    let n = 4usize << 20;
    let mut body = vec![0x22];
    varint(n as u64, &mut body);
    body.resize(body.len() + n, 0);
    let bytes = tensor_proto(7, n as u64, &body);
    let input = bytes.len();
    let (r, peak) = read(bytes, Format::TensorProto, &options(limit as u64));
    println!("{r:?}");
    assert_bounded("tensorproto string content", peak, input, 16, limit);
}

#[test]
fn errors_name_their_kind() {
    // Keeps ErrorKind in use for readers of this file: a limit is `TooLarge`.
    assert_eq!(ErrorKind::TooLarge.as_str(), "too large");
}

#[test]
fn max_memory_budget_spans_every_read_that_shares_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // 2^22 floats, one value carried: 16 MiB of fill from 20 bytes, read 17 times with options
    // that share one budget of 40 MiB while every tensor is kept.
    let mut body = vec![0x2a, 4];
    body.extend_from_slice(&1f32.to_le_bytes());
    let bytes = tensor_proto(1, 1 << 22, &body);
    let shared = options(40 << 20).with_shared_budget("--max-memory");
    let (r, peak) = peak_of(|| {
        let mut kept = Vec::new();
        for i in 0..17 {
            match read_as_with(
                Buffer::from_vec(bytes.clone()),
                Format::TensorProto,
                "x",
                &shared,
            ) {
                Ok(c) => kept.extend(c.tensors),
                Err(e) => return Err((i, e.to_string())),
            }
        }
        Ok(kept.len())
    });
    let (i, err) = r.unwrap_err();
    assert_eq!(i, 2, "{err}");
    assert!(
        err.contains("left of --max-memory (41943040 bytes;"),
        "{err}"
    );
    assert_bounded(
        "17 fills under one budget",
        peak,
        17 * bytes.len(),
        16,
        40 * MIB,
    );
    // Given back as tensors are dropped, the same reads all fit one after the other.
    let budget = shared.read_budget();
    budget.release_to(0);
    for _ in 0..17 {
        let mark = budget.used_bytes();
        let c = read_as_with(
            Buffer::from_vec(bytes.clone()),
            Format::TensorProto,
            "x",
            &shared,
        )
        .unwrap();
        drop(c);
        budget.release_to(mark);
    }
    assert_eq!(budget.used_bytes(), 0);
    // Options without a shared budget keep a limit per read, as before.
    for _ in 0..3 {
        read_as_with(
            Buffer::from_vec(bytes.clone()),
            Format::TensorProto,
            "x",
            &options(20 << 20),
        )
        .unwrap();
    }
}
