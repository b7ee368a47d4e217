//! TensorFlow SavedModel folders, read without TensorFlow: the tag sets, the signatures and the
//! variables (by object path, with their values from `variables/`), and `fingerprint.pb`.
//!
//! # Design
//! - **What is read.** [`SavedModel::open`] decodes `saved_model.pb` (a
//!   [`tensorcast_proto::SavedModel`]), `fingerprint.pb` when present, and opens the variables
//!   bundle `variables/variables` as a lazy [`Checkpoint`] (its index only). Without a
//!   `saved_model.pb`, the text form `saved_model.pbtxt` is read (as TensorFlow's loader does),
//!   through the text-format tables generated from TensorFlow's own message descriptors. The
//!   chunked `saved_model.cpb` (models over 2 GiB) is recognised and refused with an error that
//!   says so: it is not read yet.
//! - **Variables by object path.** A TF2 SavedModel's `SavedObjectGraph` lists its objects;
//!   a variable's path is its first path breadth-first from the root, children in order (as
//!   TensorFlow names objects), and its bundle key is the one the checkpoint's own object graph
//!   gives the same node (the two graphs share node ids), else
//!   `<escaped path>/.ATTRIBUTES/VARIABLE_VALUE`.
//! - **`saved_model_cli show --all`.** [`SavedModel::show_all`] prints the tag sets and
//!   signatures exactly as TensorFlow 2.21's `saved_model_cli show --dir D --all` does, its ops
//!   line with the ops sorted (TensorFlow prints a Python set, in no stable order), then the
//!   variables. TensorFlow's last part, `Concrete Functions:`, loads the model in Python and is
//!   not printed.
//! - **Hostile files.** Every file is read through the crate's one input layer:
//!   `saved_model.pb` and `fingerprint.pb` hold at most [`ReadOptions::max_memory`] bytes (a
//!   link to a procfs file, which reports no size and may hold gigabytes, is read up to it and
//!   refused past it); a `fingerprint.pb` that cannot be read or decoded is optional, as for
//!   TensorFlow's loader: the model opens without it and [`SavedModel::warnings`] says why.
//!   The decode is prost's (bounded nesting, a length prefix past
//!   the input is an error before anything is allocated); object references out of range and
//!   cycles in the object graph are ignored when paths are computed. Every failure is an
//!   [`IoError`] naming the file, never a panic.
//!
//! ```
//! use tensorcast_io::saved_model::SavedModel;
//! use tensorcast_io::ReadOptions;
//! use tensorcast_proto::{meta_graph_def::MetaInfoDef, tensor_info, DataType, Message};
//! use tensorcast_proto::{MetaGraphDef, SignatureDef, TensorInfo, TensorShapeProto};
//!
//! // A minimal saved_model.pb: one meta graph tagged `serve`, one signature.
//! let mut x = TensorInfo { encoding: Some(tensor_info::Encoding::Name("serving_default_x:0".into())), ..Default::default() };
//! x.set_dtype(DataType::DtFloat);
//! x.tensor_shape = Some(TensorShapeProto { dim: vec![tensorcast_proto::tensor_shape_proto::Dim { size: -1, name: String::new() }], unknown_rank: false });
//! let mut sig = SignatureDef { method_name: "tensorflow/serving/predict".into(), ..Default::default() };
//! sig.inputs.insert("x".into(), x);
//! let mut mg = MetaGraphDef { meta_info_def: Some(MetaInfoDef { tags: vec!["serve".into()], ..Default::default() }), ..Default::default() };
//! mg.signature_def.insert("serving_default".into(), sig);
//! let pb = tensorcast_proto::SavedModel { saved_model_schema_version: 1, meta_graphs: vec![mg] };
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("saved_model.pb"), pb.encode_to_vec())?;
//! let sm = SavedModel::open(dir.path(), &ReadOptions::default())?;
//! assert_eq!(sm.tag_sets(), vec![vec!["serve".to_string()]]);
//! let sigs = sm.signatures(&["serve"]).unwrap();
//! assert_eq!(sigs[0].inputs[0].shape, Some(vec![-1]));
//! assert!(sm.show_all().contains("        shape: (-1)\n        name: serving_default_x:0\n"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tensorcast_core::Tensor;
use tensorcast_proto::Message as _;
use tensorcast_proto::{
    attr_value, saved_object, DataType, FingerprintDef, FunctionDef, FunctionDefLibrary,
    MetaGraphDef, NodeDef, SavedObjectGraph, TensorInfo, TensorShapeProto,
};

