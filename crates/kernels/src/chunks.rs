//! Work over an output's chunks: across rayon's pool when there is enough of it, on the
//! caller's thread otherwise.

use rayon::prelude::*;

/// `f(scratch, (i, chunk))` for each `len`-element chunk `i` of `out` (the last may be
/// shorter): across rayon's pool when `parallel`, each thread making its `scratch` with
/// `init`; else in order on the caller's thread, with one `scratch`. A thread outside the pool
/// that splits work hands it over and sleeps until it is done, which costs more than a small
/// kernel's work, so callers decide `parallel` from their work's size.
pub(crate) fn for_each_chunk<T: Send, S>(
    out: &mut [T],
    len: usize,
    parallel: bool,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, (usize, &mut [T])) + Sync + Send,
) {
    if parallel {
        out.par_chunks_mut(len).enumerate().for_each_init(init, f);
    } else {
        let mut scratch = init();
        out.chunks_mut(len)
            .enumerate()
            .for_each(|c| f(&mut scratch, c));
    }
}
