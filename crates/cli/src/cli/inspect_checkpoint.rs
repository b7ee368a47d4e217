//! `tensorcast inspect CKPT`: a TensorFlow checkpoint's entries - object path, key, dtype,
//! shape, bytes, statistics and DebugString, optimizer slots named as slots of their
//! variable - or, with `--tf-debug-string`, exactly the lines TensorFlow's
//! `inspect_checkpoint` prints (`BundleReader::DebugString`).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use tensorcast::io::checkpoint::OBJECT_GRAPH_KEY;
use tensorcast::io::escaped;
use tensorcast::Tensor;

use super::checkpoint::{self, Item};
use super::progress::{self, human_bytes};
use super::stats::{self, Stats};
use super::table::{Align, Table};

/// What `inspect` found about one checkpoint entry.
struct EntryReport {
    item: Item,
    debug: String,
    stats: Option<Stats>,
}

/// What `inspect` found in one checkpoint.
pub(crate) struct CheckpointReport {
    path: String,
    prefix: String,
    shards: i32,
    data_bytes: u64,
    object_graph: bool,
    entries: Vec<EntryReport>,
}

/// TensorFlow's `inspect_checkpoint` lines for the checkpoint `path` names.
pub(crate) fn tf_debug_string(path: &Path) -> Result<Vec<u8>> {
    Ok(checkpoint::open(path)?.debug_string())
}

/// Reads the checkpoint `path` names, every tensor once (for statistics); `values` as for
/// DebugString.
pub(crate) fn inspect(path: &Path, values: i64) -> Result<CheckpointReport> {
    let ckpt = checkpoint::open(path)?;
    let name = || escaped(&path.display().to_string());
    let items = checkpoint::items(&ckpt).with_context(name)?;
    let data_bytes: u64 = items.iter().map(|i| i.entry.size.max(0) as u64).sum();
    let pb = progress::bar(data_bytes, &format!("statistics of {}", path.display()));
    let mut entries = Vec::with_capacity(items.len());
    let mut object_graph = false;
    for item in items {
        if item.entry.key == OBJECT_GRAPH_KEY {
            // A serialized proto: its DebugString is bytes nobody reads; the paths show it.
            object_graph = true;
            entries.push(EntryReport {
                debug: format!(
                    "Tensor<type: string shape: [] values: <TrackableObjectGraph, {} bytes>>",
                    item.entry.size
                ),
                item,
                stats: None,
            });
            continue;
        }
        let t: Tensor = ckpt.read(&item.entry.key).with_context(name)?;
        let stats = stats::compute(&t, &mut |n| pb.inc(n));
        entries.push(EntryReport {
            debug: t.debug_string(values),
            item,
            stats,
        });
    }
    pb.finish_and_clear();
    Ok(CheckpointReport {
        path: path.display().to_string(),
        prefix: ckpt.prefix().display().to_string(),
        shards: ckpt.num_shards(),
        data_bytes,
        object_graph,
        entries,
    })
}

impl CheckpointReport {
    pub(crate) fn to_text(&self) -> String {
        let n = self.entries.len();
        let mut s = format!(
            "{}: TensorFlow checkpoint{} {}, {} shard{}, {} entr{}, {}\n",
            escaped(&self.path),
            if self.object_graph { " (TF2)" } else { "" },
            escaped(&self.prefix),
            self.shards,
            if self.shards == 1 { "" } else { "s" },
            n,
            if n == 1 { "y" } else { "ies" },
            human_bytes(self.data_bytes)
        );
        let mut table = Table::new(
            &[
                &[
                    ("path", Align::Left),
                    ("dtype", Align::Left),
                    ("shape", Align::Left),
                    ("bytes", Align::Right),
                ][..],
                &Stats::COLUMNS,
                &[("key", Align::Left), ("", Align::Left)],
            ]
            .concat(),
        );
        for e in &self.entries {
            let dtype = e.item.entry.dtype;
            let mut row = vec![
                escaped(&e.item.path),
                dtype.name(),
                e.item.entry.shape.to_string(),
                e.item.entry.size.to_string(),
            ];
            row.extend(Stats::cells(e.stats.as_ref(), dtype));
            row.push(if e.item.entry.key == e.item.path {
                "=".into()
            } else {
                escaped(&e.item.entry.key)
            });
            row.push(match (&e.item.slot, e.item.bookkeeping) {
                (Some(slot), _) => escaped(slot),
                (None, true) => "bookkeeping".into(),
                (None, false) => String::new(),
            });
            table.row(row);
        }
        if n > 0 {
            s.push_str(&table.render("  "));
        }
        for e in &self.entries {
            s.push_str(&format!(
                "  {}: {}\n",
                escaped(&e.item.path),
                super::source::terminal_safe(&e.debug)
            ));
        }
        s
    }

    pub(crate) fn to_json(&self) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let dtype = e.item.entry.dtype;
                json!({
                    "path": e.item.path,
                    "key": e.item.entry.key,
                    "dtype": dtype.name(),
                    "shape": e.item.entry.shape.dim_sizes(),
                    "bytes": e.item.entry.size,
                    "shard": e.item.entry.shard_id,
                    "offset": e.item.entry.offset,
                    "slices": e.item.entry.num_slices,
                    "slot": e.item.slot,
                    "bookkeeping": e.item.bookkeeping,
                    "debug_string": e.debug,
                    "stats": e.stats.as_ref().map(|s| s.to_json(dtype)),
                })
            })
            .collect();
        json!({
            "path": self.path,
            "format": "checkpoint",
            "prefix": self.prefix,
            "shards": self.shards,
            "data_bytes": self.data_bytes,
            "object_graph": self.object_graph,
            "tensors": entries,
        })
    }
}
