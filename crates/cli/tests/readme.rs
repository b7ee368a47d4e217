//! Every command of README's "Command-line tool" section runs as written (from the source
//! tree's root, `/tmp/` moved to a fresh directory; a `| dot ...` or `> file` tail is left to
//! the shell and dropped here) and succeeds.

use std::path::Path;
use std::process::Command;

use crate::common::stderr;

const BIN: &str = env!("CARGO_BIN_EXE_tensorcast");

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
