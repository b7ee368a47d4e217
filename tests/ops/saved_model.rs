//! `tf_observed/saved_model.jsonl`: SavedModels TensorFlow 2.21 wrote (records of op
//! `saved_model`, see `gen_saved_model.py`).
//!
//! The files are laid out in a fresh folder; tensorcast must then print what
//! `saved_model_cli show --dir D --all` prints up to its `Concrete Functions:` part (which
//! loads the model in Python; not printed), with the ops line's Python set sorted, followed by
//! its own `Variables:` part; report the tag sets and signatures TensorFlow's parser reports;
//! list the object graph's variables with TensorFlow's paths, names, dtypes and shapes; read
//! every variable's value as TensorFlow reads it from `variables/`; and read `fingerprint.pb`
//! as `tf.saved_model.experimental.read_fingerprint` does; re-encode `saved_model.pb` to
//! TensorFlow's bytes exactly (nothing lost); and print `show`, `show --tag_set T`
//! and `show --tag_set T --signature_def S` as TensorFlow does.

use serde_json::Value;
use tensorcast::io::saved_model::{shape_text, show_signature, SavedModel, SignatureTensor};
use tensorcast::io::ReadOptions;
use tensorcast::proto::Message;
use tensorcast::TString;

use crate::{hex_decode, hex_encode, Outcome};

pub fn run(rec: &Value) -> Outcome {
    match check(rec) {
        Ok(()) => Outcome::Pass,
        Err(e) => Outcome::Fail(e),
    }
}

fn lay_out(rec: &Value) -> Result<tempfile::TempDir, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let files = rec["files"].as_object().ok_or("record without files")?;
    for (name, hex) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let bytes = hex_decode(hex.as_str().ok_or("file is not hex")?)?;
        std::fs::write(path, bytes).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// TensorFlow's output up to `Concrete Functions:`, its ops lines' sets sorted.
fn expected_show(rec: &Value) -> Result<String, String> {
    let raw = hex_decode(rec["show_all"].as_str().ok_or("no show_all")?)?;
    let text = String::from_utf8(raw).map_err(|e| e.to_string())?;
    let head = text
        .split("\nConcrete Functions:")
        .next()
        .unwrap_or_default();
    let mut out = String::new();
    for line in head.split_inclusive('\n') {
        const OPS: &str = " contains the following ops: {";
        match line.find(OPS) {
            Some(at) if line.starts_with("The MetaGraph with tag set ") => {
                let set = line[at + OPS.len()..].trim_end().trim_end_matches('}');
                let mut ops: Vec<&str> = set.split(", ").collect();
                ops.sort_unstable_by_key(|o| o.trim_matches('\''));
                out.push_str(&line[..at + OPS.len()]);
                out.push_str(&ops.join(", "));
                out.push_str("}\n");
            }
            _ => out.push_str(line),
        }
    }
    Ok(out)
}

fn shape_json(v: &Value) -> Option<Vec<i64>> {
    v.as_array()
        .map(|a| a.iter().map(|d| d.as_i64().unwrap_or(i64::MIN)).collect())
}

fn check_tensors(what: &str, got: &[SignatureTensor], want: &Value) -> Result<(), String> {
    let want = want.as_object().ok_or(format!("{what}: not an object"))?;
    let keys: Vec<&str> = got.iter().map(|t| t.key.as_str()).collect();
    let want_keys: Vec<&str> = want.keys().map(String::as_str).collect();
    if keys != want_keys {
        return Err(format!(
            "{what}: keys {keys:?} != TensorFlow's {want_keys:?}"
        ));
    }
    for t in got {
        let w = &want[&t.key];
        if t.dtype_name() != w["dtype"].as_str().unwrap_or("")
            || t.shape != shape_json(&w["shape"])
            || t.name != w["name"].as_str().unwrap_or("")
        {
            return Err(format!("{what}[{}]: {t:?} != TensorFlow's {w}", t.key));
        }
    }
    Ok(())
}

