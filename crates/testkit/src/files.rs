//! Files the tests look at: what a folder holds after a write (no litter, nothing replaced).

use std::path::Path;

/// The names of the entries of `dir`, sorted. Panics when `dir` cannot be read.
pub fn dir_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
