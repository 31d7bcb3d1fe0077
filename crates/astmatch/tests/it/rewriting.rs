//! Rewriting, as tables of (language, pattern, rewrite template, source, expected output).

#![allow(clippy::unwrap_used)]

use astmatch::{Lang, Pattern, Reparse, rewrite_text};

fn check(cases: &[(Lang, &str, &str, &str, &str)]) {
    let mut failures = Vec::new();
    for (i, (lang, pattern, template, source, expected)) in cases.iter().enumerate() {
        let compiled = Pattern::compile(pattern, *lang).unwrap_or_else(|e| panic!("{lang} `{pattern}`: {e}"));
        let rewrite = rewrite_text(&compiled, source, template).unwrap();
        if rewrite.text != *expected || !matches!(rewrite.check, Reparse::Clean | Reparse::Unchecked) {
            failures.push(format!(
                "case {i} [{lang}] `{pattern}` => `{template}`\n  source:   {source:?}\n  expected: {expected:?}\n  got:      {:?} ({} replacements, {:?})",
                rewrite.text, rewrite.replacements, rewrite.check
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

use Lang::*;

#[test]
fn substitution() {
    check(&[
        (Python, "foo($X)", "bar($X)", "a = foo(1)\n", "a = bar(1)\n"),
        (Python, "foo($A, $B)", "foo($B, $A)", "foo(x, y)\n", "foo(y, x)\n"),
        (Python, "print $X", "print($X)", "x = 1\n", "x = 1\n"),
        (Rust, "$X.unwrap()", "$X?", "fn m() -> R { let a = b.c().unwrap(); }", "fn m() -> R { let a = b.c()?; }"),
        (Rust, "Box::new($X)", "Rc::new($X)", "fn m() { Box::new(Box::new(1)); }", "fn m() { Rc::new(Rc::new(1)); }"),
        (JavaScript, "var $X = $Y", "let $X = $Y", "var a = 1;\nvar b = f(2);\n", "let a = 1;\nlet b = f(2);\n"),
        (JavaScript, "$A.forEach($B)", "for (const x of $A) ($B)(x)", "xs.forEach(f);", "for (const x of xs) (f)(x);"),
        (TypeScript, "$X as any", "$X as unknown", "const a = b as any;", "const a = b as unknown;"),
        (
            Go,
            "fmt.Println($$$A)",
            "log.Println($$$A)",
            "package p\nfunc f() { fmt.Println(a, b) }\n",
            "package p\nfunc f() { log.Println(a, b) }\n",
        ),
        (
            C,
            "free($X);",
            "free($X);\n$X = NULL;",
            "void f() {\n    free(p);\n}\n",
            "void f() {\n    free(p);\n    p = NULL;\n}\n",
        ),
        (Cpp, "NULL", "nullptr", "int *p = NULL;", "int *p = nullptr;"),
        (
            Java,
            "$A.equals($B)",
            "Objects.equals($A, $B)",
            "class A { boolean m() { return a.equals(b); } }",
            "class A { boolean m() { return Objects.equals(a, b); } }",
        ),
        (
            Dart,
            "if ($X != null) $X.dispose();",
            "$X?.dispose();",
            "void m() {\n  if (a != null) a.dispose();\n}\n",
            "void m() {\n  a?.dispose();\n}\n",
        ),
        (Bash, "echo $X", "printf '%s\\n' $X", "echo hi\n", "printf '%s\\n' hi\n"),
        (Json, r#""version": $V"#, r#""version": "2.0""#, r#"{"version": "1.0"}"#, r#"{"version": "2.0"}"#),
        (Tsx, "<div>{$X}</div>", "<span>{$X}</span>", "const a = <div>{n}</div>;", "const a = <span>{n}</span>;"),
        (Python, "$A == $A", "True", "if x == x and x == y:\n    pass\n", "if True and x == y:\n    pass\n"),
        (Rust, "f($X)", "g($X)", "fn m() { f(/* keep */ 1); }", "fn m() { g(1); }"),
    ]);
}

#[test]
fn nested_matches_inside_captures_are_rewritten() {
    check(&[
        (Python, "foo($X)", "bar($X)", "foo(foo(foo(1)))\n", "bar(bar(bar(1)))\n"),
        (
            Rust,
            "$X.unwrap()",
            "$X.expect(\"x\")",
            "fn m() { a.unwrap().b().unwrap(); }",
            "fn m() { a.expect(\"x\").b().expect(\"x\"); }",
        ),
        (JavaScript, "f($A, $B)", "g($B, $A)", "f(f(1, 2), 3);", "g(3, g(2, 1));"),
        (Go, "len($X)", "size($X)", "package p\nvar n = len(len(a))\n", "package p\nvar n = size(size(a))\n"),
    ]);
}

#[test]
fn separators_stay_clean() {
    check(&[
        (Python, "foo($$$A)", "bar(0, $$$A)", "foo()\nfoo(1, 2)\n", "bar(0)\nbar(0, 1, 2)\n"),
        (Python, "foo($$$A)", "bar($$$A, 0)", "foo()\nfoo(1)\n", "bar(0)\nbar(1, 0)\n"),
        (Rust, "f($$$A, $LAST)", "g($LAST, $$$A)", "fn m() { f(1, 2, 3); f(1); }", "fn m() { g(3, 1, 2); g(1); }"),
        (JavaScript, "f($$$A)", "g($$$A, done)", "f(1, 2,);\nf();", "g(1, 2, done);\ng(done);"),
        (TypeScript, "f($FIRST, $$$REST)", "f($$$REST, $FIRST)", "f(a);\nf(a, b, c);", "f(a);\nf(b, c, a);"),
        (
            Go,
            "append($S, $$$X)",
            "append($$$X, $S)",
            "package p\nvar a = append(s)\n",
            "package p\nvar a = append(s)\n",
        ),
        (
            Java,
            "List.of($$$A)",
            "Arrays.asList($$$A, null)",
            "class A { Object o = List.of(); }",
            "class A { Object o = Arrays.asList(null); }",
        ),
        (
            C,
            "printf($F, $$$A)",
            "fprintf(stderr, $F, $$$A)",
            "void f() { printf(\"hi\"); printf(\"%d\", x); }",
            "void f() { fprintf(stderr, \"hi\"); fprintf(stderr, \"%d\", x); }",
        ),
        (Json, "[$$$A]", "[0, $$$A]", "{\"a\": []}", "{\"a\": [0]}"),
        (Dart, "f($$$A)", "g($$$A, 1)", "void m() { f(); }", "void m() { g(1); }"),
    ]);
}

#[test]
fn indentation_and_line_endings() {
    check(&[
        // Multi-line template takes the indentation of the match's line.
        (Python, "foo($X)", "if $X:\n    bar()", "def f():\n    foo(a)\n", "def f():\n    if a:\n        bar()\n"),
        // Tabs in the file: the template's 4-space levels become tabs.
        (
            Go,
            "fmt.Println($X)",
            "if $X != nil {\n    log($X)\n}",
            "package p\nfunc f() {\n\tfmt.Println(e)\n}\n",
            "package p\nfunc f() {\n\tif e != nil {\n\t\tlog(e)\n\t}\n}\n",
        ),
        // Two-space file: one template level becomes two spaces.
        (
            JavaScript,
            "f($X)",
            "if ($X) {\n    g();\n}",
            "function m() {\n  f(a);\n}\n",
            "function m() {\n  if (a) {\n    g();\n  };\n}\n",
        ),
        // CRLF files keep CRLF.
        (Python, "foo($X)", "bar($X)\nbaz($X)", "x = 1\r\nfoo(a)\r\n", "x = 1\r\nbar(a)\r\nbaz(a)\r\n"),
        // Multi-line captures keep their relative indentation where they land.
        (
            Python,
            "with $C:\n    $$$B",
            "try:\n    $$$B\nfinally:\n    pass",
            "def f():\n    with lock:\n        a()\n        if b:\n            c()\n",
            "def f():\n    try:\n        a()\n        if b:\n            c()\n    finally:\n        pass\n",
        ),
        (
            Rust,
            "if $C { $$$B }",
            "if !$C {\n    return;\n}\n$$$B",
            "fn m() {\n    if ok {\n        a();\n        b();\n    }\n}\n",
            "fn m() {\n    if !ok {\n        return;\n    }\n    a();\n    b();\n}\n",
        ),
        // A template line holding only an empty capture disappears.
        (
            JavaScript,
            "function $F() { $$$B }",
            "async function $F() {\n    $$$B\n}",
            "function a() {}\n",
            "async function a() {\n}\n",
        ),
        (
            Java,
            "void $M() { $$$B }",
            "public void $M() {\n    log();\n    $$$B\n}",
            "class A {\n    void run() { }\n}\n",
            "class A {\n    public void run() {\n        log();\n    }\n}\n",
        ),
        (
            C,
            "return $X;",
            "cleanup();\nreturn $X;",
            "int f() {\n\treturn 0;\n}\n",
            "int f() {\n\tcleanup();\n\treturn 0;\n}\n",
        ),
        (
            Python,
            "a = 1\nb = 2",
            "a, b = 1, 2",
            "def f():\n    a = 1\n    b = 2\n    c = 3\n",
            "def f():\n    a, b = 1, 2\n    c = 3\n",
        ),
        (
            Bash,
            "if [ $C ]; then\n  $$$B\nfi",
            "[ $C ] && {\n  $$$B\n}",
            "if [ -f a ]; then\n  echo yes\nfi\n",
            "[ -f a ] && {\n  echo yes\n}\n",
        ),
        (
            Cpp,
            "for (auto $X : $C) { $$$B }",
            "std::for_each($C.begin(), $C.end(), [&](auto $X) {\n    $$$B\n});",
            "void f() {\n    for (auto x : xs) { g(x); }\n}\n",
            "void f() {\n    std::for_each(xs.begin(), xs.end(), [&](auto x) {\n        g(x);\n    });\n}\n",
        ),
    ]);
}
