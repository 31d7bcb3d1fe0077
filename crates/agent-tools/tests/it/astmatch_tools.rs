//! `ast_grep`, `ast_edit` and `resolve` through a surface, on small trees in a tempdir.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_tools::{AstmatchWiring, Registry, Surface, Tier, ToolResult, Workspace};
use serde_json::{Value, json};

/// A tempdir holding `files`, and an exec surface over it.
fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, Surface) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let workspace = Workspace::new(dir.path()).unwrap();
    let registry = Arc::new(Registry::builder().with_astmatch(AstmatchWiring::new(workspace)).build().unwrap());
    (dir, registry.surface(Tier::Exec))
}

async fn call(surface: &Surface, tool: &str, args: Value) -> ToolResult {
    surface.call(tool, args).await.unwrap()
}

const APP: &str = "from lib import foo\n\nx = foo(1)\nfoo(bar)\n# foo(comment)\ns = 'foo(string)'\n";
const LIB: &str = "def foo(a):\n    return a\n\n\nprint(foo( 2 ))\n";

#[tokio::test]
async fn ast_grep_lists_matches_with_captures() {
    let (_dir, surface) = setup(&[("app.py", APP), ("pkg/lib.py", LIB), ("notes.txt", "foo(9)")]);
    let result = call(&surface, "ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.text,
        "3 matches (showing 3) in 2 files, pattern parsed as statement (python)\n\
         app.py:3:5: foo(1)  [$X = 1]\n\
         app.py:4:1: foo(bar)  [$X = bar]\n\
         pkg/lib.py:5:7: foo( 2 )  [$X = 2]"
    );
    let s = result.structured.unwrap();
    assert_eq!(s["total"], 3);
    assert_eq!(s["context"], "statement");
    assert_eq!(s["language"], "python");
    assert_eq!(s["files_searched"], 2);
    assert_eq!(s["files_matched"], 2);
    assert_eq!(s["truncated"], false);
    assert_eq!(s["skipped"], json!({"binary": 0, "not_utf8": 0, "too_large": 0, "unreadable": 0}));
    assert_eq!(
        s["matches"][2],
        json!({"file": "pkg/lib.py", "line": 5, "column": 7, "end_line": 5, "end_column": 15, "text": "foo( 2 )", "context": "statement",
               "captures": {"X": {"multi": false, "text": "2", "line": 5, "column": 12}}})
    );
}

#[tokio::test]
async fn ast_grep_caps_results_and_infers_language_from_a_file() {
    let (_dir, surface) = setup(&[("app.py", APP)]);
    let result = call(&surface, "ast_grep", json!({"pattern": "foo($X)", "path": "app.py", "max_results": 1})).await;
    assert_eq!(
        result.text,
        "2 matches (showing 1) in 1 file, pattern parsed as statement (python)\n\
         app.py:3:5: foo(1)  [$X = 1]\n\
         … 1 more match not shown; narrow `path` or raise `max_results`"
    );
    let s = result.structured.unwrap();
    assert_eq!(
        (s["total"].clone(), s["truncated"].clone(), s["matches"].as_array().unwrap().len()),
        (json!(2), json!(true), 1)
    );
}