use crate::checkpoint::{escape_local_name, Checkpoint};
use crate::error::{ErrorKind, IoError, Result};
use crate::options::ReadOptions;

/// The file name of a SavedModel's binary proto.
pub const SAVED_MODEL_FILENAME_PB: &str = "saved_model.pb";
/// The file name of a SavedModel's text proto.
pub const SAVED_MODEL_FILENAME_PBTXT: &str = "saved_model.pbtxt";
/// The file name of a chunked (proto-splitter) SavedModel.
pub const SAVED_MODEL_FILENAME_CPB: &str = "saved_model.cpb";
/// The most bytes [`SavedModel::variables`] spends on paths and keys (64 MiB).
pub const MAX_PATH_BYTES: u64 = 64 << 20;

/// The file name of the fingerprint.
pub const FINGERPRINT_FILENAME: &str = "fingerprint.pb";

/// One input or output of a signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureTensor {
    /// The key in the signature (`x`).
    pub key: String,
    /// The dtype number (a [`DataType`]); [`DataType::DtInvalid`] for the init op's `NoOp`.
    pub dtype: i32,
    /// The dims (`-1` unknown), or `None` for an unknown rank.
    pub shape: Option<Vec<i64>>,
    /// The tensor's name in the graph (`serving_default_x:0`); empty for a sparse or composite
    /// tensor.
    pub name: String,
}

impl SignatureTensor {
    /// The dtype as `types.proto` spells it (`DT_FLOAT`), as `saved_model_cli` prints it.
    pub fn dtype_name(&self) -> &'static str {
        dtype_name(self.dtype)
    }
}

/// A signature of a meta graph, its inputs and outputs sorted by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    /// The signature key (`serving_default`).
    pub key: String,
    /// `tensorflow/serving/predict`, or empty.
    pub method_name: String,
    /// The inputs, by key.
    pub inputs: Vec<SignatureTensor>,
    /// The outputs, by key.
    pub outputs: Vec<SignatureTensor>,
}

/// A variable of a SavedModel's object graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedModelVariable {
    /// Its object path (`layer_with_weights-0/kernel`), local names as written.
    pub path: String,
    /// Its node in the object graph.
    pub node: usize,
    /// The variable's own name (`dense/kernel`).
    pub name: String,
    /// The dtype number (a [`DataType`]).
    pub dtype: i32,
    /// The dims (`-1` unknown), or `None` for an unknown rank.
    pub shape: Option<Vec<i64>>,
    /// Whether it is trainable.
    pub trainable: bool,
    /// Its key in the `variables/variables` bundle.
    pub key: String,
}

impl SavedModelVariable {
    /// The dtype as `types.proto` spells it (`DT_FLOAT`).
    pub fn dtype_name(&self) -> &'static str {
        dtype_name(self.dtype)
    }
}

/// A SavedModel folder: its `saved_model.pb`, fingerprint and variables.
#[derive(Debug)]
pub struct SavedModel {
    dir: Option<PathBuf>,
    proto: tensorcast_proto::SavedModel,
    fingerprint: Option<FingerprintDef>,
    variables: Option<Checkpoint>,
    warnings: Vec<String>,
}

fn dtype_name(dtype: i32) -> &'static str {
    DataType::try_from(dtype).map_or("DT_INVALID", DataType::as_str_name)
}

fn dims(shape: Option<&TensorShapeProto>) -> Option<Vec<i64>> {
    match shape {
        Some(s) if s.unknown_rank => None,
        Some(s) => Some(s.dim.iter().map(|d| d.size).collect()),
        None => Some(Vec::new()),
    }
}

