//! `SavedModel`: loading the SavedModels TensorFlow 2.21 wrote for the conformance vectors
//! (tests/tf_observed/saved_models, made by gen_saved_model_run.py), and the errors of a load
//! or a signature call that does not fit.

use std::path::PathBuf;

use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_graph::SavedModel;

fn model(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/tf_observed/saved_models")
        .join(name)
}

fn x() -> Tensor {
    Tensor::from_slice(&[1.0f32, 2.0], TensorShape::new(&[1, 2]).unwrap()).unwrap()
}

#[test]
fn variables_are_restored_and_the_signature_runs() {
    let sm = SavedModel::load(model("affine"), &["serve"]).unwrap();
    assert_eq!(sm.signature_keys(), ["serving_default"]);
    assert_eq!(
        sm.session().variable("w").unwrap().to_vec::<f32>().unwrap(),
        [2.0, -3.0]
    );
    let out = sm.run("serving_default", &[("x", x())]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, "y");
    // x * w + b = [1*2 + 0.5, 2*-3 + 0.25]
    assert_eq!(out[0].1.to_vec::<f32>().unwrap(), [2.5, -5.75]);
    let sig = sm.signature("serving_default").unwrap();
    assert_eq!(sig.inputs[0].key, "x");
}

#[test]
fn a_tag_set_the_model_lacks_is_tensorflows_error() {
    let e = SavedModel::load(model("affine"), &["train"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Could not find meta graph def matching supplied tags: { train }. To inspect available tag-sets in the SavedModel, please use the SavedModel CLI: `saved_model_cli`"
    );
    let e = SavedModel::load(model("no_such_model"), &["serve"]).unwrap_err();
    assert!(
        e.to_string().contains("SavedModel file does not exist"),
        "{e}"
    );
}

#[test]
fn signature_calls_that_do_not_fit_are_refused() {
    let sm = SavedModel::load(model("affine"), &["serve"]).unwrap();
    let e = sm.run("predict", &[("x", x())]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "signature 'predict' not found; the model has serving_default"
    );
    let e = sm.run("serving_default", &[("z", x())]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "signature 'serving_default' has no input 'z'; its inputs are x"
    );
    let e = sm.run("serving_default", &[]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "signature 'serving_default' needs input 'x', which was not given"
    );
    let e = sm
        .run("serving_default", &[("x", Tensor::vector(&[1i32, 2]))])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "input 'x' of signature 'serving_default' must be a float tensor, got a int32 tensor"
    );
    // A shape the signature's placeholder does not allow: the session's feed check.
    let e = sm
        .run(
            "serving_default",
            &[("x", Tensor::vector(&[1.0f32, 2.0, 3.0]))],
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("Cannot feed value of shape [3]"),
        "{e}"
    );
    assert_eq!(DataType::FLOAT.name(), "float");
}
