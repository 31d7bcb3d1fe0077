//! Crate boundaries: leaf crates (every crate under `crates/` except the facade,
//! the command, the Python module, and `fuzz-checks`, which exercises them all) depend on no other leaf crate and not on the facade. Two
//! leaf crates that need the same thing share a small crate of its own
//! ([`SHARED`]), which depends on no workspace crate at all. And `xtask` depends on
//! none, so `cargo xtask setup` builds in seconds.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Crates that leaf crates may share: `write-set` (the all-or-nothing file
/// writer of astmatch's `resolve` and lsp-supervisor's renames) and
/// `enclosure` (where every subsystem's processes of the project's code run).
const SHARED: &[&str] = &["write-set", "enclosure"];

#[test]
fn leaf_crates_depend_on_no_workspace_crate_above_or_beside_them() {
    let (workspace, metadata) = metadata();
    let crates_dir = workspace.join("crates");
    let mut members = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let manifest = Path::new(package["manifest_path"].as_str().unwrap());
        if manifest.parent().and_then(Path::parent) == Some(crates_dir.as_path()) {
            members.push(package);
        }
    }
    let names: Vec<&str> = members.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"agent-tools") && names.contains(&"astmatch"), "{names:?}");
    assert!(SHARED.iter().all(|shared| names.contains(shared)), "{SHARED:?} not all in {names:?}");
    let mut violations = Vec::new();
    for package in &members {
        let name = package["name"].as_str().unwrap();
        if matches!(name, "agent-tools" | "agent-tools-cli" | "agent-tools-py" | "fuzz-checks") {
            continue;
        }
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let shared = SHARED.contains(&dep_name) && !SHARED.contains(&name);
            if dep_name != name && names.contains(&dep_name) && !shared {
                violations.push(format!("{name} depends on {dep_name}"));
            }
        }
    }
    assert_eq!(violations, Vec::<String>::new());
}

/// `cargo xtask setup` must build in seconds on a fresh clone, so the `xtask`
/// binary depends on no workspace crate; what drives them is `xtask-suites`.
#[test]
fn xtask_depends_on_no_workspace_crate() {
    let (_, metadata) = metadata();
    let packages = metadata["packages"].as_array().unwrap();
    let names: Vec<&str> = packages.iter().map(|p| p["name"].as_str().unwrap()).collect();
    let xtask = packages.iter().find(|p| p["name"] == "xtask").unwrap();
    let inside: Vec<&str> = xtask["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|dep| dep["name"].as_str().unwrap())
        .filter(|dep| names.contains(dep))
        .collect();
    assert_eq!(inside, Vec::<&str>::new(), "xtask depends on workspace crates");
    assert!(names.contains(&"xtask-suites"), "{names:?}");
}

/// The workspace root and `cargo metadata --no-deps` of it.
fn metadata() -> (std::path::PathBuf, Value) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    (workspace, serde_json::from_slice(&output.stdout).unwrap())
}
