//! `Einsum`: an equation of one or two subscripts reduced to strided copies (transposes and
//! diagonals in one pass), a sum over the labels only one operand has, and one batched matrix
//! product ([`batch_mat_mul_v2`]) for the contraction, as TensorFlow's kernel does.
//!
//! How an equation is read (TensorFlow 2.21's rules, observed and recorded in
//! `tests/tf_observed/gen_ops_einsum.py`): exactly one `->`; one or two input subscripts split
//! at `,`; every other byte is a label, except `.`, which starts an ellipsis and swallows the
//! two bytes after it (`...` is the usual spelling; TensorFlow reads `a.b` as `a` and an
//! ellipsis). Labels the output names but no input has are dropped; a label the output repeats
//! puts the result on that diagonal (zeros elsewhere). A label that only one input has and the
//! output lacks is summed out; a label both inputs have is a batch dimension when the output
//! keeps it and is contracted otherwise; a label repeated in one input takes its diagonal. The
//! ellipsis dimensions broadcast against each other (named ones must match exactly).

use tensorcast_core::dtypes;
use tensorcast_core::{
    Code, Complex32, Complex64, DataType, Error, PartialTensorShape, Result, Tensor,
};

use super::matmul::batch_mat_mul_v2;
use super::util::enum_name;
use crate::array::common::dims_text;
use crate::array::strided_copy;
use crate::broadcast::shape::aligned_dim;
use crate::reduce::{reduce, Reduction};

const OP: &str = "Einsum";

/// The ellipsis's label id.
const ELL: usize = usize::MAX;

/// The dtypes TensorFlow 2.21's CPU `Einsum` kernels take.
const EINSUM_TYPES: &[DataType] =
    dtypes!("float, double, half, bfloat16, int32, int64, complex64, complex128");

/// The kernels TensorFlow 2.21 lists for `Einsum` in its `NotFound` text.
const EINSUM_KERNELS: &str = "  device='XLA_CPU_JIT'; T in [DT_FLOAT, DT_DOUBLE, DT_INT32, \
DT_COMPLEX64, DT_INT64, DT_BFLOAT16, DT_COMPLEX128, DT_HALF, DT_UINT64]\n  device='CPU'; T in \
[DT_INT64]\n  device='CPU'; T in [DT_INT32]\n  device='CPU'; T in [DT_HALF]\n  device='CPU'; T in \
[DT_FLOAT]\n  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_COMPLEX64]\n  \
device='CPU'; T in [DT_COMPLEX128]\n  device='CPU'; T in [DT_BFLOAT16]\n";

/// Whose texts an error takes: the kernel's (eager, session) or the shape function's (graph
/// construction), which TensorFlow words differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Texts {
    Kernel,
    Shape,
}

fn invalid(message: String) -> Error {
    Error::invalid_argument(OP, message)
}

/// A parsed equation: each subscript as label ids (`ELL` for an ellipsis), ids numbered in
/// order of first appearance.
#[derive(Debug)]
struct Equation {
    inputs: Vec<Vec<usize>>,
    output: Vec<usize>,
}

fn labels_of(s: &str, ids: &mut Vec<u8>) -> Vec<usize> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            out.push(ELL);
            i += 3;
            continue;
        }
        let id = match ids.iter().position(|&c| c == b[i]) {
            Some(p) => p,
            None => {
                ids.push(b[i]);
                ids.len() - 1
            }
        };
        out.push(id);
        i += 1;
    }
    out
}