fn check(rec: &Value) -> Result<(), String> {
    let name = rec["name"].as_str().unwrap_or("?");
    let dir = lay_out(rec)?;
    let sm = SavedModel::open(dir.path(), &ReadOptions::default())
        .map_err(|e| format!("{name}: open: {e}"))?;

    // Nothing lost: re-encoding the decoded saved_model.pb gives TensorFlow's bytes back; for
    // a saved_model.pbtxt, the bytes of the message TensorFlow's reader parses the text into.
    let pb = match rec["files"]["saved_model.pb"].as_str() {
        Some(hex) => hex_decode(hex)?,
        None => hex_decode(
            rec["binary_of_text"]
                .as_str()
                .ok_or("record with neither saved_model.pb nor binary_of_text")?,
        )?,
    };
    let again = sm.proto().encode_to_vec();
    if again != pb {
        let at = again.iter().zip(&pb).position(|(a, b)| a != b);
        return Err(format!(
            "{name}: re-encoded saved_model differs from TensorFlow's (at {at:?}, {} vs {} bytes)",
            again.len(),
            pb.len()
        ));
    }

    // Signatures as TensorFlow's parser reports them.
    let sigs = rec["signatures"].as_object().ok_or("no signatures")?;
    let tag_sets: Vec<String> = sm.tag_sets().iter().map(|t| t.join(",")).collect();
    let mut want_tags: Vec<String> = sigs.keys().cloned().collect();
    want_tags.sort();
    if tag_sets != want_tags {
        return Err(format!("{name}: tag sets {tag_sets:?} != {want_tags:?}"));
    }
    for (tags, want) in sigs {
        let tags: Vec<&str> = tags.split(',').collect();
        let got = sm.signatures(&tags).ok_or("no meta graph")?;
        let want = want.as_object().ok_or("signatures not an object")?;
        let keys: Vec<&str> = got.iter().map(|s| s.key.as_str()).collect();
        let want_keys: Vec<&str> = want.keys().map(String::as_str).collect();
        if keys != want_keys {
            return Err(format!("{name}: signature keys {keys:?} != {want_keys:?}"));
        }
        for s in &got {
            let w = &want[&s.key];
            if s.method_name != w["method_name"].as_str().unwrap_or("") {
                return Err(format!("{name}: {} method name {}", s.key, s.method_name));
            }
            check_tensors(
                &format!("{name}: {} inputs", s.key),
                &s.inputs,
                &w["inputs"],
            )?;
            check_tensors(
                &format!("{name}: {} outputs", s.key),
                &s.outputs,
                &w["outputs"],
            )?;
        }
        let meta = sm.meta_graph(&tags).ok_or("no meta graph")?;
        let ops: Vec<String> = SavedModel::ops(meta)
            .map_err(|e| e.to_string())?
            .into_iter()
            .collect();
        if serde_json::json!(ops) != rec["ops"] {
            return Err(format!(
                "{name}: ops {ops:?} != TensorFlow's {}",
                rec["ops"]
            ));
        }
    }

    // Variables: paths, dtypes, shapes and values.
    let vars = sm.variables().map_err(|e| e.to_string())?;
    let want = rec["variables"].as_array().ok_or("no variables")?;
    if vars.len() != want.len() {
        return Err(format!(
            "{name}: {} variables, TensorFlow {}",
            vars.len(),
            want.len()
        ));
    }
    let mut show_vars = String::from("\nVariables:\n");
    for (v, w) in vars.iter().zip(want) {
        if v.path != w["path"].as_str().unwrap_or("")
            || v.name != w["name"].as_str().unwrap_or("")
            || v.dtype_name() != w["dtype"].as_str().unwrap_or("")
            || v.shape != shape_json(&w["shape"])
            || Some(v.trainable) != w["trainable"].as_bool()
        {
            return Err(format!("{name}: variable {v:?} != TensorFlow's {w}"));
        }
        show_vars.push_str(&format!(
            "  {}: {} {}\n",
            v.path,
            v.dtype_name(),
            shape_text(v.shape.as_deref())
        ));
        let t = sm
            .read_variable(v)
            .map_err(|e| format!("{name}: read {}: {e}", v.path))?;
        if Some(t.shape().dim_sizes().to_vec()) != v.shape {
            return Err(format!("{name}: {} read with shape {}", v.path, t.shape()));
        }
        if let Some(strings) = w["strings"].as_array() {
            let got = t.as_slice::<TString>().map_err(|e| e.to_string())?;
            let want: Vec<TString> = strings
                .iter()
                .map(|s| hex_decode(s.as_str().unwrap_or("")).map(TString::from))
                .collect::<Result<_, _>>()?;
            if got != want.as_slice() {
                return Err(format!("{name}: {} strings {got:?} != {want:?}", v.path));
            }
        } else {
            let got = t.tensor_data().map_err(|e| e.to_string())?;
            if hex_encode(got) != w["hex"].as_str().unwrap_or("") {
                return Err(format!(
                    "{name}: {} bytes {} != {}",
                    v.path,
                    hex_encode(got),
                    w["hex"]
                ));
            }
        }
    }

    // saved_model_cli show --all.
    let mut want_show = expected_show(rec)?;
    if !vars.is_empty() {
        want_show.push_str(&show_vars);
    }
    let got_show = sm.show_all();
    if got_show != want_show {
        return Err(format!(
            "{name}: show_all differs:\n--- tensorcast\n{got_show}\n--- TensorFlow\n{want_show}"
        ));
    }

    // `show`, `show --tag_set T`, `show --tag_set T --signature_def S`.
    if let Some(views) = rec["show"].as_object() {
        for (view, hex) in views {
            let want = String::from_utf8(hex_decode(hex.as_str().unwrap_or(""))?)
                .map_err(|e| e.to_string())?;
            let (tags, key) = view.split_once('/').unwrap_or((view, ""));
            let tags: Vec<&str> = tags.split(',').collect();
            let got = if view.is_empty() {
                sm.show_tag_sets()
            } else if key.is_empty() {
                sm.show_signature_keys(&tags).unwrap_or_default()
            } else {
                let sigs = sm.signatures(&tags).unwrap_or_default();
                let sig = sigs
                    .iter()
                    .find(|s| s.key == key)
                    .ok_or("no such signature")?;
                show_signature(sig, 0)
            };
            if got != want {
                return Err(format!(
                    "{name}: show {view:?}: {got:?} != TensorFlow's {want:?}"
                ));
            }
        }
    }

    // fingerprint.pb.
    if rec["fingerprint"].is_null() {
        return match sm.fingerprint() {
            None => Ok(()),
            Some(_) => Err(format!("{name}: a fingerprint TensorFlow does not see")),
        };
    }
    let fp = sm.fingerprint().ok_or(format!("{name}: no fingerprint"))?;
    let w = &rec["fingerprint"];
    let got = [
        ("saved_model_checksum", fp.saved_model_checksum),
        ("graph_def_program_hash", fp.graph_def_program_hash),
        ("signature_def_hash", fp.signature_def_hash),
        ("saved_object_graph_hash", fp.saved_object_graph_hash),
        ("checkpoint_hash", fp.checkpoint_hash),
    ];
    for (k, v) in got {
        if w[k].as_str() != Some(v.to_string().as_str()) {
            return Err(format!(
                "{name}: fingerprint {k} {v} != TensorFlow's {}",
                w[k]
            ));
        }
    }
    if w["singleprint"].as_str() != Some(fp.singleprint().as_str()) {
        return Err(format!("{name}: singleprint {}", fp.singleprint()));
    }
    Ok(())
}
