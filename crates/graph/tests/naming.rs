//! TensorFlow's C++ naming rules.

use tensorcast_core::DataType;
use tensorcast_graph::ops::{AddV2, Const, Identity, Placeholder};
use tensorcast_graph::Scope;

#[test]
fn default_names_repeat_with_counter() {
    let root = Scope::new_root_scope();
    let names: Vec<String> = (0..3)
        .map(|_| Const::new(&root, 1.0f32).unwrap().operation.name())
        .collect();
    assert_eq!(names, ["Const", "Const_1", "Const_2"]);
}

#[test]
fn explicit_name_taken_is_uniquified_with_collision_loop() {
    let root = Scope::new_root_scope();
    let a = Const::new(&root.with_op_name("Const_1"), 1i32).unwrap();
    let rest: Vec<String> = (0..3)
        .map(|_| Const::new(&root, 1i32).unwrap().operation.name())
        .collect();
    assert_eq!(a.operation.name(), "Const_1");
    assert_eq!(rest, ["Const", "Const_2", "Const_3"]);
    let x1 = Const::new(&root.with_op_name("x"), 1i32).unwrap();
    let x2 = Const::new(&root.with_op_name("x"), 1i32).unwrap();
    assert_eq!(
        (x1.operation.name(), x2.operation.name()),
        ("x".into(), "x_1".into())
    );
}

#[test]
fn names_are_case_sensitive() {
    let root = Scope::new_root_scope();
    let a = Const::new(&root.with_op_name("const"), 1i32).unwrap();
    let b = Const::new(&root, 1i32).unwrap();
    assert_eq!(
        (a.operation.name(), b.operation.name()),
        ("const".into(), "Const".into())
    );
}

#[test]
fn sub_scopes_share_parent_map_with_ops() {
    let root = Scope::new_root_scope();
    let lin = root.new_sub_scope("linear");
    let c = Const::new(&lin, 1.0f32).unwrap();
    assert_eq!(c.operation.name(), "linear/Const");
    let op = Const::new(&root.with_op_name("linear"), 1.0f32).unwrap();
    assert_eq!(op.operation.name(), "linear_1");
    let again = root.new_sub_scope("linear");
    assert_eq!(
        Const::new(&again, 1.0f32).unwrap().operation.name(),
        "linear_2/Const"
    );
    let b = Const::new(&lin.with_op_name("b_3"), 1.0f32).unwrap();
    assert_eq!(b.operation.name(), "linear/b_3");
    let shared = root.new_sub_scope("");
    assert_eq!(
        Const::new(&shared, 1.0f32).unwrap().operation.name(),
        "Const"
    );
    assert_eq!(
        Const::new(&root, 1.0f32).unwrap().operation.name(),
        "Const_1"
    );
}

#[test]
fn implicit_constants_are_named_const_slash_const() {
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root.with_op_name("x"), DataType::FLOAT).unwrap();
    let y = AddV2::new(&root, &x, 1.0f32).unwrap();
    let z = AddV2::new(&root, &y, 2.0f32).unwrap();
    assert_eq!(y.node().inputs(), ["x", "Const/Const"]);
    assert_eq!(z.node().inputs(), ["AddV2", "Const_1/Const"]);
    // The sub-scope name consumed "Const": an explicit Const now gets Const_2.
    assert_eq!(
        Const::new(&root, 3.0f32).unwrap().operation.name(),
        "Const_2"
    );
    let lin = root.new_sub_scope("linear");
    let w = AddV2::new(&lin, &x, 1.0f32).unwrap();
    assert_eq!(w.node().inputs()[1], "linear/Const/Const");
}

#[test]
fn control_inputs_are_sorted_by_name_and_written_after_data() {
    let root = Scope::new_root_scope();
    let b = Const::new(&root.with_op_name("b_dep"), 1i32).unwrap();
    let a = Const::new(&root.with_op_name("a_dep"), 1i32).unwrap();
    let x = Const::new(&root.with_op_name("x"), 1i32).unwrap();
    let s = root
        .with_control_dependencies([&b.operation])
        .with_control_dependencies([&a.operation]);
    let y = Identity::new(&s, &x).unwrap();
    assert_eq!(y.node().inputs(), ["x", "^a_dep", "^b_dep"]);
    let none = s.with_no_control_dependencies();
    assert_eq!(Identity::new(&none, &x).unwrap().node().inputs(), ["x"]);
}

#[test]
fn output_names_always_carry_the_index() {
    let root = Scope::new_root_scope();
    let c = Const::new(&root.new_sub_scope("linear"), [1.0f32, 2.0]).unwrap();
    assert_eq!(c.output.name(), "linear/Const:0");
    assert_eq!(c.node().op_type(), "Const");
    assert_eq!(c.output.shape().to_string(), "[2]");
}

#[test]
fn defaults_are_written_into_every_node() {
    let root = Scope::new_root_scope();
    let x = Placeholder::new(&root, DataType::FLOAT).unwrap();
    let n = x.node();
    assert_eq!(n.attrs().keys().collect::<Vec<_>>(), ["dtype", "shape"]);
    let c = tensorcast_graph::ops::Cast::new(&root, &x, DataType::INT32).unwrap();
    assert_eq!(
        c.node().attrs().keys().collect::<Vec<_>>(),
        ["DstT", "SrcT", "Truncate"]
    );
    let e = tensorcast_graph::ops::Equal::new(&root, &x, &x).unwrap();
    assert_eq!(
        e.node().attrs().keys().collect::<Vec<_>>(),
        ["T", "incompatible_shape_error"]
    );
}
