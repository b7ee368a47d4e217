//! TensorFlow checkpoints on the command line: recognising a checkpoint by any name a
//! TensorFlow user types (prefix, `.index`, `.data-*`, a checkpoint directory, a SavedModel
//! directory), naming its tensors by object path or key, and choosing which to export.
//!
//! Which tensors `convert` and `diff` take: the model's variables, by object path (`model/
//! layer_with_weights-0/kernel`, the `/.ATTRIBUTES/VARIABLE_VALUE` suffix gone). Optimizer
//! slots, the optimizer's own state (`optimizer/iter`, learning rate...) and `save_counter`
//! are bookkeeping, left out unless `--all`; the object graph itself
//! (`_CHECKPOINTABLE_OBJECT_GRAPH`) is never a tensor a user wants and is always left out.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use tensorcast::prelude::TensorOps;

use anyhow::{Context, Result};
use tensorcast::io::checkpoint::{
    escape_local_name, Checkpoint, CheckpointEntry, ObjectGraph, OBJECT_GRAPH_KEY,
};
use tensorcast::io::{escaped, NamedTensor};

/// How exported tensors are named.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Names {
    /// By object path (`model/dense/kernel`); TensorFlow keys where there is no object graph.
    #[default]
    Paths,
    /// By TensorFlow key (`model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`).
    Keys,
}

/// The checkpoint options of the commands that read tensors (`convert`, `diff`).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct Select {
    /// Name a checkpoint's tensors by object path (default) or by TensorFlow key.
    #[arg(long, value_enum, value_name = "paths|keys", default_value_t = Names::Paths)]
    pub names: Names,
    /// Take a checkpoint's optimizer slots and bookkeeping (`save_counter`, `optimizer/iter`;
    /// TF1: `global_step`, `.../Adam`)
    /// too.
    #[arg(long)]
    pub all: bool,
}

/// True when `path` names a checkpoint rather than a tensor file: a directory with a
/// `checkpoint` state file or SavedModel variables, an `.index` or `.data-NNNNN-of-NNNNN`
/// file, or a prefix `P` with a `P.index` beside it.
pub(crate) fn is_checkpoint(path: &Path) -> bool {
    if super::source::is_std(path) {
        return false;
    }
    if path.is_dir() {
        return path.join("checkpoint").is_file()
            || path.join("variables").join("variables.index").is_file();
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".index") && path.is_file() {
        return true;
    }
    if is_data_file_name(name) {
        return true;
    }
    !path.exists() && with_suffix(path, ".index").is_file()
}

