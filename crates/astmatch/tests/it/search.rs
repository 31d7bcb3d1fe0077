//! Searching files: scope, language, skips, caps, errors, the pre-filter.

#![allow(clippy::unwrap_used)]

use std::fs;

use astmatch::{Context, Error, Lang, SearchOptions, search};

fn opts(lang: Option<Lang>) -> SearchOptions {
    SearchOptions { lang, ..SearchOptions::default() }
}

#[test]
fn positions_are_one_indexed_with_character_columns() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.py"), "x = 1\ns = 'é'; foo(ü)\n").unwrap();
    let report = search(dir.path(), dir.path(), "foo($X)", &opts(Some(Lang::Python))).unwrap();
    assert_eq!(report.total, 1);
    let m = &report.matches[0];
    assert_eq!((m.file.to_str().unwrap(), m.line, m.column, m.end_line, m.end_column), ("a.py", 2, 10, 2, 16));
    assert_eq!(m.text, "foo(ü)");
    let captures: Vec<(&str, &str)> = m.captures.iter().map(|c| (c.name.as_str(), c.text.as_str())).collect();
    assert_eq!(captures, vec![("X", "ü")]);
    assert_eq!((m.captures[0].nodes[0].line, m.captures[0].nodes[0].column), (2, 14));
    assert_eq!(report.context, Context::Statement);
}

#[test]
fn max_results_caps_the_list_and_reports_the_total() {
    let dir = tempfile::tempdir().unwrap();
    let source: String = (0..30).map(|i| format!("foo({i})\n")).collect();
    fs::write(dir.path().join("a.py"), &source).unwrap();
    fs::write(dir.path().join("b.py"), &source).unwrap();
    let report =
        search(dir.path(), dir.path(), "foo($X)", &SearchOptions { max_results: 40, ..opts(Some(Lang::Python)) })
            .unwrap();
    assert_eq!(report.total, 60);
    assert_eq!(report.matches.len(), 40);
    assert_eq!(report.files_matched, 2);
    assert_eq!(report.matches[39].file.to_str(), Some("b.py"));
    assert_eq!(report.matches[39].line, 10);
}

#[test]
fn binary_non_utf8_and_huge_files_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ok.py"), "foo(1)\n").unwrap();
    fs::write(dir.path().join("bin.py"), b"foo(1)\0\0\x01").unwrap();
    fs::write(dir.path().join("latin1.py"), b"foo(1)\n# caf\xe9\n").unwrap();
    fs::write(dir.path().join("huge.py"), "foo(1)\n".repeat(2000)).unwrap();
    let report = search(
        dir.path(),
        dir.path(),
        "foo($X)",
        &SearchOptions { max_file_bytes: 10_000, ..opts(Some(Lang::Python)) },
    )
    .unwrap();
    assert_eq!(report.total, 1);
    assert_eq!((report.skipped.binary, report.skipped.not_utf8, report.skipped.too_large), (1, 1, 1));
    assert_eq!(report.files_searched, 1);
}

#[test]
fn gitignored_and_other_language_files_are_not_searched() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
    fs::create_dir(dir.path().join("build")).unwrap();
    fs::write(dir.path().join("build/gen.py"), "foo(1)\n").unwrap();
    fs::write(dir.path().join("main.py"), "foo(2)\n").unwrap();
    fs::write(dir.path().join("main.js"), "foo(3)\n").unwrap();
    let report = search(dir.path(), dir.path(), "foo($X)", &opts(Some(Lang::Python))).unwrap();
    let files: Vec<_> = report.matches.iter().map(|m| m.file.display().to_string()).collect();
    assert_eq!(files, vec!["main.py"]);
}

#[test]
fn a_file_scope_infers_the_language() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("lib.rs"), "fn m() { a.unwrap(); }\n").unwrap();
    let report = search(dir.path(), &dir.path().join("lib.rs"), "$X.unwrap()", &opts(None)).unwrap();
    assert_eq!((report.lang, report.total), (Lang::Rust, 1));
}

#[test]
fn errors_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.py"), "x\n").unwrap();
    fs::write(dir.path().join("notes.txt"), "x\n").unwrap();
    let err = search(dir.path(), dir.path(), "foo(", &opts(Some(Lang::Python))).unwrap_err();
    assert!(matches!(err, Error::Unparseable { lang: Lang::Python, .. }));
    assert!(
        err.to_string().starts_with(
            "unparseable pattern for python: no context accepts it (tried: statement, expression, member)"
        ),
        "{err}"
    );
    let err = search(dir.path(), dir.path(), "foo($X)", &opts(None)).unwrap_err();
    assert!(err.to_string().starts_with("language is required: the path is a directory"), "{err}");
    let err = search(dir.path(), &dir.path().join("notes.txt"), "foo($X)", &opts(None)).unwrap_err();
    assert!(matches!(err, Error::LanguageRequired { .. }), "{err}");
    let err = search(dir.path(), &dir.path().join("missing"), "foo($X)", &opts(Some(Lang::Python))).unwrap_err();
    assert_eq!(err.to_string(), "path not found: missing");
    let err = search(dir.path(), dir.path(), "   ", &opts(Some(Lang::Python))).unwrap_err();
    assert!(matches!(err, Error::EmptyPattern));
    assert_eq!(Lang::from_id("cobol"), None);
}

