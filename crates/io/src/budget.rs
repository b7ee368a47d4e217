//! [`MemoryBudget`]: one memory limit that several reads share.
//!
//! A limit checked per decode bounds each tensor, not what a caller holds: a file of many
//! small records, each claiming a fill just under the limit, would add the limit once per
//! record. A budget is charged by every decode made with the [`crate::ReadOptions`] that
//! carry it (and their clones, which share it), so everything those reads keep together stays
//! under one limit. What a decode is charged is what it allocates beyond the bytes it was
//! given (values a TensorProto declares but does not carry, string and variant elements,
//! decompressed npz members, checkpoint string tables): a tensor whose bytes are in the file
//! costs nothing, so a large file of ordinary tensors reads whatever the limit.
//!
//! A caller that drops what it read can give the memory back ([`MemoryBudget::release`], or
//! [`MemoryBudget::used_bytes`] before and [`MemoryBudget::release_to`] after).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{IoError, Result};

/// A memory limit shared by every read that holds a clone of it (see the module docs).
///
/// ```
/// use tensorcast_io::MemoryBudget;
/// let budget = MemoryBudget::new(100).with_name("--max-memory");
/// budget.charge(60, "a tensor")?;
/// let err = budget.clone().charge(60, "another tensor").unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "another tensor needs 60 bytes beyond the file's own, more than the 40 bytes left of \
///      --max-memory (100 bytes; 60 taken by what was read before)"
/// );
/// budget.release(60);
/// assert_eq!(budget.used_bytes(), 0);
/// # Ok::<(), tensorcast_io::IoError>(())
/// ```
#[derive(Clone)]
pub struct MemoryBudget {
    inner: Arc<Inner>,
}

struct Inner {
    limit: u64,
    used: AtomicU64,
    name: String,
}

impl MemoryBudget {
    /// A budget of `limit_bytes`, nothing charged yet.
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            inner: Arc::new(Inner {
                limit: limit_bytes,
                used: AtomicU64::new(0),
                name: "the memory limit".to_string(),
            }),
        }
    }

    /// The same limit, named `name` in errors (`--max-memory`, say); a new budget (clones of
    /// the old one do not share it).
    pub fn with_name(self, name: impl Into<String>) -> Self {
        Self {
            inner: Arc::new(Inner {
                limit: self.inner.limit,
                used: AtomicU64::new(self.used_bytes()),
                name: name.into(),
            }),
        }
    }

    /// The limit, in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.inner.limit
    }

    /// What is charged now, in bytes.
    pub fn used_bytes(&self) -> u64 {
        self.inner.used.load(Ordering::Acquire)
    }

    /// What may still be charged, in bytes.
    pub fn remaining_bytes(&self) -> u64 {
        self.inner.limit.saturating_sub(self.used_bytes())
    }

    /// The name errors give the limit.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Charges `bytes` for `what` (a description: `tensor 'x'`, `the fill of a TensorProto`),
    /// or refuses, charging nothing, when they do not fit in what is left.
    ///
    /// # Errors
    /// [`crate::ErrorKind::TooLarge`] naming `what`, the bytes, what is left and the limit.
    pub fn charge(&self, bytes: u64, what: impl fmt::Display) -> Result<()> {
        let used = &self.inner.used;
        let mut now = used.load(Ordering::Acquire);
        loop {
            let Some(next) = now.checked_add(bytes).filter(|&n| n <= self.inner.limit) else {
                return Err(self.exceeded(what, u128::from(bytes)));
            };
            match used.compare_exchange_weak(now, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Ok(()),
                Err(seen) => now = seen,
            }
        }
    }

    /// Gives back `bytes` charged before (what a caller dropped).
    pub fn release(&self, bytes: u64) {
        let _ = self
            .inner
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                Some(u.saturating_sub(bytes))
            });
    }

    /// Gives back everything charged since [`Self::used_bytes`] read `mark` (a caller that
    /// dropped everything it read since then; nothing when less is charged now).
    pub fn release_to(&self, mark: u64) {
        let _ = self
            .inner
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| Some(u.min(mark)));
    }

    /// The error for `what` needing `bytes` that are not left (for decoders that check
    /// before charging).
    pub(crate) fn exceeded(&self, what: impl fmt::Display, bytes: u128) -> IoError {
        let used = self.used_bytes();
        let taken = if used > 0 {
            format!("; {used} taken by what was read before")
        } else {
            String::new()
        };
        IoError::too_large(format!(
            "{what} needs {bytes} bytes beyond the file's own, more than the {} bytes left of \
             {} ({} bytes{taken})",
            self.remaining_bytes(),
            self.inner.name,
            self.inner.limit
        ))
    }
}

impl fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("name", &self.inner.name)
            .field("limit_bytes", &self.inner.limit)
            .field("used_bytes", &self.used_bytes())
            .finish()
    }
}

/// Two budgets are equal when they are the same budget (clones of one another).
impl PartialEq for MemoryBudget {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for MemoryBudget {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_budget_and_refusals_charge_nothing() {
        let a = MemoryBudget::new(10);
        let b = a.clone();
        a.charge(4, "x").unwrap();
        b.charge(6, "y").unwrap();
        assert_eq!(a.remaining_bytes(), 0);
        let e = b.charge(1, "z").unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::TooLarge);
        assert_eq!(a.used_bytes(), 10);
        a.release_to(4);
        assert_eq!(b.used_bytes(), 4);
        b.release(100);
        assert_eq!(a.used_bytes(), 0);
        assert!(a.charge(u64::MAX, "w").is_err());
        assert_eq!(a, b);
        assert_ne!(a, MemoryBudget::new(10));
    }

    #[test]
    fn charges_from_threads_never_pass_the_limit() {
        let budget = MemoryBudget::new(1000);
        let ok: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let b = budget.clone();
                    s.spawn(move || (0..100).filter(|_| b.charge(7, "t").is_ok()).count() as u64)
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(ok, 1000 / 7);
        assert_eq!(budget.used_bytes(), ok * 7);
    }
}