fn parse(equation: &str, n_inputs: usize, texts: Texts) -> Result<Equation> {
    let parts: Vec<&str> = equation.split("->").collect();
    if parts.len() != 2 {
        return Err(invalid(format!(
            "Expecting exactly one '->' in einsum equation: {equation}"
        )));
    }
    let subs: Vec<&str> = parts[0].split(',').collect();
    if subs.len() > 2 {
        return Err(invalid(format!(
            "Expecting 1 or 2 input subscripts in equation '{equation}' but got: {}",
            subs.len()
        )));
    }
    if subs.len() != n_inputs {
        return Err(invalid(match texts {
            Texts::Kernel => format!("Expected {} inputs but got: {n_inputs}", subs.len()),
            Texts::Shape => format!(
                "Expected {} inputs for equation {equation} but got: {n_inputs}",
                subs.len()
            ),
        }));
    }
    if texts == Texts::Shape {
        // The shape function reads an ellipsis as exactly three periods.
        for (sub, which) in subs
            .iter()
            .map(|s| (s, "input"))
            .chain(std::iter::once((&parts[1], "output")))
        {
            let periods = sub.bytes().filter(|&c| c == b'.').count();
            if periods != 0 && (periods != 3 || !sub.contains("...")) {
                return Err(invalid(format!(
                    "Expected at most one ellipsis (...), but found {periods} periods (.) in the {which} subscript: {sub}"
                )));
            }
        }
    }
    let mut ids = Vec::new();
    let inputs: Vec<Vec<usize>> = subs.iter().map(|s| labels_of(s, &mut ids)).collect();
    let output = labels_of(parts[1], &mut ids);
    for s in inputs.iter().chain(std::iter::once(&output)) {
        if s.iter().filter(|&&l| l == ELL).count() > 1 {
            return Err(invalid(format!(
                "Einsum subscripts may contain one ellipsis each: {equation}"
            )));
        }
    }
    Ok(Equation { inputs, output })
}

/// What the dims of the inputs say: each label's size (-1 unknown), each input's ellipsis
/// dims (`None`: the input has no ellipsis; `Some(None)`: unknown).
#[derive(Debug)]
struct Dims {
    label: Vec<i64>,
    ell: Vec<Option<Option<Vec<i64>>>>,
}

/// Checks each input's rank and the sizes of its labels against the others (TensorFlow's
/// texts); `dims[i]` is `None` for an unknown rank.
fn label_dims(
    eq: &Equation,
    dims: &[Option<Vec<i64>>],
    equation: &str,
    texts: Texts,
) -> Result<Dims> {
    let n_labels = eq
        .inputs
        .iter()
        .chain(std::iter::once(&eq.output))
        .flatten()
        .filter(|&&l| l != ELL)
        .max()
        .map_or(0, |m| m + 1);
    let mut label = vec![-1i64; n_labels];
    let mut ell = Vec::with_capacity(dims.len());
    for (i, (subs, d)) in eq.inputs.iter().zip(dims).enumerate() {
        let has_ell = subs.contains(&ELL);
        let Some(d) = d else {
            ell.push(has_ell.then_some(None));
            continue;
        };
        let named = subs.len() - usize::from(has_ell);
        if !has_ell && d.len() != subs.len() {
            return Err(invalid(match texts {
                Texts::Kernel => format!(
                    "Expected input {i} to have rank {} but got: {}",
                    subs.len(),
                    d.len()
                ),
                Texts::Shape => format!(
                    "Shape must be rank {} but is rank {}\n\t for {i}th input and equation: {equation}",
                    subs.len(),
                    d.len()
                ),
            }));
        }
        if d.len() < named {
            return Err(invalid(match texts {
                Texts::Kernel => format!(
                    "Expected input {i} to have rank at least {named} but got: {}",
                    d.len()
                ),
                Texts::Shape => format!(
                    "Shape must be at least rank {named} but is rank {}\n\t for {i}th input and equation: {equation}",
                    d.len()
                ),
            }));
        }
        let n_bcast = d.len() - named;
        let mut axis = 0usize;
        let mut e = None;
        for &l in subs {
            if l == ELL {
                e = Some(d[axis..axis + n_bcast].to_vec());
                axis += n_bcast;
                continue;
            }
            let size = d[axis];
            if size >= 0 {
                if label[l] >= 0 && label[l] != size {
                    return Err(invalid(match texts {
                        Texts::Kernel => format!(
                            "Expected dimension {} at axis {axis} of the input shaped {} but got dimension {size}",
                            label[l],
                            dims_text(d)
                        ),
                        Texts::Shape => {
                            format!("Dimensions must be equal, but are {} and {size}", label[l])
                        }
                    }));
                }
                label[l] = size;
            }
            axis += 1;
        }
        ell.push(e.map(Some));
    }
    // The broadcasting dims the output must place.
    let n_bcast = ell
        .iter()
        .map(|e| e.as_ref().and_then(|e| e.as_ref()).map_or(0, Vec::len))
        .max()
        .unwrap_or(0);
    if n_bcast > 0 && !eq.output.contains(&ELL) {
        return Err(invalid(match texts {
            Texts::Kernel => format!(
                "Output contains {n_bcast} broadcasting dimension(s) but no ellipsis (...) was found in the output subscripts."
            ),
            Texts::Shape => {
                let first = ell
                    .iter()
                    .filter_map(|e| e.as_ref().and_then(|e| e.as_ref()).map(Vec::len))
                    .find(|&n| n > 0)
                    .unwrap_or(n_bcast);
                format!(
                    "Shape must be at most rank 0 but is rank {first}\n\t for einsum equation '{equation}' without ellipsis (...) in the output subscripts where input(s) have non-empty broadcasting shape"
                )
            }
        }));
    }
    Ok(Dims { label, ell })
}

