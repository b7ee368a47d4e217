//! Real models, checked against TensorFlow: small Keras models of the architectures users run
//! (an MLP, a CNN with batch norm and pooling, a depthwise-separable CNN, a Transformer encoder
//! block, MobileNetV3Small), frozen and saved by TensorFlow 2.21 through
//! `tests/models/gen_models.py`, run here through `Session::run` (the frozen GraphDef) and
//! `SavedModel::run` (the SavedModel's signature), each output compared with TensorFlow's.
//!
//! Models that need ops without a kernel yet are listed in `KNOWN_GAPS` with the exact
//! missing-kernel report they must give.
//!
//! The models come from the folder `TENSORCAST_MODELS_DIR` (scripts/test.sh generates them into
//! `target/tf_models` with the pinned TensorFlow). Without it the test says so and passes,
//! except under `CI=true`, where a missing folder fails the run.
//!
//! Bound: `|ours - tf| <= 1e-4 * (1 + |tf|)` element-wise for the float outputs (the models'
//! matmuls and convolutions sum up to a few thousand products of unit-scale values; the per-op
//! bounds are stated in the kernels crate). The largest error seen is printed.

use std::path::PathBuf;

use serde_json::Value;
use tensorcast::graph::{import_graph_def_bytes, Graph, SavedModel, Session};
use tensorcast::io::{npz, ReadOptions};
use tensorcast::Tensor;

/// Models whose graphs need ops tensorcast has no kernel for yet, with those ops: each must
/// fail with exactly that list (so that a kernel landing, or a new gap, updates this table).
const KNOWN_GAPS: &[(&str, &str)] = &[];

fn models_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TENSORCAST_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tf_models"));
    dir.join("manifest.json").is_file().then_some(dir)
}

fn compare(name: &str, what: &str, got: &Tensor, want: &Tensor) -> Result<f64, String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!(
            "{name} {what}: {} {} != TensorFlow's {} {}",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let a = got.to_vec::<f32>().map_err(|e| e.to_string())?;
    let b = want.to_vec::<f32>().map_err(|e| e.to_string())?;
    let mut worst = 0.0f64;
    for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
        let err = (f64::from(x) - f64::from(y)).abs();
        let bound = 1e-4 * (1.0 + f64::from(y).abs());
        if err.is_nan() || err > bound {
            return Err(format!(
                "{name} {what}: element {i} is {x}, TensorFlow's {y} (error {err:e} > bound {bound:e})"
            ));
        }
        worst = worst.max(err / (1.0 + f64::from(y).abs()));
    }
    Ok(worst)
}

#[test]
fn real_models_match_tensorflow() {
    let Some(dir) = models_dir() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no models: scripts/test.sh generates them (tests/models/gen_models.py)"
        );
        eprintln!("real models: no models folder (run tests/models/gen_models.py); not checked");
        return;
    };
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for m in &manifest {
        let name = m["name"].as_str().unwrap();
        let npz_bytes = std::fs::read(dir.join(format!("{name}.npz"))).unwrap();
        let data = npz::read_with(
            tensorcast::buffer::Buffer::copy_from_slice(&npz_bytes).unwrap(),
            &ReadOptions::default(),
        )
        .unwrap();
        let member = |key: &str| -> Tensor {
            data.iter()
                .find(|t| t.name == key)
                .unwrap_or_else(|| panic!("{name}: no member {key}"))
                .tensor
                .clone()
        };
        // The frozen graph through Session::run.
        let bytes = std::fs::read(dir.join(format!("{name}.pb"))).unwrap();
        let graph = Graph::new();
        import_graph_def_bytes(&graph, &bytes).unwrap();
        let feeds: Vec<(String, Tensor)> = m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["name"].as_str().unwrap().to_string(),
                    member(i["member"].as_str().unwrap()),
                )
            })
            .collect();
        let feed_refs: Vec<(&str, Tensor)> =
            feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        let outputs = m["outputs"].as_array().unwrap();
        let fetches: Vec<&str> = outputs
            .iter()
            .map(|o| o["name"].as_str().unwrap())
            .collect();
        match Session::new(&graph).run(&feed_refs, &fetches, &[]) {
            Ok(out) => {
                for (o, t) in outputs.iter().zip(&out) {
                    let want = member(o["member"].as_str().unwrap());
                    match compare(name, "frozen graph", t, &want) {
                        Ok(worst) => eprintln!("{name} frozen graph: max relative error {worst:e}"),
                        Err(e) => failures.push(e),
                    }
                }
            }
            Err(e) => match KNOWN_GAPS.iter().find(|(m, _)| *m == name) {
                Some((_, gap)) if e.to_string() == *gap => {
                    eprintln!("{name}: known gap: {gap}");
                    continue;
                }
                _ => failures.push(format!("{name} frozen graph: {}", e.full_message())),
            },
        }
        if KNOWN_GAPS.iter().any(|(m, _)| *m == name) {
            failures.push(format!(
                "{name}: listed in KNOWN_GAPS but runs: update the table"
            ));
        }
        // The SavedModel's signature.
        match SavedModel::load(dir.join(format!("{name}_saved_model")), &["serve"]) {
            Ok(sm) => {
                let inputs: Vec<(&str, Tensor)> = m["saved_model_inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .zip(&feeds)
                    .map(|(k, (_, t))| (k.as_str().unwrap(), t.clone()))
                    .collect();
                match sm.run("serving_default", &inputs) {
                    Ok(out) => {
                        let want = member(outputs[0]["member"].as_str().unwrap());
                        match compare(name, "SavedModel", &out[0].1, &want) {
                            Ok(worst) => {
                                eprintln!("{name} SavedModel: max relative error {worst:e}")
                            }
                            Err(e) => failures.push(e),
                        }
                    }
                    Err(e) => failures.push(format!("{name} SavedModel: {}", e.full_message())),
                }
            }
            Err(e) => failures.push(format!("{name} SavedModel load: {}", e.full_message())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
