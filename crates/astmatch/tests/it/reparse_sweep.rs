//! Re-parse sweep: every rewrite case of `common/rewrite_cases.rs` over the whole corpora
//! (real code no one here wrote, read in place), and every rewritten file must still parse.
//!
//! The corpus files are read once (as our search selects them); per case and per file with
//! matches (files without the pattern's literal words skipped), `rewrite_text` rewrites the text in memory; a file
//! whose old text parsed without errors must give a new text that parses without errors
//! (`Reparse::Clean`, and an independent parse of the new text agrees). A `Broken` file fails
//! the test with its line, error node and the replacement, unless the case is listed in
//! `EXPECTED_REFUSALS` (its template is not valid everywhere) and the language itself
//! rejects the new text. Each case is also staged with
//! `EditStore::stage` on one corpus directory of its language (nothing is written; nothing
//! is accepted): no file may be refused but the expected ones, every staged file is checked or unchecked, and the
//! staged edit is the per-file rewrite's.
//!
//! When a corpus is missing the test fails under `CI=true` and otherwise says what is
//! missing and passes.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use crate::rewrite_cases as common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use astmatch::{EditStore, Lang, Pattern, Reparse, SearchOptions, rewrite_text};
use common::{LANGS, REWRITE_CASES, Scale, corpus_dirs, corpus_name, require};

/// What one file's rewrite gave.
struct Outcome {
    path: PathBuf,
    replacements: usize,
    changed: bool,
    check: Reparse,
    /// Whether our own parse of the new text has an error node.
    new_has_error: bool,
    /// The new text, kept for refused files only (to show the language rejects it).
    refused_text: Option<String>,
}

/// Cases whose template is not valid everywhere its pattern matches, so our check must
/// refuse some files: (language, pattern, why). Each refused file's new text is also
/// shown to be rejected by the language itself (CPython's `compile`).
const EXPECTED_REFUSALS: &[(Lang, &str, &str)] = &[(
    Lang::Python,
    "self.$A = $B",
    "in a chain `self.a = b = x` the template makes an annotated assignment in a chain (`self.a: object = b = x`), which Python rejects",
)];

/// Whether CPython rejects `text` (a `SyntaxError` from `compile`).
fn python_rejects(text: &str) -> bool {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-c", "import sys; compile(sys.stdin.read(), 'f', 'exec')"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3");
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write");
    !child.wait().expect("python3").success()
}

fn has_error(lang: Lang, text: &str) -> bool {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&lang.grammar()).expect("grammar");
    parser.parse(text, None).is_none_or(|tree| tree.root_node().has_error())
}

/// One corpus file, read once.
struct File {
    path: PathBuf,
    text: String,
}

/// The files our search would look at under `dirs`: the language's extensions, the
/// `.gitignore`-aware walk without hidden files, at most 4 MiB, no NUL in the first 8 KiB,
/// valid UTF-8.
fn corpus_files(lang: Lang, dirs: &[PathBuf]) -> Vec<File> {
    let mut files = Vec::new();
    for dir in dirs {
        for entry in ignore::WalkBuilder::new(dir).build().flatten() {
            let path = entry.path();
            let ours = path.extension().and_then(|e| e.to_str()).is_some_and(|e| lang.extensions().contains(&e));
            if !ours || !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            if std::fs::metadata(path).is_ok_and(|m| m.len() > 4 << 20) {
                continue;
            }
            let Ok(bytes) = std::fs::read(path) else { continue };
            if bytes[..bytes.len().min(8192)].contains(&0) {
                continue;
            }
            let Ok(text) = String::from_utf8(bytes) else { continue };
            files.push(File { path: path.to_path_buf(), text });
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

/// Rewrites each file that holds the pattern's literal words, on two threads; files
/// without a match are left out.
fn rewrite_all(pattern: &Pattern, template: &str, files: &[File]) -> Vec<Outcome> {
    let words = pattern.required_words();
    let candidates: Vec<&File> = files.iter().filter(|f| words.iter().all(|w| f.text.contains(w.as_str()))).collect();
    let next = AtomicUsize::new(0);
    let out = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = candidates.get(i) else { break };
                    let rewrite = rewrite_text(pattern, &file.text, template)
                        .unwrap_or_else(|e| panic!("{:?} on {}: {e}", template, file.path.display()));
                    if rewrite.matches == 0 {
                        continue;
                    }
                    let changed = rewrite.text != file.text;
                    let new_has_error = changed && has_error(pattern.lang(), &rewrite.text);
                    let refused_text = matches!(rewrite.check, Reparse::Broken(_)).then(|| rewrite.text.clone());
                    out.lock().unwrap().push(Outcome {
                        path: file.path.clone(),
                        replacements: rewrite.replacements,
                        changed,
                        check: rewrite.check,
                        new_has_error,
                        refused_text,
                    });
                }
            });
        }
    });
    let mut out = out.into_inner().unwrap();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