#[tokio::test]
async fn ast_grep_zero_matches_is_a_success() {
    let (_dir, surface) = setup(&[("app.py", APP)]);
    let result = call(&surface, "ast_grep", json!({"pattern": "nothing_here($X)", "language": "python"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text, "no matches for `nothing_here($X)` in 1 python file (pattern parsed as statement, python)");
    let none = call(&surface, "ast_grep", json!({"pattern": "foo($X)", "language": "go"})).await;
    assert!(!none.is_error);
    assert_eq!(none.text, "nothing searched: no go files (.go) in this scope");
    assert_eq!(none.structured.unwrap()["files_searched"], json!(0));
    assert_eq!(result.structured.unwrap()["total"], 0);
}

#[tokio::test]
async fn ast_grep_reports_skipped_files() {
    let (dir, surface) = setup(&[("app.py", APP)]);
    std::fs::write(dir.path().join("blob.py"), b"foo(1)\0\0").unwrap();
    std::fs::write(dir.path().join("latin.py"), b"foo(\xe9)\n").unwrap();
    let result = call(&surface, "ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await;
    assert!(result.text.ends_with("\nskipped 2 files: 1 binary, 1 not UTF-8"), "{}", result.text);
    assert_eq!(
        result.structured.unwrap()["skipped"],
        json!({"binary": 1, "not_utf8": 1, "too_large": 0, "unreadable": 0})
    );
}

#[tokio::test]
async fn astmatch_errors_are_error_results() {
    let (_dir, surface) = setup(&[("app.py", APP), ("README", "foo(1)")]);
    let cases = [
        (json!({"pattern": "foo($X)"}), "language is required: the path is a directory, so give `language`"),
        (
            json!({"pattern": "foo($X)", "path": "README"}),
            "language is required: 'README' has no known extension; known languages: bash, c, cpp, dart, go, java, javascript, json, python, rust, tsx, typescript",
        ),
        (json!({"pattern": "def (", "language": "python"}), "unparseable pattern for python"),
        (json!({"pattern": "  ", "language": "python"}), "empty pattern"),
        (json!({"pattern": "$$$ARGS", "language": "python"}), "pattern `$$$ARGS` is only metavariables"),
        (json!({"pattern": "foo($X)", "language": "python", "max_results": 0}), "max_results must be at least 1"),
        (
            json!({"pattern": "foo($X)", "path": "app.py", "language": "rust"}),
            "'app.py' is a python file (by its extension), but language is rust",
        ),
    ];
    for (args, start) in cases {
        let result = call(&surface, "ast_grep", args).await;
        assert!(result.is_error);
        assert!(result.text.starts_with(start), "{}", result.text);
    }
}

#[tokio::test]
async fn ast_edit_stages_and_resolve_accepts() {
    let (dir, surface) = setup(&[("app.py", APP), ("pkg/lib.py", LIB)]);
    let result =
        call(&surface, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X, 0)", "language": "python"})).await;
    assert!(!result.is_error, "{}", result.text);
    assert!(
        result.text.starts_with(
            "(proposed) 3 replacements in 2 files (pattern parsed as statement, python); re-parsed 2 files: all still parse; nothing is written yet — call resolve with edit_id \"edit_1\" to accept or discard\n\n--- a/app.py\n+++ b/app.py\n"
        ),
        "{}",
        result.text
    );
    assert!(result.text.contains("\n-x = foo(1)\n-foo(bar)\n+x = bar(1, 0)\n+bar(bar, 0)\n"), "{}", result.text);
    let s = result.structured.unwrap();
    assert_eq!(s["edit_id"], "edit_1");
    assert_eq!(s["replacements"], 3);
    assert_eq!(s["files"][0]["path"], "app.py");
    assert_eq!(s["files"][0]["replacements"], 2);
    assert_eq!(s["files"][1]["path"], "pkg/lib.py");
    assert_eq!((s["context"].as_str(), s["language"].as_str()), (Some("statement"), Some("python")));
    // Nothing written yet.
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), APP);

    let accepted = call(&surface, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(!accepted.is_error, "{}", accepted.text);
    assert_eq!(accepted.text, "accepted edit_1: 3 replacements written to 2 files\n  app.py\n  pkg/lib.py");
    assert_eq!(accepted.structured.unwrap()["files"], json!(["app.py", "pkg/lib.py"]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "from lib import foo\n\nx = bar(1, 0)\nbar(bar, 0)\n# foo(comment)\ns = 'foo(string)'\n"
    );

    let again = call(&surface, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(again.is_error);
    assert_eq!(again.text, "unknown edit_id 'edit_1': it was never staged or is already resolved");
}

#[tokio::test]
async fn resolve_refuses_a_conflict_and_discards() {
    let (dir, surface) = setup(&[("app.py", APP)]);
    let staged =
        call(&surface, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"})).await;
    assert_eq!(staged.structured.unwrap()["edit_id"], "edit_1");
    std::fs::write(dir.path().join("app.py"), "foo(3)\n").unwrap();
    let refused = call(&surface, "resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    assert!(refused.is_error);
    assert!(refused.text.starts_with("refused: 1 file changed since the edit was staged (app.py)"), "{}", refused.text);
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), "foo(3)\n");

    let staged =
        call(&surface, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"})).await;
    assert_eq!(staged.structured.unwrap()["edit_id"], "edit_2");
    let discarded = call(&surface, "resolve", json!({"edit_id": "edit_2", "action": "discard"})).await;
    assert_eq!((discarded.is_error, discarded.text.as_str()), (false, "discarded edit_2; nothing was written"));
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), "foo(3)\n");
}

#[tokio::test]
async fn ast_edit_with_nothing_to_change_has_no_edit_id() {
    let (_dir, surface) = setup(&[("app.py", APP)]);
    let result =
        call(&surface, "ast_edit", json!({"pattern": "nope($X)", "rewrite": "bar($X)", "language": "python"})).await;
    assert!(!result.is_error);
    assert_eq!(result.text, "nothing to change: the pattern (parsed as statement, python) matched nothing in 1 file");
    let s = result.structured.unwrap();
    assert_eq!(
        (s["edit_id"].clone(), s["replacements"].clone(), s["matches"].clone()),
        (Value::Null, json!(0), json!(0))
    );

    let same =
        call(&surface, "ast_edit", json!({"pattern": "foo($X)", "rewrite": "foo($X)", "language": "python"})).await;
    assert!(!same.is_error);
    assert!(
        same.text.starts_with("nothing to change: the pattern (parsed as statement, python) matched "),
        "{}",
        same.text
    );
    assert!(same.text.ends_with("and the rewrite leaves each as it is"), "{}", same.text);
    assert_eq!(same.structured.unwrap()["edit_id"], Value::Null);
}

#[tokio::test]
async fn unwired_language_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.go"), "package a\n").unwrap();
    let wiring = AstmatchWiring {
        languages: vec![astmatch::Lang::Python],
        ..AstmatchWiring::new(Workspace::new(dir.path()).unwrap())
    };
    let surface = Arc::new(Registry::builder().with_astmatch(wiring).build().unwrap()).surface(Tier::Read);
    let result = call(&surface, "ast_grep", json!({"pattern": "f()", "path": "a.go"})).await;
    assert!(result.is_error);
    assert_eq!(result.text, "language go is not wired in this run; available: python");
}

#[tokio::test]
async fn language_aliases_are_accepted() {
    let (_dir, surface) = setup(&[("app.py", APP)]);
    for alias in ["py", "Python", "python"] {
        let result = call(&surface, "ast_grep", json!({"pattern": "foo($X)", "language": alias})).await;
        assert!(!result.is_error, "{alias}: {}", result.text);
        assert_eq!(result.structured.unwrap()["language"], "python");
    }
}

#[tokio::test]
async fn ast_edit_refuses_files_the_rewrite_would_break() {
    let (dir, surface) = setup(&[("a.py", "def f():\n    foo(1)\n"), ("b.py", "x = [\n    foo(2),\n]\n")]);
    let args = json!({"pattern": "foo($X)", "rewrite": "if $X:\n    bar()", "language": "python"});
    let result = call(&surface, "ast_edit", args).await;
    assert!(!result.is_error, "{}", result.text);
    assert!(
        result.text.starts_with("(proposed) 1 replacement in 1 file (pattern parsed as statement, python); re-parsed 1 file: all still parse;"),
        "{}",
        result.text
    );
    assert!(
        result.text.contains("\n\nnot staged: 1 file whose rewritten text would not parse (the other files are staged as shown):\n  b.py:2:"),
        "{}",
        result.text
    );
    assert!(result.text.contains("from the replacement of the match at line 2 (`if 2:`)"), "{}", result.text);
    let s = result.structured.unwrap();
    assert_eq!((s["checked"].clone(), s["refused"][0]["path"].clone()), (json!(1), json!("b.py")));

    // Only the file that would break: an error, and nothing staged.
    let args = json!({"pattern": "foo($X)", "rewrite": "if $X:\n    bar()", "path": "b.py"});
    let result = call(&surface, "ast_edit", args).await;
    assert!(result.is_error, "{}", result.text);
    assert!(
        result.text.starts_with(
            "refused: the rewrite would leave every file it changes unparseable (1 file); nothing was staged"
        ),
        "{}",
        result.text
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("b.py")).unwrap(), "x = [\n    foo(2),\n]\n");
}

/// A cancelled `ast_edit` (its future dropped mid-walk) stages nothing. The
/// walk is over the cargo registry's Rust sources, read in place (nothing
/// is ever accepted, so nothing is written), so it is still walking when the
/// first progress report comes.
#[tokio::test]
async fn a_cancelled_ast_edit_stops_its_walk_and_stages_nothing() {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let Some(registry) = std::fs::read_dir(home.join("registry/src")).ok().and_then(|mut d| d.next()) else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "no cargo registry sources");
        return;
    };
    let root = registry.unwrap().path();
    let workspace = Workspace::new(&root).unwrap();
    let registry = Arc::new(Registry::builder().with_astmatch(AstmatchWiring::new(workspace)).build().unwrap());
    let pacing = agent_tools::Pacing {
        first_after: std::time::Duration::from_millis(10),
        min_interval: std::time::Duration::from_millis(10),
        heartbeat: std::time::Duration::from_millis(500),
    };
    let surface = registry.surface(Tier::Write).with_pacing(pacing);
    let walking = Arc::new(tokio::sync::Notify::new());
    let sink = {
        let walking = walking.clone();
        agent_tools::ProgressSink::new(move |p| {
            if p.message.ends_with("files looked at so far") && !p.message.contains(": 0 files") {
                walking.notify_one();
            }
        })
    };
    let rewrite = "$X.expect(\"x\")";
    let args = json!({"pattern": "$X.unwrap()", "rewrite": rewrite, "language": "rust"});
    tokio::select! {
        result = surface.call_with_progress("ast_edit", args, Some(sink)) => {
            panic!("the walk ended before it was cancelled: {:?}", result.map(|r| r.text))
        }
        () = walking.notified() => {}
    }
    // The stopped walk ends at its next file. A small file where the pattern
    // matches code, found with ast_grep (which stages nothing):
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let mut path = None;
    for lib in root.read_dir().unwrap().flatten().map(|e| e.path().join("src/lib.rs")) {
        if !std::fs::read_to_string(&lib).is_ok_and(|text| text.len() < 200_000 && text.contains(".unwrap()")) {
            continue;
        }
        let relative = lib.strip_prefix(&root).unwrap().display().to_string();
        let found = call(&surface, "ast_grep", json!({"pattern": "$X.unwrap()", "path": relative})).await;
        if found.structured.as_ref().is_some_and(|s| s["total"].as_u64() > Some(0)) {
            path = Some(relative);
            break;
        }
    }
    let path = path.unwrap();
    // The run's parse cache, shared with the walk, counts every parse: a walk
    // left running would parse hundreds more files in a second.
    let parses = || async {
        let probe = call(&surface, "ast_grep", json!({"pattern": "$X.unwrap()", "path": path})).await;
        probe.structured.unwrap()["parse_cache"]["misses"].as_u64().unwrap()
    };
    let before = parses().await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let after = parses().await;
    // Each walk thread may still finish the file it was parsing (a large one
    // takes a while on a loaded machine); it takes no other.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert!(after - before <= threads, "the cancelled walk went on parsing: {before} parses, then {after}");
    let staged = call(&surface, "ast_edit", json!({"pattern": "$X.unwrap()", "rewrite": rewrite, "path": path})).await;
    assert_eq!(staged.structured.as_ref().unwrap()["edit_id"], "edit_1", "{}", staged.text);
}