/// True when `path` is a SavedModel folder (it holds `saved_model.pb` or `saved_model.pbtxt`,
/// the two forms [`SavedModel::open`] reads) or names one of those two files.
pub fn is_saved_model(path: &Path) -> bool {
    let is_graph_file = |p: &Path| {
        p.is_file()
            && p.file_name()
                .is_some_and(|n| n == SAVED_MODEL_FILENAME_PB || n == SAVED_MODEL_FILENAME_PBTXT)
    };
    is_graph_file(path)
        || is_graph_file(&path.join(SAVED_MODEL_FILENAME_PB))
        || is_graph_file(&path.join(SAVED_MODEL_FILENAME_PBTXT))
}

fn not_found(what: String) -> IoError {
    IoError::new(ErrorKind::Io, what)
}

impl SavedModel {
    /// Opens the SavedModel folder `dir` (or the folder of a `saved_model.pb` it names):
    /// decodes `saved_model.pb`, reads `fingerprint.pb` if there is one, and opens
    /// `variables/variables` (its index only) if there is one.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the folder has no `saved_model.pb` or a file cannot be read;
    /// [`ErrorKind::Unsupported`] for a folder holding only `saved_model.cpb` (not read
    /// yet); [`ErrorKind::TooLarge`] for a `saved_model.pb` larger than
    /// [`ReadOptions::max_memory`] (one that reports no size, a procfs file, is read up to it);
    /// [`ErrorKind::Corrupt`] when `saved_model.pb` does not decode; the checkpoint's errors
    /// ([`Checkpoint::open`]) for a damaged variables index. A damaged `fingerprint.pb` is not
    /// an error: it is left out and said in [`SavedModel::warnings`].
    pub fn open(dir: &Path, options: &ReadOptions) -> Result<Self> {
        let dir = if dir.is_file() {
            dir.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            dir.to_path_buf()
        };
        let pb = dir.join(SAVED_MODEL_FILENAME_PB);
        let pbtxt = dir.join(SAVED_MODEL_FILENAME_PBTXT);
        let mut sm = if pb.is_file() {
            let bytes = read_bounded(&pb, options)?;
            Self::from_bytes(bytes.as_slice()).map_err(|e| e.context(pb.display()))?
        } else if pbtxt.is_file() {
            let bytes = read_bounded(&pbtxt, options)?;
            let text = std::str::from_utf8(bytes.as_slice()).map_err(|e| {
                IoError::new(
                    ErrorKind::Corrupt,
                    format!("{}: not UTF-8 text: {e}", pbtxt.display()),
                )
            })?;
            Self::from_text(text).map_err(|e| e.context(pbtxt.display()))?
        } else {
            if dir.join(SAVED_MODEL_FILENAME_CPB).is_file() {
                return Err(IoError::unsupported(format!(
                    "{}: a SavedModel stored as {SAVED_MODEL_FILENAME_CPB} (chunked, for models over 2 GiB) \
                     is not read yet (only {SAVED_MODEL_FILENAME_PB} and {SAVED_MODEL_FILENAME_PBTXT})",
                    dir.display()
                )));
            }
            return Err(not_found(format!(
                "SavedModel file does not exist at: {}/{{{SAVED_MODEL_FILENAME_PBTXT}|{SAVED_MODEL_FILENAME_PB}}}",
                dir.display()
            )));
        };
        sm.dir = Some(dir.clone());
        let fp = dir.join(FINGERPRINT_FILENAME);
        if fp.exists() {
            // Optional: TensorFlow's loader logs a damaged one and goes on, and so do we.
            match read_bounded(&fp, options).and_then(|b| {
                FingerprintDef::decode(b.as_slice()).map_err(|e| {
                    IoError::new(ErrorKind::Corrupt, format!("not a FingerprintDef: {e}"))
                })
            }) {
                Ok(f) => sm.fingerprint = Some(f),
                Err(e) => sm.warnings.push(format!(
                    "{}: Fingerprint was found, but there was an error when reading the proto. \
                     Saved model loading will continue. ({e})",
                    fp.display()
                )),
            }
        }
        let prefix = dir.join("variables").join("variables");
        if dir.join("variables").join("variables.index").is_file() {
            sm.variables = Some(Checkpoint::open(&prefix, options)?);
        }
        Ok(sm)
    }

