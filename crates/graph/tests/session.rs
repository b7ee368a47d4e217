//! Running graphs: names, feeds, run-time errors, the optimization pass.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_graph::ops::{
    BroadcastTo, Cast, Const, Equal, Identity, Placeholder, PlaceholderAttrs, Reshape,
};
use tensorcast_graph::{Scope, Session, SessionOptions};

fn ph(s: &Scope, name: &str, dtype: DataType, dims: &[i64]) -> Placeholder {
    let shape = PartialTensorShape::new(dims).unwrap();
    Placeholder::with_attrs(
        &s.with_op_name(name),
        dtype,
        PlaceholderAttrs::default().shape(shape),
    )
    .unwrap()
}

#[test]
fn run_unknown_names_and_missing_feeds_give_tensorflows_messages() {
    let root = Scope::new_root_scope();
    let x = ph(&root, "x", DataType::FLOAT, &[2]);
    Identity::new(&root.with_op_name("y"), &x).unwrap();
    let s = Session::new(root.graph());
    assert_eq!(
        s.run(&[], &["zz:0"], &[]).unwrap_err().to_string(),
        "The name 'zz:0' refers to a Tensor which does not exist. The operation, 'zz', does not exist in the graph."
    );
    assert_eq!(
        s.run(&[], &["y:0"], &[]).unwrap_err().to_string(),
        "You must feed a value for placeholder tensor 'x' with dtype float and shape [2]"
    );
    assert!(s
        .run(&[("x", Tensor::vector(&[1i32, 2]))], &["y"], &[])
        .is_err());
    assert!(s
        .run(&[("x", Tensor::vector(&[1.0f32]))], &["y"], &[])
        .is_err());
    let ok = s
        .run(&[("x:0", Tensor::vector(&[1.0f32, 2.0]))], &["y"], &["y"])
        .unwrap();
    assert_eq!(ok[0], Tensor::vector(&[1.0f32, 2.0]));
    // Fed tensors cut the graph: y fed directly needs no x.
    let fed = s
        .run(&[("y:0", Tensor::vector(&[5.0f32, 6.0]))], &["y:0"], &[])
        .unwrap();
    assert_eq!(fed[0], Tensor::vector(&[5.0f32, 6.0]));
}

#[test]
fn run_errors_name_the_node() {
    let root = Scope::new_root_scope();
    let x = ph(&root, "x", DataType::FLOAT, &[-1, 3]);
    Reshape::new(&root.with_op_name("r"), &x, [4i32, -1]).unwrap();
    let e = Session::new(root.graph())
        .run(
            &[(
                "x",
                Tensor::from_vec(vec![0.0f32; 6], TensorShape::new(&[2, 3]).unwrap()).unwrap(),
            )],
            &["r"],
            &[],
        )
        .unwrap_err();
    assert_eq!(e.node(), Some("r"));
    assert_eq!(e.to_string(), "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4");
    // TensorFlow 2.21's runtime text (TF_SessionRun's status message) for the same failure.
    assert_eq!(e.full_message(), "Input to reshape is a tensor with 6 values, but the requested shape requires a multiple of 4\n\t [[{{node r}}]]");
}

/// The optimization pass changes nothing observable: same values, same errors.
#[test]
fn optimized_and_unoptimized_runs_agree() {
    let root = Scope::new_root_scope();
    let a = ph(&root, "a", DataType::FLOAT, &[1, -1]);
    let b = ph(&root, "b", DataType::FLOAT, &[-1, -1]);
    let s = Placeholder::new(&root.with_op_name("s"), DataType::INT32).unwrap();
    let bt = BroadcastTo::new(&root, &a, &s).unwrap();
    let eq = Equal::new(&root.with_op_name("eq"), &bt, &b).unwrap();
    let c = Cast::new(&root.with_op_name("c"), &bt, DataType::INT32).unwrap();
    let chain = BroadcastTo::new(
        &root.with_op_name("chain"),
        Identity::new(&root, &bt).unwrap(),
        &s,
    )
    .unwrap();
    let e2 = Equal::new(
        &root.with_op_name("e2"),
        &chain,
        Const::new(&root, 1.0f32).unwrap(),
    )
    .unwrap();
    let fetches = ["eq:0", "c:0", "e2:0"];
    let _ = (eq, c, e2);
    type Case = (Vec<f32>, Vec<i64>, Vec<f32>, Vec<i64>, Vec<i32>);
    let cases: Vec<Case> = vec![
        (
            vec![1.0, 2.0, 3.0],
            vec![1, 3],
            vec![1.0, 0.0, 3.0, 1.0, 2.0, 3.0],
            vec![2, 3],
            vec![2, 3],
        ),
        (
            vec![1.0, 2.0, 3.0],
            vec![1, 3],
            vec![1.0, 0.0, 3.0],
            vec![1, 3],
            vec![1, 3],
        ),
        (
            vec![1.0, 2.0, 3.0],
            vec![1, 3],
            vec![1.0, 0.0, 3.0, 1.0, 2.0, 3.0],
            vec![2, 3],
            vec![3, 3],
        ),
        (
            vec![1.0, 2.0],
            vec![1, 2],
            vec![1.0, 0.0, 3.0, 1.0, 2.0, 3.0],
            vec![2, 3],
            vec![2, 3],
        ),
        (
            vec![1.0],
            vec![1, 1],
            vec![1.0, 0.0, 3.0, 1.0, 2.0, 3.0],
            vec![2, 3],
            vec![2, 3],
        ),
    ];
    for (av, ad, bv, bd, sv) in cases {
        let feeds = [
            (
                "a",
                Tensor::from_vec(av, TensorShape::new(&ad).unwrap()).unwrap(),
            ),
            (
                "b",
                Tensor::from_vec(bv, TensorShape::new(&bd).unwrap()).unwrap(),
            ),
            ("s", Tensor::vector(&sv)),
        ];
        let on = Session::new(root.graph()).run(&feeds, &fetches, &[]);
        let off = Session::with_options(
            root.graph(),
            SessionOptions {
                optimize: false,
                ..SessionOptions::default()
            },
        )
        .run(&feeds, &fetches, &[]);
        match (on, off) {
            (Ok(x), Ok(y)) => assert_eq!(x, y),
            (Err(x), Err(y)) => assert_eq!(
                (x.to_string(), x.node().map(String::from)),
                (y.to_string(), y.node().map(String::from))
            ),
            (x, y) => panic!("optimized {x:?} vs unoptimized {y:?}"),
        }
    }
}
