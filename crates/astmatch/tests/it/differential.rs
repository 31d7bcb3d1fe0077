//! Differential test: our matcher against the ast-grep CLI, on real code no one here wrote.
//!
//! Corpora: a few well-known crates from the cargo registry's unpacked sources, a
//! few packages of the Python standard library, and TypeScript's own `lib*.d.ts`
//! files (installed by `cargo xtask setup`). For each pattern below both tools
//! search the same directories and must report the same match start locations
//! (file, 1-indexed line, 1-indexed character column), compared as multisets.
//!
//! Only patterns whose meaning is the same in both tools are listed. Where
//! ast-grep's semantics differ from our contract (for example it parses a bare
//! generic type like `Promise<$T>` as an expression, or lets `$$$` run without
//! backtracking), the pattern is left out with a comment saying how.
//!
//! ast-grep is found at `$AST_GREP`, else `<workspace>/.tools/venv/bin/ast-grep`.
//! When it is missing the test fails under `CI=true` and otherwise says what is
//! missing and passes.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use astmatch::{Lang, SearchOptions, search};

use crate::rewrite_cases as common;
use common::{ast_grep, workspace_root};

/// A match start: absolute file, 1-indexed line, 1-indexed column in characters.
type Loc = (PathBuf, usize, usize);

pub(crate) struct Case {
    pub(crate) lang: Lang,
    pub(crate) pattern: &'static str,
}

const fn case(lang: Lang, pattern: &'static str) -> Case {
    Case { lang, pattern }
}

/// The benchmark's patterns (see `xtask/src/bench.rs`) and a few more.
pub(crate) const CASES: &[Case] = &[
    // Rust
    case(Lang::Rust, "$X.unwrap()"),
    case(Lang::Rust, "Box::new($X)"),
    case(Lang::Rust, "unsafe impl $T for $U { $$$B }"),
    case(Lang::Rust, "impl Drop for $T { $$$B }"),
    // Left out: `impl $T for $U { $$$B }`. ast-grep skips anonymous tokens of the code
    // that the pattern lacks, so there it also matches `unsafe impl …`; here `unsafe` counts.
    case(Lang::Rust, "$X.clone()"),
    case(Lang::Rust, "Some($X)"),
    case(Lang::Rust, "Ok(())"),
    case(Lang::Rust, "if let Some($X) = $Y { $$$B } else { $$$C }"),
    // Left out: `if let Some($X) = $Y { $$$B }`. ast-grep ignores children of the code
    // after the pattern's last one, so there it also matches an `if let` with an `else`.
    case(Lang::Rust, "match $X { $$$A }"),
    case(Lang::Rust, "unsafe { $$$B }"),
    case(Lang::Rust, "fn $F($$$P) -> $R { $$$B }"),
    case(Lang::Rust, "let $P = $E;"),
    case(Lang::Rust, "return Err($E);"),
    case(Lang::Rust, "$A.len() == 0"),
    case(Lang::Rust, "$X.iter().map($F).collect()"),
    case(Lang::Rust, "self"),
    // Python
    case(Lang::Python, "isinstance($A, $B)"),
    case(Lang::Python, "raise $E from $C"),
    case(Lang::Python, "self.$A = $B"),
    case(Lang::Python, "len($X) == 0"),
    case(Lang::Python, "$X is None"),
    case(Lang::Python, "lambda $$$A: $B"),
    case(Lang::Python, "with open($$$A) as $F: $$$B"),
    case(Lang::Python, "print($$$A)"),
    case(Lang::Python, "$D[$K] = $V"),
    case(Lang::Python, "for $K, $V in $D.items(): $$$B"),
    case(Lang::Python, "if __name__ == '__main__': $$$B"),
    case(Lang::Python, "$A.append($B)"),
    case(Lang::Python, "super().__init__($$$A)"),
    case(Lang::Python, "os"),
    // Left out: `return $A, $B`. ast-grep ignores children of the code after the
    // pattern's last one, so there it also matches `return a, b, c`.
    // TypeScript (the corpus is declaration files: no statements, only declarations and types)
    case(Lang::TypeScript, "declare var $N: $T;"),
    case(Lang::TypeScript, "interface $I extends $$$B { $$$M }"),
    case(Lang::TypeScript, "interface $I<$T> { $$$M }"),
    case(Lang::TypeScript, "type $N = $T;"),
    case(Lang::TypeScript, "declare function $F($$$A): $R;"),
    case(Lang::TypeScript, "declare namespace $N { $$$B }"),
    case(Lang::TypeScript, "declare var $V: { prototype: $P; new ($$$A): $R; };"),
    // Left out: `interface $I extends $B { $$$M }`, which ast-grep also matches on
    // `extends A, B` (it ignores the children after the pattern's last one).
    // Left out: `Promise<$T>` and other bare types. ast-grep parses a pattern as a
    // program, so `Promise<$T>` is the expression `Promise < $T > …` there and finds
    // no type annotation; our ladder tries a type context and finds them all.
    // Left out: `Promise` alone. Our single-identifier pattern matches type names too
    // (the contract); ast-grep's matches only `identifier` nodes, not `type_identifier`.
];

