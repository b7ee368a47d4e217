//! `Cumsum` and `TopKV2`: the two ops of the family that compute on values.

use tensorcast_core::{
    bf16, dispatch, f16, Complex32, Complex64, DataType, Error, PartialTensorShape, Result, Tensor,
    TensorShape,
};

use super::common::{canonical_axis, dt, index_values, invalid, no_kernel, partial, INT32_64};

/// `Cumsum`'s type list (TensorFlow's `numbertypes`), in its order.
const SCAN_TYPES: &[DataType] = crate::type_lists::NUMBER_TYPES;

/// Addition as TensorFlow's scan performs it: integers wrap, `half`/`bfloat16` round every
/// partial sum to their own precision (Eigen's `half` arithmetic).
trait Sum: Copy + Send + Sync + tensorcast_core::Element {
    fn zero() -> Self;
    fn plus(self, o: Self) -> Self;
}

macro_rules! int_sum {
    ($($t:ty),*) => {$(impl Sum for $t {
        fn zero() -> Self { 0 }
        fn plus(self, o: Self) -> Self { self.wrapping_add(o) }
    })*};
}
int_sum!(i8, i16, i32, i64, u8, u16, u32, u64);
macro_rules! float_sum {
    ($($t:ty = $z:expr),*) => {$(impl Sum for $t {
        fn zero() -> Self { $z }
        fn plus(self, o: Self) -> Self { self + o }
    })*};
}
float_sum!(
    f32 = 0.0,
    f64 = 0.0,
    Complex32 = Complex32::new(0.0, 0.0),
    Complex64 = Complex64::new(0.0, 0.0)
);
macro_rules! half_sum {
    ($($t:ty),*) => {$(impl Sum for $t {
        fn zero() -> Self { <$t>::ZERO }
        fn plus(self, o: Self) -> Self { <$t>::from_f32(self.to_f32() + o.to_f32()) }
    })*};
}
half_sum!(f16, bf16);

fn scan<T: Sum>(x: &Tensor, ax: usize, exclusive: bool, reverse: bool) -> Result<Tensor> {
    let d = x.shape().dim_sizes();
    let len = d[ax] as usize;
    let inner: usize = d[ax + 1..].iter().map(|&v| v as usize).product();
    let outer: usize = d[..ax].iter().map(|&v| v as usize).product();
    let n = x.num_elements() as usize;
    if n == 0 {
        return Tensor::new(x.dtype(), x.shape());
    }
    let src = x.as_slice::<T>()?;
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(n)
        .map_err(|_| super::common::oom("Cumsum", x.dtype(), d))?;
    out.resize(n, T::zero());
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            let mut acc = T::zero();
            for step in 0..len {
                let j = if reverse { len - 1 - step } else { step };
                let at = base + j * inner;
                if exclusive {
                    out[at] = acc;
                    acc = acc.plus(src[at]);
                } else {
                    acc = acc.plus(src[at]);
                    out[at] = acc;
                }
            }
        }
    }
    Tensor::from_vec(out, x.shape())
}

/// TensorFlow's `Cumsum`: running sums of `x` along `axis` (an `int32`/`int64` scalar),
/// `exclusive` (each sum leaves out its own element) and `reverse` (from the end). Sums run in
/// TensorFlow's order, one element after another along the axis, in the dtype's arithmetic
/// (integers wrap; `half` and `bfloat16` round each partial sum), so results are its bits.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::cumsum;
/// let x = Tensor::vector(&[1i32, 2, 3]);
/// assert_eq!(cumsum(&x, &Tensor::from(0i32), false, false)?.to_vec::<i32>()?, vec![1, 3, 6]);
/// assert_eq!(cumsum(&x, &Tensor::from(0i32), true, true)?.to_vec::<i32>()?, vec![5, 3, 0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `ScanOp: axis must be a scalar, not [..]`, `ScanOp: Expected scan axis in the range [-R,
/// R), but got A`; a dtype outside the type list or without a CPU kernel (the quantized ones).
pub fn cumsum(x: &Tensor, axis: &Tensor, exclusive: bool, reverse: bool) -> Result<Tensor> {
    const OP: &str = "Cumsum";
    let a = index_values(OP, "Tidx", axis, INT32_64)?;
    let t = x.dtype();
    if !SCAN_TYPES.contains(&t) {
        return Err(Error::NotInTypeList {
            op: OP,
            attr: "T",
            dtype: t,
            allowed: SCAN_TYPES,
        });
    }
    if t.is_quantized() {
        return Err(no_kernel(
            OP,
            &format!(
                "T={}, Tidx={}, exclusive={exclusive}, reverse={reverse}",
                dt(t),
                dt(axis.dtype())
            ),
        ));
    }
    if axis.dims() != 0 {
        return Err(invalid(
            OP,
            format!("ScanOp: axis must be a scalar, not {}", axis.shape()),
        ));
    }
    let rank = x.dims();
    let Some(ax) = canonical_axis(a[0], rank) else {
        return Err(invalid(
            OP,
            format!(
                "ScanOp: Expected scan axis in the range [{}, {rank}), but got {}",
                -(rank as i64),
                // TensorFlow prints a negative axis after adding the rank.
                if a[0] < 0 {
                    a[0].saturating_add(rank as i64)
                } else {
                    a[0]
                }
            ),
        ));
    };
    dispatch!(t, {FLOAT, DOUBLE, INT32, UINT8, INT16, INT8, COMPLEX64, INT64, BFLOAT16, UINT16, COMPLEX128, HALF, UINT32, UINT64} T => scan::<T>(x, ax, exclusive, reverse), _ => Err(Error::InvalidDtype { dtype: t }))
}

