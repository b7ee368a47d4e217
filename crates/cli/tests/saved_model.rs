//! `tensorcast saved-model show` on SavedModels TensorFlow 2.21 wrote
//! (`tests/tf_observed/saved_model.jsonl`) and on damaged folders.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{hex, run};
use crate::common::{stderr, temp_dir};

fn records() -> Vec<Value> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/tf_observed/saved_model.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn lay_out(rec: &Value, name: &str) -> PathBuf {
    let dir = temp_dir(name);
    for (file, h) in rec["files"].as_object().unwrap() {
        let p = dir.join(file);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, hex(h.as_str().unwrap())).unwrap();
    }
    dir
}

/// TensorFlow's `show --all` up to `Concrete Functions:`, the ops set sorted.
fn tf_show_all(rec: &Value) -> String {
    let text = String::from_utf8(hex(rec["show_all"].as_str().unwrap())).unwrap();
    let head = text.split("\nConcrete Functions:").next().unwrap();
    head.split_inclusive('\n')
        .map(|line| {
            const OPS: &str = " contains the following ops: {";
            match line.find(OPS) {
                Some(at) => {
                    let set = line[at + OPS.len()..].trim_end().trim_end_matches('}');
                    let mut ops: Vec<&str> = set.split(", ").collect();
                    ops.sort();
                    format!("{}{}}}\n", &line[..at + OPS.len()], ops.join(", "))
                }
                None => line.to_string(),
            }
        })
        .collect()
}

#[test]
fn saved_model_show_all_tf_models_match_saved_model_cli() {
    for rec in records() {
        let name = rec["name"].as_str().unwrap();
        let dir = lay_out(&rec, &format!("sm_show_all_{name}"));
        let o = run(&["saved-model", "show", dir.to_str().unwrap(), "--all"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let out = String::from_utf8(o.stdout).unwrap();
        let want = tf_show_all(&rec);
        assert!(
            out.starts_with(&want),
            "{name}:\n{out}\n--- TensorFlow:\n{want}"
        );
        let vars = &out[want.len()..];
        if rec["variables"].as_array().unwrap().is_empty() {
            // A TF1 SavedModel: no object graph, so no variables by path.
            assert!(!vars.contains("Variables:"), "{name}: {vars}");
            continue;
        }
        assert!(vars.starts_with("\nVariables:\n"), "{name}: {vars}");
        // Then the fingerprint, where the folder has one.
        let (vars, fingerprint) = vars.split_once("\nFingerprint:\n").unwrap_or((vars, ""));
        if let Some(single) = rec["fingerprint"]["singleprint"].as_str() {
            assert!(
                fingerprint.starts_with(&format!(
                    "  singleprint: {single}\n  saved_model_checksum: "
                )),
                "{name}: {fingerprint}"
            );
        }
        assert_eq!(
            vars.lines().count() - 2,
            rec["variables"].as_array().unwrap().len()
        );
    }
}

#[test]
fn saved_model_show_views_tf_models_match_saved_model_cli() {
    for rec in records() {
        let Some(views) = rec["show"].as_object() else {
            continue;
        };
        let name = rec["name"].as_str().unwrap();
        let dir = lay_out(&rec, &format!("sm_views_{name}"));
        let d = dir.to_str().unwrap();
        for (view, h) in views {
            let mut args = vec!["saved-model", "show", d];
            let (tags, sig) = view.split_once('/').unwrap_or((view, ""));
            if !tags.is_empty() {
                args.extend(["--tag-set", tags]);
            }
            if !sig.is_empty() {
                args.extend(["--signature-def", sig]);
            }
            let o = run(&args);
            assert!(o.status.success(), "{name} {view}: {}", stderr(&o));
            let want = String::from_utf8(hex(h.as_str().unwrap())).unwrap();
            assert_eq!(String::from_utf8(o.stdout).unwrap(), want, "{name} {view}");
        }
    }
}

#[test]
fn saved_model_show_json_lists_signatures_variables_fingerprint() {
    let rec = &records()[0];
    let dir = lay_out(rec, "sm_json");
    let o = run(&["saved-model", "show", dir.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["meta_graphs"][0]["tags"][0], "serve");
    let sig = &v["meta_graphs"][0]["signatures"]["serving_default"];
    assert_eq!(sig["inputs"]["x"]["dtype"], "DT_FLOAT");
    assert_eq!(sig["inputs"]["x"]["shape"], serde_json::json!([-1, 2]));
    assert_eq!(v["variables"][0]["path"], rec["variables"][0]["path"]);
    assert_eq!(
        v["fingerprint"]["singleprint"],
        rec["fingerprint"]["singleprint"]
    );
}

#[test]
fn saved_model_show_damaged_folders_fail_with_one_line() {
    let rec = &records()[0];
    let dir = lay_out(rec, "sm_damaged");
    let d = dir.to_str().unwrap();
    // An unknown tag set and signature.
    let o = run(&["saved-model", "show", d, "--tag-set", "train"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("could not be found"), "{}", stderr(&o));
    let o = run(&[
        "saved-model",
        "show",
        d,
        "--tag-set",
        "serve",
        "--signature-def",
        "nope",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // A truncated saved_model.pb, then none at all.
    let pb = dir.join("saved_model.pb");
    let bytes = std::fs::read(&pb).unwrap();
    std::fs::write(&pb, &bytes[..bytes.len() / 2]).unwrap();
    let o = run(&["saved-model", "show", d, "--all"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("saved_model.pb") && !err.contains("internal error"),
        "{err}"
    );
    assert_eq!(
        err.matches("failed to decode").count(),
        1,
        "a repeated cause: {err}"
    );
    std::fs::remove_file(&pb).unwrap();
    let o = run(&["saved-model", "show", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("SavedModel file does not exist at"),
        "{}",
        stderr(&o)
    );
}