    /// Parses the text of a `saved_model.pbtxt` (the protobuf text format of the same
    /// `SavedModel` message; no fingerprint, no variables).
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] naming the line and column of what does not parse, or when the
    /// parsed message is not a valid `SavedModel`.
    pub fn from_text(text: &str) -> Result<Self> {
        let bytes = tensorcast_proto::saved_model_text_to_binary(text)
            .map_err(|e| IoError::new(ErrorKind::Corrupt, format!("not a text SavedModel: {e}")))?;
        Self::from_bytes(&bytes)
    }

    /// Decodes the bytes of a `saved_model.pb` (no fingerprint, no variables).
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when the bytes are not a `SavedModel` proto.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let proto = tensorcast_proto::SavedModel::decode(bytes).map_err(|e| {
            IoError::new(ErrorKind::Corrupt, format!("not a SavedModel proto: {e}"))
        })?;
        Ok(Self {
            dir: None,
            proto,
            fingerprint: None,
            variables: None,
            warnings: Vec::new(),
        })
    }

    /// The folder, when opened from one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The decoded `saved_model.pb`.
    pub fn proto(&self) -> &tensorcast_proto::SavedModel {
        &self.proto
    }

    /// The decoded `fingerprint.pb`, when the folder has one.
    pub fn fingerprint(&self) -> Option<&FingerprintDef> {
        self.fingerprint.as_ref()
    }

    /// What [`SavedModel::open`] found wrong but went on without, as TensorFlow's loader logs
    /// it and goes on: a `fingerprint.pb` that cannot be read or decoded (the model is
    /// opened without a fingerprint). One line each, naming the file.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The variables bundle (`variables/variables`), when the folder has one.
    pub fn checkpoint(&self) -> Option<&Checkpoint> {
        self.variables.as_ref()
    }

    /// The meta graphs in the order `saved_model_cli` shows them: sorted by tag list.
    pub fn meta_graphs_sorted(&self) -> Vec<&MetaGraphDef> {
        let mut v: Vec<&MetaGraphDef> = self.proto.meta_graphs.iter().collect();
        v.sort_by(|a, b| tags_of(a).cmp(tags_of(b)));
        v
    }

    /// The tag sets, sorted as `saved_model_cli` sorts them.
    pub fn tag_sets(&self) -> Vec<Vec<String>> {
        self.meta_graphs_sorted()
            .into_iter()
            .map(|m| tags_of(m).to_vec())
            .collect()
    }

    /// The meta graph whose tag set is `tags` (as a set: order and repeats do not matter).
    pub fn meta_graph(&self, tags: &[&str]) -> Option<&MetaGraphDef> {
        let want: BTreeSet<&str> = tags.iter().copied().collect();
        self.proto.meta_graphs.iter().find(|m| {
            let have: BTreeSet<&str> = tags_of(m).iter().map(String::as_str).collect();
            have == want
        })
    }

    /// The signatures of the meta graph tagged `tags`, sorted by key, or `None` when there is
    /// no such meta graph.
    pub fn signatures(&self, tags: &[&str]) -> Option<Vec<Signature>> {
        self.meta_graph(tags).map(signatures_of)
    }

    /// The ops `saved_model_cli` lists for a meta graph (TensorFlow's
    /// `ops_used_by_graph_def`): the graph's node ops and those of the library functions the
    /// graph reaches (through a node of the function's name, or the `f` attr of a
    /// `PartitionedCall`/`StatefulPartitionedCall`), function names left out.
    ///
    /// # Errors
    /// [`ErrorKind::Corrupt`] when the graph's function library does not decode.
    pub fn ops(meta: &MetaGraphDef) -> Result<BTreeSet<String>> {
        ops_used(meta)
    }

    /// The variables of the object graph (of the first meta graph that has one), in
    /// breadth-first order of their paths.
    ///
    /// # Errors
    /// [`ErrorKind::TooLarge`] when the variables' paths would take more than
    /// [`MAX_PATH_BYTES`] (a hostile graph of deep chains of long names).
    pub fn variables(&self) -> Result<Vec<SavedModelVariable>> {
        let Some(graph) = self
            .proto
            .meta_graphs
            .iter()
            .find_map(|m| m.object_graph_def.as_ref())
        else {
            return Ok(Vec::new());
        };
        let ckpt_graph = self
            .variables
            .as_ref()
            .and_then(|c| c.object_graph().ok().flatten());
        let tree = BfsTree::new(graph);
        let mut out = Vec::new();
        let mut budget = MAX_PATH_BYTES;
        for &node in &tree.order {
            let Some(saved_object::Kind::Variable(v)) = &graph.nodes[node].kind else {
                continue;
            };
            // The path and (at most) an escaped key twice as long, plus the key's suffix.
            let cost = tree.len[node].saturating_mul(3).saturating_add(64);
            budget = budget.checked_sub(cost).ok_or_else(|| {
                IoError::too_large(format!(
                    "the object graph's variable paths take more than {MAX_PATH_BYTES} bytes"
                ))
            })?;
            let path = tree.path(node, |n| n.to_string());
            let key = ckpt_graph
                .as_ref()
                .and_then(|g| g.proto().nodes.get(node))
                .and_then(|n| n.attributes.iter().find(|a| a.name == "VARIABLE_VALUE"))
                .map(|a| a.checkpoint_key.clone())
                .unwrap_or_else(|| {
                    format!(
                        "{}/.ATTRIBUTES/VARIABLE_VALUE",
                        tree.path(node, escape_local_name)
                    )
                });
            out.push(SavedModelVariable {
                path,
                node,
                name: v.name.clone(),
                dtype: v.dtype,
                shape: dims(v.shape.as_ref()),
                trainable: v.trainable,
                key,
            });
        }
        Ok(out)
    }

    /// Reads a variable's value from the variables bundle.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the SavedModel has no variables bundle; the checkpoint's errors
    /// ([`Checkpoint::read`]) otherwise: no such key, a checksum mismatch, ...
    pub fn read_variable(&self, var: &SavedModelVariable) -> Result<Tensor> {
        let ckpt = self.variables.as_ref().ok_or_else(|| {
            not_found(format!(
                "the SavedModel has no variables/variables.index to read '{}' from",
                var.path
            ))
        })?;
        ckpt.read(&var.key)
    }

    /// What `saved_model_cli show --dir D` prints: the tag sets, each as the Python `repr` of
    /// its sorted tags joined by `, `.
    pub fn show_tag_sets(&self) -> String {
        let mut s = String::from("The given SavedModel contains the following tag-sets:\n");
        for mut tags in self.tag_sets() {
            tags.sort();
            let _ = writeln!(s, "{}", python_repr(&tags.join(", ")));
        }
        s
    }

    /// What `saved_model_cli show --dir D --tag_set T` prints: the signature keys of the meta
    /// graph tagged `tags`, or `None` when there is none.
    pub fn show_signature_keys(&self, tags: &[&str]) -> Option<String> {
        let meta = self.meta_graph(tags)?;
        let mut s = String::from(
            "The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:\n",
        );
        for key in meta.signature_def.keys() {
            let _ = writeln!(s, "SignatureDef key: \"{key}\"");
        }
        Some(s)
    }

    /// What `saved_model_cli show --dir D --all` prints for the tag sets and signatures,
    /// byte for byte (the ops line with the ops sorted), then the variables:
    /// `\nVariables:\n` and one `  <path>: <dtype> <shape>` line each.
    pub fn show_all(&self) -> String {
        let mut s = String::new();
        for meta in self.meta_graphs_sorted() {
            let tags = tags_of(meta);
            let _ = writeln!(
                s,
                "\nMetaGraphDef with tag-set: '{}' contains the following SignatureDefs:",
                tags.join(", ")
            );
            for sig in signatures_of(meta) {
                let _ = writeln!(s, "\nsignature_def['{}']:", sig.key);
                s.push_str(&show_signature(&sig, 1));
            }
            let ops = match ops_used(meta) {
                Ok(ops) => python_set(ops.iter().map(String::as_str)),
                Err(e) => format!("(the function library does not decode: {e})"),
            };
            let _ = writeln!(
                s,
                "The MetaGraph with tag set {} contains the following ops: {ops}",
                python_list(tags.iter().map(String::as_str))
            );
        }
        let vars = match self.variables() {
            Ok(vars) => vars,
            Err(e) => {
                let _ = writeln!(s, "\nVariables: {e}");
                Vec::new()
            }
        };
        if !vars.is_empty() {
            s.push_str("\nVariables:\n");
            for v in vars {
                let _ = writeln!(
                    s,
                    "  {}: {} {}",
                    v.path,
                    v.dtype_name(),
                    shape_text(v.shape.as_deref())
                );
            }
        }
        s
    }
}