/// `Cumsum`'s shape function: the input's shape.
pub fn cumsum_shape(x: &PartialTensorShape) -> PartialTensorShape {
    x.clone()
}

/// `TopKV2`'s type list (TensorFlow's `realnumbertypes`), in its order.
const TOPK_TYPES: &[DataType] = crate::type_lists::REAL_NUMBER_TYPES;

/// A total order for `TopKV2`: larger first; NaN above everything (see [`top_k_v2`]).
trait Rank: Copy + Send + Sync + tensorcast_core::Element {
    fn key(self) -> f64;
    fn int_key(self) -> i128;
    const FLOAT: bool;
}
macro_rules! int_rank {
    ($($t:ty),*) => {$(impl Rank for $t {
        fn key(self) -> f64 { 0.0 }
        fn int_key(self) -> i128 { self as i128 }
        const FLOAT: bool = false;
    })*};
}
int_rank!(i8, i16, i32, i64, u8, u16, u32, u64);
macro_rules! float_rank {
    ($($t:ty),*) => {$(impl Rank for $t {
        fn key(self) -> f64 { f64::from(self) }
        fn int_key(self) -> i128 { 0 }
        const FLOAT: bool = true;
    })*};
}
float_rank!(f32, f64, f16, bf16);

/// `TopKV2`'s two outputs.
#[derive(Debug, Clone)]
pub struct TopK {
    /// The `k` largest values of each row.
    pub values: Tensor,
    /// Their positions in the row (`index_type`: `int32` or `int64`).
    pub indices: Tensor,
}

fn top_rows<T: Rank>(x: &Tensor, k: usize, index_type: DataType) -> Result<TopK> {
    let d = x.shape().dim_sizes();
    let cols = d[d.len() - 1] as usize;
    let rows: usize = d[..d.len() - 1].iter().map(|&v| v as usize).product();
    let mut out_dims = d.to_vec();
    *out_dims.last_mut().unwrap_or(&mut 0) = k as i64;
    let shape = TensorShape::new(&out_dims)?;
    let src: &[T] = if x.num_elements() > 0 {
        x.as_slice::<T>()?
    } else {
        &[]
    };
    let mut vals: Vec<T> = Vec::new();
    let mut idx: Vec<i64> = Vec::new();
    vals.try_reserve_exact(rows * k)
        .map_err(|_| super::common::oom("TopKV2", x.dtype(), &out_dims))?;
    idx.try_reserve_exact(rows * k)
        .map_err(|_| super::common::oom("TopKV2", x.dtype(), &out_dims))?;
    let mut order: Vec<usize> = Vec::with_capacity(cols);
    for r in 0..rows {
        let row = &src[r * cols..(r + 1) * cols];
        order.clear();
        order.extend(0..cols);
        let cmp = |&a: &usize, &b: &usize| {
            let o = if T::FLOAT {
                let (x, y) = (row[a].key(), row[b].key());
                match (x.is_nan(), y.is_nan()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Less,
                    (false, true) => std::cmp::Ordering::Greater,
                    _ => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
                }
            } else {
                row[b].int_key().cmp(&row[a].int_key())
            };
            o.then(a.cmp(&b))
        };
        if k < cols {
            order.select_nth_unstable_by(k.saturating_sub(1).min(cols - 1), cmp);
            order.truncate(k);
        }
        order.sort_by(cmp);
        for &i in order.iter().take(k) {
            vals.push(row[i]);
            idx.push(i as i64);
        }
    }
    let values = Tensor::from_vec(vals, &shape)?;
    let indices = if index_type == DataType::INT64 {
        Tensor::from_vec(idx, &shape)?
    } else {
        Tensor::from_vec(idx.iter().map(|&i| i as i32).collect::<Vec<i32>>(), &shape)?
    };
    Ok(TopK { values, indices })
}