/// `P.data-NNNNN-of-NNNNN`.
pub(crate) fn is_data_file_name(name: &str) -> bool {
    let Some(i) = name.rfind(".data-") else {
        return false;
    };
    let tail = &name[i + 6..];
    let Some((a, b)) = tail.split_once("-of-") else {
        return false;
    };
    !a.is_empty()
        && !b.is_empty()
        && a.bytes().all(|c| c.is_ascii_digit())
        && b.bytes().all(|c| c.is_ascii_digit())
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Opens the checkpoint `path` names with the run's read options; errors name the path.
pub(crate) fn open(path: &Path) -> Result<Checkpoint> {
    Checkpoint::open(path, &super::source::read_options())
        .with_context(|| escaped(&path.display().to_string()))
}

/// What the CLI knows about one checkpoint entry.
#[derive(Debug, Clone)]
pub(crate) struct Item {
    /// The entry (key, dtype, shape, where it is stored).
    pub entry: CheckpointEntry,
    /// The object path (the key where the checkpoint has no object graph).
    pub path: String,
    /// `slot <name> of <variable path>` for an optimizer slot.
    pub slot: Option<String>,
    /// An optimizer slot, optimizer state, `save_counter` or the object graph.
    pub bookkeeping: bool,
}

impl Item {
    /// The name to export the tensor under.
    pub(crate) fn name(&self, names: Names) -> &str {
        match names {
            Names::Paths => &self.path,
            Names::Keys => &self.entry.key,
        }
    }
}

/// Every entry of `ckpt` with its object path and whether it is bookkeeping, in key order.
pub(crate) fn items(ckpt: &Checkpoint) -> Result<Vec<Item>> {
    let graph = ckpt.object_graph()?;
    let optimizers = graph.as_ref().map(optimizer_paths).unwrap_or_default();
    let mut out = Vec::with_capacity(ckpt.entries().len());
    for e in ckpt.entries() {
        let named = graph.as_ref().and_then(|g| g.tensor(&e.key));
        let (path, slot, mut bookkeeping) = match named {
            Some(t) => {
                let slot = t.slot.as_ref().map(|s| {
                    let var = graph
                        .as_ref()
                        .and_then(|g| g.tensor(&s.variable_key))
                        .map_or(s.variable_key.as_str(), |v| v.path.as_str());
                    format!("slot {} of {var}", s.slot_name)
                });
                let under_optimizer = optimizers
                    .iter()
                    .any(|o| t.path.starts_with(&format!("{o}/")));
                let is_bookkeeping = slot.is_some()
                    || under_optimizer
                    || t.path == "save_counter"
                    || t.path.is_empty();
                (t.path.clone(), slot, is_bookkeeping)
            }
            None if graph.is_none() => {
                let (slot, bookkeeping) = tf1_role(&e.key);
                (e.key.clone(), slot, bookkeeping)
            }
            None => (e.key.clone(), None, false),
        };
        if e.key == OBJECT_GRAPH_KEY {
            bookkeeping = true;
        }
        out.push(Item {
            entry: e.clone(),
            path,
            slot,
            bookkeeping,
        });
    }
    // Two tensors may not share an export name: fall back to keys for the clashes.
    let mut seen = HashSet::new();
    let clashes: HashSet<String> = out
        .iter()
        .filter(|i| !seen.insert(i.path.clone()))
        .map(|i| i.path.clone())
        .collect();
    for i in &mut out {
        if clashes.contains(&i.path) {
            i.path = i.entry.key.clone();
        }
    }
    Ok(out)
}

/// The slots TF1's optimizers create, by the suffix `tf.compat.v1.train` gives their
/// variables (`dense/kernel/Adam`, `dense/kernel/Adam_1`), and the slot's name.
const TF1_SLOTS: &[(&str, &str)] = &[
    ("/Adam", "m"),
    ("/Adam_1", "v"),
    ("/Momentum", "momentum"),
    ("/RMSProp", "rms"),
    ("/RMSProp_1", "momentum"),
    ("/Adagrad", "accumulator"),
    ("/Adadelta", "accum"),
    ("/Adadelta_1", "accum_update"),
    ("/Ftrl", "accum"),
    ("/Ftrl_1", "linear"),
];

/// A TF1 name-based checkpoint's key (no object graph): `slot <name> of <variable>` for an
/// optimizer slot, and whether it is bookkeeping (slots, `global_step`, Adam's
/// `beta1_power`/`beta2_power`).
fn tf1_role(key: &str) -> (Option<String>, bool) {
    for (suffix, slot) in TF1_SLOTS {
        if let Some(var) = key.strip_suffix(suffix).filter(|v| !v.is_empty()) {
            return (Some(format!("slot {slot} of {var}")), true);
        }
    }
    let last = key.rsplit('/').next().unwrap_or(key);
    let bookkeeping = matches!(last, "global_step" | "beta1_power" | "beta2_power");
    (None, bookkeeping)
}

/// The paths of the optimizer objects of `graph`: nodes that own slot variables or count
/// iterations (`iter`, `_iterations`).
fn optimizer_paths(graph: &ObjectGraph) -> Vec<String> {
    let paths = graph.node_paths();
    graph
        .proto()
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| {
            !n.slot_variables.is_empty()
                || n.children
                    .iter()
                    .any(|c| c.local_name == "iter" || c.local_name == "_iterations")
        })
        .filter_map(|(i, _)| paths.get(i).cloned().flatten())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The tensors of the checkpoint `path` names, as `select` asks: named by object path or key,
/// bookkeeping left out unless `select.all` (the object graph always). Errors name the path.
pub(crate) fn load(path: &Path, select: &Select) -> Result<Vec<NamedTensor>> {
    let ckpt = open(path)?;
    let name = || escaped(&path.display().to_string());
    let items = items(&ckpt).with_context(name)?;
    let total = items
        .iter()
        .filter(|i| wanted(i, select))
        .map(|i| i.entry.size.max(0) as u64)
        .sum();
    let pb = super::progress::bar(total, &format!("reading {}", path.display()));
    let mut out = Vec::new();
    for i in items.iter().filter(|i| wanted(i, select)) {
        let t = ckpt.read(&i.entry.key).with_context(name)?;
        pb.inc(i.entry.size.max(0) as u64);
        out.push(NamedTensor::new(i.name(select.names), t));
    }
    pb.finish_and_clear();
    Ok(out)
}

/// `convert CKPT out.safetensors`: the header made from the index, then each tensor copied
/// from its shard piece by piece, CRC verified on each piece while it is in the cache
/// (`Checkpoint::stream_bytes`: no tensor is built, no memory but one piece); a tensor that
/// cannot be copied as its bytes (strings, partitioned or big-endian tensors, `--cast`) is
/// read, cast if asked, written and dropped. Written atomically but, as `cp` and TensorFlow's
/// own writers, not fsynced. Errors name the file they concern.
pub(crate) fn convert_to_safetensors(
    path: &Path,
    select: &Select,
    cast: Option<tensorcast::DataType>,
    output: &Path,
) -> Result<()> {
    use tensorcast::io::safetensors::{write_file_copied, PlannedTensor};
    let ckpt = open(path)?;
    let name = || escaped(&path.display().to_string());
    let items: Vec<Item> = items(&ckpt)
        .with_context(name)?
        .into_iter()
        .filter(|i| wanted(i, select))
        .collect();
    let planned: Vec<PlannedTensor> = items
        .iter()
        .map(|i| PlannedTensor {
            name: i.name(select.names).to_string(),
            dtype: cast.unwrap_or(i.entry.dtype),
            shape: i.entry.shape.clone(),
        })
        .collect();
    let total = items.iter().map(|i| i.entry.size.max(0) as u64).sum();
    let pb = super::progress::bar(total, &format!("converting {}", path.display()));
    // Errors from reading name the checkpoint; the rest name the output.
    let mut read_error = None;
    let r = write_file_copied(output, &planned, None, false, &mut |k, out| {
        let i = &items[k];
        let key = &i.entry.key;
        let copy = (cast.is_none() || cast == Some(i.entry.dtype)) && ckpt.is_streamable(key);
        let r = if copy {
            ckpt.stream_bytes(key, out).map(|_| None)
        } else {
            ckpt.read(key)
                .and_then(|t| match cast {
                    Some(d) => t.cast(d).map_err(Into::into),
                    None => Ok(t),
                })
                .map(Some)
        };
        pb.inc(i.entry.size.max(0) as u64);
        r.inspect_err(|e| {
            // A failed write to the output is the output's error.
            if !e.message().starts_with("cannot write") {
                read_error = Some(e.to_string())
            }
        })
    });
    pb.finish_and_clear();
    if let Some(e) = read_error {
        return Err(anyhow::anyhow!(e)).with_context(name);
    }
    r.with_context(|| escaped(&output.display().to_string()))
}

fn wanted(i: &Item, select: &Select) -> bool {
    i.entry.key != OBJECT_GRAPH_KEY && (select.all || !i.bookkeeping)
}

/// The TensorFlow key of a tensor named `name` in a file being written as a checkpoint: a
/// TF2 key as it is, an object path (`model/dense/kernel`) as
/// `model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE` with each component escaped as TensorFlow
/// escapes local names.
pub(crate) fn key_of(name: &str) -> String {
    if name.contains("/.ATTRIBUTES/") || name == OBJECT_GRAPH_KEY {
        return name.to_string();
    }
    let path: Vec<String> = name.split('/').map(escape_local_name).collect();
    format!("{}/.ATTRIBUTES/VARIABLE_VALUE", path.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_file_names_are_recognised() {
        assert!(is_data_file_name("ckpt-3.data-00000-of-00001"));
        assert!(is_data_file_name("model.ckpt.data-00001-of-00002"));
        assert!(!is_data_file_name("model.data"));
        assert!(!is_data_file_name("x.data-a-of-1"));
    }

    #[test]
    fn tf1_slots_and_counters_are_bookkeeping() {
        assert_eq!(
            tf1_role("dense/kernel/Adam_1"),
            (Some("slot v of dense/kernel".into()), true)
        );
        assert_eq!(
            tf1_role("dense/kernel/Adam"),
            (Some("slot m of dense/kernel".into()), true)
        );
        assert_eq!(tf1_role("global_step"), (None, true));
        assert_eq!(tf1_role("beta1_power"), (None, true));
        assert_eq!(tf1_role("dense/kernel"), (None, false));
        assert_eq!(tf1_role("Adam"), (None, false));
    }

    #[test]
    fn paths_become_tf2_keys() {
        assert_eq!(
            key_of("model/dense/kernel"),
            "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"
        );
        assert_eq!(key_of("a.b/c"), "a..b/c/.ATTRIBUTES/VARIABLE_VALUE");
        assert_eq!(
            key_of("m/k/.ATTRIBUTES/VARIABLE_VALUE"),
            "m/k/.ATTRIBUTES/VARIABLE_VALUE"
        );
    }
}
