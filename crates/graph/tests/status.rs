//! Errors: each constructor's `Result`, and the scope's sticky status.

use tensorcast_core::DataType;
use tensorcast_graph::ops::{AddV2, Bitcast, BroadcastTo, Const, Placeholder};
use tensorcast_graph::{Code, Error, Scope};

#[test]
fn first_error_is_sticky_and_later_ops_do_nothing() {
    let root = Scope::new_root_scope();
    let x = Const::new(&root, [1.0f32, 2.0]).unwrap();
    let bad = AddV2::new(&root, &x, [1.0f32, 2.0, 3.0]).unwrap_err();
    assert_eq!(bad.to_string(), "Dimensions must be equal, but are 2 and 3");
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(!root.ok());
    let nodes = root.graph().num_nodes();
    let later = root.new_sub_scope("other");
    let err = Const::new(&later, 1i32).unwrap_err();
    assert_eq!(err, bad);
    assert_eq!(root.graph().num_nodes(), nodes);
    assert_eq!(root.to_graph_def().unwrap_err(), bad);
    assert_eq!(root.status().unwrap_err(), bad);
}

#[test]
fn graph_time_messages_are_tensorflows() {
    let root = Scope::new_root_scope();
    let i8s = Placeholder::new(&root, DataType::INT8).unwrap();
    let e = Bitcast::new(
        &Scope::new_root_scope(),
        Const::new(&Scope::new_root_scope(), [1i8, 2, 3])
            .unwrap()
            .output,
        DataType::INT32,
    );
    assert!(matches!(e, Err(Error::ForeignOutput(_))));
    let root2 = Scope::new_root_scope();
    let c = Const::new(&root2, [1i8, 2, 3]).unwrap();
    assert_eq!(
        Bitcast::new(&root2, &c, DataType::INT32)
            .unwrap_err()
            .to_string(),
        "Cannot bitcast from 6 to 3 due to shape. 3 does not match 4"
    );
    let root3 = Scope::new_root_scope();
    let x = Const::new(&root3, [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]).unwrap();
    assert_eq!(
        BroadcastTo::new(&root3, &x, [4i32, 3])
            .unwrap_err()
            .to_string(),
        "Dimensions must be equal, but are 2 and 4"
    );
    let root4 = Scope::new_root_scope();
    let f = Const::new(&root4, 1.0f32).unwrap();
    let err = AddV2::new(&root4, &f, 1i32).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Inconsistent values for attr 'T' DT_FLOAT vs. DT_INT32"
    );
    let root5 = Scope::new_root_scope();
    let b = Const::new(&root5, true).unwrap();
    assert!(AddV2::new(&root5, &b, &b)
        .unwrap_err()
        .to_string()
        .starts_with(
            "Value for attr 'T' of bool is not in the list of allowed values: bfloat16, half"
        ));
    drop(i8s);
}

#[test]
fn invalid_initializer_is_reported_not_panicked() {
    let root = Scope::new_root_scope();
    let e = Const::new(&root, Const::new(&root, 1i32).unwrap().output).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)));
}
