//! Random graphs of `BroadcastTo` and element-wise ops over one float placeholder, built from a
//! seed (the same graph for the same seed on every machine): the inputs of the law "the
//! optimized GraphDef computes what the original computes", checked in tensorcast (the graph
//! crate's property tests) and in TensorFlow (the interop tests).

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{AddV2, BroadcastTo, Equal, Maximum, Mul, Placeholder};
use tensorcast_graph::ops::{PlaceholderAttrs, Sub};
use tensorcast_graph::{Output, Scope};

/// A built graph with what to feed and fetch.
#[derive(Debug)]
pub struct BroadcastGraph {
    /// The scope the graph was built in (its graph is the graph).
    pub scope: Scope,
    /// `x`'s value.
    pub feeds: Vec<(String, Tensor)>,
    /// Every element-wise output (never a `BroadcastTo`, which the rewrite may remove).
    pub fetches: Vec<String>,
}

/// A new root scope with a float placeholder `x` of shape `[1, 3]` and `b = BroadcastTo(x,
/// [2, 3])`: the start of the smallest graphs whose `BroadcastTo` the rewrite removes (or keeps).
/// Returns the scope, `x` and `b`.
pub fn placeholder_broadcast() -> (Scope, Output, Output) {
    let root = Scope::new_root_scope();
    let x = Placeholder::with_attrs(
        &root.with_op_name("x"),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(PartialTensorShape::new(&[1, 3]).unwrap()),
    )
    .expect("a placeholder builds")
    .output;
    let b = BroadcastTo::new(&root.with_op_name("b"), &x, [2i32, 3])
        .expect("x broadcasts to [2, 3]")
        .output;
    (root, x, b)
}

/// xorshift64*: enough randomness for graph shapes, identical everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The graph of `seed`: a placeholder `x` of a random shape (dims 1-3, rank 0-3), then
/// `steps` ops, each a `BroadcastTo` of an earlier output to a random shape it broadcasts to
/// (1-dims widened, a dim prepended), or an element-wise op (`AddV2`, `Mul`, `Sub`, `Maximum`,
/// `Equal` cast back) of two earlier outputs, the same one twice included. Ops whose shapes do
/// not broadcast are skipped.
pub fn broadcast_graph(seed: u64, steps: usize) -> BroadcastGraph {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let rank = rng.below(4) as usize;
    let dims: Vec<i64> = (0..rank).map(|_| 1 + rng.below(3) as i64).collect();
    let root = Scope::new_root_scope();
    let x = Placeholder::with_attrs(
        &root.with_op_name("x"),
        DataType::FLOAT,
        PlaceholderAttrs::default().shape(PartialTensorShape::new(&dims).unwrap_or_default()),
    )
    .expect("a placeholder builds")
    .output;
    let mut outs: Vec<Output> = vec![x];
    let mut fetches = Vec::new();
    for _ in 0..steps {
        let a = outs[rng.below(outs.len() as u64) as usize].clone();
        let b = if rng.below(4) == 0 {
            a.clone()
        } else {
            outs[rng.below(outs.len() as u64) as usize].clone()
        };
        let kind = rng.below(6);
        let built = if kind < 2 {
            let Some(d) = a.shape().dims().map(<[i64]>::to_vec) else {
                continue;
            };
            let mut target: Vec<i32> = d
                .iter()
                .map(|&x| {
                    if x == 1 && rng.below(2) == 0 {
                        2 + rng.below(2) as i32
                    } else {
                        x as i32
                    }
                })
                .collect();
            if target.len() < 4 && rng.below(2) == 0 {
                target.insert(0, 1 + rng.below(2) as i32);
            }
            BroadcastTo::new(&root, &a, target).map(|o| (o.output, false))
        } else {
            match kind {
                2 => AddV2::new(&root, &a, &b).map(|o| o.z),
                3 => Mul::new(&root, &a, &b).map(|o| o.z),
                4 => Sub::new(&root, &a, &b).map(|o| o.z),
                _ => Maximum::new(&root, &a, &b).map(|o| o.z),
            }
            .map(|o| (o, true))
        };
        match built {
            Ok((o, fetch)) => {
                if fetch {
                    fetches.push(o.name());
                }
                outs.push(o);
            }
            Err(_) => {
                // A shape that does not broadcast: the scope keeps the error; start a fresh
                // status by building on, since the failed node was never added.
                return finish(root, &dims, seed, fetches, rng.below(2) == 0);
            }
        }
    }
    finish(root, &dims, seed, fetches, true)
}

fn finish(
    scope: Scope,
    dims: &[i64],
    seed: u64,
    mut fetches: Vec<String>,
    with_equal: bool,
) -> BroadcastGraph {
    if with_equal && scope.ok() {
        if let Some(last) = fetches.last().cloned() {
            let last = scope
                .graph()
                .operation_by_name(last.trim_end_matches(":0"))
                .map(Output::from);
            if let Some(o) = last {
                if let Ok(e) = Equal::new(&scope, &o, 1.0f32) {
                    fetches.push(e.z.name());
                }
            }
        }
    }
    let shape = TensorShape::new(dims).unwrap_or_default();
    let n = shape.num_elements_usize();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as u64).wrapping_mul(seed | 1) % 7) as f32 - 3.0)
        .collect();
    let x = Tensor::from_vec(v, &shape).expect("x's value");
    BroadcastGraph {
        scope,
        feeds: vec![("x:0".to_string(), x)],
        fetches,
    }
}
