//! The parse cache keeps a flat copy of each tree, and the matcher reads it in place
//! of tree-sitter's: on real code no one here wrote, a search from the cache must give
//! exactly what a fresh parse gives, captures and all.

use std::path::PathBuf;
use std::sync::Arc;

use astmatch::{Lang, Match, ParseCache, SearchOptions, search};

use crate::differential::{CASES, RUST_CRATES, python_dirs, require, typescript_dirs};
use crate::rewrite_cases as common;

/// Every match of `pattern` under each of `dirs`, with the search's total and files searched.
fn all(
    lang: Lang,
    dirs: &[PathBuf],
    pattern: &str,
    cache: Option<&Arc<ParseCache>>,
) -> Vec<(usize, usize, Vec<Match>)> {
    let options = SearchOptions {
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
            for ((fresh, cached), dir) in fresh.iter().zip(&cached).zip(dirs) {
                assert_eq!(fresh.0, cached.0, "{} {:?} in {}: totals", lang.id(), case.pattern, dir.display());
                assert_eq!(fresh.1, cached.1, "{} {:?} in {}: files searched", lang.id(), case.pattern, dir.display());
                if let Some((f, c)) = fresh.2.iter().zip(&cached.2).find(|(f, c)| f != c) {
                    panic!("{} {:?}: fresh\n{f:#?}\nfrom the cache\n{c:#?}", lang.id(), case.pattern);
                }
            }
        }
        let stats = cache.stats();
        eprintln!("{:<10} {matches:>7} matches; cache: {stats:?}", lang.id());
        assert!(matches > 0, "{}: the patterns matched nothing, so nothing was compared", lang.id());
        assert!(stats.hits > 0 && stats.files > 0, "{}: the cache was not used: {stats:?}", lang.id());
        assert!(stats.bytes <= stats.cap);
    }
}