/// How a label takes part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Batch,
    Free,
    Contract,
    Reduce,
}

fn kind(eq: &Equation, input: usize, l: usize) -> Kind {
    let in_out = eq.output.contains(&l);
    let in_other = eq
        .inputs
        .iter()
        .enumerate()
        .any(|(j, s)| j != input && s.contains(&l));
    match (in_other, in_out) {
        (true, true) => Kind::Batch,
        (true, false) => Kind::Contract,
        (false, true) => Kind::Free,
        (false, false) => Kind::Reduce,
    }
}

/// The unique labels of a subscript, in order of appearance (no ellipsis).
fn unique(subs: &[usize]) -> Vec<usize> {
    let mut u = Vec::new();
    for &l in subs {
        if l != ELL && !u.contains(&l) {
            u.push(l);
        }
    }
    u
}

/// One axis of an arrangement of an input: a label or the `j`-th ellipsis dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Axis {
    Label(usize),
    Ell(usize),
}

/// `x` (with subscript `subs`) arranged as `order` (labels and ellipsis dims, each once; every
/// label of `x` not in `order` is summed out): one strided copy (diagonals of repeated
/// labels, the permutation) and a sum over the trailing summed-out labels.
fn arrange(x: &Tensor, subs: &[usize], order: &[Axis]) -> Result<Tensor> {
    let d = x.shape().dims_usize();
    let mut strides = vec![0isize; d.len()];
    let mut acc = 1isize;
    for a in (0..d.len()).rev() {
        strides[a] = acc;
        acc = acc.saturating_mul(d[a] as isize);
    }
    let has_ell = subs.contains(&ELL);
    let n_bcast = d.len() + usize::from(has_ell) - subs.len();
    // Each input axis's role, in input order.
    let mut axes = Vec::with_capacity(d.len());
    for &l in subs {
        if l == ELL {
            axes.extend((0..n_bcast).map(Axis::Ell));
        } else {
            axes.push(Axis::Label(l));
        }
    }
    let geometry = |a: Axis| -> (usize, isize) {
        let mut size = 1;
        let mut stride = 0isize;
        for (k, &b) in axes.iter().enumerate() {
            if b == a {
                size = d[k];
                stride += strides[k];
            }
        }
        (size, stride)
    };
    let summed: Vec<Axis> = unique(subs)
        .into_iter()
        .map(Axis::Label)
        .filter(|a| !order.contains(a))
        .collect();
    let mut vd = Vec::with_capacity(order.len() + summed.len());
    let mut vs = Vec::with_capacity(order.len() + summed.len());
    for &a in order.iter().chain(&summed) {
        let (n, s) = geometry(a);
        vd.push(n);
        vs.push(s);
    }
    let kept: Vec<i64> = vd[..order.len()].iter().map(|&n| n as i64).collect();
    if x.num_elements() == 0 {
        // Nothing to copy; a sum over nothing is zero, which `new` gives.
        return Tensor::new(x.dtype(), kept.as_slice());
    }
    let view = strided_copy(OP, x, &vd, &vs)?;
    if summed.is_empty() {
        return Ok(view);
    }
    let rows: usize = vd[..order.len()].iter().product();
    let cols: usize = vd[order.len()..].iter().product();
    let flat = view.reshape(vec![rows as i64, cols as i64])?;
    let sum = match x.dtype() {
        DataType::COMPLEX64 | DataType::COMPLEX128 => {
            // The sum as a product with a column of ones, on the matmul engine.
            let ones = match x.dtype() {
                DataType::COMPLEX64 => {
                    Tensor::from_vec(vec![Complex32::new(1.0, 0.0); cols], [cols as i64, 1])?
                }
                _ => Tensor::from_vec(vec![Complex64::new(1.0, 0.0); cols], [cols as i64, 1])?,
            };
            batch_mat_mul_v2(&flat, &ones, false, false)?
        }
        _ => reduce(Reduction::Sum, &flat, &Tensor::scalar_of(1i32), false)?,
    };
    sum.reshape(kept)
}

