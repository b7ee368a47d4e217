//! TensorFlow's `tensor_test.cc` expectations, ported to tensorcast.
//! Proto round trips (`AsProtoField`/`FromProto`) live with the proto crate's tests.

use std::sync::Arc;

use tensorcast_core::buffer::testing::{FailingAllocator, OffsetAllocator};
use tensorcast_core::buffer::{Allocator, CpuAllocator, TrackingAllocator};
use tensorcast_core::types::*;
use tensorcast_core::{
    bf16, f16, ndarray, Code, Complex, DataType, Error, ResourceHandle, TString, Tensor,
    TensorShape, Variant,
};

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).unwrap()
}

/// TensorFlow's `TestCopies`: copy-from, assignment (clone), deep copy and moves all give a
/// tensor equal to the original; sharing ones share the buffer.
fn test_copies(t: &Tensor) {
    let mut c = Tensor::default();
    assert!(c.copy_from(t, t.shape()));
    assert_eq!(&c, t);
    assert!(c.shares_buffer_with(t) || t.num_elements() == 0);
    let a = t.clone();
    assert_eq!(&a, t);
    let d = t.deep_copy().unwrap();
    assert_eq!(&d, t);
    assert!(!d.shares_buffer_with(t));
    let moved = a;
    assert_eq!(&moved, t);
    assert!(moved.is_initialized());
}

#[test]
fn default_tensor_is_float_shape_0() {
    let t = Tensor::default();
    assert_eq!(t.dtype(), DataType::FLOAT);
    assert_eq!(t.dims(), 1);
    assert_eq!(t.num_elements(), 0);
    assert!(t.is_initialized());
    assert_eq!(t.debug_string(3), "Tensor<type: float shape: [0] values: >");
    assert_eq!(t.tensor_data().unwrap().len(), 0);
}

#[test]
fn data_type_traits() {
    assert_eq!(std::mem::size_of::<bool>(), 1);
    assert_eq!(std::mem::size_of::<Complex<f32>>(), 8);
    assert_eq!(std::mem::size_of::<Complex<f64>>(), 16);
}

macro_rules! simple {
    ($name:ident, $t:ty, $dims:expr, $conv:expr) => {
        #[test]
        fn $name() {
            let dims: &[i64] = &$dims;
            let s = shape(dims);
            let cols = if dims.len() == 2 { dims[1] } else { 1 };
            let conv = $conv;
            let vals: Vec<$t> = (0..s.num_elements())
                .map(|i| conv(((i / cols) * (i % cols)) as i32))
                .collect();
            let t = Tensor::from_vec(vals.clone(), &s).unwrap();
            assert_eq!(t.dtype(), <$t as tensorcast_core::Element>::DTYPE);
            assert_eq!(t.as_slice::<$t>().unwrap(), vals.as_slice());
            test_copies(&t);
        }
    };
}

simple!(simple_half, f16, [5, 7], |x: i32| f16::from_f32(x as f32));
simple!(simple_bfloat16, bf16, [5, 7], |x: i32| bf16::from_f32(
    x as f32
));
simple!(simple_float8_e5m2, Float8E5M2, [5, 7], |x: i32| Float8E5M2(
    x as u8
));
simple!(simple_float8_e4m3fn, Float8E4M3FN, [5, 7], |x: i32| {
    Float8E4M3FN(x as u8)
});
simple!(simple_float8_e4m3fnuz, Float8E4M3FNUZ, [5, 7], |x: i32| {
    Float8E4M3FNUZ(x as u8)
});
simple!(
    simple_float8_e4m3b11fnuz,
    Float8E4M3B11FNUZ,
    [5, 7],
    |x: i32| Float8E4M3B11FNUZ(x as u8)
);
simple!(simple_float8_e5m2fnuz, Float8E5M2FNUZ, [5, 7], |x: i32| {
    Float8E5M2FNUZ(x as u8)
});
simple!(simple_float4_e2m1fn, Float4E2M1FN, [5, 7], |x: i32| {
    Float4E2M1FN(x as u8 & 0xf)
});
simple!(simple_float, f32, [10, 20], |x: i32| x as f32);
simple!(simple_double, f64, [10, 20], |x: i32| x as f64);
simple!(simple_int8, i8, [10, 20], |x: i32| x as i8);
simple!(simple_int16, i16, [10, 20], |x: i32| x as i16);
simple!(simple_int32, i32, [10, 20], |x: i32| x);
simple!(simple_int64, i64, [10, 20], |x: i32| x as i64);
simple!(simple_uint64, u64, [10, 20], |x: i32| x as u64);
simple!(simple_int4, Int4, [10, 20], |x: i32| Int4(x as i8));
simple!(simple_uint4, UInt4, [10, 20], |x: i32| UInt4(x as u8));
simple!(simple_int2, Int2, [10, 20], |x: i32| Int2(x as i8));
simple!(simple_uint2, UInt2, [10, 20], |x: i32| UInt2(x as u8));
simple!(simple_bool, bool, [2, 2], |x: i32| x == 0);
simple!(simple_uint8, u8, [2, 2], |x: i32| x as u8);
simple!(simple_uint16, u16, [2, 2], |x: i32| x as u16);
simple!(simple_uint32, u32, [2, 2], |x: i32| x as u32);
simple!(simple_qint8, QInt8, [2, 2], |x: i32| QInt8(x as i8));
simple!(simple_quint8, QUInt8, [2, 2], |x: i32| QUInt8(x as u8));
simple!(simple_qint16, QInt16, [2, 2], |x: i32| QInt16(x as i16));
simple!(simple_quint16, QUInt16, [2, 2], |x: i32| QUInt16(x as u16));
simple!(simple_qint32, QInt32, [2, 2], |x: i32| QInt32(x));
simple!(simple_complex64, Complex<f32>, [2, 2], |x: i32| {
    Complex::new(x as f32, -x as f32)
});
simple!(simple_complex128, Complex<f64>, [2, 2], |x: i32| {
    Complex::new(x as f64, 0.5)
});