/// Registry crates searched, by name: the version `Cargo.lock` pins (`common::rust_dirs`).
pub(crate) const RUST_CRATES: &[&str] =
    &["serde", "serde_json", "regex-syntax", "tokio", "syn", "memchr", "ignore", "clap_builder"];
/// Packages of the Python standard library searched.
const PYTHON_PACKAGES: &[&str] = &[
    "asyncio",
    "email",
    "json",
    "unittest",
    "importlib",
    "http",
    "logging",
    "concurrent",
    "xml",
    "urllib",
    "multiprocessing",
];

/// Fails under CI, otherwise prints what is missing; returns whether to go on.
pub(crate) fn require(what: &str, present: bool) -> bool {
    common::require("differential test", what, present)
}

pub(crate) fn python_dirs() -> Vec<PathBuf> {
    let Ok(out) =
        Command::new("python3").args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"]).output()
    else {
        return Vec::new();
    };
    let stdlib = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    PYTHON_PACKAGES.iter().map(|p| stdlib.join(p)).filter(|d| d.is_dir()).collect()
}

pub(crate) fn typescript_dirs() -> Vec<PathBuf> {
    let lib = workspace_root().join(".tools/node/node_modules/typescript/lib");
    if lib.is_dir() { vec![lib] } else { Vec::new() }
}

/// Our matches, with the byte range of each.
fn ours(lang: Lang, dirs: &[PathBuf], pattern: &str) -> Vec<(Loc, Range<usize>)> {
    let options = SearchOptions { lang: Some(lang), max_results: usize::MAX, ..Default::default() };
    let mut found = Vec::new();
    for dir in dirs {
        let report = search(dir, dir, pattern, &options)
            .unwrap_or_else(|e| panic!("ours: {pattern:?} in {}: {e}", dir.display()));
        assert_eq!(report.skipped.total(), 0, "ours skipped files in {}: {:?}", dir.display(), report.skipped);
        // No node range is ever reported twice, whichever shapes matched it.
        let mut ranges = std::collections::HashSet::new();
        for m in &report.matches {
            assert!(
                ranges.insert((m.file.clone(), m.byte_range.clone())),
                "{pattern:?}: {} reported twice",
                m.file.display()
            );
        }
        found.extend(report.matches.into_iter().map(|m| ((dir.join(m.file), m.line, m.column), m.byte_range)));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

/// Whether a comment lies inside `range` of `file`.
///
/// ast-grep counts a comment between two of the pattern's nodes as a node of its
/// own and then finds no match (`fn f() -> T // why\n{`); our contract ignores
/// comments, so such a match found only by us is expected.
fn holds_comment(lang: Lang, file: &Path, range: &Range<usize>) -> bool {
    let Ok(source) = std::fs::read_to_string(file) else { return false };
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&lang.grammar()).is_err() {
        return false;
    }
    let Some(tree) = parser.parse(&source, None) else { return false };
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.end_byte() <= range.start || node.start_byte() >= range.end {
            continue;
        }
        if node.kind().contains("comment") && node.start_byte() >= range.start && node.end_byte() <= range.end {
            return true;
        }
        stack.extend(node.children(&mut cursor));
    }
    false
}