/// `x` (arranged in order of the unique labels of `out`, the ellipsis dims at its ellipsis)
/// placed on the diagonals `out` repeats (zeros elsewhere).
fn embed_diagonal(x: &Tensor, out: &[usize], label: &[i64], ell: &[i64]) -> Result<Tensor> {
    let mut dims = Vec::new();
    let mut roles = Vec::new();
    for &l in out {
        if l == ELL {
            for (j, &n) in ell.iter().enumerate() {
                dims.push(n);
                roles.push(Axis::Ell(j));
            }
        } else {
            dims.push(label[l].max(0));
            roles.push(Axis::Label(l));
        }
    }
    let mut y = Tensor::new(x.dtype(), dims.as_slice())?;
    if y.num_elements() == 0 {
        return Ok(y);
    }
    let mut strides = vec![0usize; dims.len()];
    let mut acc = 1usize;
    for a in (0..dims.len()).rev() {
        strides[a] = acc;
        acc *= dims[a] as usize;
    }
    // The source's axes: unique roles in order of appearance.
    let mut src_roles: Vec<Axis> = Vec::new();
    for &r in &roles {
        if !src_roles.contains(&r) {
            src_roles.push(r);
        }
    }
    let src_dims: Vec<usize> = src_roles
        .iter()
        .map(|r| dims[roles.iter().position(|x| x == r).unwrap_or(0)] as usize)
        .collect();
    let src_strides: Vec<usize> = src_roles
        .iter()
        .map(|r| {
            roles
                .iter()
                .zip(&strides)
                .filter(|(x, _)| *x == r)
                .map(|(_, &s)| s)
                .sum()
        })
        .collect();
    let size = x.dtype().size();
    let src = x.tensor_data()?;
    let dst = y.tensor_data_mut()?;
    let mut idx = vec![0usize; src_dims.len()];
    let mut off = 0usize;
    for e in 0..x.num_elements() as usize {
        dst[off * size..(off + 1) * size].copy_from_slice(&src[e * size..(e + 1) * size]);
        for a in (0..idx.len()).rev() {
            idx[a] += 1;
            off += src_strides[a];
            if idx[a] < src_dims[a] {
                break;
            }
            off -= src_strides[a] * idx[a];
            idx[a] = 0;
        }
    }
    Ok(y)
}

/// The broadcast of two ellipsis shapes (`None` when they do not broadcast).
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (x, y) = (aligned_dim(a, i, n), aligned_dim(b, i, n));
        out.push(match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => return None,
        });
    }
    Some(out)
}

