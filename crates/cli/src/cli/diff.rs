//! `tensorcast diff A B [--rtol R] [--atol A]`: where and how much the tensors of two files
//! differ.
//!
//! Tensors pair up by name (by position when each file holds exactly one). Elements `a` (from
//! A) and `b` (from B, the reference) differ when `|a - b| > atol + rtol * |b|` (numpy's
//! `isclose`); both NaN counts as equal, one NaN as a difference larger than any other.
//! Defaults are 0 and 0: exact equality (`-0 == 0`). Integers are compared exactly; complex
//! numbers by `|a - b|`; strings byte for byte. A dtype or shape mismatch, or a tensor only
//! in one file, is a difference. Exit code 1 when anything differs, 0 when nothing does.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use tensorcast::io::NamedTensor;
use tensorcast::{TString, Tensor};

use super::decode::{Chunk, Decoder, CHUNK_ELEMS};
use super::progress;
use super::stats::fmt_mean;
use super::table::{Align, Table};
use super::{EXIT_DIFFERENT, EXIT_OK};

/// Arguments of `diff`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The file (or TensorFlow checkpoint) to compare.
    pub a: PathBuf,
    /// The reference file (or TensorFlow checkpoint).
    pub b: PathBuf,
    #[command(flatten)]
    pub select: super::checkpoint::Select,
    /// Relative tolerance (of |b|).
    #[arg(long, value_name = "R", default_value_t = 0.0)]
    pub rtol: f64,
    /// Absolute tolerance.
    #[arg(long, value_name = "A", default_value_t = 0.0)]
    pub atol: f64,
}

/// The element-wise comparison of two tensors of one dtype and shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compared {
    /// Elements compared.
    pub elements: u64,
    /// Elements beyond tolerance.
    pub differing: u64,
    /// Largest `|a - b|` (NaN when one side is NaN); `None` when not numeric.
    pub max_abs: Option<f64>,
    /// Largest `|a - b| / |b|`.
    pub max_rel: Option<f64>,
    /// Flat index of the largest difference (of the first differing element for strings and
    /// other non-numeric dtypes); `None` when nothing differs.
    pub at: Option<u64>,
}

/// `x > y` with NaN larger than everything (a NaN difference is the worst one).
fn worse(x: f64, y: f64) -> bool {
    if y.is_nan() {
        false
    } else {
        x.is_nan() || x > y
    }
}

struct Acc {
    rtol: f64,
    atol: f64,
    index: u64,
    differing: u64,
    max_abs: f64,
    max_rel: f64,
    at: Option<u64>,
    first_diff: Option<u64>,
}

impl Acc {
    /// Records one element pair with difference `d` and reference magnitude `mag_b`.
    #[inline]
    fn push(&mut self, equal: bool, d: f64, mag_b: f64) {
        let (d, rel) = if equal { (0.0, 0.0) } else { (d, d / mag_b) };
        // An unequal pair with a non-finite difference (one NaN, an infinity against anything
        // else) is beyond any tolerance, as in numpy's `isclose`.
        let tolerance = self.atol
            + if self.rtol == 0.0 {
                0.0
            } else {
                self.rtol * mag_b
            };
        if !equal && (!d.is_finite() || d > tolerance) {
            self.differing += 1;
            self.first_diff.get_or_insert(self.index);
        }
        if worse(d, self.max_abs) {
            self.max_abs = d;
            self.at = Some(self.index);
        }
        if worse(rel, self.max_rel) {
            self.max_rel = rel;
        }
        self.index += 1;
    }
}