#[test]
fn every_rewritten_file_still_parses() {
    const TEST: &str = "re-parse sweep";
    let started = std::time::Instant::now();
    let mut corpora: BTreeMap<Lang, Vec<PathBuf>> = BTreeMap::new();
    let mut files: BTreeMap<Lang, Vec<File>> = BTreeMap::new();
    for &lang in LANGS {
        let dirs = corpus_dirs(lang, Scale::All);
        if !require(TEST, corpus_name(lang), !dirs.is_empty()) {
            return;
        }
        let read = corpus_files(lang, &dirs);
        eprintln!(
            "{:<10} {} files, {:.1} MB in {} directories",
            lang.id(),
            read.len(),
            read.iter().map(|f| f.text.len()).sum::<usize>() as f64 / 1e6,
            dirs.len()
        );
        files.insert(lang, read);
        corpora.insert(lang, dirs);
    }
    let options = |lang| SearchOptions { lang: Some(lang), max_results: usize::MAX, ..Default::default() };
    let store = EditStore::new();
    let mut failures: Vec<String> = Vec::new();
    let (mut total_files, mut total_replacements, mut total_unchecked, mut total_broken, mut total_refused) =
        (0, 0, 0, 0, 0);
    for case in REWRITE_CASES {
        let case_started = std::time::Instant::now();
        let dirs = &corpora[&case.lang];
        let pattern = Pattern::compile(case.pattern, case.lang)
            .unwrap_or_else(|e| panic!("{} {:?}: {e}", case.lang.id(), case.pattern));

        let outcomes = rewrite_all(&pattern, case.rewrite, &files[&case.lang]);

        let (mut checked, mut replacements, mut unchecked, mut broken, mut refused) = (0, 0, 0, 0, 0);
        let expected_refusal =
            EXPECTED_REFUSALS.iter().find(|(lang, pattern, _)| *lang == case.lang && *pattern == case.pattern);
        for o in &outcomes {
            if !o.changed {
                continue;
            }
            replacements += o.replacements;
            match &o.check {
                Reparse::Clean => {
                    checked += 1;
                    if o.new_has_error {
                        failures.push(format!(
                            "{} {:?} => {:?}: {}: the check says Clean, but the new text has a parse error",
                            case.lang.id(),
                            case.pattern,
                            case.rewrite,
                            o.path.display()
                        ));
                    }
                }
                Reparse::Unchecked => unchecked += 1,
                Reparse::Broken(_) if expected_refusal.is_some() => {
                    refused += 1;
                    let text = o.refused_text.as_deref().unwrap_or("");
                    if case.lang == Lang::Python && !python_rejects(text) {
                        failures.push(format!(
                            "{} {:?}: {}: refused, but Python compiles the rewritten text",
                            case.lang.id(),
                            case.pattern,
                            o.path.display()
                        ));
                    }
                }
                Reparse::Broken(e) => {
                    broken += 1;
                    failures.push(format!(
                        "{} {:?} => {:?}: {}:{}:{}: {} in `{}` (the replacement of the match at old line {}: `{}`)",
                        case.lang.id(),
                        case.pattern,
                        case.rewrite,
                        o.path.display(),
                        e.line,
                        e.column,
                        e.node,
                        e.code,
                        e.match_line,
                        e.replacement
                    ));
                }
            }
        }

        // Staged on one directory (the first with a change): nothing written, nothing
        // refused, the same edit as the per-file rewrites.
        let dir = dirs.iter().find(|d| outcomes.iter().any(|o| o.changed && o.path.starts_with(d))).unwrap_or(&dirs[0]);
        let staged = store
            .stage(dir, dir, case.pattern, case.rewrite, &options(case.lang))
            .unwrap_or_else(|e| panic!("stage {:?} in {}: {e}", case.pattern, dir.display()));
        let in_dir: Vec<&Outcome> = outcomes.iter().filter(|o| o.changed && o.path.starts_with(dir)).collect();
        let mut problems = Vec::new();
        let refused_here = in_dir.iter().filter(|o| matches!(o.check, Reparse::Broken(_))).count();
        if expected_refusal.is_some() && staged.refused.len() != refused_here {
            problems
                .push(format!("staging refused {} files, the per-file rewrite {refused_here}", staged.refused.len()));
        }
        if expected_refusal.is_none() && !staged.refused.is_empty() {
            let r = &staged.refused[0];
            problems.push(format!(
                "{} files refused, first {}:{}: {} in `{}`",
                staged.refused.len(),
                r.path.display(),
                r.error.line,
                r.error.node,
                r.error.code
            ));
        }
        if staged.checked + staged.unchecked.len() != staged.files.len() {
            problems.push(format!(
                "checked {} + unchecked {} != files {}",
                staged.checked,
                staged.unchecked.len(),
                staged.files.len()
            ));
        }
        let expected: usize = in_dir.iter().filter(|o| !matches!(o.check, Reparse::Broken(_))).count();
        let expected_replacements: usize =
            in_dir.iter().filter(|o| !matches!(o.check, Reparse::Broken(_))).map(|o| o.replacements).sum();
        if staged.files.len() != expected || staged.replacements != expected_replacements {
            problems.push(format!(
                "staged {} files / {} replacements, the per-file rewrite {expected} / {expected_replacements}",
                staged.files.len(),
                staged.replacements
            ));
        }
        if let Some(id) = &staged.edit_id {
            store.discard(id).unwrap();
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{} {:?} staged in {}: {}",
                case.lang.id(),
                case.pattern,
                dir.display(),
                problems.join("; ")
            ));
        }

        eprintln!(
            "{:<10} {:<45} files {:>5}  replacements {:>6}  checked {:>5}  unchecked {:>3}  refused {:>2}  broken {}  staged {:>4} files in {} ({:.1} s)",
            case.lang.id(),
            case.pattern.replace('\n', "⏎"),
            outcomes.len(),
            replacements,
            checked,
            unchecked,
            refused,
            broken,
            staged.files.len(),
            short(dir),
            case_started.elapsed().as_secs_f64()
        );
        total_files += checked;
        total_replacements += replacements;
        total_unchecked += unchecked;
        total_broken += broken;
        total_refused += refused;
        if let Some((_, _, why)) = expected_refusal
            && refused == 0
        {
            failures.push(format!("{} {:?}: expected refusals ({why}), but none", case.lang.id(), case.pattern));
        }
    }
    eprintln!(
        "re-parse sweep: {} cases in {:.1} s: {total_files} rewritten files checked ({total_replacements} replacements), {total_unchecked} unchecked (the old text had parse errors), {total_refused} refused as expected (the language rejects each), {total_broken} broken",
        REWRITE_CASES.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
}

/// The last two components of a path.
fn short(path: &Path) -> String {
    let parts: Vec<_> = path.components().rev().take(2).collect();
    parts.iter().rev().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}
