//! The facade's shape: it builds with each toolset's feature alone and with none (a
//! host that wants only `ast_grep`, `default-features = false, features = ["search"]`,
//! compiles no language-server, debugger, kernel or worker code); and no crate of the
//! workspace has an import circle between its modules.
//!
//! Each feature set is `cargo check -p agent-tools --lib --no-default-features --features F`,
//! into a target directory of its own under the test's (the running `cargo test`
//! holds the lock of its own), so the dependencies are checked once for all sets. Nothing
//! built there runs but build scripts and proc macros, so that directory builds everything
//! unoptimized: the grammars' C at `-O0` takes a fraction of the time `-O2` does.
//! On a cold target directory the checks take about a minute of both cores, so they run at
//! the lowest CPU priority (`nice -n 19`): beside the other tests, which wait on servers
//! within deadlines, they take only the CPU those leave idle.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The toolset features, as `Cargo.toml` names them.
const FEATURES: &[&str] = &["search", "lsp", "debug", "eval", "ask", "vibe"];

#[test]
fn the_facade_builds_with_each_toolset_alone_and_with_none() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("feature-check");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let sets: Vec<Option<&str>> = std::iter::once(None).chain(FEATURES.iter().copied().map(Some)).collect();
    let mut failed = Vec::new();
    for set in &sets {
        let mut command = lowest_priority(&cargo);
        command
            .args(["check", "--quiet", "--locked", "--lib", "--no-default-features", "--manifest-path"])
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .args([
                "--config",
                "profile.dev.package.\"*\".opt-level=0",
                "--config",
                "profile.dev.package.astmatch.opt-level=0",
            ])
            .env_remove("RUSTFLAGS");
        if let Some(feature) = set {
            command.args(["--features", feature]);
        }
        let output = command.output().unwrap_or_else(|e| panic!("could not run {cargo}: {e}"));
        let name = set.unwrap_or("(none)");
        eprintln!("features {name}: {}", if output.status.success() { "builds" } else { "FAILS" });
        if !output.status.success() {
            failed.push(format!("--features {name}:\n{}", String::from_utf8_lossy(&output.stderr)));
        }
    }
    assert!(failed.is_empty(), "the facade does not build with:\n{}", failed.join("\n"));
}

/// `program` under `nice -n 19`, or alone where `nice` does not run.
fn lowest_priority(program: &str) -> Command {
    let nice = Command::new("nice").arg("true").output();
    if nice.is_ok_and(|out| out.status.success()) {
        let mut command = Command::new("nice");
        command.args(["-n", "19", program]);
        command
    } else {
        Command::new(program)
    }
}

/// Every toolset feature is in the default set, and the default set is exactly them.
#[test]
fn the_default_features_are_every_toolset() {
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let table: toml::Table = manifest.parse().unwrap();
    let features = table["features"].as_table().unwrap();
    let default: Vec<&str> = features["default"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(default, FEATURES);
    let mut declared: Vec<&str> = features.keys().map(String::as_str).filter(|k| *k != "default").collect();
    declared.sort_unstable();
    let mut expected = FEATURES.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
}

/// A crate's modules (`registry`, `tools::astmatch`, …) under `src`, and the ones each
/// names as `crate::…` in its code (comments, where doc links point anywhere, aside).
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    let name = |path: &Path| {
        let rel = path.strip_prefix(src).unwrap().with_extension("");
        let name = rel.to_string_lossy().replace('/', "::");
        name.strip_suffix("::mod").map(str::to_owned).unwrap_or(name)
    };
    let roots = ["lib", "main"];
    let modules: BTreeSet<String> = files.iter().map(|f| name(f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let this = name(file);
        if roots.contains(&this.as_str()) {
            continue;
        }
        let code: String = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut deps = BTreeSet::new();
        for (at, _) in code.match_indices("crate::") {
            let path: String =
                code[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':').collect();
            let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
            // The longest module path it names: `crate::tools::lsp::x` is `tools::lsp`.
            let found = (1..=parts.len().min(2)).rev().map(|n| parts[..n].join("::")).find(|m| modules.contains(m));
            if let Some(module) = found
                && module != this
                && !roots.contains(&module.as_str())
            {
                deps.insert(module);
            }
        }
        graph.insert(this, deps);
    }
    graph
}

/// The import circles of a module graph, each as `a -> b -> a`.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    // Depth-first search; a module met again while on the path closes a circle.
    fn visit<'g>(
        module: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            circles.push(format!("{} -> {module}", path[at..].join(" -> ")));
            return;
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for dep in graph.get(module).into_iter().flatten() {
            visit(dep, graph, path, done, circles);
        }
        path.pop();
    }
    let mut circles = Vec::new();
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, graph, &mut Vec::new(), &mut done, &mut circles);
    }
    circles
}

/// Every crate of the workspace (the crates, xtask, xtask-suites, the fixtures): its
/// modules import one another without a circle, each module on a floor below those
/// that use it.
#[test]
fn no_crate_has_an_import_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut sources = Vec::new();
    for parent in ["crates", "fixtures"] {
        for entry in std::fs::read_dir(workspace.join(parent)).unwrap() {
            let src = entry.unwrap().path().join("src");
            if src.is_dir() {
                sources.push(src);
            }
        }
    }
    sources.extend(["xtask/src", "xtask-suites/src"].map(|src| workspace.join(src)));
    let mut found = Vec::new();
    for src in &sources {
        for circle in circles(&module_graph(src)) {
            found.push(format!("{}: {circle}", src.parent().unwrap().file_name().unwrap().to_string_lossy()));
        }
    }
    assert!(sources.len() >= 15, "{sources:?}");
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
    // The checker sees one when there is one.
    let looped: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "a")].map(|(m, d)| (m.to_owned(), BTreeSet::from([d.to_owned()]))).into();
    assert_eq!(circles(&looped), ["a -> b -> a"]);
}

#[test]
fn the_registry_knows_no_toolset() {
    let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.contains_key("registry") && graph.contains_key("tools::astmatch"), "{graph:?}");
    // Each toolset wires itself from its own module.
    assert!(!graph["registry"].iter().any(|m| m.starts_with("tools")), "{:?}", graph["registry"]);
}