#[tokio::test]
async fn a_pattern_that_parses_only_with_error_recovery_is_matched_and_says_so() {
    let code = "void f() {\n    if (a | b) abc;\n    if (c) { d(); }\n}\n";
    let (_dir, surface) = setup(&[("a.cpp", code)]);
    let result = call(&surface, "ast_grep", json!({"pattern": "if ($A)", "language": "cpp"})).await;
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(
        result.text,
        "1 match (showing 1) in 1 file, pattern parsed as statement (cpp)\n\
         note: pattern parsed only with error recovery (statement: missing \";\"); matched as ast-grep matches it: a missing token is left out and the code may go on there, and an ERROR node matches any node with the same leading children (docs/patterns.md)\n\
         a.cpp:2:5: if (a | b) abc;  [$A = a | b]"
    );
    let s = result.structured.unwrap();
    assert_eq!(s["recovered"], "statement: missing \";\"");
    // A pattern that some context parses without error has no `recovered`.
    let clean = call(&surface, "ast_grep", json!({"pattern": "d()", "language": "cpp"})).await;
    assert!(clean.structured.unwrap().get("recovered").is_none(), "{}", clean.text);
    // `$$X` is one node, named or an unnamed token; `$X` takes named nodes only.
    let (_dir, surface) = setup(&[("a.rs", "fn f() { let (_, y) = (1, 2); }\n")]);
    let any = call(&surface, "ast_grep", json!({"pattern": "let ($$X, $$Y) = $$$T;", "language": "rust"})).await;
    assert!(any.text.contains("a.rs:1:10: let (_, y) = (1, 2);  [$X = _, $Y = y, $$$T = (1, 2)]"), "{}", any.text);
    let named = call(&surface, "ast_grep", json!({"pattern": "let ($X, $Y) = $$$T;", "language": "rust"})).await;
    assert!(named.text.starts_with("no matches"), "{}", named.text);
}

