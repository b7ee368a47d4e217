//! Every command of README's "Command-line tool" section runs as written (from the source
//! tree's root, `/tmp/` moved to a fresh directory; a `| dot ...` or `> file` tail is left to
//! the shell and dropped here) and succeeds.

use std::path::Path;
use std::process::Command;

use crate::common::stderr;
use crate::common::{run_in, BIN};

/// The `tensorcast ...` lines of the first `sh` block of README's CLI section.
fn readme_commands() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = readme
        .split("\n## Command-line tool")
        .nth(1)
        .expect("README has a Command-line tool section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a sh block");
    block
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("tensorcast "))
        .map(|l| l.to_string())
        .collect()
}

#[test]
fn every_readme_cli_example_runs_and_succeeds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tmp = crate::common::temp_dir("readme");
    let tmp_s = format!("{}/", tmp.display());
    let commands = readme_commands();
    assert!(commands.len() >= 15, "{commands:?}");
    for line in &commands {
        // Comments start at "  #"; pipes and redirections are the shell's.
        let cmd = line.split("  #").next().unwrap();
        let cmd = cmd.split(" | ").next().unwrap();
        let cmd = cmd.split(" > ").next().unwrap();
        let cmd = cmd.replace("/tmp/", &tmp_s);
        let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
        // The benchmark report as written, one timed run per workload.
        let mut args = args;
        if args.first() == Some(&"bench") {
            args.extend(["--runs", "1"]);
        }
        let o = Command::new(BIN)
            .args(&args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{line}\n{}", stderr(&o));
    }
}

#[test]
fn one_flag_grammar_new_and_old_spellings_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = crate::common::temp_dir("grammar");
    let src = root.join("samples/activations.npy");
    std::fs::copy(&src, dir.join("a.npy")).unwrap();
    let runs: &[&[&str]] = &[
        &["bitcast", "a.npy", "--dtype", "uint8", "-o", "b1.npy"],
        &["bitcast", "a.npy", "--to", "uint8", "-o", "b2.npy"],
        &["bitcast", "a.npy", "b3.npy", "--dtype", "uint8"],
        &["convert", "a.npy", "c1.bin", "--format", "pb"],
        &["convert", "a.npy", "c2.bin", "--to", "pb"],
        &["convert", "a.npy", "-o", "c3.bin", "--format", "pb"],
        &["broadcast", "a.npy", "d1.npy", "--shape", "5,2,3,4"],
        &["broadcast", "a.npy", "--shape", "5,2,3,4", "-o", "d2.npy"],
    ];
    for args in runs {
        let o = run_in(&dir, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    let same = |a: &str, b: &str| {
        assert_eq!(
            std::fs::read(dir.join(a)).unwrap(),
            std::fs::read(dir.join(b)).unwrap(),
            "{a} vs {b}"
        )
    };
    same("b1.npy", "b2.npy");
    same("b1.npy", "b3.npy");
    same("c1.bin", "c2.bin");
    same("c1.bin", "c3.bin");
    same("d1.npy", "d2.npy");
    // Standard output with -o -.
    let o = run_in(&dir, &["convert", "a.npy", "-o", "-", "--format", "npy"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, std::fs::read(dir.join("a.npy")).unwrap());
    // Two outputs, or none: one line, exit 2.
    for args in [
        &["convert", "a.npy", "x.npy", "-o", "y.npy"][..],
        &["bitcast", "a.npy", "--dtype", "u8"][..],
    ] {
        let o = run_in(&dir, args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("tensorcast: a.npy: "), "{err}");
    }
    assert!(!dir.join("x.npy").exists() && !dir.join("y.npy").exists());
}
