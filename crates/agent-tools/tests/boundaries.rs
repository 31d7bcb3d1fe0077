//! Crate boundaries: leaf crates (every crate under `crates/` except the facade,
//! the command, and `fuzz-checks`, which exercises them all) depend on no other leaf crate and not on the facade. Two
//! leaf crates that need the same thing share a small crate of its own
//! ([`SHARED`]), which depends on no workspace crate at all.
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
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(&workspace)
        .output()
        .unwrap();
    assert!(output.status.success(), "cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
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
        if matches!(name, "agent-tools" | "agent-tools-cli" | "fuzz-checks") {
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
