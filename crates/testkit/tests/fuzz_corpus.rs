//! Replays every fuzz target's seeds (`fuzz/seeds/<target>/*`, in git: a minimised seed set and
//! the reproducers of past findings) through the target bodies as an ordinary test, so a crash
//! found once stays fixed; and the full working corpus (`fuzz/corpus/<target>/*`, git-ignored,
//! grown by `scripts/fuzz.sh`) where this checkout has one.

use std::path::Path;

/// Replays every input under `root/<target>/`; with `strict`, an input that cannot be read
/// fails the test, else it is skipped (the working corpus is rewritten while `scripts/fuzz.sh`
/// minimises it, so a file listed may be gone when read).
fn replay(root: &Path, strict: bool) -> usize {
    let mut replayed = 0;
    for (name, run) in tensorcast_testkit::fuzz::TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(name)) else {
            continue;
        };
        for e in entries.flatten() {
            let data = match std::fs::read(e.path()) {
                Ok(data) => data,
                Err(err) if strict => panic!("{}: {err}", e.path().display()),
                Err(_) => continue,
            };
            run(&data);
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn fuzz_seeds_and_corpora_replay_without_panics() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let seeds = replay(&fuzz.join("seeds"), true);
    // Every target has seeds in git: a replay of none means the folder moved.
    assert!(
        seeds >= tensorcast_testkit::fuzz::TARGETS.len(),
        "only {seeds} seed inputs under fuzz/seeds"
    );
    let corpus = replay(&fuzz.join("corpus"), false);
    println!("replayed {seeds} seed inputs and {corpus} working-corpus inputs");
}

#[test]
fn fuzz_every_target_has_seeds_in_git() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    for (name, _) in tensorcast_testkit::fuzz::TARGETS {
        let n = std::fs::read_dir(seeds.join(name))
            .map(|d| d.count())
            .unwrap_or(0);
        assert!(n > 0, "fuzz/seeds/{name} is empty or missing");
        assert!(
            n <= 400,
            "fuzz/seeds/{name} holds {n} files: keep a minimised set (scripts/fuzz.sh, FUZZ_UPDATE_SEEDS=1)"
        );
    }
}
