//! Differential test of the pattern language: our matcher against the ast-grep CLI,
//! case by case, on small snippets.
//!
//! Each case is a pattern and a snippet, written from ast-grep's documented pattern
//! syntax (metavariables, `$$$` runs, `$$VAR`, non-capturing `$_`, repeated names,
//! multi-node patterns) and from the shapes its users report in its issue tracker
//! (closures, templates, decorators, fragments that parse only with error recovery).
//! Both tools search the snippet; the byte ranges of the matches are compared as sets.
//!
//! A case marked [`Expect::Differs`] is a documented difference (docs/patterns.md,
//! "Where ast-grep matches differently"); the test checks that it still differs, so
//! the documentation stays true, and prints the reason. Every other case must agree.
//! The last line printed is the agreement figure.
//!
//! ast-grep is found at `$AST_GREP`, else `<workspace>/.tools/venv/bin/ast-grep`.
//! When it is missing the test fails under `CI=true` and otherwise says what is
//! missing and passes.

use std::io::Write;
use std::process::{Command, Stdio};

use astmatch::{Lang, Pattern, search_source};

use crate::rewrite_cases as common;
use common::ast_grep;

/// What the comparison must find.
#[derive(Clone, Copy)]
enum Expect {
    /// The same match ranges as ast-grep.
    Same,
    /// A documented difference: the reason, as docs/patterns.md gives it.
    Differs(&'static str),
}

struct Case {
    lang: Lang,
    pattern: &'static str,
    code: &'static str,
    expect: Expect,
}

const fn same(lang: Lang, pattern: &'static str, code: &'static str) -> Case {
    Case { lang, pattern, code, expect: Expect::Same }
}

const fn differs(lang: Lang, pattern: &'static str, code: &'static str, why: &'static str) -> Case {
    Case { lang, pattern, code, expect: Expect::Differs(why) }
}

/// Reasons, word for word as docs/patterns.md states them.
const STRICT_TOKENS: &str = "every token of the code must be in the pattern";
const TRAILING: &str = "ast-grep ignores the code's children after the pattern's last one";
const ONLY_METAVARS: &str = "a pattern of only metavariables is an error here";
const SEQUENCE: &str = "several statements are a sequence pattern here; ast-grep refuses a pattern of several nodes";
const EVERY_RUNG: &str = "every rung that parses the pattern counts here; ast-grep parses it once, as a whole file";

const CASES: &[Case] = &[
    // Metavariables, from ast-grep's pattern syntax guide.
    same(
        Lang::TypeScript,
        "console.log($GREETING)",
        "console.log('Hello World');\nconsole.log(123);\nconsole.debug(1);\n",
    ),
    same(Lang::TypeScript, "console.log($$$ARGS)", "console.log();\nconsole.log(1, 2, 3);\nconsole.warn(1);\n"),
    same(Lang::TypeScript, "$A == $A", "a == a;\na == b;\nf(x) == f(x);\n"),
    same(Lang::TypeScript, "$_FUNC($_FUNC)", "test(a);\ntestFunc(1 + 1);\n"),
    same(Lang::TypeScript, "$A($A)", "test(test);\nfoo(bar);\n"),
    same(Lang::TypeScript, "const $VAR = $VALUE", "const a = 123;\nlet b = 1;\nconst c = f(1);\n"),
    same(Lang::TypeScript, "function $FUNC($$$ARGS) { $$$BODY }", "function f(a, b) { return a; }\nfunction g() {}\n"),
    same(Lang::TypeScript, "foo($$$A, c)", "foo(a, b, c);\nfoo(c);\nfoo(a, b);\n"),
    same(Lang::TypeScript, "foo($$$, a, b, c)", "foo(a, b, c);\nfoo(b, c);\n"),
    same(Lang::TypeScript, "foo($A, $B)", "foo(a, b,);\nfoo(a);\n"),
    same(
        Lang::TypeScript,
        "import { $$$A, B, $$$C } from 'a'",
        "import { A, B, C } from 'a';\nimport { D } from 'a';\n",
    ),
    same(Lang::TypeScript, "($P) => $F($P)", "const g = (x) => bar(x);\nconst h = (x) => bar(y);\n"),
    differs(Lang::JavaScript, "a;$B;c", "a;b;c;\na;1+2+3;c;\n", SEQUENCE),
    same(Lang::TypeScript, "'abcdefg'", "f('abcdefg');\nf('gggggg');\n"),
    same(Lang::JavaScript, "return $A", "function f() { return 123; }\nfunction g() { return; }\n"),
    // `$$VAR` is one node, named or not: `return;` has only the `;` token after `return`.
    same(Lang::JavaScript, "return $$A", "function g() { return; }\n"),
    same(Lang::JavaScript, "new Promise($$$)", "new Promise((resolve) => resolve(1));\nnew Map();\n"),
    same(Lang::JavaScript, "await $P", "async function f() { await g(); await h; }\n"),
    same(Lang::TypeScript, "let $A: $T = $V", "let a: number = 1;\nlet b = 2;\n"),
    same(Lang::TypeScript, "$X?.$Y", "a?.b;\na.b;\n"),
    same(Lang::Tsx, "<$C $$$P />", "const x = <Button onClick={f} />;\nconst y = <div></div>;\n"),
    // Decorators: ast-grep's users collect them with a `$$$` inside `@…`.
    same(Lang::TypeScript, "@$$$D class $C { $$$B }", "@Component({})\nclass A { x = 1 }\nclass C {}\n"),
    differs(Lang::TypeScript, "class A { b() {} }", "class A { get b() {} }\n", STRICT_TOKENS),
    differs(Lang::TypeScript, "if ($C) { $$$B }", "if (x) { y() }\nif (z) { w() } else { v() }\n", TRAILING),
    // Python
    same(Lang::Python, "print($A)", "print(123)\nprint()\n"),
    same(Lang::Python, "print('123')", "print('123')\nprint('456')\n"),
    same(
        Lang::Python,
        "getattr($O, \"render\", None)",
        "getattr(response, \"render\", None)\ngetattr(response, \"__spec__\", None)\n",
    ),
    same(Lang::Python, "$A = 0", "a = 0\nb = 1\n"),
    same(
        Lang::Python,
        "match $A:\n  case $B:\n      $C\n  case [$D(0, 0)]:\n      $E\n  case [$D($F, $G)]:\n      $H\n  case [$D(0, $I), $D(0, $J)]:\n      $K\n  case _:\n      $L",
        "match points:\n  case []:\n      print(\"No points\")\n  case [Point(0, 0)]:\n      print(\"The origin\")\n  case [Point(x, y)]:\n      print(f\"Single point {x}, {y}\")\n  case [Point(0, y1), Point(0, y2)]:\n      print(f\"Two on the Y axis at {y1}, {y2}\")\n  case _:\n      print(\"Something else\")\n",
    ),
    same(Lang::Python, "@$$$D\nclass $C:\n    $$$B", "@dataclass\nclass A:\n    x: int\n\nclass C:\n    pass\n"),
    same(Lang::Python, "def $F($$$P): $$$B", "def f(a, b):\n    return a\n\ndef g():\n    pass\n"),
    same(Lang::Python, "lambda $X: $X", "f = lambda x: x\ng = lambda x: y\n"),
    same(Lang::Python, "[$X for $X in $Y]", "a = [x for x in xs]\nb = [x + 1 for x in xs]\n"),
    same(Lang::Python, "$A if $C else $B", "x = a if c else b\n"),
    differs(Lang::Python, "from $M import $N", "from os import path\nfrom os import path, sep\nimport os\n", TRAILING),
    same(Lang::Python, "assert $X, $MSG", "assert x, 'why'\nassert y\n"),
    same(Lang::Python, "try:\n    $$$T\nexcept $E:\n    $$$H", "try:\n    f()\nexcept ValueError:\n    g()\n"),
    same(Lang::Python, "$X.append($Y)", "xs.append(1)\nxs.extend([1])\n"),
    // Rust
    same(Lang::Rust, "Some($A)", "fn test() { Some(123) }\n"),
    same(
        Lang::Rust,
        "match $A {\n  Some($B) => $B,\n  None => $C,\n}",
        "fn test() {\npatterns = match config.include.clone() {\n  Some(patterns) => patterns,\n  None => Vec::from([cwd.join(\"**/*.toml\")]),\n};\n}\n",
    ),
    same(Lang::Rust, "foo(\"meaning\");", "fn t() { foo(\"meaning\"); foo(\"service\"); }\n"),
    // Closures written without a body: the parameters are the pattern.
    same(Lang::Rust, "|$A, $B|", "fn f() { let w = v.into_iter().reduce(|x, y| x + y); }\n"),
    same(Lang::Rust, "|$$A, $$B|", "fn f() { let w = v.into_iter().reduce(|x, _| x + x); }\n"),
    same(Lang::Rust, "let ($$X, $$Y) = $$$T;", "fn f() { let (_, y) = (1, 2); }\n"),
    same(
        Lang::Rust,
        "$C { $$$A, ..$B };",
        "fn f() { User {\n    username: String::from(name),\n    ..DEFAULT_USER\n  }; }\n",
    ),
    same(Lang::Rust, "impl $T { $$$ }", "struct S;\nimpl S { fn f() {} }\nimpl Drop for S { fn drop(&mut self) {} }\n"),
    same(Lang::Rust, "#[derive($$$D)]", "#[derive(Debug, Clone)]\nstruct S;\n#[cfg(test)]\nmod t {}\n"),
    same(Lang::Rust, "$X?", "fn f() -> Result<(), E> { g()?; h().map(|x| x)?; Ok(()) }\n"),
    same(Lang::Rust, "use $P::$N;", "use std::fmt;\nuse a::b::c;\nuse d;\n"),
    same(Lang::Rust, "$A.unwrap()", "fn f() { a.unwrap(); b.unwrap_or(1); c.d().unwrap(); }\n"),
    // Go
    same(Lang::Go, "print($A)", "package main\nfunc main() { print(123) }\n"),
    // Go has no single-quoted strings: pattern and code parse with the same error.
    same(Lang::Go, "print('123')", "print('123')\n"),
    same(Lang::Go, "$A = 0", "package main\nfunc main() { a = 0; b = 1 }\n"),
    same(Lang::Go, "func $A($$$) $B { $$$ }", "package main\nfunc plus(a int, b int) int {\n  return a + b\n}\n"),
    same(
        Lang::Go,
        "if err != nil { return $$$R }",
        "package main\nfunc f() error {\n\tif err != nil { return nil, err }\n\treturn nil\n}\n",
    ),
    same(Lang::Go, "defer $F($$$)", "package main\nfunc f() { defer close(c); defer wg.Done() }\n"),
    // A call is not a Go file: ast-grep's one parse, as a file, finds no call in it.
    differs(
        Lang::Go,
        "fmt.Println($$$A)",
        "package main\nfunc f() { fmt.Println(1, 2); fmt.Printf(\"x\") }\n",
        EVERY_RUNG,
    ),
    // C and C++
    same(Lang::Cpp, "$A->b()", "void f() { expr->b(); expr->c(); }\n"),
    same(Lang::Cpp, "if (a) { $$$VERYLONGNAME }", "void f() { if (a) { a;b;c; } }\n"),
    same(Lang::Cpp, "expr->$B()", "void f() { expr->b(); }\n"),
    same(Lang::Cpp, "ns::ns2::$F()", "void f() { ns::ns2::func(); }\n"),
    // Fragments that parse only with error recovery, as ast-grep's users write them.
    same(Lang::Cpp, "template <typename $T>", "template <typename T>\n"),
    same(Lang::Cpp, "if ($A)", "void f() { if (a | b) abc; }\n"),
    same(Lang::Cpp, "struct $A: $B", "struct A: B {};\nstruct C {};\n"),
    same(Lang::Cpp, "if constexpr ($C) {}", "void f() { if constexpr (13+5==18) {} }\n"),
    same(
        Lang::Cpp,
        "template <typename T> typename std::enable_if<$C, T>::type;",
        "template <typename T> typename std::enable_if<std::is_signed<T>::value, T>::type;\n",
    ),
    // As a C file, `malloc($N)` is a declaration; here the statement rung finds the calls.
    differs(Lang::C, "malloc($N)", "void f(void) { p = malloc(10); q = calloc(1, 2); }\n", EVERY_RUNG),
    // Here `$T` is also tried as a type, so `sizeof(int)` is found too.
    differs(Lang::C, "sizeof($T)", "int n = sizeof(int) + sizeof(x);\n", EVERY_RUNG),
    // Java
    same(
        Lang::Java,
        "System.out.println($A)",
        "class A { void f() { System.out.println(1); System.err.println(2); } }\n",
    ),
    same(Lang::Java, "public class $C { $$$ }", "public class A { int x; }\nclass B {}\n"),
    // Bash: a `$name` that is not a metavariable is literal.
    same(Lang::Bash, "echo $A", "echo test\n"),
    same(Lang::Bash, "echo $abc", "echo $abc\necho test\necho $ABC\n"),
    same(Lang::Bash, "123", "123\n"),
    // JSON
    same(Lang::Json, "[$A]", "[123]\n"),
    same(Lang::Json, "{ $$$ }", "{\"abc\": 123}\n"),
    same(Lang::Json, "{\"d\": 123}", "{\"d\": 123}\n"),
    differs(Lang::Json, "$A", "123\n", ONLY_METAVARS),
    // Dart
    same(Lang::Dart, "class $A {}", "class Foo {}\nclass Bar { int x = 1; }\n"),
    same(Lang::Dart, "class $A { $$$BODY }", "class Foo { int x = 1; }\n"),
];

/// ast-grep's matches: byte ranges, or its error message when it refuses the pattern.
fn theirs(ast_grep: &std::path::Path, case: &Case) -> Result<Vec<(usize, usize)>, String> {
    let mut child = Command::new(ast_grep)
        .args(["run", "--pattern", case.pattern, "--lang", case.lang.id(), "--stdin", "--json=stream"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", ast_grep.display()));
    // ast-grep may refuse the pattern and exit before it reads the snippet: its exit
    // status and stderr say so below. Having read nothing, it cannot have answered.
    let unread = match child.stdin.take().expect("stdin").write_all(case.code.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => true,
        written => {
            written.expect("write the snippet");
            false
        }
    };
    let out = child.wait_with_output().expect("ast-grep ran");
    assert!(
        !unread || out.status.code().is_none_or(|c| c > 1),
        "ast-grep exited ({}) without reading the snippet of {:?}",
        out.status,
        case.pattern
    );
    // ast-grep exits 1 when nothing matched, and with another code when it refuses the pattern.
    if out.status.code().is_none_or(|c| c > 1) {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let mut ranges: Vec<(usize, usize)> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let m: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("ast-grep printed {line:?}: {e}"));
            let offset = &m["range"]["byteOffset"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap_or_else(|| panic!("ast-grep printed {line:?}")) as usize;
            (n(&offset["start"]), n(&offset["end"]))
        })
        .collect();
    ranges.sort();
    ranges.dedup();
    Ok(ranges)
}

/// Our matches: byte ranges, or the compile error.
fn ours(case: &Case) -> Result<Vec<(usize, usize)>, String> {
    let pattern = Pattern::compile(case.pattern, case.lang).map_err(|e| e.to_string())?;
    let mut ranges: Vec<(usize, usize)> =
        search_source(&pattern, case.code).into_iter().map(|m| (m.range.start, m.range.end)).collect();
    ranges.sort();
    Ok(ranges)
}

/// In JavaScript and TypeScript our match leaves out a trailing `;` that the pattern
/// did not have (so a rewrite keeps it), where ast-grep's may take it in. That is where
/// the match ends, not what matches: such a range is compared with the `;`.
fn with_semicolons(case: &Case, ours: Vec<(usize, usize)>, theirs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    if !matches!(case.lang, Lang::JavaScript | Lang::TypeScript | Lang::Tsx) {
        return ours;
    }
    let mut ranges: Vec<(usize, usize)> = ours
        .into_iter()
        .map(|(s, e)| {
            let longer = (s, e + 1);
            if case.code[e..].starts_with(';') && theirs.contains(&longer) { longer } else { (s, e) }
        })
        .collect();
    ranges.sort();
    ranges
}

fn show(code: &str, found: &Result<Vec<(usize, usize)>, String>) -> String {
    match found {
        Err(e) => format!("error: {e}"),
        Ok(ranges) if ranges.is_empty() => "no match".to_string(),
        Ok(ranges) => ranges.iter().map(|&(s, e)| format!("{s}..{e} {:?}", &code[s..e])).collect::<Vec<_>>().join(", "),
    }
}

#[test]
fn the_pattern_language_agrees_with_ast_grep() {
    let ast_grep = ast_grep();
    if !common::require(
        "pattern-language differential test",
        &format!("ast-grep ({})", ast_grep.display()),
        ast_grep.is_file(),
    ) {
        return;
    }
    let mut failures = Vec::new();
    let mut agree = 0;
    let mut documented = 0;
    for case in CASES {
        let theirs = theirs(&ast_grep, case);
        let ours = match (ours(case), &theirs) {
            (Ok(ours), Ok(theirs)) => Ok(with_semicolons(case, ours, theirs)),
            (ours, _) => ours,
        };
        // ast-grep accepts every pattern here (one that parses with errors gets a warning).
        let equal = ours == theirs;
        let verdict = match (case.expect, equal) {
            (Expect::Same, true) => {
                agree += 1;
                "same".to_string()
            }
            (Expect::Differs(why), false) => {
                documented += 1;
                format!("differs as documented: {why}")
            }
            (Expect::Same, false) => "DIFFERENT".to_string(),
            (Expect::Differs(why), true) => format!("SAME, yet documented as a difference ({why})"),
        };
        eprintln!(
            "{:<10} {:<48} {verdict}",
            case.lang.id(),
            format!("{:?}", case.pattern).chars().take(48).collect::<String>()
        );
        if verdict.starts_with("DIFFERENT") || verdict.starts_with("SAME") {
            failures.push(format!(
                "{} {:?}: {verdict}\n  ours:     {}\n  ast-grep: {}",
                case.lang.id(),
                case.pattern,
                show(case.code, &ours),
                show(case.code, &theirs)
            ));
        }
    }
    eprintln!(
        "pattern language: {agree} of {} cases agree with ast-grep, {documented} differ as documented, {} disagree",
        CASES.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{} case(s) disagree with ast-grep:\n{}", failures.len(), failures.join("\n"));
}

/// The reasons cited above are the ones docs/patterns.md gives.
#[test]
fn every_documented_difference_is_in_the_patterns_doc() {
    let doc = std::fs::read_to_string(common::workspace_root().join("docs/patterns.md")).expect("docs/patterns.md");
    for why in [STRICT_TOKENS, TRAILING, ONLY_METAVARS, SEQUENCE, EVERY_RUNG] {
        assert!(doc.contains(why), "docs/patterns.md does not say {why:?}");
    }
}

/// A fragment that only makes sense as an error stays an error that names the language,
/// even though ast-grep would search with it (and find nothing).
#[test]
fn a_fragment_that_opens_what_it_never_closes_stays_unparseable() {
    for (lang, pattern) in [(Lang::Python, "foo("), (Lang::Python, "def ("), (Lang::Rust, "{ ]"), (Lang::Cpp, "if ($A")]
    {
        let err = Pattern::compile(pattern, lang).expect_err(pattern);
        assert!(
            err.to_string().starts_with(&format!("unparseable pattern for {}: no context accepts it", lang.id())),
            "{err}"
        );
    }
    // A recovered pattern says what was recovered from; a clean one says nothing.
    let recovered = Pattern::compile("|$A, $B|", Lang::Rust).unwrap();
    assert!(recovered.recovered().is_some_and(|r| r.starts_with("statement: ")), "{:?}", recovered.recovered());
    assert_eq!(Pattern::compile("|$A, $B| $A + $B", Lang::Rust).unwrap().recovered(), None);
}