/// `Einsum`: the tensor contraction `equation` describes over one or two `inputs`, as
/// TensorFlow's `tf.raw_ops.Einsum`.
///
/// Every equation form TensorFlow takes runs: matrix and batch matrix products, the attention
/// contractions Keras's `MultiHeadAttention` emits (`abc,cde->abde`, `aecd,abcd->acbe`,
/// `acbe,aecd->abcd`, `abcd,cde->abe`), `EinsumDense` over the last axis, transposes, traces
/// and diagonals (`aa->a`, `aa->`), sums (`ab->a`), outer products, and `...` broadcasting.
/// The contraction is one batched matrix product on the `gemm` engine of [`batch_mat_mul_v2`]
/// (operands transposed and reshaped by strided copies, which also take diagonals).
///
/// Types: `float`, `double`, `half`, `bfloat16`, `int32`, `int64`, `complex64`, `complex128`;
/// other types are TensorFlow's `NotFound` error.
///
/// Accuracy against TensorFlow 2.21: integers exact; a floating-point result element within
/// `2 * K * eps * sum |x_i| |y_i|` of TensorFlow's (`K` the number of products summed, `eps`
/// `float`'s for `half` and `bfloat16`, then one rounding of the storage type) - the bound of
/// [`mat_mul`](super::mat_mul), asserted over the recorded vectors.
///
/// # Errors
/// TensorFlow's texts: `Expecting exactly one '->' in einsum equation: ...`, `Expecting 1 or 2
/// input subscripts ...`, `Expected 2 inputs but got: 1`, `Expected input 0 to have rank 3 but
/// got: 2`, `Expected dimension 3 at axis 0 of the input shaped [4,4] but got dimension 4`,
/// `Output contains 1 broadcasting dimension(s) but no ellipsis (...) was found in the output
/// subscripts.`, ellipsis dims that do not broadcast (`Invalid broadcasting dimensions: ...`,
/// or oneDNN's `In[0] and In[1] must have compatible batch dimensions: ...` for `float` and
/// `bfloat16`), inputs of different types, a dtype without a kernel. A subscript with two
/// ellipses is refused with our own text (TensorFlow's kernels disagree with each other there).
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::linalg::einsum;
/// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2i64, 3].as_slice())?;
/// let b = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0], [3i64, 2].as_slice())?;
/// assert_eq!(einsum(&[&a, &b], "ij,jk->ik")?.to_vec::<f32>()?, vec![4.0, 5.0, 10.0, 11.0]);
/// assert_eq!(einsum(&[&a], "ij->j")?.to_vec::<f32>()?, vec![5.0, 7.0, 9.0]);
/// let e = einsum(&[&a, &b], "ij,jk").unwrap_err();
/// assert_eq!(e.to_string(), "Expecting exactly one '->' in einsum equation: ij,jk");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn einsum(inputs: &[&Tensor], equation: &str) -> Result<Tensor> {
    let eq = parse(equation, inputs.len(), Texts::Kernel)?;
    let dtype = inputs.first().map_or(DataType::FLOAT, |x| x.dtype());
    if let Some((i, x)) = inputs.iter().enumerate().find(|(_, x)| x.dtype() != dtype) {
        return Err(Error::InputTypeMismatch {
            op: if matches!(dtype, DataType::FLOAT | DataType::BFLOAT16) {
                "_MklEinsum"
            } else {
                OP
            },
            index: i,
            expected: dtype,
            actual: x.dtype(),
        });
    }
    if !EINSUM_TYPES.contains(&dtype) {
        return Err(Error::Op {
            op: OP,
            code: Code::NotFound,
            message: format!(
                "Could not find device for node: {{{{node Einsum}}}} = Einsum[N={}, T={}, equation=\"{equation}\"]\nAll kernels registered for op Einsum:\n{EINSUM_KERNELS}",
                inputs.len(),
                enum_name(dtype)
            ),
        });
    }
    let shapes: Vec<Option<Vec<i64>>> = inputs
        .iter()
        .map(|x| Some(x.shape().dim_sizes().to_vec()))
        .collect();
    let dims = label_dims(&eq, &shapes, equation, Texts::Kernel)?;
    let ell_of = |i: usize| -> Vec<i64> {
        dims.ell[i]
            .as_ref()
            .and_then(|e| e.clone())
            .unwrap_or_default()
    };
    let out_labels: Vec<usize> = eq
        .output
        .iter()
        .copied()
        .filter(|&l| l == ELL || eq.inputs.iter().any(|s| s.contains(&l)))
        .collect();
    let (result, result_order, bcast) = if inputs.len() == 1 {
        let e = ell_of(0);
        let mut order = Vec::new();
        for &l in &out_labels {
            let a = if l == ELL {
                order.extend((0..e.len()).map(Axis::Ell));
                continue;
            } else {
                Axis::Label(l)
            };
            if !order.contains(&a) {
                order.push(a);
            }
        }
        let r = arrange(inputs[0], &eq.inputs[0], &order)?;
        (r, order, e)
    } else {
        binary(&eq, inputs, &dims, ell_of(0), ell_of(1), dtype)?
    };
    // The result in output order (unique labels), then on the diagonals the output repeats.
    let mut target = Vec::new();
    for &l in &out_labels {
        if l == ELL {
            target.extend((0..bcast.len()).map(Axis::Ell));
        } else if !target.contains(&Axis::Label(l)) {
            target.push(Axis::Label(l));
        }
    }
    let rd = result.shape().dims_usize();
    let mut rs = vec![0isize; rd.len()];
    let mut acc = 1isize;
    for a in (0..rd.len()).rev() {
        rs[a] = acc;
        acc = acc.saturating_mul(rd[a] as isize);
    }
    let (td, ts): (Vec<usize>, Vec<isize>) = target
        .iter()
        .map(|a| {
            let p = result_order.iter().position(|b| b == a).unwrap_or(0);
            (
                rd.get(p).copied().unwrap_or(1),
                rs.get(p).copied().unwrap_or(0),
            )
        })
        .unzip();
    let ordered = if result.num_elements() == 0 {
        let d: Vec<i64> = td.iter().map(|&n| n as i64).collect();
        Tensor::new(dtype, d.as_slice())?
    } else {
        strided_copy(OP, &result, &td, &ts)?
    };
    let repeats = out_labels
        .iter()
        .enumerate()
        .any(|(i, l)| *l != ELL && out_labels[..i].contains(l));
    if repeats {
        return embed_diagonal(&ordered, &out_labels, &dims.label, &bcast);
    }
    Ok(ordered)
}