/// TensorFlow's `TopKV2`: the `k` (an `int32`/`int64` scalar) largest entries of each row (the
/// last axis) and their positions, largest first; equal values in position order (the lower
/// index first), as TensorFlow's stable sort gives them. `sorted = false` returns the same
/// order (TensorFlow's "unspecified" order happens to be the sorted one for the inputs
/// recorded). NaN ranks above every number here; TensorFlow's own order of NaNs depends on its
/// sort's path (it differs between `k = 1`, small `k` and `k = n`), so rows holding NaN are not
/// guaranteed to match it. Real-number dtypes only.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::top_k_v2;
/// let t = top_k_v2(&Tensor::vector(&[5i32, 1, 5, 3]), &Tensor::from(2i32), true, tensorcast_core::DataType::INT32)?;
/// assert_eq!(t.values.to_vec::<i32>()?, vec![5, 5]);
/// assert_eq!(t.indices.to_vec::<i32>()?, vec![0, 2]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts: `k must be scalar, got shape [..]`, `Need k >= 0, got K`, `input must
/// be >= 1-D, got shape [..]`, `input must have at least k columns. Had C, needed K`; a dtype
/// outside the type list.
pub fn top_k_v2(input: &Tensor, k: &Tensor, sorted: bool, index_type: DataType) -> Result<TopK> {
    const OP: &str = "TopKV2";
    let _ = sorted;
    let kv = index_values(
        OP,
        "Tk",
        k,
        &[DataType::INT32, DataType::INT64, DataType::INT16],
    )?;
    let t = input.dtype();
    if !TOPK_TYPES.contains(&t) {
        return Err(Error::NotInTypeList {
            op: OP,
            attr: "T",
            dtype: t,
            allowed: TOPK_TYPES,
        });
    }
    if !INT32_64.contains(&index_type) {
        return Err(Error::NotInTypeList {
            op: OP,
            attr: "index_type",
            dtype: index_type,
            allowed: INT32_64,
        });
    }
    if k.dims() != 0 {
        return Err(invalid(
            OP,
            format!("k must be scalar, got shape {}", k.shape()),
        ));
    }
    let kk = kv[0];
    if kk < 0 {
        return Err(invalid(OP, format!("Need k >= 0, got {kk}")));
    }
    if input.dims() < 1 {
        return Err(invalid(
            OP,
            format!("input must be >= 1-D, got shape {}", input.shape()),
        ));
    }
    let cols = input.shape().dim_sizes()[input.dims() - 1];
    if cols < kk {
        return Err(invalid(
            OP,
            format!("input must have at least k columns. Had {cols}, needed {kk}"),
        ));
    }
    dispatch!(t, {FLOAT, DOUBLE, INT32, UINT8, INT16, INT8, INT64, BFLOAT16, UINT16, HALF, UINT32, UINT64} T => top_rows::<T>(input, kk as usize, index_type), _ => Err(Error::InvalidDtype { dtype: t }))
}

/// `TopKV2`'s shape function: the input's shape with the last dim `k` (unknown when `k` is).
///
/// # Errors
/// `Shape must be at least rank 1 but is rank 0`, `input must have last dimension >= k = K but
/// is C`.
pub fn top_k_v2_shape(
    input: &PartialTensorShape,
    k: Option<&Tensor>,
) -> Result<Vec<PartialTensorShape>> {
    const OP: &str = "TopKV2";
    let Some(d) = input.dims() else {
        return Ok(vec![PartialTensorShape::unknown_rank(); 2]);
    };
    if d.is_empty() {
        return Err(invalid(OP, "Shape must be at least rank 1 but is rank 0"));
    }
    let kk = match k {
        Some(t) => index_values(
            OP,
            "Tk",
            t,
            &[DataType::INT32, DataType::INT64, DataType::INT16],
        )?
        .first()
        .copied()
        .unwrap_or(-1),
        None => -1,
    };
    let last = d[d.len() - 1];
    if kk >= 0 && last >= 0 && last < kk {
        return Err(invalid(
            OP,
            format!("input must have last dimension >= k = {kk} but is {last}"),
        ));
    }
    let mut o = d.to_vec();
    *o.last_mut().unwrap_or(&mut 0) = kk;
    let s = partial(Some(o))?;
    Ok(vec![s.clone(), s])
}