#[test]
fn resource_handle_simple_and_summary() {
    let t = Tensor::from(ResourceHandle::named("a"));
    assert_eq!(t.dtype(), DataType::RESOURCE);
    test_copies(&t);
    let want = "<ResourceHandle(name=\"a\", device=\"\", container=\"\", type=\"\", dtype and shapes : \"[  ]\")>";
    assert_eq!(t.summarize_value(-1, false), want);
    assert_eq!(t.summarize_value(-1, true), want);
}

#[test]
fn variant_simple_and_summary() {
    let inner = Tensor::from(42.0f32);
    let t = Tensor::from(Variant::from(inner.clone()));
    assert_eq!(t.dtype(), DataType::VARIANT);
    test_copies(&t);
    assert_eq!(
        t.summarize_value(-1, false),
        "<Tensor<type: float shape: [] values: 42>>"
    );
    match t.scalar::<Variant>().unwrap() {
        Variant::Tensor(x) => assert_eq!(**x, inner),
        other => panic!("not a tensor: {other:?}"),
    }
}

fn reshape_tensor() -> Tensor {
    let mut t = Tensor::new(DataType::FLOAT, shape(&[2, 3, 4, 5])).unwrap();
    {
        let mut v = t.tensor_mut::<f32, ndarray::Ix4>().unwrap();
        v[[0, 0, 0, 0]] = 0.01;
        v[[1, 2, 3, 4]] = 0.02;
    }
    t
}

#[test]
fn reshape_views_keep_first_and_last() {
    let t = reshape_tensor();
    for sizes in [&[120][..], &[6, 20], &[6, 4, 5], &[2, 3, 4, 5]] {
        let s = t.shaped::<f32>(sizes).unwrap();
        assert_eq!(
            s.shape(),
            sizes
                .iter()
                .map(|&d| d as usize)
                .collect::<Vec<_>>()
                .as_slice()
        );
        assert_eq!(*s.iter().next().unwrap(), 0.01);
        assert_eq!(*s.iter().last().unwrap(), 0.02);
        let u = t.unaligned_shaped::<f32>(sizes).unwrap();
        assert_eq!(*u.iter().next().unwrap(), 0.01);
        assert_eq!(*u.iter().last().unwrap(), 0.02);
        let b = t.bit_casted_shaped::<f32>(sizes).unwrap();
        assert_eq!(*b.iter().last().unwrap(), 0.02);
    }
}

#[test]
fn bitcast_reshape_different_size() {
    let t = reshape_tensor();
    for sizes in [&[480][..], &[24, 20], &[6, 16, 5], &[2, 3, 4, 20]] {
        let v = t.bit_casted_shaped::<u8>(sizes).unwrap();
        assert_eq!(v.len(), 480);
        let first: [u8; 4] = 0.01f32.to_le_bytes();
        assert_eq!(v.iter().take(4).copied().collect::<Vec<_>>(), first);
    }
    for sizes in [
        &[240][..],
        &[6, 40],
        &[12, 4, 5],
        &[2, 3, 8, 5],
        &[2, 3, 4, 1, 10],
    ] {
        assert_eq!(t.bit_casted_shaped::<i16>(sizes).unwrap().len(), 240);
    }
}