/// The two-input case: each operand arranged as `[ellipsis, batch, M, K]` (or `[.., K, M]`
/// when it already is, as TensorFlow avoids the copy), one batched product, and the order of
/// the product's axes.
fn binary(
    eq: &Equation,
    inputs: &[&Tensor],
    dims: &Dims,
    ell0: Vec<i64>,
    ell1: Vec<i64>,
    dtype: DataType,
) -> Result<(Tensor, Vec<Axis>, Vec<i64>)> {
    let group = |input: usize, k: Kind| -> Vec<usize> {
        let mut v: Vec<usize> = unique(&eq.inputs[input])
            .into_iter()
            .filter(|&l| kind(eq, input, l) == k)
            .collect();
        v.sort_unstable();
        v
    };
    let batch = group(0, Kind::Batch);
    let contract = group(0, Kind::Contract);
    let free = [group(0, Kind::Free), group(1, Kind::Free)];
    let ells = [ell0, ell1];
    let size = |ls: &[usize]| -> i64 { ls.iter().map(|&l| dims.label[l].max(0)).product() };
    let mut operands = Vec::with_capacity(2);
    let mut adj = [false; 2];
    let mut shapes = Vec::with_capacity(2);
    for i in 0..2 {
        let subs = &eq.inputs[i];
        let head: Vec<Axis> = (0..ells[i].len())
            .map(Axis::Ell)
            .chain(batch.iter().map(|&l| Axis::Label(l)))
            .collect();
        let lab = |ls: &[usize]| ls.iter().map(|&l| Axis::Label(l)).collect::<Vec<_>>();
        let swapped: Vec<Axis> = head
            .iter()
            .copied()
            .chain(lab(&contract))
            .chain(lab(&free[i]))
            .collect();
        let canonical: Vec<Axis> = head
            .iter()
            .copied()
            .chain(lab(&free[i]))
            .chain(lab(&contract))
            .collect();
        // The operand's own order when it has no repeated or summed-out label.
        let plain = unique(subs).len() + usize::from(subs.contains(&ELL)) == subs.len()
            && unique(subs).iter().all(|&l| kind(eq, i, l) != Kind::Reduce);
        let natural: Vec<Axis> = if plain {
            let mut v = Vec::new();
            for &l in subs {
                if l == ELL {
                    v.extend((0..ells[i].len()).map(Axis::Ell));
                } else {
                    v.push(Axis::Label(l));
                }
            }
            v
        } else {
            canonical.clone()
        };
        // TensorFlow's layout: the swapped order (an adjoint operand) when the input is in it.
        let swap = natural == swapped;
        let (m, k) = (size(&free[i]), size(&contract));
        let mut shape: Vec<i64> = ells[i].clone();
        shape.extend(batch.iter().map(|&l| dims.label[l]));
        let tail = if swap { [k, m] } else { [m, k] };
        shape.extend(tail);
        shapes.push(shape);
        // Complex adjoints conjugate: complex operands are laid out for plain products.
        let complex = matches!(dtype, DataType::COMPLEX64 | DataType::COMPLEX128);
        let use_swapped = if complex { i == 1 } else { swap };
        adj[i] = if i == 0 { use_swapped } else { !use_swapped };
        let order = if use_swapped { swapped } else { canonical };
        let arranged = arrange(inputs[i], subs, &order)?;
        let mut s: Vec<i64> = ells[i].clone();
        s.extend(batch.iter().map(|&l| dims.label[l]));
        s.extend(if use_swapped { [k, m] } else { [m, k] });
        operands.push(arranged.reshape(s)?);
    }
    let bcast = broadcast(&ells[0], &ells[1]).ok_or_else(|| {
        let onednn = matches!(dtype, DataType::FLOAT | DataType::BFLOAT16);
        let (a, b) = (dims_text(&shapes[0]), dims_text(&shapes[1]));
        invalid(if onednn {
            format!("In[0] and In[1] must have compatible batch dimensions: {a} vs. {b}")
        } else {
            format!("Invalid broadcasting dimensions: {a} vs. {b}")
        })
    })?;
    // Pad the ellipsis dims to a common rank so that the batch dims line up.
    for (i, op) in operands.iter_mut().enumerate() {
        let pad = bcast.len() - ells[i].len();
        if pad > 0 {
            let mut s = vec![1i64; pad];
            s.extend_from_slice(op.shape().dim_sizes());
            *op = op.reshape(s)?;
        }
    }
    let product = batch_mat_mul_v2(&operands[0], &operands[1], adj[0], adj[1])?;
    let mut order: Vec<Axis> = (0..bcast.len()).map(Axis::Ell).collect();
    order.extend(batch.iter().map(|&l| Axis::Label(l)));
    order.extend(free[0].iter().map(|&l| Axis::Label(l)));
    order.extend(free[1].iter().map(|&l| Axis::Label(l)));
    let mut s: Vec<i64> = bcast.clone();
    s.extend(batch.iter().map(|&l| dims.label[l]));
    s.extend(free[0].iter().map(|&l| dims.label[l]));
    s.extend(free[1].iter().map(|&l| dims.label[l]));
    Ok((product.reshape(s)?, order, bcast))
}

