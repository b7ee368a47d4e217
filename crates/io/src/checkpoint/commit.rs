//! How a bundle's files replace a checkpoint's through the atomic output layer, so that at
//! every instant the prefix reads completely as the old checkpoint or as the new one.
//!
//! A bundle is an index and data shards under fixed names (`P.index`, `P.data-00000-of-00001`)
//! that no single rename replaces together. Renaming the data first and the index second (as
//! TensorFlow's `BundleWriter` does) leaves, between the two renames, the new data beside the
//! old index: the old checkpoint no longer reads and the new one is not there yet. So a
//! checkpoint overwritten in place is replaced in steps, each leaving a whole checkpoint:
//!
//! 1. the new shards are renamed to *staged* names, `P.data-0000i-of-M` with a shard count
//!    `M` no file of the prefix uses (the old index still names the old shards: the old
//!    checkpoint reads);
//! 2. a staged index, the new entries with `num_shards = M`, is renamed over `P.index`
//!    (readers open shards by the index's count: the new checkpoint reads from the staged
//!    shards; the shards past the new count are never opened, by TensorFlow's reader or
//!    ours);
//! 3. each shard is placed at its final name, a hard link of the staged shard renamed over
//!    it (a copy where links fail) - the staged shards stay, so the staged index still reads;
//! 4. the final index is renamed over `P.index`: the new checkpoint, byte for byte
//!    TensorFlow's;
//! 5. the staged shards are removed, with those a killed write left under smaller staged
//!    counts (no index names them any more).
//!
//! A kill between any two steps leaves a readable checkpoint (and, after step 1, staged shards
//! as litter, which the next overwrite removes). A caught signal ([`crate::remove_temporary_files`]) waits for the steps to end.
//! A new checkpoint (no old index, or no old shard under the new names) needs none of this:
//! its shards are renamed into place, then its index. Every name is written through symbolic
//! links (a `.data` file that is a link to another disk is written through it, the link stays)
//! and a FIFO or device target is written as a stream.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tensorcast_proto::BundleEntryProto;

use super::data_file_name;
use super::writer::{index_table, CheckpointWriteOptions, CHUNK};
use crate::atomic::{self, Finished, OutputFile, Sink, Target};
use crate::error::{IoError, Result};

/// The steps of an overwrite in place, for the test hook that stops after one of them (as a
/// kill there would).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The new shards are at their staged names.
    Staged,
    /// The staged index is in place.
    StagedIndex,
    /// The new shards are at their final names.
    ShardsInPlace,
    /// The final index is in place (the staged shards not yet removed).
    IndexInPlace,
}

#[cfg(test)]
thread_local! {
    /// Where [`after`] stops the write of this thread (tests only).
    pub(crate) static STOP_AFTER: std::cell::Cell<Option<Step>> = const { std::cell::Cell::new(None) };
}

/// Returns an error at the step the test hook names, leaving the files as they are (as a
/// kill would); nothing outside tests.
fn after(step: Step) -> Result<()> {
    #[cfg(test)]
    if STOP_AFTER.with(|s| s.get()) == Some(step) {
        return Err(IoError::io(
            "cannot write",
            std::io::Error::other(format!("stopped after {step:?} by the test hook")),
        ));
    }
    let _ = step;
    Ok(())
}

/// The files of one bundle being written: its data shards, one after the other, then its
/// index at [`BundleFiles::commit`].
pub(crate) struct BundleFiles<'a> {
    prefix: &'a Path,
    sync: bool,
    index: Target,
    data: Vec<Target>,
    /// The shard count of the staged names for an overwrite in place.
    staged: Option<i32>,
    shards: Vec<Finished>,
}

impl<'a> BundleFiles<'a> {
    /// Resolves the index and the `n` data shards of `prefix` and chooses how they will be
    /// replaced.
    pub(crate) fn begin(
        prefix: &'a Path,
        n: i32,
        options: &CheckpointWriteOptions,
    ) -> Result<Self> {
        let index = atomic::resolve_target(&suffixed(prefix, ".index"))?;
        let data = (0..n)
            .map(|i| atomic::resolve_target(&suffixed(prefix, &data_file_name("", i, n))))
            .collect::<Result<Vec<_>>>()?;
        let is_file = |t: &Target| matches!(t, Target::Replace(p) if p.is_file());
        let any_stream = std::iter::once(&index)
            .chain(&data)
            .any(|t| matches!(t, Target::Stream(_)));
        let staged = if !any_stream && is_file(&index) && data.iter().any(is_file) {
            staged_count(prefix, n)
        } else {
            None
        };
        Ok(Self {
            prefix,
            sync: options.sync,
            index,
            data,
            staged,
            shards: Vec::with_capacity(n.max(0) as usize),
        })
    }