#[test]
fn reshape_errors_carry_tensorflow_messages() {
    let t = reshape_tensor();
    let msg = |r: Result<_, Error>| {
        r.map(|_: ndarray::ArrayViewD<'_, f32>| ())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(msg(t.shaped::<f32>(&[])), "1 vs. 120");
    assert_eq!(msg(t.shaped::<f32>(&[119])), "119 vs. 120");
    assert_eq!(msg(t.shaped::<f32>(&[2, 3, 4, 6])), "144 vs. 120");
    assert_eq!(msg(t.bit_casted_shaped::<f32>(&[])), "4 vs. 480");
    assert_eq!(msg(t.bit_casted_shaped::<f32>(&[119])), "476 vs. 480");
    assert_eq!(
        msg(t.bit_casted_shaped::<f32>(&[2, 3, 4, 6])),
        "576 vs. 480"
    );
    let s = Tensor::new(DataType::STRING, shape(&[10])).unwrap();
    let e = s.bit_casted_shaped::<TString>(&[9]).unwrap_err();
    assert_eq!(e.to_string(), "9 vs. 10");
    let e = t.shaped::<i32>(&[120]).unwrap_err();
    assert_eq!(e.to_string(), "int32 expected, got float");
    assert_eq!(e.code(), Code::InvalidArgument);
}

#[test]
fn flat_and_flat_dims_views() {
    let t = Tensor::new(DataType::FLOAT, shape(&[2, 3, 4, 5])).unwrap();
    assert_eq!(t.flat::<f32>().unwrap().len(), 120);
    assert_eq!(t.flat_inner_dims::<f32>(2).unwrap().shape(), &[24, 5]);
    assert_eq!(t.flat_inner_dims::<f32>(3).unwrap().shape(), &[6, 4, 5]);
    assert_eq!(
        t.flat_inner_dims::<f32>(5).unwrap().shape(),
        &[1, 2, 3, 4, 5]
    );
    assert_eq!(t.flat_outer_dims::<f32>(2).unwrap().shape(), &[2, 60]);
    assert_eq!(
        t.flat_outer_dims::<f32>(5).unwrap().shape(),
        &[2, 3, 4, 5, 1]
    );
    assert_eq!(
        t.flat_inner_outer_dims::<f32>(-2, 8).unwrap().shape(),
        &[1, 1, 2, 3, 4, 5, 1, 1]
    );
    assert_eq!(
        t.flat_inner_outer_dims::<f32>(1, 2).unwrap().shape(),
        &[6, 20]
    );
    let z = Tensor::new(DataType::FLOAT, shape(&[3, 0, 2, 0, 5])).unwrap();
    assert_eq!(z.flat_inner_dims::<f32>(2).unwrap().shape(), &[0, 5]);
    assert_eq!(z.flat_outer_dims::<f32>(3).unwrap().shape(), &[3, 0, 0]);
    assert_eq!(
        z.flat_inner_outer_dims::<f32>(1, 3).unwrap().shape(),
        &[0, 2, 0]
    );
}

#[test]
fn reinterpret_last_dimension_packs_qint8_into_int32() {
    let s = shape(&[2, 3, 5, 7, 4]);
    let vals: Vec<QInt8> = (0..s.num_elements())
        .map(|i| QInt8((i % 4) as i8 + 1))
        .collect();
    let t = Tensor::from_vec(vals, &s).unwrap();
    let v = t.reinterpret_last_dimension::<i32>().unwrap();
    assert_eq!(v.shape(), &[2, 3, 5, 7]);
    assert!(v.iter().all(|&x| x == i32::from_le_bytes([1, 2, 3, 4])));
    assert!(t.reinterpret_last_dimension::<i64>().is_err());
}

#[test]
fn scalar_basics() {
    assert!(*Tensor::from(true).scalar::<bool>().unwrap());
    assert_eq!(*Tensor::from(123.45f32).scalar::<f32>().unwrap(), 123.45);
    let s = Tensor::from("foo");
    assert_eq!(s.dtype(), DataType::STRING);
    assert_eq!(s.scalar::<TString>().unwrap().as_bytes(), b"foo");
    let one = Tensor::from_vec(vec![5.0f32], shape(&[1])).unwrap();
    assert_eq!(*one.scalar::<f32>().unwrap(), 5.0);
    let cube = Tensor::from_vec(vec![7.0f32], shape(&[1, 1, 1])).unwrap();
    assert_eq!(*cube.scalar::<f32>().unwrap(), 7.0);
    let empty = Tensor::new(DataType::FLOAT, shape(&[0, 1])).unwrap();
    assert_eq!(empty.num_elements(), 0);
    assert_eq!(empty.matrix::<f32>().unwrap().shape(), &[0, 1]);
    assert_eq!(
        empty.scalar::<f32>().unwrap_err().to_string(),
        "Must have a one element tensor"
    );
}

#[test]
fn host_scalars_are_writable() {
    let mut t = Tensor::from(true);
    assert_eq!((t.dtype(), t.num_elements()), (DataType::BOOL, 1));
    *t.scalar_mut::<bool>().unwrap() = false;
    assert!(!*t.scalar::<bool>().unwrap());
    let mut f = Tensor::from(123.45f32);
    *f.scalar_mut::<f32>().unwrap() += 1.0;
    assert_eq!(*f.scalar::<f32>().unwrap(), 124.45);
    let s = Tensor::from("foooooooooooooooooooooooooooooooooooooooooooooooo");
    assert_eq!(s.dtype(), DataType::STRING);
}

#[test]
fn reshape_and_slice_assignment() {
    let mut t = Tensor::new(DataType::FLOAT, shape(&[10, 4, 3, 2])).unwrap();
    {
        let mut m = t.shaped_mut::<f32>(&[10, 24]).unwrap();
        for i in 0..10 {
            m.index_axis_mut(ndarray::Axis(0), i).fill(2.0 * i as f32);
        }
    }
    let v = t.tensor::<f32, ndarray::Ix4>().unwrap();
    for i in 0..10 {
        assert!(v
            .index_axis(ndarray::Axis(0), i)
            .iter()
            .all(|&x| x == 2.0 * i as f32));
    }
}

#[test]
fn bitcast_from_double_onto_float() {
    let mut a = Tensor::new(DataType::FLOAT, shape(&[2, 4])).unwrap();
    let b = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], shape(&[2, 2])).unwrap();
    a.bitcast_from(&b, DataType::DOUBLE, &shape(&[2, 2]))
        .unwrap();
    assert_eq!(a.dtype(), DataType::DOUBLE);
    assert!(a.shares_buffer_with(&b));
    let e = a
        .bitcast_from(&b, DataType::INT32, &shape(&[3]))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "input and output shapes/data type sizes are not compatible"
    );
    let s = Tensor::from("x");
    assert_eq!(
        a.bitcast_from(&s, DataType::INT8, &shape(&[1]))
            .unwrap_err()
            .to_string(),
        "other tensor has zero-sized data type"
    );
    assert_eq!(
        a.bitcast_from(&b, DataType::STRING, &shape(&[1]))
            .unwrap_err()
            .to_string(),
        "specified output type is zero-sized"
    );
    // Nothing changed on failure.
    assert_eq!(a.dtype(), DataType::DOUBLE);
    assert_eq!(a.shape(), &shape(&[2, 2]));
}