/// What `saved_model_cli show --tag_set T --signature_def S` prints for one signature, indented
/// by `indent` steps of two spaces (`show --all` uses 1).
pub fn show_signature(sig: &Signature, indent: usize) -> String {
    let pad = "  ".repeat(indent);
    let mut s = String::new();
    let part = |s: &mut String, what: &str, list: &[SignatureTensor]| {
        let _ = writeln!(
            s,
            "{pad}The given SavedModel SignatureDef contains the following {what}(s):"
        );
        for t in list {
            let _ = writeln!(s, "{pad}  {what}s['{}'] tensor_info:", t.key);
            let _ = writeln!(s, "{pad}      dtype: {}", t.dtype_name());
            let _ = writeln!(s, "{pad}      shape: {}", shape_text(t.shape.as_deref()));
            let _ = writeln!(s, "{pad}      name: {}", t.name);
        }
    };
    part(&mut s, "input", &sig.inputs);
    part(&mut s, "output", &sig.outputs);
    let _ = writeln!(s, "{pad}Method name is: {}", sig.method_name);
    s
}

/// A shape as `saved_model_cli` prints it: `(-1, 3)`, `()` for a scalar, `unknown_rank`.
pub fn shape_text(shape: Option<&[i64]>) -> String {
    match shape {
        None => "unknown_rank".to_string(),
        Some(d) => {
            let parts: Vec<String> = d.iter().map(i64::to_string).collect();
            format!("({})", parts.join(", "))
        }
    }
}