#[tokio::test]
async fn ast_grep_says_where_the_word_occurs_inside_macro_bodies_it_did_not_search() {
    let code =
        "fn f() {\n    a.unwrap();\n    assert!(b.unwrap() > 0);\n    let v = vec![c.unwrap(), d.unwrap()];\n}\n";
    let (_dir, surface) = setup(&[("lib.rs", code)]);
    let result = call(&surface, "ast_grep", json!({"pattern": "$X.unwrap()", "language": "rust"})).await;
    assert_eq!(
        result.text,
        "1 match (showing 1) in 1 file, pattern parsed as statement (rust)\n\
         lib.rs:2:5: a.unwrap()  [$X = a]\n\
         note: `unwrap` also occurs 3 times inside macro invocations (`assert!(…)`, `vec![…]`), whose bodies are token trees that a pattern does not match into, so those places were not searched; a one-identifier pattern (`unwrap`) or a text search finds them"
    );
    assert_eq!(result.structured.unwrap()["in_macros"], json!({"word": "unwrap", "count": 3}));
    // A one-identifier pattern does match inside macro bodies: nothing is left unsearched.
    let word = call(&surface, "ast_grep", json!({"pattern": "unwrap", "language": "rust"})).await;
    assert!(word.text.starts_with("4 matches"), "{}", word.text);
    assert!(word.structured.unwrap().get("in_macros").is_none());
    // Other languages have no token trees.
    let (_dir, surface) = setup(&[("a.py", "x.unwrap()\nprint(y.unwrap())\n")]);
    let python = call(&surface, "ast_grep", json!({"pattern": "$X.unwrap()", "language": "python"})).await;
    assert!(python.text.starts_with("2 matches") && !python.text.contains("note:"), "{}", python.text);
}