#[test]
fn string_total_bytes() {
    let words = ["hello", "world", "machine", "learning", "new", "york"];
    let t = Tensor::from_vec(
        words.iter().map(|&w| TString::from(w)).collect(),
        shape(&[3, 2]),
    )
    .unwrap();
    assert_eq!(
        t.total_bytes(),
        6 * tensorcast_core::TSTRING_SIZE + 5 + 5 + 7 + 8 + 3 + 4
    );
}

#[test]
fn simple_with_helper_arithmetic() {
    let a = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], shape(&[2, 3])).unwrap();
    let b = Tensor::from_vec(vec![5.0f32, 4.0, 3.0, 2.0, 1.0, 0.0], shape(&[2, 3])).unwrap();
    let mut c = Tensor::new(DataType::FLOAT, shape(&[2, 3])).unwrap();
    let sum = &a.matrix::<f32>().unwrap() + &b.matrix::<f32>().unwrap();
    c.matrix_mut::<f32>().unwrap().assign(&sum);
    assert!(c.flat::<f32>().unwrap().iter().all(|&x| x == 5.0));
}

#[test]
fn build_tensor_allocated_bytes_and_description() {
    let t = Tensor::new(DataType::FLOAT, shape(&[10, 20])).unwrap();
    assert_eq!(t.allocated_bytes(), 800);
    let d = t.fill_description();
    assert_eq!(d.dtype, DataType::FLOAT);
    let a = d.allocation_description.unwrap();
    assert_eq!((a.requested_bytes, a.allocator_name.as_str()), (800, "cpu"));
    assert_eq!(
        Tensor::new(DataType::INVALID, shape(&[1]))
            .unwrap_err()
            .to_string(),
        "Type not set"
    );
    assert_eq!(
        Tensor::new(DataType::FLOAT_REF, shape(&[1]))
            .unwrap_err()
            .to_string(),
        "Unexpected type: DT_FLOAT_REF"
    );
}

