//! SavedModels, loaded and run as TensorFlow's loader does: the meta graph of the tags asked
//! for imported (function library included), its variables restored by running the model's own
//! restore op on the `variables/` bundle (`RestoreV2` + `AssignVariableOp` into the session's
//! resource variables), the init op run, and each signature run by its keys.
//!
//! ```no_run
//! use tensorcast_core::{Tensor, TensorShape};
//! use tensorcast_graph::SavedModel;
//!
//! let model = SavedModel::load("my_model", &["serve"])?;
//! println!("{:?}", model.signature_keys());
//! let x = Tensor::from_slice(&[1.0f32, 2.0], TensorShape::new(&[1, 2])?)?;
//! let out = model.run("serving_default", &[("x", x)])?;
//! for (key, tensor) in &out {
//!     println!("{key}: {}", tensor.debug_string(6));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;
use tensorcast_core::{DataType, TString, Tensor};
use tensorcast_io::saved_model::{SavedModel as SavedModelFile, Signature};
use tensorcast_io::ReadOptions;

use crate::error::{Error, Result};
use crate::{Cancellation, Graph, Session, SessionOptions};

/// The fields of TensorFlow's `SaverDef` a loader reads.
#[derive(Clone, PartialEq, Message)]
struct SaverDef {
    /// The placeholder the checkpoint prefix is fed to (`saver_filename:0`).
    #[prost(string, tag = "1")]
    filename_tensor_name: String,
    /// The op that restores every variable (`StatefulPartitionedCall_2`, `save/restore_all`).
    #[prost(string, tag = "3")]
    restore_op_name: String,
}

/// A loaded SavedModel: its graph in a [`Session`] whose variables hold the checkpoint's values,
/// and its signatures.
#[derive(Debug)]
pub struct SavedModel {
    dir: PathBuf,
    tags: Vec<String>,
    session: Session,
    signatures: BTreeMap<String, Signature>,
    warnings: Vec<String>,
}

/// The key of the signature TensorFlow 2 stores its init op under.
const INIT_OP_SIGNATURE_KEY: &str = "__saved_model_init_op";

impl SavedModel {
    /// Loads the meta graph tagged `tags` (`&["serve"]` for what `tf.saved_model.save` writes)
    /// from the SavedModel folder `dir`, restores its variables and runs its init op.
    ///
    /// # Errors
    /// The reader's errors for a folder that is not a SavedModel; TensorFlow's message when no
    /// meta graph has these tags; import errors; the restore op's errors (a variable missing
    /// from the checkpoint, a dtype that differs); [`Error::MissingKernels`] when the restore
    /// or init op needs an op without a kernel here.
    pub fn load(dir: impl AsRef<Path>, tags: &[&str]) -> Result<SavedModel> {
        Self::load_with_options(
            dir,
            tags,
            SessionOptions::default(),
            &ReadOptions::default(),
        )
    }