#[tokio::test]
async fn a_named_file_over_the_limit_is_refused_with_the_setting_never_no_matches() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.js"), "fetchData(1);\n".repeat(100)).unwrap();
    let wiring = AstmatchWiring { max_file_bytes: 1000, ..AstmatchWiring::new(Workspace::new(dir.path()).unwrap()) };
    let surface = Arc::new(Registry::builder().with_astmatch(wiring).build().unwrap()).surface(Tier::Read);
    let result = call(&surface, "ast_grep", json!({"pattern": "fetchData($A)", "path": "big.js"})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text,
        "refused: 'big.js' is 0.0 MiB (1400 bytes), over the 0.0 MiB limit on a searched file (search.max_file_bytes = 1000); it was not searched. Raise search.max_file_bytes (agent-tools.toml [search], AGENT_TOOLS_SEARCH_MAX_FILE_BYTES or --set search.max_file_bytes=N) to search it"
    );
}

#[tokio::test]
async fn a_recovered_pattern_that_matches_nothing_names_where_its_words_are() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("d.js"), "export async function go() {}\n").unwrap();
    let surface = Arc::new(
        Registry::builder().with_astmatch(AstmatchWiring::new(Workspace::new(dir.path()).unwrap())).build().unwrap(),
    )
    .surface(Tier::Read);
    let result = call(&surface, "ast_grep", json!({"pattern": "export async function $NAME", "path": "d.js"})).await;
    assert!(!result.is_error, "{}", result.text);
    assert!(
        result.text.ends_with("note: the pattern's words (`function`, `export`, `async`) are all in 1 file, where `function` occurs 1 time; the first is d.js:1:14: export async function go() {}; the recovered pattern matches none of them, so write it as code that parses there (e.g. with its body)"),
        "{}",
        result.text
    );
    let found = &result.structured.as_ref().unwrap()["words_found"];
    assert_eq!(
        found["first"],
        json!({"file": "d.js", "line": 1, "column": 14, "text": "export async function go() {}"})
    );
}

