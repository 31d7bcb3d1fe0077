//! The parse cache keeps a flat copy of each tree, and the matcher reads it in place
//! of tree-sitter's; the tree store keeps the same copy on disk for later processes.
//! On real code no one here wrote, a search from either must give exactly what a fresh
//! parse gives, captures and all.

use std::path::PathBuf;
use std::sync::Arc;

use astmatch::{Lang, Match, ParseCache, SearchOptions, TreeStore, search};

use crate::differential::{CASES, RUST_CRATES, python_dirs, require, typescript_dirs};
use crate::rewrite_cases as common;

/// Every match of `pattern` under each of `dirs`, with the search's total and files searched.
fn all(
    lang: Lang,
    dirs: &[PathBuf],
    pattern: &str,
    cache: Option<&Arc<ParseCache>>,
) -> Vec<(usize, usize, Vec<Match>)> {
    search_all(lang, dirs, pattern, cache, true)
}

fn search_all(
    lang: Lang,
    dirs: &[PathBuf],
    pattern: &str,
    cache: Option<&Arc<ParseCache>>,
    prefilter: bool,
) -> Vec<(usize, usize, Vec<Match>)> {
    let options = SearchOptions {
        prefilter,
        lang: Some(lang),
        max_results: usize::MAX,
        max_text_chars: usize::MAX,
        cache: cache.cloned(),
        ..Default::default()
    };
    dirs.iter()
        .map(|dir| {
            let report = search(dir, dir, pattern, &options).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
            (report.total, report.files_searched, report.matches)
        })
        .collect()
}

#[test]
fn a_search_from_the_cache_finds_what_a_fresh_parse_finds() {
    let corpora = [
        (Lang::Rust, common::rust_dirs(RUST_CRATES), "the cargo registry's crate sources"),
        (Lang::Python, python_dirs(), "the Python standard library"),
        (Lang::TypeScript, typescript_dirs(), "TypeScript's lib files (.tools/node/node_modules/typescript/lib)"),
    ];
    for (_, dirs, what) in &corpora {
        if !require(what, !dirs.is_empty()) {
            return;
        }
    }
    for (lang, dirs, _) in &corpora {
        // One cache for the language: the first pattern's search fills it (matching each
        // new flat copy), the later ones read it.
        let cache = Arc::new(ParseCache::new(1 << 30));
        let mut matches = 0;
        for case in CASES.iter().filter(|c| c.lang == *lang) {
            let fresh = all(*lang, dirs, case.pattern, None);
            let cached = all(*lang, dirs, case.pattern, Some(&cache));
            matches += fresh.iter().map(|(total, _, _)| total).sum::<usize>();
            same(*lang, case.pattern, dirs, &fresh, &cached);
        }
        let stats = cache.stats();
        eprintln!("{:<10} {matches:>7} matches; cache: {stats:?}", lang.id());
        assert!(matches > 0, "{}: the patterns matched nothing, so nothing was compared", lang.id());
        assert!(stats.hits > 0 && stats.files > 0, "{}: the cache was not used: {stats:?}", lang.id());
        assert!(stats.bytes <= stats.cap);
    }
}

fn same(
    lang: Lang,
    pattern: &str,
    dirs: &[PathBuf],
    fresh: &[(usize, usize, Vec<Match>)],
    kept: &[(usize, usize, Vec<Match>)],
) {
    assert_eq!(fresh.len(), kept.len());
    for ((fresh, kept), dir) in fresh.iter().zip(kept).zip(dirs) {
        assert_eq!(fresh.0, kept.0, "{} {pattern:?} in {}: totals", lang.id(), dir.display());
        assert_eq!(fresh.1, kept.1, "{} {pattern:?} in {}: files searched", lang.id(), dir.display());
        assert_eq!(fresh.2.len(), kept.2.len(), "{} {pattern:?} in {}: matches", lang.id(), dir.display());
        if let Some((f, c)) = fresh.2.iter().zip(&kept.2).find(|(f, c)| f != c) {
            panic!("{} {pattern:?}: fresh\n{f:#?}\nkept\n{c:#?}", lang.id());
        }
    }
}

/// Each search of a later process (a new cache, nothing in memory) over files a first
/// process parsed loads every tree from the store, parses none, and finds what a fresh
/// parse finds; a file changed since is parsed again.
#[test]
fn a_search_from_the_tree_store_finds_what_a_fresh_parse_finds() {
    let corpora = [
        (Lang::Rust, common::rust_dirs(RUST_CRATES), "the cargo registry's crate sources"),
        (Lang::Python, python_dirs(), "the Python standard library"),
    ];
    for (_, dirs, what) in &corpora {
        if !require(what, !dirs.is_empty()) {
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let process = || Arc::new(ParseCache::new(0).with_store(TreeStore::new(dir.path(), 1 << 32)));
    for (lang, dirs, _) in &corpora {
        let cases: Vec<_> = CASES.iter().filter(|c| c.lang == *lang).take(4).collect();
        // The first process reads and parses every file (no pre-filter), and stores each tree.
        let first = process();
        let filled = search_all(*lang, dirs, cases[0].pattern, Some(&first), false);
        same(*lang, cases[0].pattern, dirs, &all(*lang, dirs, cases[0].pattern, None), &filled);
        let stats = first.store_stats().unwrap();
        let files: usize = filled.iter().map(|(_, files, _)| files).sum();
        // A file whose bytes another file has (an empty `__init__.py`) finds that one's tree.
        assert_eq!((stats.written + stats.loaded) as usize, files, "{}: every file was stored: {stats:?}", lang.id());
        assert!(stats.written > stats.loaded);
        let mut matches = 0;
        for case in &cases {
            let later = process();
            let kept = all(*lang, dirs, case.pattern, Some(&later));
            let fresh = all(*lang, dirs, case.pattern, None);
            same(*lang, case.pattern, dirs, &fresh, &kept);
            matches += fresh.iter().map(|(total, _, _)| total).sum::<usize>();
            let stats = later.store_stats().unwrap();
            eprintln!("{:<10} {:?}: {stats:?}", lang.id(), case.pattern);
            assert_eq!(stats.written, 0, "{} {:?}: a file was parsed again", lang.id(), case.pattern);
            assert!(stats.loaded > 0, "{} {:?}: nothing was loaded", lang.id(), case.pattern);
        }
        assert!(matches > 0, "{}: the patterns matched nothing, so nothing was compared", lang.id());
    }
    // A file changed since it was stored is parsed, not loaded.
    let project = tempfile::tempdir().unwrap();
    let file = project.path().join("a.py");
    std::fs::write(&file, "print(len(a))\n").unwrap();
    let first = process();
    assert_eq!(all(Lang::Python, &[project.path().to_path_buf()], "len($X)", Some(&first))[0].0, 1);
    std::fs::write(&file, "print(len(a), len(b))\n").unwrap();
    let later = process();
    assert_eq!(all(Lang::Python, &[project.path().to_path_buf()], "len($X)", Some(&later))[0].0, 2);
    let stats = later.store_stats().unwrap();
    assert_eq!((stats.loaded, stats.written), (0, 1));
}
