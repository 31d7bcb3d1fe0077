//! The extension's test build (`--features test-build`, what setup and these tests hand
//! maturin) resolves every crate it shares with `cargo test --workspace` with the same
//! features, so cargo builds those crates once for both. A crate apart by one feature is
//! built twice, and so is everything above it: this test names the crate and its features.

use std::collections::BTreeSet;
use std::process::Command;

use crate::common::workspace;

/// `cargo tree`'s `name version [features]` lines, without the `(*)` and `(proc-macro)` marks.
fn resolved(args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--prefix", "none", "--format", "{p} [{f}]"])
        .args(args)
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo tree {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| line.replace(" (*)", "").replace(" (proc-macro)", ""))
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn the_extensions_test_build_shares_every_dependency_with_the_test_build() {
    let extension = resolved(&["-p", "agent-tools-py", "--features", "test-build", "-e", "normal,build"]);
    let tests = resolved(&["--workspace", "-e", "normal,build,dev"]);
    // The extension's own: pyo3 and what only it pulls in, and this crate itself.
    let own = ["agent-tools-py ", "pyo3", "pythonize ", "target-lexicon "];
    let apart: Vec<&String> =
        extension.difference(&tests).filter(|line| !own.iter().any(|name| line.starts_with(name))).collect();
    assert!(
        apart.is_empty(),
        "resolved otherwise than in `cargo test --workspace` (add the features to `test-build` or a dependency \
         in crates/agent-tools-py/Cargo.toml):\n{apart:#?}"
    );
    assert!(extension.iter().any(|line| line.starts_with("tokio ") && line.contains("test-util")), "{extension:#?}");
}