fn tags_of(m: &MetaGraphDef) -> &[String] {
    m.meta_info_def.as_ref().map_or(&[], |i| i.tags.as_slice())
}

fn tensor_of(key: &str, t: &TensorInfo) -> SignatureTensor {
    let name = match &t.encoding {
        Some(tensorcast_proto::tensor_info::Encoding::Name(n)) => n.clone(),
        _ => String::new(),
    };
    SignatureTensor {
        key: key.to_string(),
        dtype: t.dtype,
        shape: dims(t.tensor_shape.as_ref()),
        name,
    }
}

fn signatures_of(meta: &MetaGraphDef) -> Vec<Signature> {
    meta.signature_def
        .iter()
        .map(|(key, sig)| Signature {
            key: key.clone(),
            method_name: sig.method_name.clone(),
            inputs: sig.inputs.iter().map(|(k, t)| tensor_of(k, t)).collect(),
            outputs: sig.outputs.iter().map(|(k, t)| tensor_of(k, t)).collect(),
        })
        .collect()
}

/// The breadth-first tree of an object graph from the root: each node reached is entered
/// once, by the first path found (children in order), so cycles end; references out of range
/// are skipped. Paths are built on demand from parent links, so a deep graph costs memory in
/// proportion to its nodes, not to the sum of its path lengths.
struct BfsTree<'a> {
    /// The nodes reached, in breadth-first order.
    order: Vec<usize>,
    /// For each node reached but the root: its parent and its local name there.
    parent: Vec<Option<(usize, &'a str)>>,
    /// Each node's path length in bytes (names and separators).
    len: Vec<u64>,
}

