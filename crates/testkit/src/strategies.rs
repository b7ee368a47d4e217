//! proptest strategies shared by the crates' property tests: shapes that broadcast, and
//! tensors of any memcpy-able dtype (or string) holding valid values.

use proptest::prelude::*;
use tensorcast_buffer::Buffer;
use tensorcast_core::{DataType, TString, Tensor, TensorShape};

/// Two shapes that each broadcast to a third, and that third: rank `0..max_rank`, each output
/// dim `0..max_dim`; each input keeps the output's dim, has 1 there, or (leading dims only)
/// lacks it.
pub fn broadcast_pair(
    max_dim: i64,
    max_rank: usize,
) -> impl Strategy<Value = (Vec<i64>, Vec<i64>, Vec<i64>)> {
    proptest::collection::vec((0i64..max_dim, 0u8..3, 0u8..3), 0..max_rank).prop_flat_map(|spec| {
        let out: Vec<i64> = spec.iter().map(|s| s.0).collect();
        let pick = |k: u8, d: i64| if k == 1 { 1 } else { d };
        let a: Vec<i64> = spec.iter().map(|s| pick(s.1, s.0)).collect();
        let b: Vec<i64> = spec.iter().map(|s| pick(s.2, s.0)).collect();
        (0..=a.len(), 0..=b.len())
            .prop_map(move |(da, db)| (a[da..].to_vec(), b[db..].to_vec(), out.clone()))
    })
}

/// An input shape and a shape it broadcasts to (the first and last of [`broadcast_pair`]).
pub fn broadcastable_to(
    max_dim: i64,
    max_rank: usize,
) -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    broadcast_pair(max_dim, max_rank).prop_map(|(input, _, out)| (input, out))
}

/// `b` made a valid element byte of `dtype` in tensorcast's canonical form: `bool` 0 or 1,
/// the sub-byte integers' value bits only ([`DataType::sub_byte_mask`]).
pub fn canonical_byte(dtype: DataType, b: u8) -> u8 {
    match dtype {
        DataType::BOOL => b & 1,
        _ => b & dtype.sub_byte_mask().unwrap_or(0xff),
    }
}

/// A tensor of any memcpy-able dtype or `string`, rank `0..max_rank` with dims `0..max_dim`,
/// holding pseudo-random valid values (canonical bytes; strings of 0..8 arbitrary bytes).
pub fn any_tensor(max_dim: i64, max_rank: usize) -> impl Strategy<Value = Tensor> {
    let dtypes: Vec<DataType> = DataType::all()
        .filter(|d| d.can_use_memcpy() || *d == DataType::STRING)
        .collect();
    (
        proptest::sample::select(dtypes),
        proptest::collection::vec(0i64..max_dim, 0..max_rank),
        any::<u64>(),
    )
        .prop_map(|(dtype, dims, seed)| {
            let shape = TensorShape::new(&dims).expect("dims are small and non-negative");
            let n = shape.num_elements_usize();
            let mut state = seed | 1;
            let mut next = move || {
                // xorshift64*: cheap deterministic bytes from the seed.
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            };
            if dtype == DataType::STRING {
                let strings = (0..n)
                    .map(|_| {
                        let len = (next() % 9) as usize;
                        TString::from((0..len).map(|_| next()).collect::<Vec<u8>>())
                    })
                    .collect();
                return Tensor::from_vec(strings, &shape).expect("one string per element");
            }
            let bytes: Vec<u8> = (0..n * dtype.size())
                .map(|_| canonical_byte(dtype, next()))
                .collect();
            let buffer = Buffer::copy_from_slice(&bytes).expect("a small buffer");
            Tensor::from_buffer(dtype, &shape, buffer).expect("bytes of the shape's size")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    #[test]
    fn broadcast_pairs_broadcast_to_their_output() {
        let mut runner = TestRunner::deterministic();
        for _ in 0..200 {
            let (a, b, out) = broadcast_pair(4, 5)
                .new_tree(&mut runner)
                .expect("a value")
                .current();
            let shape = |d: &[i64]| TensorShape::new(d).expect("valid dims");
            for input in [&a, &b] {
                let got =
                    tensorcast_kernels::broadcast::broadcast_shapes(&shape(input), &shape(&out))
                        .expect("compatible");
                assert_eq!(got.dim_sizes(), &out[..], "{input:?} -> {out:?}");
            }
        }
    }

    #[test]
    fn any_tensor_values_are_canonical() {
        let mut runner = TestRunner::deterministic();
        for _ in 0..200 {
            let t = any_tensor(5, 4)
                .new_tree(&mut runner)
                .expect("a value")
                .current();
            if t.dtype().can_use_memcpy() {
                let bytes = t.tensor_data().expect("bytes");
                assert!(
                    bytes.iter().all(|&b| canonical_byte(t.dtype(), b) == b),
                    "{t:?}"
                );
            }
        }
    }
}