#[test]
fn tracking_allocator_reports_allocated_bytes_and_ids() {
    let tracking: Arc<dyn Allocator> = Arc::new(TrackingAllocator::new(Arc::new(
        CpuAllocator::with_cache_limit(0),
    )));
    let t = Tensor::new_in(
        &tracking,
        DataType::FLOAT,
        &shape(&[3]),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(t.allocated_bytes(), 64);
    let a = t.fill_description().allocation_description.unwrap();
    assert!(a.allocation_id > 0);
    assert!(a.has_single_reference);
    assert_eq!(a.allocated_bytes, 64);
}

#[test]
fn failure_to_allocate_is_an_error_or_uninitialized() {
    let failing: Arc<dyn Allocator> = Arc::new(FailingAllocator::new());
    let e = Tensor::new_in(
        &failing,
        DataType::FLOAT,
        &shape(&[10]),
        &Default::default(),
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    let t = Tensor::unallocated(DataType::FLOAT, &shape(&[10]));
    assert!(!t.is_initialized());
    assert!(t.flat::<f32>().is_err());
    // Nothing to allocate: fine even with a failing allocator.
    let z = Tensor::new_in(&failing, DataType::FLOAT, &shape(&[0]), &Default::default()).unwrap();
    assert!(z.is_initialized()); // Object elements are placed through the allocator too (TensorFlow's FailureToAllocate
                                 // expects strings to fail as numbers do).
    for dt in [DataType::STRING, DataType::RESOURCE, DataType::VARIANT] {
        let e = Tensor::new_in(&failing, dt, &shape(&[3]), &Default::default()).unwrap_err();
        assert_eq!(e.code(), Code::ResourceExhausted, "{dt}");
    }
    let e = Tensor::from_objects_in(&failing, &shape(&[2]), |_| {
        Ok::<_, Error>(TString::from("a"))
    })
    .unwrap_err();
    assert!(matches!(e, Error::Alloc(_)));
    assert!(Tensor::from_objects_in(&failing, &shape(&[2]), |_| Ok::<_, Error>(1.0f32)).is_err());
}

#[test]
fn shares_buffer_with() {
    let a = Tensor::default();
    let b = Tensor::default();
    assert!(!a.shares_buffer_with(&b));
    let c = Tensor::new(DataType::FLOAT, shape(&[1])).unwrap();
    let d = Tensor::new(DataType::FLOAT, shape(&[1])).unwrap();
    assert!(!c.shares_buffer_with(&d));
    let e = c.clone();
    assert!(c.shares_buffer_with(&e));
    assert!(!a.shares_buffer_with(&c));
}

#[test]
fn slice_basic() {
    let mut x = Tensor::new(DataType::FLOAT, shape(&[10, 4, 36])).unwrap();
    for (i, v) in x.flat_mut::<f32>().unwrap().iter_mut().enumerate() {
        *v = (i / (4 * 36)) as f32;
    }
    let s = x.slice(4, 8).unwrap();
    assert_eq!(s.shape(), &shape(&[4, 4, 36]));
    assert!(s.shares_buffer_with(&x));
    assert_eq!(s.allocated_bytes(), 2304);
    assert_eq!(s.flat::<f32>().unwrap()[0], 4.0);
    let whole = x.slice(0, 10).unwrap();
    assert_eq!(whole.data_ptr(), x.data_ptr());
    let six = s.slice(2, 3).unwrap();
    assert!(six.flat::<f32>().unwrap().iter().all(|&v| v == 6.0));
    let z = Tensor::new(DataType::FLOAT, shape(&[10, 0, 36])).unwrap();
    assert_eq!(z.slice(4, 8).unwrap().shape(), &shape(&[4, 0, 36]));
    for dt in [DataType::FLOAT, DataType::INT8] {
        let t = Tensor::new(dt, shape(&[30])).unwrap();
        assert!(t.is_aligned());
        assert!(!t.slice(1, 13).unwrap().is_aligned());
    }
    assert!(x.slice(5, 4).is_err());
    assert!(x.slice(0, 11).is_err());
    assert!(Tensor::from(1.0f32).slice(0, 0).is_err());
}

#[test]
fn sub_slice_basic() {
    let mut x = Tensor::new(DataType::FLOAT, shape(&[10, 4, 36])).unwrap();
    for (i, v) in x.flat_mut::<f32>().unwrap().iter_mut().enumerate() {
        *v = i as f32;
    }
    let s = x.sub_slice(5).unwrap();
    assert_eq!(s.shape(), &shape(&[4, 36]));
    assert!(s.shares_buffer_with(&x));
    assert_eq!(s.flat::<f32>().unwrap()[0], (5 * 4 * 36) as f32);
    let scalar = x
        .sub_slice(3)
        .unwrap()
        .sub_slice(3)
        .unwrap()
        .sub_slice(31)
        .unwrap();
    assert_eq!(scalar.dims(), 0);
    assert_eq!(
        *scalar.scalar::<f32>().unwrap(),
        (3 * 144 + 3 * 36 + 31) as f32
    );
    let y = Tensor::new(DataType::FLOAT, shape(&[30, 5])).unwrap();
    assert!(!y.sub_slice(1).unwrap().is_aligned());
    assert!(x.sub_slice(10).is_err());
    assert!(x.sub_slice(-1).is_err());
}

/// TensorFlow fills a tensor through `SubSlice`/`Slice` tensors aliasing their parent
/// (`tensor_test.cc`'s SubSlice test writes each slice's `flat<float>()` and reads the parent).
/// The sound Rust form: disjoint mutable views borrowed from the uniquely held parent.
#[test]
fn sub_slices_mut_fill_the_parent_row_by_row() {
    let mut x = Tensor::new(DataType::FLOAT, shape(&[10, 4, 36])).unwrap();
    let rows = x.sub_slices_mut::<f32>().unwrap();
    assert_eq!(rows.len(), 10);
    for (i, mut row) in rows.into_iter().enumerate() {
        assert_eq!(row.shape(), [4, 36]);
        for ((j, k), v) in row
            .view_mut()
            .into_dimensionality::<ndarray::Ix2>()
            .unwrap()
            .indexed_iter_mut()
        {
            *v = (i * 1000 + j * 100 + k) as f32;
        }
    }
    for i in 0..10 {
        let s = x.sub_slice(i).unwrap();
        let m = s.matrix::<f32>().unwrap();
        for j in 0..4 {
            for k in 0..36 {
                assert_eq!(m[[j, k]], (i as usize * 1000 + j * 100 + k) as f32);
            }
        }
    }
}

#[test]
fn split_at_mut_fills_two_slices_in_parallel() {
    let mut x = Tensor::new(DataType::INT64, shape(&[7, 3])).unwrap();
    let (mut top, mut bottom) = x.split_at_mut::<i64>(2).unwrap();
    assert_eq!((top.shape(), bottom.shape()), (&[2, 3][..], &[5, 3][..]));
    std::thread::scope(|s| {
        s.spawn(|| top.iter_mut().enumerate().for_each(|(i, v)| *v = i as i64));
        s.spawn(|| {
            bottom
                .iter_mut()
                .enumerate()
                .for_each(|(i, v)| *v = 100 + i as i64)
        });
    });
    assert_eq!(
        x.slice(0, 2).unwrap().as_slice::<i64>().unwrap(),
        [0, 1, 2, 3, 4, 5]
    );
    assert_eq!(
        x.slice(2, 7).unwrap().as_slice::<i64>().unwrap()[..3],
        [100, 101, 102]
    );
    // The ends: an empty part on either side.
    let (a, b) = x.split_at_mut::<i64>(0).unwrap();
    assert_eq!((a.len(), b.len()), (0, 21));
    let (a, b) = x.split_at_mut::<i64>(7).unwrap();
    assert_eq!((a.len(), b.len()), (21, 0));
}

#[test]
fn mutable_slices_refuse_what_would_be_unsound_or_wrong() {
    let mut x = Tensor::new(DataType::FLOAT, shape(&[4, 2])).unwrap();
    assert!(matches!(
        x.split_at_mut::<f32>(5),
        Err(Error::SliceOutOfRange {
            limit: 5,
            dim0: 4,
            ..
        })
    ));
    assert!(x.split_at_mut::<f32>(-1).is_err());
    assert!(matches!(
        x.sub_slices_mut::<i32>(),
        Err(Error::TypeMismatch { .. })
    ));
    // Another tensor shares the buffer: writing through either would show in both.
    let alias = x.clone();
    assert!(matches!(
        x.sub_slices_mut::<f32>(),
        Err(Error::SharedBuffer)
    ));
    assert!(matches!(x.split_at_mut::<f32>(1), Err(Error::SharedBuffer)));
    drop(alias);
    assert_eq!(x.sub_slices_mut::<f32>().unwrap().len(), 4);
    let mut scalar = Tensor::from(1.0f32);
    assert!(matches!(
        scalar.sub_slices_mut::<f32>(),
        Err(Error::ScalarNotAllowed { op: "SubSlice" })
    ));
    assert!(matches!(
        scalar.split_at_mut::<f32>(0),
        Err(Error::ScalarNotAllowed { op: "Slice" })
    ));
    // Rows without elements are still one view each; strings work like numbers.
    let mut empty_rows = Tensor::new(DataType::FLOAT, shape(&[3, 0])).unwrap();
    assert_eq!(empty_rows.sub_slices_mut::<f32>().unwrap().len(), 3);
    let mut strings = Tensor::new(DataType::STRING, shape(&[2, 2])).unwrap();
    for (i, mut row) in strings
        .sub_slices_mut::<TString>()
        .unwrap()
        .into_iter()
        .enumerate()
    {
        row.fill(TString::from(format!("row{i}")));
    }
    assert_eq!(
        strings.as_slice::<TString>().unwrap()[2],
        TString::from("row1")
    );
}

#[test]
fn summarize_uninitialized() {
    let t = Tensor::unallocated(DataType::INT32, &shape(&[4, 4]));
    assert_eq!(
        t.summarize_value(16, false),
        "uninitialized Tensor of 16 elements of type 3"
    );
}

fn simple_num<T: tensorcast_core::Element>(conv: impl Fn(i32) -> T) {
    let mk = |vals: &[i32], d: &[i64]| {
        Tensor::from_vec(vals.iter().map(|&v| conv(v)).collect::<Vec<T>>(), shape(d)).unwrap()
    };
    assert_eq!(
        mk(&[1, 2, 3, 4, 0], &[5]).summarize_value(16, false),
        "1 2 3 4 0"
    );
    assert_eq!(
        mk(&[1, 2, 3, 4], &[2, 2]).summarize_value(16, false),
        "[1 2][3 4]"
    );
    let four = mk(&[1, 2, 3, 4], &[2, 2, 1, 1]);
    assert_eq!(four.summarize_value(16, false), "[[[1]][[2]]][[[3]][[4]]]");
    assert_eq!(four.summarize_value(3, false), "[[[1]][[2]]][[[3]]]...");
    assert_eq!(mk(&[], &[0]).summarize_value(16, false), "");
    assert_eq!(
        mk(&[1, 2, 3, 4, 0], &[5]).summarize_value(16, true),
        "[1 2 3 4 0]"
    );
    assert_eq!(
        mk(&[1, 2, 3, 4, 0], &[5]).summarize_value(2, true),
        "[1 2 ... 4 0]"
    );
    assert_eq!(
        mk(&[1, 2, 3, 4], &[2, 2]).summarize_value(16, true),
        "[[1 2]\n [3 4]]"
    );
    assert_eq!(
        four.summarize_value(16, true),
        "[[[[1]]\n\n  [[2]]]\n\n\n [[[3]]\n\n  [[4]]]]"
    );
    assert_eq!(mk(&[], &[0]).summarize_value(16, true), "[]");
}

#[test]
fn summarize_simple_num_multi_length_for_16_dtypes() {
    simple_num(|v| QUInt8(v as u8));
    simple_num(|v| QUInt16(v as u16));
    simple_num(|v| v as u8);
    simple_num(|v| v as u16);
    simple_num(|v| v as u32);
    simple_num(|v| v as u64);
    simple_num(|v| v as i8);
    simple_num(|v| v as i16);
    simple_num(|v| v);
    simple_num(|v| v as i64);
    // Bit patterns of 0..4 written out, an independent check of the float8 decoders.
    simple_num(|v| Float8E4M3FN([0x00, 0x38, 0x40, 0x44, 0x48][v as usize]));
    simple_num(|v| Float8E5M2([0x00, 0x3c, 0x40, 0x42, 0x44][v as usize]));
    simple_num(|v| f16::from_f32(v as f32));
    simple_num(|v| bf16::from_f32(v as f32));
    simple_num(|v| v as f32);
    simple_num(|v| v as f64);
}

#[test]
fn summarize_int32_dims_bool_and_string() {
    let t = Tensor::from_vec((1..=12).collect::<Vec<i32>>(), shape(&[3, 4])).unwrap();
    assert_eq!(t.summarize_value(3, false), "[1 2 3...]...");
    assert_eq!(
        t.summarize_value(10, false),
        "[1 2 3 4][5 6 7 8][9 10...]..."
    );
    assert_eq!(t.summarize_value(1, true), "[[1 ... 4]\n ...\n [9 ... 12]]");
    assert_eq!(
        t.summarize_value(10, true),
        "[[1 2 3 4]\n [5 6 7 8]\n [9 10 11 12]]"
    );
    assert_eq!(
        t.summarize_value(-1, true),
        "[[1 2 3 4]\n [5 6 7 8]\n [9 10 11 12]]"
    );
    let b = Tensor::from_vec(vec![false, true, true, false, true], shape(&[5])).unwrap();
    assert_eq!(b.summarize_value(16, false), "0 1 1 0 1");
    assert_eq!(b.summarize_value(3, false), "0 1 1...");
    assert_eq!(b.summarize_value(-1, true), "[0 1 1 0 1]");
    assert_eq!(b.summarize_value(2, true), "[0 1 ... 0 1]");
    let words: Vec<TString> = ["one", "two", "three", "four", "five"]
        .iter()
        .map(|&w| w.into())
        .collect();
    let s = Tensor::from_vec(words.clone(), shape(&[5])).unwrap();
    assert_eq!(s.summarize_value(16, false), "one two three four five");
    assert_eq!(
        s.summarize_value(-1, true),
        "[\"one\" \"two\" \"three\" \"four\" \"five\"]"
    );
    assert_eq!(
        s.summarize_value(2, true),
        "[\"one\" \"two\" ... \"four\" \"five\"]"
    );
    let mut five = words.clone();
    for _ in 0..4 {
        five.extend(words.iter().cloned());
    }
    let s3 = Tensor::from_vec(five, shape(&[5, 1, 5])).unwrap();
    assert_eq!(
        s3.summarize_value(6, false),
        "[[one two three four five]][[one...]]..."
    );
    let s22 = Tensor::from_vec(words[..4].to_vec(), shape(&[2, 2])).unwrap();
    assert_eq!(
        s22.summarize_value(-1, true),
        "[[\"one\" \"two\"]\n [\"three\" \"four\"]]"
    );
}

#[test]
fn debug_strings_and_display() {
    let t = Tensor::from(42.0f32);
    assert_eq!(
        t.debug_string(3),
        "Tensor<type: float shape: [] values: 42>"
    );
    assert_eq!(
        t.device_safe_debug_string(),
        "Tensor<type: float shape: []>"
    );
    let big = Tensor::from_vec((0..200).collect::<Vec<i64>>(), shape(&[200])).unwrap();
    assert!(format!("{big}").ends_with(" 98 99...>"));
    let c = Tensor::from_vec(vec![Complex::new(1.0f32, 2.0); 3], shape(&[3])).unwrap();
    assert_eq!(c.summarize_value(2, false), "? ?...");
    assert_eq!(c.summarize_value(-1, true), "[? ? ?]");
}

#[test]
fn misaligned_memory_is_refused_by_views_and_served_by_unaligned_accessors() {
    let odd: Arc<dyn Allocator> = Arc::new(OffsetAllocator::new(1));
    let mut t = Tensor::new_in(&odd, DataType::FLOAT, &shape(&[4]), &Default::default()).unwrap();
    assert!(!t.is_aligned());
    assert!(matches!(
        t.flat::<f32>().unwrap_err(),
        Error::Misaligned { required: 4, .. }
    ));
    t.tensor_data_mut().unwrap()[4..8].copy_from_slice(&2.5f32.to_le_bytes());
    let u = t.unaligned_flat::<f32>().unwrap();
    assert_eq!(u.to_vec(), vec![0.0, 2.5, 0.0, 0.0]);
    t.with_unaligned_flat_mut::<f32, _>(|mut v| v[3] = 7.0)
        .unwrap();
    assert_eq!(t.unaligned_flat::<f32>().unwrap()[3], 7.0);
    assert_eq!(t.summarize_value(-1, false), "0 2.5 0 7");
}

#[test]
fn writes_to_a_shared_buffer_are_refused_until_made_unique() {
    let mut a = Tensor::from_vec(vec![1i32, 2, 3], shape(&[3])).unwrap();
    let b = a.clone();
    let e = a.flat_mut::<i32>().unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    a.make_unique().unwrap();
    a.flat_mut::<i32>().unwrap()[0] = 9;
    assert_eq!(a.to_vec::<i32>().unwrap(), vec![9, 2, 3]);
    assert_eq!(b.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
    assert!(!a.shares_buffer_with(&b));
}

#[test]
fn bool_views_refuse_bytes_other_than_zero_and_one() {
    let u = Tensor::from_vec(vec![0u8, 1, 2], shape(&[3])).unwrap();
    let b = u.bitcast_to(DataType::BOOL, &shape(&[3])).unwrap();
    assert!(b.flat::<bool>().is_err());
    let ok = u
        .slice(0, 2)
        .unwrap()
        .bitcast_to(DataType::BOOL, &shape(&[2]))
        .unwrap();
    assert_eq!(ok.to_vec::<bool>().unwrap(), vec![false, true]);
}

#[test]
fn adopted_vec_is_zero_copy() {
    let v: Vec<f32> = (0..1024).map(|i| i as f32).collect();
    let addr = v.as_ptr() as usize;
    let t = Tensor::from_vec(v, shape(&[32, 32])).unwrap();
    assert_eq!(t.data_ptr() as usize, addr);
    assert_eq!(t.matrix::<f32>().unwrap()[[1, 2]], 34.0);
}

#[test]
fn tensor_and_buffer_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Tensor>();
    check::<TensorShape>();
}

/// Outputs observed from TensorFlow 2.21 (`tf.strings.format("{}", t, summarize=n)`, which is
/// `SummarizeValue(n, print_v2=true)`) for dtypes the shared vectors do not cover.
#[test]
fn summarize_matches_tensorflow_for_more_dtypes() {
    fn floats<T: tensorcast_core::Element>(f: impl Fn(f32) -> T) -> Tensor {
        let v = [1.5f32, -2.0, 0.0, 3.0, 0.5, -1.0];
        Tensor::from_vec(v.iter().map(|&x| f(x)).collect(), shape(&[2, 3])).unwrap()
    }
    let e4m3b11 = floats(Float8E4M3B11FNUZ::from_f32);
    assert_eq!(
        e4m3b11.summarize_value(1, true),
        "[[1.5 ... 0]\n [3 ... -1]]"
    );
    assert_eq!(
        e4m3b11.summarize_value(-1, true),
        "[[1.5 -2 0]\n [3 0.5 -1]]"
    );
    let f4 = floats(Float4E2M1FN::from_f32);
    assert_eq!(f4.summarize_value(-1, true), "[[1.5 -2 0]\n [3 0.5 -1]]");
    for irregular in [
        floats(Float8E4M3FNUZ::from_f32),
        floats(Float8E5M2FNUZ::from_f32),
    ] {
        assert_eq!(irregular.summarize_value(1, true), "[?...]");
        assert_eq!(irregular.summarize_value(-1, true), "[? ? ? ? ? ?]");
    }
    let i2 =
        Tensor::from_vec([1, -2, 0, 1, -1, 0].map(Int2::new).to_vec(), shape(&[2, 3])).unwrap();
    assert_eq!(i2.summarize_value(1, true), "[[1 ... 0]\n [1 ... 0]]");
    assert_eq!(i2.summarize_value(-1, true), "[[1 -2 0]\n [1 -1 0]]");
    let u2 = Tensor::from_vec([1, 2, 0, 3, 1, 0].map(UInt2::new).to_vec(), shape(&[2, 3])).unwrap();
    assert_eq!(u2.summarize_value(-1, true), "[[1 2 0]\n [3 1 0]]");
    let i4 = Tensor::from_vec([1, -3, 7, -8].map(Int4::new).to_vec(), shape(&[2, 2])).unwrap();
    assert_eq!(i4.summarize_value(-1, true), "[[1 -3]\n [7 -8]]");
    let u32s = Tensor::from_vec(vec![1u32, 2, 3, 4_000_000_000], shape(&[2, 2])).unwrap();
    assert_eq!(u32s.summarize_value(1, true), "[[1 2]\n [3 4000000000]]");
    let e4m3 = Tensor::from_vec(
        [1.5f32, -2.25, 448.0, 0.001]
            .map(Float8E4M3FN::from_f32)
            .to_vec(),
        shape(&[2, 2]),
    )
    .unwrap();
    assert_eq!(
        e4m3.summarize_value(-1, true),
        "[[1.5 -2.25]\n [448 0.001953125]]"
    );
    let e5m2 = Tensor::from_vec(
        [1.5f32, -2.25, 448.0, 0.001]
            .map(Float8E5M2::from_f32)
            .to_vec(),
        shape(&[2, 2]),
    )
    .unwrap();
    assert_eq!(
        e5m2.summarize_value(-1, true),
        "[[1.5 -2]\n [448 0.0009765625]]"
    );
    let q = Tensor::from_vec(
        vec![QInt16(1), QInt16(2), QInt16(3), QInt16(-1)],
        shape(&[2, 2]),
    )
    .unwrap();
    assert_eq!(q.summarize_value(-1, true), "[[1 2]\n [3 -1]]");
}

/// TensorFlow 2.21 prints subnormals as zeros of the same sign (its kernels run with
/// denormals-are-zero): `[1e-40, -1e-40, 1e-45, FLT_MIN, 1.1754942e-38]` prints
/// `[0 -0 0 1.17549435e-38 0]`, and likewise for doubles.
#[test]
fn summarize_prints_subnormals_as_signed_zero() {
    let f = Tensor::vector(&[1e-40f32, -1e-40, 1e-45, 1.175_494_4e-38, 1.175_494_2e-38]);
    assert_eq!(f.summarize_value(-1, true), "[0 -0 0 1.17549435e-38 0]");
    let d = Tensor::vector(&[1e-310f64, -1e-310, 5e-324, 2.2250738585072014e-308]);
    assert_eq!(
        d.summarize_value(-1, true),
        "[0 -0 0 2.2250738585072014e-308]"
    );
}