/// `Einsum`'s shape function over partial shapes: the output's dims from the labels' sizes
/// (unknown where no input knows them), the ellipsis as the broadcast of the inputs'.
///
/// # Errors
/// The parse and rank/dimension errors of [`einsum`].
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::linalg::einsum_shape;
/// let a = PartialTensorShape::new(&[-1, 4, 8])?;
/// let b = PartialTensorShape::new(&[8, 2, 16])?;
/// let s = einsum_shape(&[&a, &b], "abc,cde->abde")?;
/// assert_eq!(s.dims(), Some(&[-1i64, 4, 2, 16][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn einsum_shape(inputs: &[&PartialTensorShape], equation: &str) -> Result<PartialTensorShape> {
    let eq = parse(equation, inputs.len(), Texts::Shape)?;
    let shapes: Vec<Option<Vec<i64>>> = inputs
        .iter()
        .map(|s| s.dims().map(<[i64]>::to_vec))
        .collect();
    let dims = label_dims(&eq, &shapes, equation, Texts::Shape)?;
    let mut bcast: Option<Vec<i64>> = Some(Vec::new());
    for e in dims.ell.iter().flatten() {
        bcast = match (bcast, e) {
            (Some(b), Some(e)) => Some(broadcast_partial(&b, e)?),
            _ => None,
        };
    }
    let mut out = Vec::new();
    for &l in &eq.output {
        if l == ELL {
            match &bcast {
                Some(b) => out.extend_from_slice(b),
                None => return Ok(PartialTensorShape::unknown_rank()),
            }
        } else if eq.inputs.iter().any(|s| s.contains(&l)) {
            out.push(dims.label[l]);
        }
    }
    PartialTensorShape::new(&out)
}

/// Broadcast of partial dims (TensorFlow's shape-function texts): an unknown dim against 1
/// stays unknown, against n > 1 is n.
fn broadcast_partial(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let (x, y) = (aligned_dim(a, i, n), aligned_dim(b, i, n));
            Ok(match (x, y) {
                (1, y) => y,
                (x, 1) => x,
                (x, y) if x == y => x,
                (x, y) if x < 0 => y.max(-1),
                (x, y) if y < 0 => x,
                (x, y) => {
                    return Err(invalid(format!(
                        "Dimensions must be equal, but are {x} and {y}"
                    )))
                }
            })
        })
        .collect()
}
