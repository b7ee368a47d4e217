//! Replays every fuzz corpus (`fuzz/corpus/<target>/*`) through the target bodies as an
//! ordinary test, so a crash found once stays fixed.

#[test]
fn fuzz_corpora_replay_without_panics() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut replayed = 0;
    for (name, run) in tensorcast_testkit::fuzz::TARGETS {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            run(&data);
            replayed += 1;
        }
    }
    println!("replayed {replayed} corpus inputs");
}
