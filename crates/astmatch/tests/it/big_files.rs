//! Big and binary files: a single-line bundle of some 20 MB is searched like any
//! file and finds what ast-grep finds; a file named as the scope is never passed
//! over with "no matches"; a binary file is skipped, counted, and hides nothing else.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use astmatch::{Error, Lang, SearchOptions, search};

use crate::rewrite_cases as common;

/// The minified bundles the bundle is made of, read in place (pyright's, which setup installs).
fn bundle_sources() -> Vec<std::path::PathBuf> {
    let dist = common::workspace_root().join(".tools/node/node_modules/pyright/dist");
    vec![dist.join("vendor.js"), dist.join("pyright-internal.js")]
}

/// How many `fetchData(…)` calls the bundle holds.
const CALLS: usize = 7;

/// Writes `bundle.js`: copies of the minified sources on one line (their few newlines,
/// all inside template literals, become `\n` escapes) until it passes 20 MB, with
/// `CALLS` calls of `fetchData` between the copies. Returns its size in bytes.
fn write_bundle(dir: &Path) -> usize {
    let one: Vec<String> = bundle_sources()
        .iter()
        .map(|path| {
            let text = fs::read_to_string(path).unwrap();
            let code: Vec<&str> = text.lines().filter(|l| !l.starts_with("//# sourceMappingURL")).collect();
            code.join("\\n")
        })
        .collect();
    let one = one.join(";");
    let mut parts = Vec::new();
    let mut size = 0;
    let mut calls = 0;
    while size < 20_000_000 || calls < CALLS {
        if size < 20_000_000 {
            parts.push(one.clone());
            size += one.len();
        }
        if calls < CALLS {
            parts.push(format!("fetchData(arg{calls})"));
            calls += 1;
        }
    }
    let text = format!("{};\n", parts.join(";"));
    assert_eq!(text.lines().count(), 1);
    fs::write(dir.join("bundle.js"), &text).unwrap();
    text.len()
}

/// ast-grep's matches under `scope`, counted per file (relative to `root`).
fn ast_grep_counts(root: &Path, scope: &Path, pattern: &str, lang: Lang) -> BTreeMap<String, usize> {
    let out = Command::new(common::ast_grep())
        .args(["run", "--pattern", pattern, "--lang", lang.id(), "--json=stream"])
        .arg(scope)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "ast-grep failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut counts = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.trim().is_empty()) {
        let m: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = m["file"].as_str().unwrap().trim_start_matches("./").to_string();
        *counts.entry(file).or_insert(0) += 1;
    }
    counts
}

fn present(test: &str) -> bool {
    let ast_grep = common::ast_grep();
    common::require(test, &format!("ast-grep ({})", ast_grep.display()), ast_grep.is_file())
        && bundle_sources().iter().all(|p| common::require(test, &p.display().to_string(), p.is_file()))
}

fn ours_per_file(report: &astmatch::SearchReport) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for m in &report.matches {
        *counts.entry(m.file.to_string_lossy().into_owned()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn a_single_line_bundle_of_twenty_megabytes_is_searched_as_ast_grep_searches_it() {
    if !present("big-file test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let size = write_bundle(root);
    assert!(size > 20_000_000, "the bundle is {size} bytes");
    fs::write(root.join("small.js"), "fetchData(1);\nfunction f() { return fetchData(2) + fetchData(3); }\n").unwrap();
    let options = SearchOptions { lang: Some(Lang::JavaScript), max_results: 100, ..SearchOptions::default() };

    let report = search(root, root, "fetchData($A)", &options).unwrap();
    let theirs = ast_grep_counts(root, Path::new("."), "fetchData($A)", Lang::JavaScript);
    assert_eq!(theirs.get("bundle.js"), Some(&CALLS), "ast-grep's matches: {theirs:?}");
    assert_eq!(ours_per_file(&report), theirs);
    assert_eq!((report.total, report.skipped.total(), report.files_searched), (CALLS + 3, 0, 2));

    // Named as the scope, the bundle is searched, whatever its lines.
    let named = search(root, &root.join("bundle.js"), "fetchData($A)", &options).unwrap();
    assert_eq!((named.total, named.files_searched), (CALLS, 1));
    let captured: Vec<&str> = named.matches.iter().map(|m| m.captures[0].text.as_str()).collect();
    assert_eq!(captured, (0..CALLS).map(|i| format!("arg{i}")).collect::<Vec<_>>());
}

#[test]
fn a_named_file_over_the_limit_is_refused_and_a_walk_counts_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("big.js"), "fetchData(1);\n".repeat(100)).unwrap();
    fs::write(root.join("small.js"), "fetchData(2);\n").unwrap();
    let options = SearchOptions { lang: Some(Lang::JavaScript), max_file_bytes: 1000, ..SearchOptions::default() };
    match search(root, &root.join("big.js"), "fetchData($A)", &options) {
        Err(Error::FileTooLarge { path, bytes, limit }) => {
            assert_eq!((path.to_str(), bytes, limit), (Some("big.js"), 1400, 1000));
        }
        other => panic!("expected the named file to be refused, got {other:?}"),
    }
    let walked = search(root, root, "fetchData($A)", &options).unwrap();
    assert_eq!((walked.total, walked.files_searched, walked.skipped.too_large), (1, 1, 1));
    // The default limit takes a bundle of tens of MB.
    assert_eq!(SearchOptions::default().max_file_bytes, 64 << 20);
}

#[test]
fn a_binary_file_is_skipped_and_counted_and_hides_no_other_match() {
    if !present("binary-file test") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("x.py"), b"\x00\x01binary\nfetchData(1)\n").unwrap();
    fs::write(root.join("y.py"), "fetchData(2)\nfetchData(3)\n").unwrap();
    fs::write(root.join("z.py"), "def f():\n    return fetchData(4)\n").unwrap();
    let options = SearchOptions { lang: Some(Lang::Python), ..SearchOptions::default() };
    let report = search(root, root, "fetchData($A)", &options).unwrap();
    let mut theirs = ast_grep_counts(root, Path::new("."), "fetchData($A)", Lang::Python);
    // ast-grep reads the binary file; here it is skipped, and said to be.
    assert_eq!(theirs.remove("x.py"), Some(1), "ast-grep's matches: {theirs:?}");
    assert_eq!(ours_per_file(&report), theirs);
    assert_eq!((report.total, report.files_searched, report.skipped.binary, report.skipped.total()), (3, 2, 1, 1));
}
