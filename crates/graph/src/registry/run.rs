//! What one run hands down to every kernel it runs, and to the runs of the functions those
//! kernels call (`While`, `If`, `Case`): the session's variables, the allocation limit, the
//! cancellation flag and the chain of function calls the run is nested in.
//!
//! * **Allocation limit.** A kernel that sizes an output from a value it reads (a `Fill`'s
//!   dims, a `Range`'s bounds, a `Tile`'s multiples, a `TensorListReserve`'s element count)
//!   checks what it would allocate beyond the bytes of its inputs against
//!   [`Run::max_allocation_bytes`] before it allocates, so a model of a few hundred bytes
//!   cannot make a run ask for gigabytes (TensorFlow aborts on some of these, and on the others
//!   commits memory the machine may not have). The registry ops that size outputs from values
//!   are checked in one place, from their own shape functions run on the actual inputs
//!   (`kernels.rs`); kernels whose allocation is their own business (the TensorList ops) call
//!   [`Run::check_bytes`] themselves.
//! * **Cancellation.** A [`Cancellation`] set from another thread (a Ctrl-C handler, a
//!   timeout) stops the run at its next node, loop iteration or function call with
//!   [`Error::Cancelled`].
//! * **Function calls** nest as deep as the graph's library makes them (each call runs on stack
//!   grown on demand, so depth costs no stack); a function that calls itself, directly or
//!   through others, may recurse [`MAX_RECURSION`] levels.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tensorcast_core::DataType;

use super::Resources;
use crate::error::{Error, Result};

/// How many times a run may re-enter a function it is already running (a function that calls
/// itself, directly or through others): TensorFlow runs such recursion until its stack or
/// memory is gone; tensorcast refuses it past this depth.
pub(crate) const MAX_RECURSION: usize = 64;

/// A flag that cancels the runs it is given ([`Session::run_cancellable`](crate::Session::run_cancellable)):
/// set it from any thread and each such run stops at its next node, loop iteration or function
/// call with [`Error::Cancelled`] (`Run call was cancelled`, code `CANCELLED`). Clones share the
/// flag. A run that is in the middle of one long kernel stops when that kernel returns.
///
/// ```
/// use tensorcast_graph::Cancellation;
/// let c = Cancellation::new();
/// let handle = c.clone();
/// std::thread::spawn(move || handle.cancel()).join().unwrap();
/// assert!(c.is_cancelled());
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancellation(Arc<AtomicBool>);

impl Cancellation {
    /// A flag not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag: the runs given it stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`Cancellation::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// One function call a run is nested in.
#[derive(Debug)]
pub(crate) struct Frame<'a> {
    /// The function's identity (its compiled form's address).
    pub(crate) id: usize,
    /// Frames of calls re-entering a function already running, this one included.
    recursion: usize,
    /// The call this one is nested in.
    parent: Option<&'a Frame<'a>>,
}

/// What a run hands down to its kernels; see the module docs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    /// The session's variables (and through them its functions).
    pub(crate) resources: &'a Resources,
    /// The most bytes a kernel may allocate beyond the bytes of its inputs when it sizes an
    /// output from a value it reads.
    pub(crate) max_allocation_bytes: u64,
    cancel: Option<&'a Cancellation>,
    calls: Option<&'a Frame<'a>>,
}

impl<'a> Run<'a> {
    /// A run on `resources`, allocating at most `max_allocation_bytes` beyond its kernels'
    /// inputs, stopped by `cancel`.
    pub(crate) fn new(
        resources: &'a Resources,
        max_allocation_bytes: u64,
        cancel: Option<&'a Cancellation>,
    ) -> Self {
        Run {
            resources,
            max_allocation_bytes,
            cancel,
            calls: None,
        }
    }

    /// [`Error::Cancelled`] once the run's [`Cancellation`] is set.
    #[inline]
    pub(crate) fn check_cancelled(&self) -> Result<()> {
        match self.cancel {
            Some(c) if c.is_cancelled() => Err(Error::Cancelled),
            _ => Ok(()),
        }
    }