/// Every tool's text and structured value on a small tree, as the golden transcript:
/// searches (matches, none, a file, refusals), a staged rewrite, a refused and an accepted resolve.
#[tokio::test]
async fn transcript() {
    let rust = "fn main() {\n    let v = Some(1).unwrap();\n    println!(\"{}\", v);\n}\n";
    let (dir, surface) = setup(&[("app.py", APP), ("pkg/lib.py", LIB), ("notes.txt", "foo(9)"), ("src/main.rs", rust)]);
    let mut transcript = crate::golden::Transcript::new(&[dir.path()]);
    let calls = [
        ("ast_grep", json!({"pattern": "foo($X)", "language": "python"})),
        ("ast_grep", json!({"pattern": "foo($X)", "path": "app.py", "max_results": 1})),
        ("ast_grep", json!({"pattern": "nothing_here($X)", "language": "python"})),
        ("ast_grep", json!({"pattern": "$X.unwrap()", "language": "rust"})),
        ("ast_grep", json!({"pattern": "foo($X)"})),
        ("ast_grep", json!({"pattern": "def (", "language": "python"})),
        ("ast_grep", json!({"pattern": "$$$ARGS", "language": "python"})),
        ("ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X, 0)", "language": "python"})),
        ("resolve", json!({"edit_id": "edit_9", "action": "accept"})),
        ("resolve", json!({"edit_id": "edit_1", "action": "accept"})),
        ("ast_edit", json!({"pattern": "bar($X, 0)", "rewrite": "baz($X)", "path": "app.py"})),
        ("resolve", json!({"edit_id": "edit_2", "action": "discard"})),
        ("ast_edit", json!({"pattern": "nothing_here($X)", "rewrite": "x", "language": "python"})),
    ];
    for (tool, args) in calls {
        let result = call(&surface, tool, args.clone()).await;
        transcript.record(tool, &args, &result);
    }
    insta::assert_snapshot!(transcript.finish());
}
