//! Fuzz target body: arbitrary bytes as an `.npz` archive (zip directory, stored and deflated
//! members, the `.npy` headers inside), read with a 16 MiB memory limit, so a finding is a
//! panic, a hang or an allocation the input does not justify (run it with `-malloc_limit_mb`).
//! An archive that reads must write back (stored and deflated) and read again to the same
//! tensors.

use tensorcast_buffer::Buffer;

use tensorcast_io::{npz, NamedTensor, ReadOptions};

/// The memory limit the target reads with.
pub const MAX_MEMORY: u64 = 16 << 20;

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let options = ReadOptions {
        max_memory: MAX_MEMORY,
        ..ReadOptions::default()
    };
    let Ok(tensors) = npz::read_with(Buffer::from_vec(data.to_vec()), &options) else {
        return;
    };
    let mut names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() != tensors.len() {
        // Two members of one name (`a` and `a.npy`): a writer refuses that.
        return;
    }
    for compression in [npz::Compression::Stored, npz::Compression::Deflated] {
        let Ok(bytes) = npz::write(&tensors, compression) else {
            // Names the zip writer refuses (absolute paths, `..`): nothing to compare.
            return;
        };
        let back: Vec<NamedTensor> = npz::read_with(Buffer::from_vec(bytes), &options)
            .unwrap_or_else(|e| panic!("what npz writes does not read back: {e}"));
        assert_eq!(back, tensors, "npz round trip ({compression:?})");
    }
}