fn theirs(ast_grep: &Path, lang: Lang, dirs: &[PathBuf], pattern: &str) -> Vec<Loc> {
    let out = Command::new(ast_grep)
        .args(["run", "--pattern", pattern, "--lang", lang.id(), "--json=stream"])
        .args(dirs)
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", ast_grep.display()));
    // ast-grep exits 1 when nothing matched.
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "ast-grep failed on {pattern:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut locs: Vec<Loc> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let m: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("ast-grep printed {line:?}: {e}"));
            let file = PathBuf::from(m["file"].as_str().unwrap_or_default());
            // ast-grep's `range.start` is 0-based: line, and column in characters.
            let start = &m["range"]["start"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("ast-grep printed {line:?}")) as usize;
            (file, n(&start["line"]) + 1, n(&start["column"]) + 1)
        })
        .collect();
    locs.sort();
    locs
}

/// Items of `a` not in `b`, counting repeats.
fn minus(a: &[Loc], b: &[Loc]) -> Vec<Loc> {
    let mut counts: BTreeMap<&Loc, usize> = BTreeMap::new();
    for l in b {
        *counts.entry(l).or_default() += 1;
    }
    a.iter()
        .filter(|l| match counts.get_mut(l) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

fn show(locs: &[Loc]) -> String {
    let mut text = String::new();
    for (file, line, column) in locs.iter().take(5) {
        let source = std::fs::read_to_string(file).unwrap_or_default();
        let source_line = source.lines().nth(line - 1).unwrap_or("").trim_end();
        text.push_str(&format!("    {}:{line}:{column}: {source_line}\n", file.display()));
    }
    if locs.len() > 5 {
        text.push_str(&format!("    … and {} more\n", locs.len() - 5));
    }
    text
}

#[test]
fn same_matches_as_ast_grep() {
    let ast_grep = ast_grep();
    if !require(&format!("ast-grep ({})", ast_grep.display()), ast_grep.is_file()) {
        return;
    }
    let corpora = [
        (Lang::Rust, common::rust_dirs(RUST_CRATES)),
        (Lang::Python, python_dirs()),
        (Lang::TypeScript, typescript_dirs()),
    ];
    for (lang, dirs) in &corpora {
        let what = match lang {
            Lang::Rust => "the cargo registry's crate sources",
            Lang::Python => "the Python standard library",
            _ => "TypeScript's lib files (.tools/node/node_modules/typescript/lib)",
        };
        if !require(what, !dirs.is_empty()) {
            return;
        }
    }

    let mut failures = Vec::new();
    let mut compared = 0;
    let mut tolerated = 0;
    for (lang, dirs) in &corpora {
        for case in CASES.iter().filter(|c| c.lang == *lang) {
            let found = ours(*lang, dirs, case.pattern);
            let ours: Vec<Loc> = found.iter().map(|(loc, _)| loc.clone()).collect();
            let theirs = theirs(&ast_grep, *lang, dirs, case.pattern);
            compared += ours.len();
            let (commented, only_ours): (Vec<Loc>, Vec<Loc>) = minus(&ours, &theirs)
                .into_iter()
                .partition(|loc| found.iter().any(|(l, range)| l == loc && holds_comment(*lang, &loc.0, range)));
            tolerated += commented.len();
            let only_theirs = minus(&theirs, &ours);
            let verdict = if only_ours.is_empty() && only_theirs.is_empty() { "same" } else { "DIFFERENT" };
            let note = if commented.is_empty() {
                String::new()
            } else {
                format!(" (+{} only ours, with a comment inside)", commented.len())
            };
            eprintln!(
                "{:<10} {:<50} ours {:>6}  ast-grep {:>6}  {verdict}{note}",
                lang.id(),
                case.pattern,
                ours.len(),
                theirs.len()
            );
            if verdict != "same" {
                let mut text =
                    format!("{} {:?}: ours {}, ast-grep {}\n", lang.id(), case.pattern, ours.len(), theirs.len());
                if !only_ours.is_empty() {
                    text.push_str(&format!("  only ours ({}):\n{}", only_ours.len(), show(&only_ours)));
                }
                if !only_theirs.is_empty() {
                    text.push_str(&format!("  only ast-grep ({}):\n{}", only_theirs.len(), show(&only_theirs)));
                }
                failures.push(text);
            }
        }
    }
    eprintln!(
        "differential test: {} patterns, {compared} of our matches compared, {tolerated} found only by us with a comment inside",
        CASES.len()
    );
    assert!(failures.is_empty(), "ours and ast-grep disagree:\n{}", failures.join("\n"));
}