    /// The frame of a call of the function `id` from this run: an error when that would
    /// re-enter functions already running more than [`MAX_RECURSION`] times.
    pub(crate) fn frame(&self, id: usize, name: &str) -> Result<Frame<'a>> {
        let mut parent = self.calls;
        let reentry = std::iter::successors(parent, |f| f.parent).any(|f| f.id == id);
        let recursion = parent.map_or(0, |p| p.recursion) + usize::from(reentry);
        if recursion > MAX_RECURSION {
            return Err(Error::Function(format!(
                "function '{name}' calls itself (directly or through other functions) more than \
                 {MAX_RECURSION} levels deep"
            )));
        }
        Ok(Frame {
            id,
            recursion,
            parent: parent.take(),
        })
    }

    /// This run's context for the body of the call `frame`, on `resources`.
    pub(crate) fn nested<'b>(&self, resources: &'b Resources, frame: &'b Frame<'b>) -> Run<'b>
    where
        'a: 'b,
    {
        Run {
            resources,
            max_allocation_bytes: self.max_allocation_bytes,
            cancel: self.cancel,
            calls: Some(frame),
        }
    }

    /// Checks that allocating `bytes` (described by `what`, evaluated only on failure) beyond
    /// the `justified` bytes of a kernel's inputs stays within the run's limit.
    pub(crate) fn check_bytes(
        &self,
        what: impl FnOnce() -> String,
        bytes: u64,
        justified: u64,
    ) -> Result<()> {
        let beyond = bytes.saturating_sub(justified);
        if beyond > self.max_allocation_bytes {
            return Err(Error::AllocationLimit {
                node: String::new(),
                location: Box::default(),
                what: what(),
                bytes: beyond,
                limit: self.max_allocation_bytes,
            });
        }
        Ok(())
    }

    /// [`Run::check_bytes`] for a tensor of `dtype` and `dims`, described with TensorFlow's
    /// out-of-memory text.
    pub(crate) fn check_tensor(&self, dtype: DataType, dims: &[i64], justified: u64) -> Result<()> {
        self.check_bytes(
            || oom_text(dtype, dims),
            tensor_bytes(dtype, dims),
            justified,
        )
    }
}

/// The bytes a tensor of `dtype` and `dims` takes (saturating; negative dims count as 0).
pub(crate) fn tensor_bytes(dtype: DataType, dims: &[i64]) -> u64 {
    dims.iter()
        .fold(1u64, |n, &d| {
            n.saturating_mul(u64::try_from(d).unwrap_or(0))
        })
        .saturating_mul(dtype.size().max(1) as u64)
}

/// TensorFlow's text for a tensor its allocator cannot allocate.
pub(crate) fn oom_text(dtype: DataType, dims: &[i64]) -> String {
    let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!(
        "OOM when allocating tensor with shape[{}] and type {} on \
         /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu",
        dims.join(","),
        dtype.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocation_beyond_the_limit_is_refused_with_its_size() {
        let res = Resources::default();
        let run = Run::new(&res, 1000, None);
        assert!(run.check_tensor(DataType::FLOAT, &[250], 0).is_ok());
        assert!(run.check_tensor(DataType::FLOAT, &[500], 1000).is_ok());
        let e = run
            .check_tensor(DataType::FLOAT, &[1 << 31, 1 << 31], 0)
            .unwrap_err();
        assert_eq!(e.code(), tensorcast_core::Code::ResourceExhausted);
        assert!(
            e.to_string().starts_with(
                "OOM when allocating tensor with shape[2147483648,2147483648] and type float"
            ),
            "{e}"
        );
        assert!(
            matches!(
                e,
                Error::AllocationLimit {
                    bytes: u64::MAX,
                    limit: 1000,
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn recursion_past_the_limit_is_refused_and_other_nesting_is_not() {
        let res = Resources::default();
        let run = Run::new(&res, 0, None);
        // 500 different functions nested: no recursion.
        fn nest(run: &Run<'_>, id: usize, left: usize, same: bool) -> Result<usize> {
            let f = run.frame(if same { 7 } else { id }, "f")?;
            let inner = run.nested(run.resources, &f);
            if left == 0 {
                return Ok(id);
            }
            nest(&inner, id + 1, left - 1, same)
        }
        assert_eq!(nest(&run, 0, 499, false).unwrap(), 499);
        assert!(nest(&run, 0, MAX_RECURSION, true).is_ok());
        let e = nest(&run, 0, MAX_RECURSION + 1, true).unwrap_err();
        assert!(e.to_string().contains("calls itself"), "{e}");
    }

    #[test]
    fn cancelled_run_reports_cancelled() {
        let res = Resources::default();
        let c = Cancellation::new();
        let run = Run::new(&res, 0, Some(&c));
        assert!(run.check_cancelled().is_ok());
        c.clone().cancel();
        let e = run.check_cancelled().unwrap_err();
        assert_eq!(e, Error::Cancelled);
        assert_eq!(e.code(), tensorcast_core::Code::Cancelled);
        assert_eq!(e.to_string(), "Run call was cancelled");
    }
}
