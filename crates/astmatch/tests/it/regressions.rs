//! Regression rows: each failure seen on real projects (an HTTP client library in
//! Python, a TypeScript fetch wrapper, a Go CLI framework, a C JSON library, this
//! workspace), cut down to the shape that broke, with the text that is right.

#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use astmatch::{EditStore, Error, Lang, Pattern, Reparse, SearchOptions, rewrite_text, search, search_source};

use Lang::*;

/// (language, pattern, template, source, expected text)
type Row = (Lang, &'static str, &'static str, &'static str, &'static str);

fn check_rewrites(rows: &[Row]) {
    let mut failures = Vec::new();
    for (i, (lang, pattern, template, source, expected)) in rows.iter().enumerate() {
        let compiled = Pattern::compile(pattern, *lang).unwrap_or_else(|e| panic!("{lang} `{pattern}`: {e}"));
        let rewrite = rewrite_text(&compiled, source, template).unwrap();
        if rewrite.text != *expected || rewrite.check != Reparse::Clean {
            failures.push(format!(
                "row {i} [{lang}] `{pattern}` => `{template}`\n  source:\n{source}\n  expected:\n{expected}\n  got ({:?}):\n{}",
                rewrite.check, rewrite.text
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} rows failed:\n{}", failures.len(), rows.len(), failures.join("\n"));
}

#[test]
fn multi_line_captures_placed_mid_line_keep_their_relative_indentation() {
    check_rewrites(&[
        (
            TypeScript,
            "setTimeout($F, $T)",
            "globalThis.setTimeout($F, $T)",
            "function t(x: boolean) {\n    if (x) {\n        setTimeout(() => {\n            done();\n        }, 5);\n    }\n}\n",
            "function t(x: boolean) {\n    if (x) {\n        globalThis.setTimeout(() => {\n            done();\n        }, 5);\n    }\n}\n",
        ),
        (
            Rust,
            "Vec::from_iter($X)",
            "$X.collect::<Vec<_>>()",
            "fn m() {\n    let v = Vec::from_iter(xs.iter().map(|x| {\n        x + 1\n    }));\n}\n",
            "fn m() {\n    let v = xs.iter().map(|x| {\n        x + 1\n    }).collect::<Vec<_>>();\n}\n",
        ),
        // Moved one level in: every line of the capture moves with it.
        (
            Python,
            "run($F)",
            "if enabled:\n    run($F)",
            "def f():\n    run(lambda: g(\n        1,\n    ))\n",
            "def f():\n    if enabled:\n        run(lambda: g(\n            1,\n        ))\n",
        ),
    ]);
}

#[test]
fn text_inside_literals_is_never_reindented() {
    check_rewrites(&[
        // A raw string's lines keep their bytes where the capture stays put…
        (
            Go,
            "genScript($X)",
            "genScriptV2($X)",
            "package p\n\nfunc f() {\n\tgenScript(`#!/bin/sh\n  indented line\nflush left\n\t\ttabbed`)\n}\n",
            "package p\n\nfunc f() {\n\tgenScriptV2(`#!/bin/sh\n  indented line\nflush left\n\t\ttabbed`)\n}\n",
        ),
        // …and where it moves: only code lines are re-indented.
        (
            Python,
            "emit($S)",
            "if verbose:\n    emit($S)",
            "def f():\n    emit(\"\"\"\n    kept as written\n\"\"\")\n",
            "def f():\n    if verbose:\n        emit(\"\"\"\n    kept as written\n\"\"\")\n",
        ),
        (
            JavaScript,
            "log($S)",
            "if (debug) {\n  log($S);\n}",
            "function f() {\n  log(`a\n  b`);\n}\n",
            "function f() {\n  if (debug) {\n    log(`a\n  b`);\n  };\n}\n",
        ),
        (
            C,
            "f($X)",
            "if (on) {\n    f($X);\n}",
            "void g(void) {\n    f(g(/* a\n       b */ 1));\n}\n",
            "void g(void) {\n    if (on) {\n        f(g(/* a\n       b */ 1));\n    };\n}\n",
        ),
    ]);
}

#[test]
fn the_indentation_step_is_measured_on_code_lines_only() {
    check_rewrites(&[
        // A docstring line at two spaces is not the file's step.
        (
            Python,
            "with $C:\n    $$$B",
            "with $C:  # rewritten\n    $$$B",
            "def f(x):\n    \"\"\"Doc.\n\n  two spaces inside the docstring\n    \"\"\"\n    with open(x) as fh:\n        return fh.read()\n",
            "def f(x):\n    \"\"\"Doc.\n\n  two spaces inside the docstring\n    \"\"\"\n    with open(x) as fh:  # rewritten\n        return fh.read()\n",
        ),
        // Nor is a doc comment's ` * ` line.
        (
            TypeScript,
            "interface $I extends $$$B { $$$M }",
            "interface $I extends $$$B {\n    // rewritten\n    $$$M\n}",
            "/**\n * Doc.\n */\ninterface A extends B {\n    x: number;\n}\n",
            "/**\n * Doc.\n */\ninterface A extends B {\n    // rewritten\n    x: number;\n}\n",
        ),
        // Nor are a Go raw string's space-indented script lines.
        (
            Go,
            "if $C { $$$B }",
            "for $C {\n\t$$$B\n}",
            "package p\n\nvar s = `\n    a\n    b\n    c\n`\n\nfunc f() {\n\tif x {\n\t\tprintln(1)\n\t}\n}\n",
            "package p\n\nvar s = `\n    a\n    b\n    c\n`\n\nfunc f() {\n\tfor x {\n\t\tprintln(1)\n\t}\n}\n",
        ),
        // Nor a table row of one space: the step is the commonest increase.
        (
            Rust,
            "fn $F() { $$$B }",
            "fn $F() {\n    let _t = ();\n    $$$B\n}",
            "const T: [u8; 4] = [\n 1, 2,\n 3, 4,\n];\nfn f() {\n    if a {\n        b();\n    }\n}\n",
            "const T: [u8; 4] = [\n 1, 2,\n 3, 4,\n];\nfn f() {\n    let _t = ();\n    if a {\n        b();\n    }\n}\n",
        ),
    ]);
}

#[test]
fn a_run_never_takes_a_sibling_of_its_list() {
    check_rewrites(&[(
        Python,
        "try:\n    $$$T\nexcept $E as $N:\n    $$$B",
        "try:\n    $$$T\nexcept ($E) as $N:\n    $$$B",
        "try:\n    a()\nexcept A as e:\n    b()\nexcept B as f:\n    c()\n",
        // Two `except` clauses: the pattern has one, so the `try` does not match at all.
        "try:\n    a()\nexcept A as e:\n    b()\nexcept B as f:\n    c()\n",
    )]);
    let pattern = Pattern::compile("try:\n    $$$T\nexcept $E as $N:\n    $$$B", Python).unwrap();
    let one = "try:\n    a()\n    a2()\nexcept A as e:\n    b()\n";
    let found = search_source(&pattern, one);
    assert_eq!(found.len(), 1);
    let captures: Vec<(&str, &str)> =
        found[0].captures.iter().map(|c| (c.name.as_str(), &one[c.range.clone()])).collect();
    assert_eq!(captures, vec![("T", "a()\n    a2()"), ("E", "A"), ("N", "e"), ("B", "b()")]);
}

#[test]
fn comments_at_the_edges_of_a_run_are_kept() {
    check_rewrites(&[
        (
            Python,
            "with pytest.raises($E):\n    $$$B",
            "with pytest.raises($E, match=None):\n    $$$B",
            "def test_x():\n    with pytest.raises(ValueError):\n        # note one\n        parse('x')\n        # note two\n        parse('y')  # why\n",
            "def test_x():\n    with pytest.raises(ValueError, match=None):\n        # note one\n        parse('x')\n        # note two\n        parse('y')  # why\n",
        ),
        // The run starts at its first comment and lands where the template puts it; its
        // lines keep their indentation relative to that first line (as ast-grep does).
        // A comment after the run's trailing comma is taken in with the comma, and code
        // the template puts after it goes to the next line (ast-grep comments out the `)`).
        (
            Rust,
            "foo($$$A)",
            "bar($$$A)",
            "fn m() {\n    foo(\n        // first\n        1,\n        2, // last\n    );\n}\n",
            "fn m() {\n    bar(// first\n    1,\n    2, // last\n    );\n}\n",
        ),
        // The capture's comma stands in for the template's.
        (
            Rust,
            "P { $$$F }",
            "P {\n    $$$F,\n}",
            "fn m() {\n    let p = P {\n        a: 1, // first\n        b: 2, // second\n    };\n}\n",
            "fn m() {\n    let p = P {\n        a: 1, // first\n        b: 2, // second\n    };\n}\n",
        ),
        // A comment after a block's `:` or `{` is the body's first line.
        (
            Python,
            "if $A: $$$B",
            "if ($A):\n    $$$B",
            "def f(data):\n    if not data:  # why\n        return None\n",
            "def f(data):\n    if (not data):\n        # why\n        return None\n",
        ),
        (
            Go,
            "if $C { $$$B }",
            "for $C {\n\t$$$B\n}",
            "package p\n\nfunc f() {\n\tif n <= 0 { // why\n\t\treturn\n\t}\n}\n",
            "package p\n\nfunc f() {\n\tfor n <= 0 {\n\t\t// why\n\t\treturn\n\t}\n}\n",
        ),
        // Comments after a Go block's last statement sit beside its statement list.
        (
            Go,
            "if $C {\n\t$$$B\n}",
            "for $C {\n\t$$$B\n}",
            "package p\n\nfunc f() {\n\tif err != nil {\n\t\tprintln(err)\n\t\t// trailing one\n\t\t// trailing two\n\t}\n}\n",
            "package p\n\nfunc f() {\n\tfor err != nil {\n\t\tprintln(err)\n\t\t// trailing one\n\t\t// trailing two\n\t}\n}\n",
        ),
        // A body that is only a comment keeps it.
        (
            TypeScript,
            "declare namespace $N { $$$B }",
            "declare namespace $N {\n    $$$B\n}\n// end of $N",
            "declare namespace Intl {\n    // Empty\n}\n",
            "declare namespace Intl {\n    // Empty\n}\n// end of Intl\n",
        ),
        (
            Rust,
            "foo($$$A)",
            "bar($$$A)",
            "fn m() {\n    foo(1, 2 // last\n    );\n}\n",
            "fn m() {\n    bar(1, 2 // last\n    );\n}\n",
        ),
        (
            JavaScript,
            "function $F() { $$$B }",
            "async function $F() { $$$B }",
            "function a() {\n  // only a comment\n  b();\n}\n",
            "async function a() { // only a comment\nb(); }\n",
        ),
    ]);
}

#[test]
fn no_empty_line_is_added_or_removed() {
    check_rewrites(&[
        (
            Go,
            "if $C { $$$B }",
            "for $C {\n\t$$$B\n}",
            "package p\n\nfunc f() {\n\tif x {\n\t\tfoo()\n\t\tbar()\n\t}\n}\n",
            "package p\n\nfunc f() {\n\tfor x {\n\t\tfoo()\n\t\tbar()\n\t}\n}\n",
        ),
        (
            Go,
            "if $C { $$$B }",
            "for $C {\n\t$$$B\n}",
            "package p\n\nfunc f() {\n\tif x {\n\t}\n}\n",
            "package p\n\nfunc f() {\n\tfor x {\n\t}\n}\n",
        ),
        (
            Python,
            "def $F():\n    $$$B",
            "def $F() -> None:\n    $$$B",
            "def f():\n    a()\n\n    b()\n",
            "def f() -> None:\n    a()\n\n    b()\n",
        ),
    ]);
}

#[test]
fn every_context_that_parses_matches() {
    let cases: &[(Lang, &str, &str, &[&str])] = &[
        (
            Java,
            "private int $F;",
            "class A {\n    private int count;\n    public int other;\n    void m() { int local; }\n}\n",
            &["private int count;"],
        ),
        (
            Dart,
            "Widget build($C) { $$$B }",
            "class A {\n  Widget build(BuildContext context) { return Text(); }\n}\nvoid m() {\n  Widget build(c) { return x; }\n}\n",
            &["Widget build(BuildContext context) { return Text(); }", "Widget build(c) { return x; }"],
        ),
        (
            C,
            "sizeof($T)",
            "int n = sizeof(int) + sizeof(struct s) + sizeof(x);",
            &["sizeof(int)", "sizeof(struct s)", "sizeof(x)"],
        ),
        // The layout of a pattern's braces does not change what a `$$$` body matches.
        (
            Go,
            "if $C {\n\t$$$B\n}",
            "package p\n\nfunc f() {\n\tif a {\n\t}\n\tif b {\n\t\t// only a comment\n\t}\n\tif c { x() }\n}\n",
            &["if a {\n\t}", "if b {\n\t\t// only a comment\n\t}", "if c { x() }"],
        ),
        // A `$$$` in a switch body stands for its clauses.
        (
            Go,
            "switch $X {\n$$$C\n}",
            "package p\n\nfunc f() {\n\tswitch v {\n\tcase 1:\n\t\ta()\n\tdefault:\n\t}\n}\n",
            &["switch v {\n\tcase 1:\n\t\ta()\n\tdefault:\n\t}"],
        ),
        (
            TypeScript,
            "switch ($X) { $$$C }",
            "function f(v: number) {\n    switch (v) {\n        case 1: a(); break;\n        default: b();\n    }\n}\n",
            &["switch (v) {\n        case 1: a(); break;\n        default: b();\n    }"],
        ),
        (
            TypeScript,
            "Promise<$T>",
            "let p: Promise<number>;\nconst f = Promise<string>;\n",
            &["Promise<number>", "Promise<string>"],
        ),
    ];
    let mut failures = Vec::new();
    for (lang, pattern, source, expected) in cases {
        let compiled = Pattern::compile(pattern, *lang).unwrap();
        let found = search_source(&compiled, source);
        let got: Vec<&str> = found.iter().map(|m| &source[m.range.clone()]).collect();
        if got != *expected {
            failures.push(format!("[{lang}] `{pattern}`: got {got:?}, expected {expected:?}"));
        }
        let ranges: HashSet<_> = found.iter().map(|m| (m.range.start, m.range.end)).collect();
        assert_eq!(ranges.len(), found.len(), "[{lang}] `{pattern}`: a node range reported twice");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_pattern_of_only_metavariables_is_an_error() {
    for pattern in ["$$$ARGS", "$A $B", "$A", "$$$", "$A, $B"] {
        let err = Pattern::compile(pattern, Python).unwrap_err();
        assert!(matches!(err, Error::OnlyMetavariables { .. }), "`{pattern}`: {err}");
        assert!(err.to_string().contains("anchor it"), "{err}");
    }
}

#[test]
fn a_file_of_another_language_is_an_error_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("client.py"), "foo(1)\n").unwrap();
    let options = SearchOptions { lang: Some(Rust), ..SearchOptions::default() };
    let err = search(dir.path(), &dir.path().join("client.py"), "foo($X)", &options).unwrap_err();
    assert_eq!(
        err.to_string(),
        "'client.py' is a python file (by its extension), but language is rust; give language \"python\" or leave it out"
    );
    // A header searched as C++ is fine: one grammar family.
    std::fs::write(dir.path().join("a.h"), "int f(void);\n").unwrap();
    let options = SearchOptions { lang: Some(Cpp), ..SearchOptions::default() };
    assert!(search(dir.path(), &dir.path().join("a.h"), "f($$$A)", &options).is_ok());
}

#[test]
fn a_rewrite_that_breaks_a_file_is_refused_and_the_rest_stays_staged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    foo(1)\n").unwrap();
    std::fs::write(dir.path().join("b.py"), "x = [\n    foo(2),\n]\n").unwrap();
    let store = EditStore::new();
    let options = SearchOptions { lang: Some(Python), ..SearchOptions::default() };
    // A statement where only an expression may go: fine in a.py, broken inside b.py's list.
    let staged = store.stage(dir.path(), dir.path(), "foo($X)", "if $X:\n    bar()", &options).unwrap();
    assert_eq!(staged.files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(), vec!["a.py"]);
    assert_eq!(staged.checked, 1);
    assert_eq!(staged.refused.len(), 1);
    let refused = &staged.refused[0];
    assert_eq!(refused.path.display().to_string(), "b.py");
    assert_eq!(refused.replacements, 1);
    assert_eq!(refused.error.match_line, 2);
    assert_eq!(refused.error.replacement, "if 2:");
    assert!(refused.error.node == "ERROR" || refused.error.node.starts_with("MISSING"), "{:?}", refused.error);
    let id = staged.edit_id.unwrap();
    store.accept(&id).unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "def f():\n    if 1:\n        bar()\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("b.py")).unwrap(), "x = [\n    foo(2),\n]\n");

    // When every file would break, nothing is staged.
    let staged = store.stage(dir.path(), &dir.path().join("b.py"), "foo($X)", "if $X:\n    bar()", &options).unwrap();
    assert_eq!((staged.edit_id, staged.refused.len()), (None, 1));
}

#[test]
fn a_nested_rewrite_that_makes_an_annotated_chain_is_refused() {
    // `a = b = None` nests one assignment in another; rewriting both makes
    // `self.a: object = self.b: object = None`, which tree-sitter accepts and Python does not.
    let pattern = Pattern::compile("self.$A = $B", Python).unwrap();
    let source = "class C:\n    def f(self):\n        self.a = self.b = None\n";
    let rewrite = rewrite_text(&pattern, source, "self.$A: object = $B").unwrap();
    assert_eq!(rewrite.text, "class C:\n    def f(self):\n        self.a: object = self.b: object = None\n");
    let Reparse::Broken(error) = rewrite.check else { panic!("not refused: {:?}", rewrite.check) };
    assert_eq!((error.line, error.match_line), (3, 3));
    assert_eq!(error.node, "an annotated assignment in a chain (Python rejects it)");
    // One annotated target alone is fine.
    let rewrite = rewrite_text(&pattern, "self.a = None\n", "self.$A: object = $B").unwrap();
    assert_eq!(rewrite.check, Reparse::Clean);
}

#[test]
fn comments_the_template_replaces_are_reported() {
    let pattern = Pattern::compile("if ($C) return;", C).unwrap();
    let source = "void f(int *item) {\n    if (item == NULL) /* memory fail */\n        return;\n}\n";
    let rewrite = rewrite_text(&pattern, source, "while ($C) return;").unwrap();
    assert_eq!(rewrite.text, "void f(int *item) {\n    while (item == NULL) return;\n}\n");
    assert_eq!(rewrite.dropped_comments, vec![2]);
    // A comment inside a capture is kept, and not reported.
    let pattern = Pattern::compile("f($X)", C).unwrap();
    let rewrite = rewrite_text(&pattern, "void g(void) { f(/* kept */ 1 + 2); }\n", "h($X)").unwrap();
    assert_eq!(rewrite.dropped_comments, vec![1]);
    let rewrite = rewrite_text(&pattern, "void g(void) { f(g(/* kept */ 1)); }\n", "h($X)").unwrap();
    assert_eq!((rewrite.text.as_str(), rewrite.dropped_comments.len()), ("void g(void) { h(g(/* kept */ 1)); }\n", 0));
}

/// Rust 2018 parses `try!` as an ERROR the parser passed over (an extra) inside the
/// `let` (autocfg's sources are full of them). ast-grep passes over it; so do we, and
/// a pattern that is not about errors still finds the statement, with `$E` the rest.
#[test]
fn code_the_parser_passed_over_is_passed_over_by_the_pattern() {
    let source = "fn f() -> Result<(), E> {\n    let output = try!(run(&cmd));\n    let n = 1;\n    Ok(())\n}\n";
    let compiled = Pattern::compile("let $P = $E;", Rust).unwrap();
    let found = search_source(&compiled, source);
    let got: Vec<(&str, Vec<(&str, &str)>)> = found
        .iter()
        .map(|m| {
            let captures = m.captures.iter().map(|c| (c.name.as_str(), &source[c.range.clone()])).collect();
            (&source[m.range.clone()], captures)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("let output = try!(run(&cmd));", vec![("P", "output"), ("E", "(run(&cmd))")]),
            ("let n = 1;", vec![("P", "n"), ("E", "1")]),
        ]
    );
}
