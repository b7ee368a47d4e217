//! `tensorcast saved-model show DIR [--all | --tag-set T [--signature-def S]] [--json]`: a
//! SavedModel folder shown as TensorFlow's `saved_model_cli show` shows it.
//!
//! `--all` prints the tag sets and signatures byte for byte as `saved_model_cli show --dir D
//! --all` does (its ops line, a Python set there, sorted), then the variables by object path
//! with dtype and shape, in place of TensorFlow's `Concrete Functions:` part (which needs
//! TensorFlow to load the model). `--json` prints the same facts, and the fingerprint, as one
//! JSON object; `--all` ends with the fingerprint (`fingerprint.pb`: its `singleprint` and
//! hashes). Names from the files are escaped before they reach the terminal.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{anyhow, Result};
use serde_json::{json, Value};
use tensorcast::io::saved_model::{show_signature, SavedModel, Signature, SignatureTensor};

use super::source::{read_options, terminal_safe};

/// The `saved-model` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Show tag sets, signatures and variables, as `saved_model_cli show` does.
    Show(ShowArgs),
}

/// Arguments of `saved-model show`.
#[derive(clap::Args, Debug)]
pub(crate) struct ShowArgs {
    /// The SavedModel folder (or its saved_model.pb).
    pub dir: PathBuf,
    /// Everything: every tag set's signatures and ops, then the variables.
    #[arg(long, conflicts_with_all = ["tag_set", "signature_def"])]
    pub all: bool,
    /// A tag set, comma-separated (`serve`, `serve,gpu`): list its signatures.
    #[arg(long, visible_alias = "tag_set", value_name = "TAGS")]
    pub tag_set: Option<String>,
    /// With --tag-set: show this signature's inputs and outputs.
    #[arg(
        long,
        visible_alias = "signature_def",
        value_name = "KEY",
        requires = "tag_set"
    )]
    pub signature_def: Option<String>,
    /// Print JSON (tag sets, signatures, variables, fingerprint) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `saved-model`.
pub(crate) fn run(command: &Command) -> Result<i32> {
    match command {
        Command::Show(a) => show(a),
    }
}

fn show(a: &ShowArgs) -> Result<i32> {
    // The reader's errors name the file they are about.
    let sm = SavedModel::open(&a.dir, &read_options())?;
    warn(&sm);
    let text =
        if a.json {
            let mut v = serde_json::to_string_pretty(&to_json(&sm)?)?;
            v.push('\n');
            v
        } else if a.all {
            let mut s = sm.show_all();
            s.push_str(&fingerprint_text(&sm));
            s
        } else if let Some(tags) = &a.tag_set {
            let tags: Vec<&str> = tags.split(',').map(str::trim).collect();
            let sigs = sm.signatures(&tags).ok_or_else(|| {
                anyhow!(
                "{}: MetaGraphDef associated with tag-set {:?} could not be found in SavedModel",
                a.dir.display(),
                tags.join(",")
            )
            })?;
            match &a.signature_def {
                Some(key) => {
                    let sig =
                        sigs.iter().find(|s| &s.key == key).ok_or_else(|| {
                            anyhow!(
                        "{}: no signature '{key}' in the MetaGraphDef tagged {:?} (it has: {})",
                        a.dir.display(),
                        tags.join(","),
                        sigs.iter().map(|s| s.key.as_str()).collect::<Vec<_>>().join(", ")
                    )
                        })?;
                    show_signature(sig, 0)
                }
                None => sm.show_signature_keys(&tags).unwrap_or_default(),
            }
        } else {
            sm.show_tag_sets()
        };
    let mut out = std::io::stdout().lock();
    out.write_all(terminal_safe(&text).as_bytes())?;
    out.flush()?;
    Ok(super::EXIT_OK)
}

/// Prints what opening the SavedModel went on without (a damaged `fingerprint.pb`), one line
/// each on standard error, as TensorFlow's loader logs it and goes on.
pub(crate) fn warn(sm: &SavedModel) {
    for w in sm.warnings() {
        eprintln!("tensorcast: warning: {}", terminal_safe(w));
    }
}

/// The `fingerprint.pb` part of `show --all` (tensorcast's own, after the variables: TensorFlow
/// reads it with `tf.saved_model.experimental.read_fingerprint`, whose `singleprint()` is the
/// first line).
fn fingerprint_text(sm: &SavedModel) -> String {
    let Some(f) = sm.fingerprint() else {
        return String::new();
    };
    let version = f.version.as_ref().map_or(0, |v| v.producer);
    let mut s = format!(
        "\nFingerprint:\n  singleprint: {}\n  saved_model_checksum: {}\n  graph_def_program_hash: {}\n  \
         signature_def_hash: {}\n  saved_object_graph_hash: {}\n  checkpoint_hash: {}\n  \
         version: {version}\n",
        f.singleprint(),
        f.saved_model_checksum,
        f.graph_def_program_hash,
        f.signature_def_hash,
        f.saved_object_graph_hash,
        f.checkpoint_hash
    );
    if !f.uuid.is_empty() {
        s.push_str(&format!("  uuid: {}\n", f.uuid));
    }
    s
}

fn tensor_json(t: &SignatureTensor) -> Value {
    json!({"dtype": t.dtype_name(), "shape": t.shape, "name": t.name})
}

fn signature_json(s: &Signature) -> Value {
    let part = |list: &[SignatureTensor]| -> serde_json::Map<String, Value> {
        list.iter()
            .map(|t| (t.key.clone(), tensor_json(t)))
            .collect()
    };
    json!({"method_name": s.method_name, "inputs": part(&s.inputs), "outputs": part(&s.outputs)})
}

fn to_json(sm: &SavedModel) -> Result<Value> {
    let meta_graphs: Vec<Value> = sm
        .tag_sets()
        .iter()
        .map(|tags| {
            let t: Vec<&str> = tags.iter().map(String::as_str).collect();
            let sigs: serde_json::Map<String, Value> = sm
                .signatures(&t)
                .unwrap_or_default()
                .iter()
                .map(|s| (s.key.clone(), signature_json(s)))
                .collect();
            let ops: Vec<String> = sm
                .meta_graph(&t)
                .and_then(|m| SavedModel::ops(m).ok())
                .map(|o| o.into_iter().collect())
                .unwrap_or_default();
            json!({"tags": tags, "signatures": sigs, "ops": ops})
        })
        .collect();
    let variables: Vec<Value> = sm
        .variables()?
        .iter()
        .map(|v| {
            json!({"path": v.path, "name": v.name, "dtype": v.dtype_name(), "shape": v.shape,
                   "trainable": v.trainable, "key": v.key})
        })
        .collect();
    let fingerprint = sm.fingerprint().map(|f| {
        json!({
            "saved_model_checksum": f.saved_model_checksum.to_string(),
            "graph_def_program_hash": f.graph_def_program_hash.to_string(),
            "signature_def_hash": f.signature_def_hash.to_string(),
            "saved_object_graph_hash": f.saved_object_graph_hash.to_string(),
            "checkpoint_hash": f.checkpoint_hash.to_string(),
            "singleprint": f.singleprint(),
        })
    });
    Ok(json!({"meta_graphs": meta_graphs, "variables": variables, "fingerprint": fingerprint}))
}