#[test]
fn every_context_that_parses_is_reported() {
    use Context::*;
    let cases: &[(Lang, &str, &[Context])] = &[
        (Lang::Dart, "dispose($X)", &[Expression]),
        // Also an abstract method and a top-level function signature.
        (Lang::Dart, "dispose($X);", &[Statement, Member, Declaration]),
        (Lang::Dart, "Widget build($C) { $$$B }", &[Statement, Member, Declaration]),
        (Lang::Rust, "impl $T for $U { $$$B }", &[Statement]),
        (Lang::TypeScript, "Promise<$T>", &[Statement, Type]),
        (Lang::Java, "private int $F;", &[Statement, Member]),
        // As an expression, and as a type (the same rung, spelled as a type).
        (Lang::C, "sizeof($T)", &[Expression]),
        (Lang::Json, "\"a\": $V", &[Member]),
    ];
    let mut failures = Vec::new();
    for (lang, pattern, contexts) in cases {
        let compiled = astmatch::Pattern::compile(pattern, *lang).unwrap();
        if compiled.contexts() != *contexts || compiled.context() != contexts[0] {
            failures.push(format!("{lang} `{pattern}`: {:?}, expected {contexts:?}", compiled.contexts()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The pre-filter only saves time: results are identical with and without it.
#[test]
fn prefilter_does_not_change_results() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().parent().unwrap();
    let registry = std::env::var("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    let mut corpora = vec![(root.join("crates"), Lang::Rust)];
    if let Some(src) = fs::read_dir(registry.join("registry/src")).ok().and_then(|mut d| d.next()).and_then(|e| e.ok())
    {
        for name in ["memchr", "ignore", "similar"] {
            if let Some(dir) = fs::read_dir(src.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .find(|e| e.file_name().to_string_lossy().starts_with(&format!("{name}-")))
            {
                corpora.push((dir.path(), Lang::Rust));
            }
        }
    }
    let patterns =
        ["$X.unwrap()", "Some($X)", "impl $T for $U { $$$B }", "fn $F($$$P) -> Result<$T> { $$$B }", "memchr"];
    for (dir, lang) in &corpora {
        for pattern in patterns {
            let with = search(
                root,
                dir,
                pattern,
                &SearchOptions {
                    lang: Some(*lang),
                    max_results: usize::MAX,
                    prefilter: true,
                    ..SearchOptions::default()
                },
            )
            .unwrap();
            let without = search(
                root,
                dir,
                pattern,
                &SearchOptions {
                    lang: Some(*lang),
                    max_results: usize::MAX,
                    prefilter: false,
                    ..SearchOptions::default()
                },
            )
            .unwrap();
            assert_eq!(with.total, without.total, "{pattern} in {}", dir.display());
            assert_eq!(with.matches, without.matches, "{pattern} in {}", dir.display());
        }
    }
}

/// The fixture project: real files with look-alikes in comments, strings and wrong guards.
#[test]
fn fixture_project() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/astmatch/project");
    // (pattern, language, where, the matches: path, line, column)
    type Case<'a> = (&'a str, Option<Lang>, &'a str, &'a [(&'a str, usize, usize)]);
    let cases: [Case<'_>; 4] = [
        ("if ($X != null) $X.dispose();", Some(Lang::Dart), ".", &[("lib/widget.dart", 6, 5)]),
        ("isinstance($A, $B)", Some(Lang::Python), "app", &[("app/main.py", 5, 8)]),
        ("Promise<$T>", None, "app/util.ts", &[("app/util.ts", 1, 49)]),
        ("$A.forEach($F)", Some(Lang::TypeScript), ".", &[("app/util.ts", 3, 3)]),
    ];
    for (pattern, lang, scope, expected) in cases {
        let report = search(&root, &root.join(scope), pattern, &opts(lang)).unwrap();
        let got: Vec<(String, usize, usize)> =
            report.matches.iter().map(|m| (m.file.display().to_string(), m.line, m.column)).collect();
        let expected: Vec<(String, usize, usize)> = expected.iter().map(|(f, l, c)| (f.to_string(), *l, *c)).collect();
        assert_eq!(got, expected, "{pattern}");
    }
}

/// A second search reuses the trees of unchanged files, and a changed file is parsed
/// again, even when its size and modification time are the same.
#[test]
fn a_parse_cache_reuses_unchanged_files_only() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.py"), "foo(1)\n").unwrap();
    fs::write(dir.path().join("b.py"), "bar(2)\n").unwrap();
    let cache = Arc::new(astmatch::ParseCache::new(astmatch::DEFAULT_CACHE_BYTES));
    let options = SearchOptions {
        lang: Some(Lang::Python),
        prefilter: false,
        cache: Some(Arc::clone(&cache)),
        ..Default::default()
    };
    let first = search(dir.path(), dir.path(), "foo($X)", &options).unwrap();
    assert_eq!((first.total, cache.stats().files, cache.stats().hits), (1, 2, 0));
    let second = search(dir.path(), dir.path(), "bar($X)", &options).unwrap();
    assert_eq!((second.total, cache.stats().hits), (1, 2));
    // A different size: parsed again, and the new text is what is searched.
    fs::write(dir.path().join("a.py"), "foo(1)\nfoo(22)\n").unwrap();
    let third = search(dir.path(), dir.path(), "foo($X)", &options).unwrap();
    assert_eq!((third.total, cache.stats().hits, cache.stats().misses), (2, 3, 3));
    // The same size and modification time, another text: the bytes tell, and it is parsed again.
    let b = dir.path().join("b.py");
    let modified = fs::metadata(&b).unwrap().modified().unwrap();
    fs::write(&b, "foo(3)\n").unwrap();
    fs::File::options().write(true).open(&b).unwrap().set_modified(modified).unwrap();
    assert_eq!(fs::metadata(&b).unwrap().modified().unwrap(), modified);
    let fourth = search(dir.path(), dir.path(), "foo($X)", &options).unwrap();
    assert_eq!((fourth.total, cache.stats().hits, cache.stats().misses), (3, 4, 4));
    // A cap of zero keeps nothing.
    let none = Arc::new(astmatch::ParseCache::new(0));
    let options = SearchOptions { cache: Some(Arc::clone(&none)), ..options };
    search(dir.path(), dir.path(), "foo($X)", &options).unwrap();
    assert_eq!(none.stats().files, 0);
}

/// A recovered pattern that matches nothing says where its words are, so it can be fixed.
#[test]
fn a_recovered_pattern_that_matches_nothing_says_where_its_words_are() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.js"), "const x = 1;\n").unwrap();
    fs::write(dir.path().join("b.js"), "// go\nexport async function go() {}\nexport async function stop() {}\n")
        .unwrap();
    fs::write(dir.path().join("c.js"), "export async function run() {}\n").unwrap();
    for prefilter in [true, false] {
        let options = SearchOptions { prefilter, ..opts(Some(Lang::JavaScript)) };
        let report = search(dir.path(), dir.path(), "export async function $NAME", &options).unwrap();
        assert!(report.recovered.is_some());
        assert_eq!(report.total, 0);
        let found = report.words_found.expect("where the words are");
        assert_eq!(found.words, vec!["function", "export", "async"]);
        assert_eq!((found.files, found.places), (2, 3));
        let first = found.first.expect("a first place");
        assert_eq!((first.file.to_str(), first.line, first.column), (Some("b.js"), 2, 14));
        assert_eq!(first.text, "export async function go() {}");
    }
    // A pattern that parses cleanly, or one that matches, says nothing of its words.
    let clean =
        search(dir.path(), dir.path(), "export async function $NAME() {}", &opts(Some(Lang::JavaScript))).unwrap();
    assert_eq!((clean.total, clean.words_found), (3, None));
}

#[test]
fn a_search_keeping_one_match_returns_the_first_and_counts_the_rest() {
    // Many matching files in nested directories, whose walk order is not path order.
    let dir = tempfile::tempdir().unwrap();
    for d in ["b", "a", "c/z", "c/a"] {
        fs::create_dir_all(dir.path().join(d)).unwrap();
        for i in (0..40).rev() {
            let source: String = (0..(i % 5 + 1)).map(|j| format!("x = 1\nfoo({i}, {j})\n")).collect();
            fs::write(dir.path().join(d).join(format!("f{i:02}.py")), source).unwrap();
        }
    }
    fs::write(dir.path().join("a").join("none.py"), "bar(1)\n").unwrap();
    let all = search(
        dir.path(),
        dir.path(),
        "foo($X, $Y)",
        &SearchOptions { max_results: 1_000_000, ..opts(Some(Lang::Python)) },
    )
    .unwrap();
    assert_eq!(all.matches.len(), all.total);
    for max_results in [0, 1, 3, 7, 50] {
        let some =
            search(dir.path(), dir.path(), "foo($X, $Y)", &SearchOptions { max_results, ..opts(Some(Lang::Python)) })
                .unwrap();
        assert_eq!(some.matches, all.matches[..max_results], "max_results {max_results}");
        assert_eq!(
            (some.total, some.files_matched, some.files_searched, &some.skipped, &some.in_macros),
            (all.total, all.files_matched, all.files_searched, &all.skipped, &all.in_macros)
        );
    }
    let first = &all.matches[0];
    assert_eq!((first.file.to_str(), first.line, first.text.as_str()), (Some("a/f00.py"), 2, "foo(0, 0)"));
    assert_eq!((all.total, all.files_matched, all.files_searched), (4 * 120, 160, 161));
}