fn same_float(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Compares two tensors of the same dtype and shape, element by element.
pub(crate) fn compare(
    a: &Tensor,
    b: &Tensor,
    rtol: f64,
    atol: f64,
    progress: &mut dyn FnMut(u64),
) -> Compared {
    let elements = a.num_elements().max(0) as u64;
    let mut acc = Acc {
        rtol,
        atol,
        index: 0,
        differing: 0,
        max_abs: 0.0,
        max_rel: 0.0,
        at: None,
        first_diff: None,
    };
    if let (Some(mut da), Some(mut db)) = (Decoder::new(a), Decoder::new(b)) {
        let size = da.element_bytes() as u64;
        let (mut ca, mut cb) = (Chunk::Float(vec![]), Chunk::Float(vec![]));
        loop {
            let n = da.next_chunk(CHUNK_ELEMS, &mut ca);
            db.next_chunk(CHUNK_ELEMS, &mut cb);
            if n == 0 {
                break;
            }
            match (&ca, &cb) {
                (Chunk::Float(x), Chunk::Float(y)) => {
                    for (&p, &q) in x.iter().zip(y) {
                        acc.push(same_float(p, q), (p - q).abs(), q.abs());
                    }
                }
                (Chunk::Int(x), Chunk::Int(y)) => {
                    for (&p, &q) in x.iter().zip(y) {
                        acc.push(
                            p == q,
                            (p - q).unsigned_abs() as f64,
                            q.unsigned_abs() as f64,
                        );
                    }
                }
                (Chunk::Complex(x), Chunk::Complex(y)) => {
                    for (&(pr, pi), &(qr, qi)) in x.iter().zip(y) {
                        let equal = same_float(pr, qr) && same_float(pi, qi);
                        acc.push(equal, (pr - qr).hypot(pi - qi), qr.hypot(qi));
                    }
                }
                // One dtype gives one kind of chunk.
                _ => {}
            }
            progress(n as u64 * size);
        }
        return Compared {
            elements,
            differing: acc.differing,
            max_abs: Some(acc.max_abs),
            max_rel: Some(acc.max_rel),
            at: if acc.differing > 0 || acc.max_abs != 0.0 {
                acc.at
            } else {
                None
            },
        };
    }
    // Strings element by element; resources and variants as a whole.
    let (differing, at) = match (a.as_slice::<TString>(), b.as_slice::<TString>()) {
        (Ok(x), Ok(y)) => {
            let mut first = None;
            let mut n = 0u64;
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                if p.as_bytes() != q.as_bytes() {
                    n += 1;
                    first.get_or_insert(i as u64);
                }
            }
            (n, first)
        }
        _ => {
            if a == b {
                (0, None)
            } else {
                (elements, Some(0))
            }
        }
    };
    Compared {
        elements,
        differing,
        max_abs: None,
        max_rel: None,
        at,
    }
}