impl<'a> BfsTree<'a> {
    fn new(graph: &'a SavedObjectGraph) -> Self {
        let n = graph.nodes.len();
        let mut tree = BfsTree {
            order: Vec::new(),
            parent: vec![None; n],
            len: vec![0; n],
        };
        if n == 0 {
            return tree;
        }
        let mut seen = vec![false; n];
        seen[0] = true;
        tree.order.push(0);
        let mut i = 0;
        while i < tree.order.len() {
            let node = tree.order[i];
            i += 1;
            for c in &graph.nodes[node].children {
                let Ok(id) = usize::try_from(c.node_id) else {
                    continue;
                };
                if id >= n || seen[id] {
                    continue;
                }
                seen[id] = true;
                tree.parent[id] = Some((node, c.local_name.as_str()));
                let sep = u64::from(node != 0);
                tree.len[id] = tree.len[node] + sep + c.local_name.len() as u64;
                tree.order.push(id);
            }
        }
        tree
    }

    /// The path of a reached node, each local name mapped by `name`, joined by `/`.
    fn path(&self, node: usize, name: impl Fn(&str) -> String) -> String {
        let mut parts = Vec::new();
        let mut at = node;
        while let Some((parent, local)) = self.parent[at] {
            parts.push(name(local));
            at = parent;
        }
        parts.reverse();
        parts.join("/")
    }
}

fn ops_used(meta: &MetaGraphDef) -> Result<BTreeSet<String>> {
    let Some(graph) = &meta.graph_def else {
        return Ok(BTreeSet::new());
    };
    let library = FunctionDefLibrary::decode_optional(graph.library.as_ref()).map_err(|e| {
        IoError::new(
            ErrorKind::Corrupt,
            format!("the graph's function library does not decode: {e}"),
        )
    })?;
    let functions: BTreeMap<&str, &FunctionDef> = library.by_name().collect();
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<&FunctionDef> = Vec::new();
    for node in &graph.node {
        mark_node(node, &functions, &mut used, &mut todo);
    }
    while let Some(f) = todo.pop() {
        for node in &f.node_def {
            mark_node(node, &functions, &mut used, &mut todo);
        }
    }
    Ok(used
        .into_iter()
        .filter(|op| !functions.contains_key(op.as_str()))
        .collect())
}

/// `ops_used_by_graph_def`'s `process_node`: marks the node's op and, for a call, its
/// function (TensorFlow reads `node.attr["f"].func.name`: "" when the attr is not a func),
/// queueing functions seen for the first time.
fn mark_node<'a>(
    node: &NodeDef,
    functions: &BTreeMap<&str, &'a FunctionDef>,
    used: &mut BTreeSet<String>,
    todo: &mut Vec<&'a FunctionDef>,
) {
    let mut mark = |op: &str| {
        if !used.contains(op) {
            if let Some(f) = functions.get(op) {
                todo.push(f);
            }
            used.insert(op.to_string());
        }
    };
    mark(&node.op);
    if node.op == "PartitionedCall" || node.op == "StatefulPartitionedCall" {
        match node.attr.get("f").and_then(|a| a.value.as_ref()) {
            Some(attr_value::Value::Func(f)) => mark(&f.name),
            _ => mark(""),
        }
    }
}

/// Python's `repr` of a str.
fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

fn python_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = items.map(python_repr).collect();
    format!("[{}]", v.join(", "))
}

fn python_set<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = items.map(python_repr).collect();
    if v.is_empty() {
        "set()".to_string()
    } else {
        format!("{{{}}}", v.join(", "))
    }
}

/// The bytes of a file the SavedModel reader parses whole, through the one input layer: at
/// most [`ReadOptions::max_memory`] of them from any file (a regular file larger is refused
/// before it is read; a procfs file that reports no size is read up to the limit).
fn read_bounded(path: &Path, options: &ReadOptions) -> Result<tensorcast_buffer::Buffer> {
    let bound = crate::source::Bound::metadata(options, true);
    crate::source::read_path(path, options.mode, &bound).map_err(|e| e.context(path.display()))
}

#[cfg(test)]
mod tests;