    /// Writes the next shard with `write`, to a temporary file (or its stream).
    pub(crate) fn write_shard(
        &mut self,
        write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
    ) -> Result<()> {
        let i = self.shards.len();
        let target = self.data.get(i).ok_or_else(|| {
            IoError::io(
                "cannot write",
                std::io::Error::other("more shards than planned"),
            )
        })?;
        let mut out = match self.staged {
            Some(m) => OutputFile::staged(&self.staged_name(i, m), target.path(), self.sync)?,
            None => OutputFile::for_target(target.clone(), self.sync)?,
        };
        atomic::write_through(out.file_mut(), CHUNK, write)?;
        self.shards.push(out.finish()?);
        Ok(())
    }

    fn staged_name(&self, shard: usize, m: i32) -> PathBuf {
        suffixed(self.prefix, &data_file_name("", shard as i32, m))
    }

    /// Writes the index of `entries` and replaces the checkpoint (see the module docs).
    pub(crate) fn commit(self, entries: &BTreeMap<&[u8], BundleEntryProto>) -> Result<()> {
        let n = self.data.len() as i32;
        if self.shards.len() != self.data.len() {
            return Err(IoError::io(
                "cannot write",
                std::io::Error::other("fewer shards written than planned"),
            ));
        }
        let index = self.index_file(&index_table(entries, n))?;
        let Some(m) = self.staged else {
            for shard in self.shards {
                if let Finished::Prepared(p) = shard {
                    p.commit()?;
                }
            }
            return commit(index);
        };
        let staged_index = self.index_file(&index_table(entries, m))?;
        let staged: Vec<PathBuf> = (0..self.shards.len())
            .map(|i| self.staged_name(i, m))
            .collect();
        // A signal waits until the steps are done (or one failed).
        let _steps = atomic::commit_guard();
        let remove_staged = |upto: usize| {
            for p in &staged[..upto] {
                let _ = std::fs::remove_file(p);
            }
        };
        for (i, shard) in self.shards.into_iter().enumerate() {
            if let Finished::Prepared(p) = shard {
                if let Err(e) = p.commit_as(&staged[i]) {
                    remove_staged(i);
                    return Err(e);
                }
            }
        }
        after(Step::Staged)?;
        if let Err(e) = commit(staged_index) {
            remove_staged(staged.len());
            return Err(e);
        }
        after(Step::StagedIndex)?;
        // From here on the prefix reads as the new checkpoint: a failure leaves it so.
        for (from, to) in staged.iter().zip(&self.data) {
            atomic::replace_with_copy_of(from, to.path(), self.sync)?;
        }
        after(Step::ShardsInPlace)?;
        commit(index)?;
        after(Step::IndexInPlace)?;
        remove_staged(staged.len());
        // The staged shards a killed write left under the counts skipped for them: no index
        // names them now.
        for earlier in n + 1..m {
            for i in 0..n {
                let _ =
                    std::fs::remove_file(suffixed(self.prefix, &data_file_name("", i, earlier)));
            }
        }
        Ok(())
    }

    /// The index `bytes`, written to a temporary file beside the index (or its stream).
    fn index_file(&self, bytes: &[u8]) -> Result<Finished> {
        let mut out = OutputFile::for_target(self.index.clone(), self.sync)?;
        std::io::Write::write_all(out.file_mut(), bytes)
            .map_err(|e| IoError::io("cannot write", e))?;
        out.finish()
    }
}

fn commit(f: Finished) -> Result<()> {
    match f {
        Finished::Prepared(p) => p.commit(),
        Finished::Stream => Ok(()),
    }
}

/// The smallest shard count above `n` under which no file of `prefix` exists for any of the
/// `n` shards (so the old checkpoint's shards, whatever their count, are never touched).
fn staged_count(prefix: &Path, n: i32) -> Option<i32> {
    (n + 1..=n.saturating_add(64).min(99_999)).find(|&m| {
        (0..n).all(|i| {
            std::fs::symlink_metadata(suffixed(prefix, &data_file_name("", i, m))).is_err()
        })
    })
}

pub(crate) fn suffixed(prefix: &Path, suffix: &str) -> PathBuf {
    let mut p = prefix.as_os_str().to_os_string();
    p.push(suffix);
    PathBuf::from(p)
}