/// A flat index as a multi-index in `dims`: `[1,2]`.
fn unravel(mut flat: u64, dims: &[i64]) -> String {
    let mut idx = vec![0u64; dims.len()];
    for (i, &d) in dims.iter().enumerate().rev() {
        let d = d.max(1) as u64;
        idx[i] = flat % d;
        flat /= d;
    }
    let parts: Vec<String> = idx.iter().map(u64::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// One row of the report: a pair of tensors, or one without a partner.
enum Pair<'a> {
    Both(String, &'a Tensor, &'a Tensor),
    OnlyA(&'a NamedTensor),
    OnlyB(&'a NamedTensor),
}

fn pairs<'a>(a: &'a [NamedTensor], b: &'a [NamedTensor]) -> Vec<Pair<'a>> {
    if let ([x], [y]) = (a, b) {
        let name = if x.name == y.name {
            tensorcast::io::escaped(&x.name)
        } else {
            format!(
                "{} / {}",
                tensorcast::io::escaped(&x.name),
                tensorcast::io::escaped(&y.name)
            )
        };
        return vec![Pair::Both(name, &x.tensor, &y.tensor)];
    }
    let mut out = Vec::new();
    for x in a {
        match b.iter().find(|y| y.name == x.name) {
            Some(y) => out.push(Pair::Both(
                tensorcast::io::escaped(&x.name),
                &x.tensor,
                &y.tensor,
            )),
            None => out.push(Pair::OnlyA(x)),
        }
    }
    for y in b {
        if !a.iter().any(|x| x.name == y.name) {
            out.push(Pair::OnlyB(y));
        }
    }
    out
}

/// Runs `diff`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    if [args.rtol, args.atol]
        .iter()
        .any(|t| t.is_nan() || *t < 0.0)
    {
        bail!("--rtol and --atol must be non-negative numbers");
    }
    let a = super::load_tensors(&args.a, &args.select)?;
    let b = super::load_tensors(&args.b, &args.select)?;
    let (an, bn) = (args.a.display().to_string(), args.b.display().to_string());
    let pairs = pairs(&a, &b);
    let pb = progress::bar(super::total_bytes(&a), "comparing");
    let mut table = Table::new(&[
        ("name", Align::Left),
        ("dtype", Align::Left),
        ("shape", Align::Left),
        ("result", Align::Left),
        ("differing", Align::Right),
        ("max_abs", Align::Right),
        ("max_rel", Align::Right),
        ("at", Align::Left),
    ]);
    let mut differ = 0usize;
    let dash = || "-".to_string();
    for p in &pairs {
        let row = match p {
            Pair::OnlyA(t) | Pair::OnlyB(t) => {
                differ += 1;
                let file = if matches!(p, Pair::OnlyA(_)) {
                    &an
                } else {
                    &bn
                };
                vec![
                    tensorcast::io::escaped(&t.name),
                    t.tensor.dtype().name(),
                    t.tensor.shape().to_string(),
                    format!("only in {file}"),
                ]
            }
            Pair::Both(name, x, y) if x.dtype() != y.dtype() => {
                differ += 1;
                vec![
                    name.clone(),
                    format!("{} / {}", x.dtype(), y.dtype()),
                    shapes(x, y),
                    "dtype differs".into(),
                ]
            }
            Pair::Both(name, x, y) if x.shape() != y.shape() => {
                differ += 1;
                vec![
                    name.clone(),
                    x.dtype().name(),
                    shapes(x, y),
                    "shape differs".into(),
                ]
            }
            Pair::Both(name, x, y) => {
                let c = compare(x, y, args.rtol, args.atol, &mut |n| pb.inc(n));
                if c.differing > 0 {
                    differ += 1;
                }
                vec![
                    name.clone(),
                    x.dtype().name(),
                    x.shape().to_string(),
                    if c.differing > 0 { "differ" } else { "equal" }.into(),
                    format!("{} of {}", c.differing, c.elements),
                    c.max_abs.map_or_else(dash, fmt_mean),
                    c.max_rel.map_or_else(dash, fmt_mean),
                    c.at.map_or_else(dash, |i| unravel(i, x.shape().dim_sizes())),
                ]
            }
        };
        table.row(row);
    }
    pb.finish_and_clear();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(out, "{an} vs {bn} (rtol {}, atol {})", args.rtol, args.atol)?;
    out.write_all(table.render("  ").as_bytes())?;
    let total = pairs.len();
    let plural = if total == 1 { "tensor" } else { "tensors" };
    if differ == 0 {
        writeln!(out, "no differences ({total} {plural})")?;
    } else {
        writeln!(
            out,
            "{differ} of {total} {plural} {}",
            if differ == 1 { "differs" } else { "differ" }
        )?;
    }
    out.flush()?;
    Ok(if differ > 0 { EXIT_DIFFERENT } else { EXIT_OK })
}

fn shapes(x: &Tensor, y: &Tensor) -> String {
    if x.shape() == y.shape() {
        x.shape().to_string()
    } else {
        format!("{} / {}", x.shape(), y.shape())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast::TensorShape;

    fn cmp(a: &Tensor, b: &Tensor, rtol: f64, atol: f64) -> Compared {
        compare(a, b, rtol, atol, &mut |_| {})
    }

    #[test]
    fn equal_floats_have_no_difference() {
        let a = Tensor::vector(&[1.0f32, f32::NAN, -0.0]);
        let b = Tensor::vector(&[1.0f32, f32::NAN, 0.0]);
        let c = cmp(&a, &b, 0.0, 0.0);
        assert_eq!(c.differing, 0);
        assert_eq!(c.max_abs, Some(0.0));
        assert_eq!(c.at, None);
    }

    #[test]
    fn largest_difference_is_located() {
        let a = Tensor::from_vec(
            vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.5],
            TensorShape::new(&[2, 3]).unwrap(),
        )
        .unwrap();
        let b = Tensor::from_vec(
            vec![1.0f64, 2.5, 3.0, 4.0, 5.0, 6.0],
            TensorShape::new(&[2, 3]).unwrap(),
        )
        .unwrap();
        let c = cmp(&a, &b, 0.0, 0.0);
        assert_eq!(c.differing, 2);
        assert_eq!(c.max_abs, Some(0.5));
        assert_eq!(c.at, Some(1)); // first of the two 0.5 differences
        assert_eq!(unravel(c.at.unwrap(), &[2, 3]), "[0,1]");
        assert_eq!(c.max_rel, Some(0.2));
    }

    #[test]
    fn tolerances_follow_isclose() {
        let a = Tensor::vector(&[100.0f32, 1.0]);
        let b = Tensor::vector(&[101.0f32, 1.0]);
        assert_eq!(cmp(&a, &b, 0.0, 0.5).differing, 1);
        assert_eq!(cmp(&a, &b, 0.0, 1.0).differing, 0);
        assert_eq!(cmp(&a, &b, 0.01, 0.0).differing, 0);
        assert_eq!(cmp(&a, &b, 0.009, 0.0).differing, 1);
    }

    #[test]
    fn one_nan_is_the_worst_difference() {
        let a = Tensor::vector(&[1.0f32, 5.0, f32::NAN]);
        let b = Tensor::vector(&[1.0f32, 1.0, 2.0]);
        let c = cmp(&a, &b, 1e9, 1e9);
        assert_eq!(c.differing, 1);
        assert!(c.max_abs.unwrap().is_nan());
        assert_eq!(c.at, Some(2));
    }

    #[test]
    fn infinities_differ_from_everything_but_themselves() {
        let a = Tensor::vector(&[f64::INFINITY, 1.0, f64::NEG_INFINITY, f64::INFINITY]);
        let b = Tensor::vector(&[f64::INFINITY, f64::INFINITY, f64::INFINITY, 3.0]);
        let c = cmp(&a, &b, 0.0, 0.0);
        assert_eq!(c.differing, 3);
        assert_eq!(cmp(&a, &b, 1.0, 1e300).differing, 3);
        assert_eq!(c.max_abs, Some(f64::INFINITY));
        assert_eq!(c.at, Some(1));
    }

    #[test]
    fn big_ints_compare_exactly() {
        let a = Tensor::vector(&[i64::MAX]);
        let b = Tensor::vector(&[i64::MAX - 1]);
        let c = cmp(&a, &b, 0.0, 0.0);
        assert_eq!(c.differing, 1);
        assert_eq!(c.max_abs, Some(1.0));
    }

    #[test]
    fn strings_compare_bytewise() {
        let a = Tensor::vector(&[TString::from("a"), TString::from("b")]);
        let b = Tensor::vector(&[TString::from("a"), TString::from("c")]);
        let c = cmp(&a, &b, 0.0, 0.0);
        assert_eq!((c.differing, c.at, c.max_abs), (1, Some(1), None));
    }

    #[test]
    fn single_tensors_pair_by_position_and_others_by_name() {
        let t = Tensor::vector(&[1u8]);
        let a = [NamedTensor::new("x", t.clone())];
        let b = [NamedTensor::new("y", t.clone())];
        assert!(matches!(&pairs(&a, &b)[..], [Pair::Both(n, _, _)] if n == "x / y"));
        let a = [
            NamedTensor::new("x", t.clone()),
            NamedTensor::new("z", t.clone()),
        ];
        let b = [NamedTensor::new("z", t.clone()), NamedTensor::new("w", t)];
        let p = pairs(&a, &b);
        assert!(matches!(
            &p[..],
            [Pair::OnlyA(_), Pair::Both(..), Pair::OnlyB(_)]
        ));
    }
}
