//! A walk through the tensor core: `cargo run --release --example tour`.

use tensorcast::buffer::{cpu_allocator, Buffer};
use tensorcast::{bf16, DataType, TString, Tensor, TensorShape};

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).expect("valid shape")
}

fn main() -> Result<(), tensorcast::Error> {
    println!("== Tensors are dtype + shape + a shared, 64-byte-aligned buffer");
    let mut t = Tensor::new(DataType::FLOAT, shape(&[2, 3]))?;
    for (i, x) in t.flat_mut::<f32>()?.iter_mut().enumerate() {
        *x = i as f32 * 0.5;
    }
    println!("{t}");
    println!("DebugString():          {}", t.debug_string(3));
    println!("print_v2:               {:?}", t.summarize_value(-1, true));
    println!(
        "aligned: {}  bytes: {}  address % 64 = {}",
        t.is_aligned(),
        t.total_bytes(),
        t.data_ptr() as usize % 64
    );

    println!("\n== Slices and sub-slices share the buffer (no copy)");
    let row = t.sub_slice(1)?;
    println!(
        "sub_slice(1) = {row}  shares buffer: {}",
        row.shares_buffer_with(&t)
    );
    let s = t.slice(1, 2)?;
    println!(
        "slice(1, 2)  = {s}  ref_count_is_one(parent) = {}",
        t.ref_count_is_one()
    );

    println!("\n== Typed ndarray views");
    let m = t.matrix::<f32>()?;
    println!(
        "matrix view shape {:?}, m[[1, 2]] = {}",
        m.shape(),
        m[[1, 2]]
    );
    println!(
        "flat_inner_dims(2) of [2,3]: {:?}",
        t.flat_inner_dims::<f32>(2)?.shape()
    );
    println!(
        "asking for the wrong type: {}",
        t.flat::<i32>().unwrap_err()
    );
    println!(
        "asking for the wrong count: {}",
        t.shaped::<f32>(&[5]).unwrap_err()
    );

    println!("\n== Zero-copy reinterpretation: the same bytes as another dtype");
    let v = Tensor::vector(&[0.0f32, 1.0, 1.0]);
    let bytes = v.bitcast_to(DataType::UINT8, &shape(&[3, 4]))?;
    println!(
        "float [0,1,1] as uint8: {bytes}  shares buffer: {}",
        bytes.shares_buffer_with(&v)
    );
    let halves = v.bitcast_to(DataType::BFLOAT16, &shape(&[3, 2]))?;
    println!("as bfloat16 pairs: {halves}");
    let b: Vec<bf16> = halves.to_vec()?;
    println!("  (bfloat16 of 1.0f32's high half: {})", b[3]);

    println!("\n== Memory you already have, adopted without copying");
    let owned: Vec<i64> = (0..6).collect();
    let addr = owned.as_ptr() as usize;
    let adopted = Tensor::from_vec(owned, shape(&[3, 2]))?;
    println!(
        "{adopted}  same address: {}",
        adopted.data_ptr() as usize == addr
    );
    let foreign = Buffer::from_bytes(bytes::Bytes::from_static(&[1, 0, 0, 0, 2, 0, 0, 0]));
    let over = Tensor::from_buffer(DataType::INT32, &shape(&[2]), foreign)?;
    println!(
        "over static bytes: {over} (aligned for int32: {})",
        over.flat::<i32>().is_ok()
    );

    println!("\n== Every TensorFlow dtype");
    for d in DataType::all() {
        print!("{}({}, {}B) ", d.name(), d.number(), d.size());
    }
    println!();
    let s = Tensor::from_vec(
        vec![
            TString::from("a"),
            TString::from("line\nbreak"),
            TString::from(&b"\x00\xff"[..]),
        ],
        shape(&[3]),
    )?;
    println!("{s}");
    println!("print_v2: {}", s.summarize_value(-1, true));

    println!("\n== Errors, never aborts");
    println!("{}", TensorShape::new(&[1 << 62, 4]).unwrap_err());
    println!(
        "{}",
        Tensor::new(DataType::FLOAT_REF, shape(&[1])).unwrap_err()
    );
    println!(
        "{}",
        Tensor::new(DataType::FLOAT, shape(&[1 << 60])).unwrap_err()
    );

    if let Some(stats) = cpu_allocator().stats() {
        println!(
            "\n== Default allocator: {} allocations, peak {} bytes in use, {} cached",
            stats.num_allocs, stats.peak_bytes_in_use, stats.bytes_cached
        );
    }
    Ok(())
}