    /// [`SavedModel::load`] with the options of the session its signatures run in (the limits
    /// on constants and allocations: what the CLI's `--max-memory` sets) and of the reader of
    /// its files (`saved_model.pb`'s memory bound, memory mapping).
    ///
    /// # Errors
    /// As [`SavedModel::load`].
    pub fn load_with_options(
        dir: impl AsRef<Path>,
        tags: &[&str],
        options: SessionOptions,
        read: &ReadOptions,
    ) -> Result<SavedModel> {
        let dir = dir.as_ref();
        let file = SavedModelFile::open(dir, read).map_err(|e| Error::SavedModel(e.to_string()))?;
        let Some(meta) = file.meta_graph(tags) else {
            // TensorFlow's C++ loader (`LoadSavedModel`), whose API this mirrors.
            return Err(Error::SavedModel(format!(
                "Could not find meta graph def matching supplied tags: {{ {} }}. To inspect available tag-sets in the SavedModel, please use the SavedModel CLI: `saved_model_cli`",
                tags.join(" ")
            )));
        };
        let graph = Graph::new();
        if let Some(gd) = &meta.graph_def {
            crate::import_graph_def(&graph, gd)?;
        }
        let session = Session::with_options(&graph, options);
        let signatures: BTreeMap<String, Signature> = file
            .signatures(tags)
            .unwrap_or_default()
            .into_iter()
            .map(|s| (s.key.clone(), s))
            .collect();
        // Restore: feed the variables' prefix to the saver's filename placeholder, run the
        // restore op.
        let saver = meta
            .saver_def
            .as_ref()
            .map(|b| SaverDef::decode(b.as_ref()))
            .transpose()
            .map_err(|e| {
                Error::SavedModel(format!("the meta graph's saver_def does not decode: {e}"))
            })?;
        let variables = dir.join("variables").join("variables");
        let has_variables = dir.join("variables").join("variables.index").is_file();
        if let (Some(saver), true) = (saver, has_variables) {
            if !saver.restore_op_name.is_empty() {
                let prefix = Tensor::scalar_of(TString::from(
                    variables.to_string_lossy().as_bytes().to_vec(),
                ));
                let feed = saver.filename_tensor_name.clone();
                session.run(
                    &[(feed.as_str(), prefix)],
                    &[],
                    &[saver.restore_op_name.as_str()],
                )?;
            }
        }
        // The init op (TensorFlow 2 keeps it as a signature's only output; TensorFlow 1 in
        // the `saved_model_main_op` / `legacy_init_op` collections, not read here).
        if let Some(init) = signatures.get(INIT_OP_SIGNATURE_KEY) {
            for o in &init.outputs {
                let op = crate::parse_tensor_name(&o.name).node;
                if !op.is_empty() {
                    session.run(&[], &[], &[op])?;
                }
            }
        }
        Ok(SavedModel {
            dir: dir.to_path_buf(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            session,
            signatures: signatures
                .into_iter()
                .filter(|(k, _)| k != INIT_OP_SIGNATURE_KEY)
                .collect(),
            warnings: file.warnings().to_vec(),
        })
    }

    /// What the loader went on without, as TensorFlow's loader logs it and goes on (a damaged
    /// `fingerprint.pb`): one line each, naming the file (see
    /// [`tensorcast_io::saved_model::SavedModel::warnings`]).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The folder it was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The tags of the meta graph loaded.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// The signature keys, sorted (`serving_default`, ...).
    pub fn signature_keys(&self) -> Vec<&str> {
        self.signatures.keys().map(String::as_str).collect()
    }

    /// The signature `key`: its inputs and outputs (keys, dtypes, shapes, graph names).
    pub fn signature(&self, key: &str) -> Option<&Signature> {
        self.signatures.get(key)
    }

    /// The session the model runs in (its variables restored).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Runs signature `key` on `inputs` (by input key, every input given once) and returns
    /// every output by output key, sorted.
    ///
    /// # Errors
    /// An unknown signature; an input key the signature does not have, or one it has that is
    /// missing; a dtype or shape that does not fit the signature's (TensorFlow's messages);
    /// any kernel's error.
    pub fn run(&self, key: &str, inputs: &[(&str, Tensor)]) -> Result<Vec<(String, Tensor)>> {
        self.run_inner(key, inputs, None)
    }

    /// [`SavedModel::run`] that stops with [`Error::Cancelled`] once `cancel` is set (see
    /// [`Session::run_cancellable`]).
    ///
    /// # Errors
    /// As [`SavedModel::run`], and [`Error::Cancelled`].
    pub fn run_cancellable(
        &self,
        key: &str,
        inputs: &[(&str, Tensor)],
        cancel: &Cancellation,
    ) -> Result<Vec<(String, Tensor)>> {
        self.run_inner(key, inputs, Some(cancel))
    }

    fn run_inner(
        &self,
        key: &str,
        inputs: &[(&str, Tensor)],
        cancel: Option<&Cancellation>,
    ) -> Result<Vec<(String, Tensor)>> {
        let sig = self.signatures.get(key).ok_or_else(|| {
            Error::SavedModel(format!(
                "signature '{key}' not found; the model has {}",
                self.signature_keys().join(", ")
            ))
        })?;
        let mut feeds: Vec<(&str, Tensor)> = Vec::with_capacity(inputs.len());
        for (name, t) in inputs {
            let Some(spec) = sig.inputs.iter().find(|i| i.key == *name) else {
                return Err(Error::SavedModel(format!(
                    "signature '{key}' has no input '{name}'; its inputs are {}",
                    sig.inputs
                        .iter()
                        .map(|i| i.key.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            if feeds.iter().any(|(n, _)| *n == spec.name) {
                return Err(Error::SavedModel(format!("input '{name}' given twice")));
            }
            let want = DataType::from_number(spec.dtype);
            if t.dtype() != want {
                return Err(Error::SavedModel(format!(
                    "input '{name}' of signature '{key}' must be a {} tensor, got a {} tensor",
                    want.name(),
                    t.dtype().name()
                )));
            }
            feeds.push((spec.name.as_str(), t.clone()));
        }
        if let Some(missing) = sig
            .inputs
            .iter()
            .find(|i| !inputs.iter().any(|(n, _)| *n == i.key))
        {
            return Err(Error::SavedModel(format!(
                "signature '{key}' needs input '{}', which was not given",
                missing.key
            )));
        }
        let fetches: Vec<&str> = sig.outputs.iter().map(|o| o.name.as_str()).collect();
        let out = match cancel {
            Some(c) => self.session.run_cancellable(&feeds, &fetches, &[], c)?,
            None => self.session.run(&feeds, &fetches, &[])?,
        };
        Ok(sig.outputs.iter().map(|o| o.key.clone()).zip(out).collect())
    }
}
