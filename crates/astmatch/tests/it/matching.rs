//! Matching, as tables of (language, pattern, source, expected matches).
//!
//! Each expected match is written `text` or `text | NAME=capture NAME2=capture`,
//! with captures in order of first binding (multi-line text is written with `\n`).

#![allow(clippy::unwrap_used)]

use astmatch::{Lang, Pattern, search_source};

fn render(lang: Lang, pattern: &str, source: &str) -> Vec<String> {
    let compiled = Pattern::compile(pattern, lang).unwrap_or_else(|e| panic!("{lang} `{pattern}`: {e}"));
    search_source(&compiled, source)
        .iter()
        .map(|m| {
            let text = &source[m.range.clone()];
            let caps: Vec<String> =
                m.captures.iter().map(|c| format!("{}={}", c.name, &source[c.range.clone()])).collect();
            if caps.is_empty() { text.to_string() } else { format!("{text} | {}", caps.join(" ")) }
        })
        .collect()
}

fn check(cases: &[(Lang, &str, &str, &[&str])]) {
    let mut failures = Vec::new();
    for (i, (lang, pattern, source, expected)) in cases.iter().enumerate() {
        let got = render(*lang, pattern, source);
        let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        if got != expected {
            failures.push(format!("case {i} [{lang}] pattern `{pattern}`\n  source: {source:?}\n  expected: {expected:?}\n  got:      {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

use Lang::*;

#[test]
fn python() {
    check(&[
        (Python, "foo($X)", "a = foo(1)\nfoo(bar)\n", &["foo(1) | X=1", "foo(bar) | X=bar"]),
        (Python, "foo($X)", "# foo(c)\ns = 'foo(d)'\n\"\"\"foo(e)\"\"\"\n", &[]),
        (Python, "foo($X)", "s = f'{foo(e)}'\n", &["foo(e) | X=e"]),
        (Python, "foo($X)", "foo(1, 2)\nfoo()\n", &[]),
        (Python, "foo($$$A)", "foo()\nfoo(1, 2)\n", &["foo() | A=", "foo(1, 2) | A=1, 2"]),
        (Python, "foo($$$A, $LAST)", "foo(1, 2, 3)\nfoo(1)\n", &["foo(1, 2, 3) | A=1, 2 LAST=3", "foo(1) | A= LAST=1"]),
        (
            Python,
            "foo($FIRST, $$$REST)",
            "foo(1)\nfoo(1, 2, 3)\n",
            &["foo(1) | FIRST=1 REST=", "foo(1, 2, 3) | FIRST=1 REST=2, 3"],
        ),
        (Python, "$A == $A", "x == x\nx == y\nf(a) == f( a )\n", &["x == x | A=x", "f(a) == f( a ) | A=f(a)"]),
        (Python, "$_ == $_", "x == y\n", &["x == y"]),
        (Python, "isinstance($X, $T)", "if isinstance(v, int):\n    pass\n", &["isinstance(v, int) | X=v T=int"]),
        (Python, "foo", "foo = 1\nobj.foo\ndef foo(): pass\nclass foo: pass\n", &["foo", "foo", "foo", "foo"]),
        (Python, "foo", "# foo\n'foo'\n", &[]),
        (Python, "a = 1\nb = 2", "a = 1\nb = 2\nc = 3\na = 1\nb = 2\n", &["a = 1\nb = 2", "a = 1\nb = 2"]),
        (Python, "a = 1\nb = 2", "a = 1\nc = 3\nb = 2\n", &[]),
        (Python, "return $X", "def f():\n    return 1\n\ndef g():\n    return\n", &["return 1 | X=1"]),
        (
            Python,
            "def $F($$$P):\n    $$$B",
            "def add(a, b):\n    return a + b\n",
            &["def add(a, b):\n    return a + b | F=add P=a, b B=return a + b"],
        ),
        (
            Python,
            "raise $E from $C",
            "try:\n    x()\nexcept E as e:\n    raise Other() from e\n",
            &["raise Other() from e | E=Other() C=e"],
        ),
        (Python, "print($$$)", "print()\nprint(1, 2)\n", &["print()", "print(1, 2)"]),
        (
            Python,
            "$X.append($Y)",
            "items.append(1)\nself.out.append(f(x))\n",
            &["items.append(1) | X=items Y=1", "self.out.append(f(x)) | X=self.out Y=f(x)"],
        ),
        (Python, "foo(  $X  )", "foo(\n    1  # one\n)\n", &["foo(\n    1  # one\n) | X=1"]),
        (Python, "[$X for $X in $L]", "[a for a in xs]\n[a for b in xs]\n", &["[a for a in xs] | X=a L=xs"]),
        (Python, "lambda: $X", "f = lambda: 42\n", &["lambda: 42 | X=42"]),
        (
            Python,
            "with open($F) as $H:\n    $$$B",
            "with open('a') as fh:\n    data = fh.read()\n",
            &["with open('a') as fh:\n    data = fh.read() | F='a' H=fh B=data = fh.read()"],
        ),
        (Python, "await $X", "async def f():\n    await g()\n", &["await g() | X=g()"]),
        (Python, "$D[$K]", "d['a']\n", &["d['a'] | D=d K='a'"]),
    ]);
}

#[test]
fn rust() {
    check(&[
        (
            Rust,
            "f($$$A, $LAST)",
            "fn main() { f(1, 2, 3); f(1); f(); }",
            &["f(1, 2, 3) | A=1, 2 LAST=3", "f(1) | A= LAST=1"],
        ),
        (
            Rust,
            "$X.unwrap()",
            "fn m() { a.unwrap(); b.c().unwrap(); a.unwrap_or(1); }",
            &["a.unwrap() | X=a", "b.c().unwrap() | X=b.c()"],
        ),
        (Rust, "Box::new($X)", "fn m() { let b = Box::new(5); }", &["Box::new(5) | X=5"]),
        (
            Rust,
            "let $P = $E;",
            "fn m() { let x = 1; let (a, b) = t; let y: u8 = 2; }",
            &["let x = 1; | P=x E=1", "let (a, b) = t; | P=(a, b) E=t"],
        ),
        (
            Rust,
            "foo",
            "struct foo; fn m(x: foo) { x.foo; foo(); } // foo\nconst S: &str = \"foo\";",
            &["foo", "foo", "foo", "foo"],
        ),
        (
            Rust,
            "fn $F($$$P) -> $R { $$$B }",
            "fn add(a: i32, b: i32) -> i32 { a + b }\nfn unit() {}",
            &["fn add(a: i32, b: i32) -> i32 { a + b } | F=add P=a: i32, b: i32 R=i32 B=a + b"],
        ),
        (
            Rust,
            "impl $T for $U { $$$B }",
            "impl Display for Foo { fn fmt(&self) {} }\nimpl Foo {}",
            &["impl Display for Foo { fn fmt(&self) {} } | T=Display U=Foo B=fn fmt(&self) {}"],
        ),
        (Rust, "$A == $A", "fn m() { x == x; x == y; }", &["x == x | A=x"]),
        (
            Rust,
            "Option<$T>",
            "fn m(a: Option<u8>) -> Option<Vec<u8>> { None }",
            &["Option<u8> | T=u8", "Option<Vec<u8>> | T=Vec<u8>"],
        ),
        (Rust, "$X?", "fn m() -> R { let a = f()?; g(a)?; Ok(()) }", &["f()? | X=f()", "g(a)? | X=g(a)"]),
        (
            Rust,
            "println!($$$A)",
            "fn m() { println!(\"{}\", x); println!(); }",
            &["println!(\"{}\", x) | A=\"{}\", x", "println!() | A="],
        ),
        (
            Rust,
            "if $C { $$$T } else { $$$E }",
            "fn m() { if a { b(); } else { c(); } if d { e(); } }",
            &["if a { b(); } else { c(); } | C=a T=b(); E=c();"],
        ),
        (
            Rust,
            "match $X { $$$ARMS }",
            "fn m() { match v { 1 => a, _ => b } }",
            &["match v { 1 => a, _ => b } | X=v ARMS=1 => a, _ => b"],
        ),
        (Rust, "#[derive($$$D)]", "#[derive(Debug, Clone)]\nstruct S;", &["#[derive(Debug, Clone)] | D=Debug, Clone"]),
        (
            Rust,
            "$A.iter().map($F)",
            "fn m() { v.iter().map(|x| x + 1).collect::<Vec<_>>(); }",
            &["v.iter().map(|x| x + 1) | A=v F=|x| x + 1"],
        ),
        (Rust, "a();\nb();", "fn m() { a(); b(); c(); a(); x(); b(); }", &["a(); b();"]),
        (
            Rust,
            "use $$$P;",
            "use std::io;\nuse a::{b, c};",
            &["use std::io; | P=std::io", "use a::{b, c}; | P=a::{b, c}"],
        ),
        (Rust, "$X as $T", "fn m() { let a = b as u32; }", &["b as u32 | X=b T=u32"]),
        (Rust, "f(/* c */ $X)", "fn m() { f(1); f(/* other */ 2); }", &["f(1) | X=1", "f(/* other */ 2) | X=2"]),
    ]);
}

#[test]
fn javascript() {
    check(&[
        (
            JavaScript,
            "foo",
            "let foo = 1; obj.foo(); class foo {}; `${foo}`; const o = {foo};",
            &["foo", "foo", "foo", "foo", "foo"],
        ),
        (JavaScript, "foo", "'foo'; // foo\n`foo`", &[]),
        (
            JavaScript,
            "console.log($$$A)",
            "console.log('a', b); console.log();",
            &["console.log('a', b) | A='a', b", "console.log() | A="],
        ),
        (JavaScript, "$A.forEach($B)", "xs.forEach(x => f(x));", &["xs.forEach(x => f(x)) | A=xs B=x => f(x)"]),
        (JavaScript, "foo($X);", "foo(1);\nfoo(2)\n", &["foo(1); | X=1", "foo(2) | X=2"]),
        (
            JavaScript,
            "const $X = require($M)",
            "const fs = require('fs');\nlet p = require('path');",
            &["const fs = require('fs') | X=fs M='fs'"],
        ),
        (JavaScript, "`${$X}`", "const s = `${a + b}`;", &["`${a + b}` | X=a + b"]),
        (JavaScript, "f($X)", "const s = `value: ${f(x)}`;", &["f(x) | X=x"]),
        (
            JavaScript,
            "if ($X) { $$$B }",
            "if (a) { b(); c(); }\nif (d) e();",
            &["if (a) { b(); c(); } | X=a B=b(); c();"],
        ),
        (JavaScript, "$X === $X", "a === a; a === b;", &["a === a | X=a"]),
        (
            JavaScript,
            "function $F($$$P) { $$$B }",
            "function add(a, b) { return a + b; }",
            &["function add(a, b) { return a + b; } | F=add P=a, b B=return a + b;"],
        ),
        (JavaScript, "await $X", "async function f() { await g(); }", &["await g() | X=g()"]),
        (
            JavaScript,
            "new Promise($F)",
            "const p = new Promise((res) => res(1));",
            &["new Promise((res) => res(1)) | F=(res) => res(1)"],
        ),
        (JavaScript, "$.ajax($X)", "$.ajax(opts);", &["$.ajax(opts) | X=opts"]),
        (JavaScript, "a = 1; b = 2;", "a = 1; b = 2; c = 3;", &["a = 1; b = 2;"]),
    ]);
}

#[test]
fn typescript() {
    check(&[
        (
            TypeScript,
            "Promise<$T>",
            "function f(): Promise<number> { return g(); }\nlet p: Promise<Array<string>>;",
            &["Promise<number> | T=number", "Promise<Array<string>> | T=Array<string>"],
        ),
        (TypeScript, "foo", "interface foo { foo: number }\nlet x: foo = y.foo;", &["foo", "foo", "foo", "foo"]),
        (TypeScript, "$X as $T", "const a = b as string;", &["b as string | X=b T=string"]),
        (TypeScript, "let $X: $T = $V", "let a: number = 1;\nlet b = 2;", &["let a: number = 1 | X=a T=number V=1"]),
        (
            TypeScript,
            "interface $I { $$$M }",
            "interface A { x: number; y: string }",
            &["interface A { x: number; y: string } | I=A M=x: number; y: string"],
        ),
        (
            TypeScript,
            "$A.forEach($B)",
            "xs.forEach((x: number) => f(x));",
            &["xs.forEach((x: number) => f(x)) | A=xs B=(x: number) => f(x)"],
        ),
        (TypeScript, "console.log($$$A)", "console.log(1, 2)", &["console.log(1, 2) | A=1, 2"]),
        (
            TypeScript,
            "type $N = $T",
            "type A = string | number;",
            &["type A = string | number | N=A T=string | number"],
        ),
        (TypeScript, "$F<$T>($$$A)", "useState<number>(0);", &["useState<number>(0) | F=useState T=number A=0"]),
        (
            TypeScript,
            "readonly $X: $T",
            "class C { readonly a: number; b: string; }",
            &["readonly a: number | X=a T=number"],
        ),
        (TypeScript, "export default $X", "export default foo;", &["export default foo | X=foo"]),
    ]);
}

#[test]
fn tsx() {
    check(&[
        (Tsx, "<div>{$X}</div>", "const a = <div>{name}</div>;", &["<div>{name}</div> | X=name"]),
        (Tsx, "useState($X)", "const [a, b] = useState(0);", &["useState(0) | X=0"]),
        (Tsx, "<$C $$$P />", "const a = <Button onClick={f} />;", &["<Button onClick={f} /> | C=Button P=onClick={f}"]),
        (Tsx, "foo", "const a = <foo bar={foo} />;", &["foo", "foo"]),
        (
            Tsx,
            "$A.map($F)",
            "const l = xs.map(x => <li>{x}</li>);",
            &["xs.map(x => <li>{x}</li>) | A=xs F=x => <li>{x}</li>"],
        ),
        (Tsx, "const $X: $T = $V", "const a: number = 1;", &["const a: number = 1 | X=a T=number V=1"]),
    ]);
}

#[test]
fn go() {
    check(&[
        (
            Go,
            "fmt.Println($$$A)",
            "package main\nfunc main() { fmt.Println(\"a\", b); fmt.Println() }",
            &["fmt.Println(\"a\", b) | A=\"a\", b", "fmt.Println() | A="],
        ),
        (
            Go,
            "if err != nil { return $X }",
            "package p\nfunc f() error { if err != nil { return err }\nif err != nil { log(err) }\nreturn nil }",
            &["if err != nil { return err } | X=err"],
        ),
        (
            Go,
            "$X := $Y",
            "package p\nfunc f() { a := 1; b, c := 2, 3 }",
            &["a := 1 | X=a Y=1", "b, c := 2, 3 | X=b, c Y=2, 3"],
        ),
        (
            Go,
            "foo",
            "package p\ntype foo struct{ foo int }\nfunc f(x foo) { x.foo = 1 }",
            &["foo", "foo", "foo", "foo"],
        ),
        (
            Go,
            "func $F($$$P) $R { $$$B }",
            "package p\nfunc add(a, b int) int { return a + b }",
            &["func add(a, b int) int { return a + b } | F=add P=a, b int R=int B=return a + b"],
        ),
        (Go, "errors.New($M)", "package p\nvar E = errors.New(\"boom\")", &["errors.New(\"boom\") | M=\"boom\""]),
        (Go, "$A == $A", "package p\nfunc f() { _ = a == a; _ = a == b }", &["a == a | A=a"]),
        (Go, "defer $X.Close()", "package p\nfunc f() { defer f.Close(); defer g() }", &["defer f.Close() | X=f"]),
        (Go, "map[string]$T", "package p\nvar m map[string]int\nvar n map[int]int", &["map[string]int | T=int"]),
        (
            Go,
            "for $I := range $X { $$$B }",
            "package p\nfunc f() { for i := range xs { g(i) } }",
            &["for i := range xs { g(i) } | I=i X=xs B=g(i)"],
        ),
        (Go, "go $F($$$A)", "package p\nfunc f() { go run(1); run(2) }", &["go run(1) | F=run A=1"]),
    ]);
}

#[test]
fn c() {
    check(&[
        (
            C,
            "malloc($X)",
            "void f() { int *p = malloc(10); char *q = (char*)malloc(n * 2); }",
            &["malloc(10) | X=10", "malloc(n * 2) | X=n * 2"],
        ),
        (C, "free($X);", "void f() { free(p); free(q); }", &["free(p); | X=p", "free(q); | X=q"]),
        (
            C,
            "if ($X == NULL) return $R;",
            "int f() { if (p == NULL) return -1; if (q == NULL) { return 0; } }",
            &["if (p == NULL) return -1; | X=p R=-1"],
        ),
        (
            C,
            "foo",
            "struct foo { int foo; }; void f(struct foo x) { x.foo = 1; } /* foo */",
            &["foo", "foo", "foo", "foo"],
        ),
        (
            C,
            "printf($$$A)",
            "void f() { printf(\"%d\", x); printf(\"hi\"); }",
            &["printf(\"%d\", x) | A=\"%d\", x", "printf(\"hi\") | A=\"hi\""],
        ),
        (C, "$A = $A + 1", "void f() { i = i + 1; i = j + 1; }", &["i = i + 1 | A=i"]),
        // Compiled as an expression and, spelled as a type, as a type: both are found.
        (C, "sizeof($T)", "int n = sizeof(int); int m = sizeof(x);", &["sizeof(int) | T=int", "sizeof(x) | T=x"]),
        (C, "return $X;", "int f() { return 0; }\nvoid g() { return; }", &["return 0; | X=0"]),
        (
            C,
            "#include $H",
            "#include <stdio.h>\n#include \"a.h\"\n",
            &["#include <stdio.h> | H=<stdio.h>", "#include \"a.h\" | H=\"a.h\""],
        ),
        (
            C,
            "for ($I = 0; $I < $N; $I++) $B;",
            "void f() { for (i = 0; i < n; i++) g(i); for (i = 0; j < n; i++) g(i); }",
            &["for (i = 0; i < n; i++) g(i); | I=i N=n B=g(i)"],
        ),
    ]);
}

#[test]
fn cpp() {
    check(&[
        (
            Cpp,
            "std::make_unique<$T>($$$A)",
            "auto p = std::make_unique<Foo>(1, 2);",
            &["std::make_unique<Foo>(1, 2) | T=Foo A=1, 2"],
        ),
        (Cpp, "$X.push_back($Y)", "void f() { v.push_back(1); w.emplace_back(2); }", &["v.push_back(1) | X=v Y=1"]),
        (Cpp, "foo", "class foo { int foo; }; void f(foo x) { x.foo = 1; }", &["foo", "foo", "foo", "foo"]),
        (Cpp, "delete $X;", "void f() { delete p; delete[] q; }", &["delete p; | X=p"]),
        (
            Cpp,
            "for (auto $X : $C) $B;",
            "void f() { for (auto x : xs) g(x); }",
            &["for (auto x : xs) g(x); | X=x C=xs B=g(x)"],
        ),
        (Cpp, "std::cout << $X", "void f() { std::cout << 1; }", &["std::cout << 1 | X=1"]),
        (Cpp, "nullptr", "void f() { int *p = nullptr; }", &["nullptr"]),
        (
            Cpp,
            "template <typename $T>\n$R $F($$$P) { $$$B }",
            "template <typename T> T id(T x) { return x; }",
            &["template <typename T> T id(T x) { return x; } | T=T R=T F=id P=T x B=return x;"],
        ),
    ]);
}

#[test]
fn java() {
    check(&[
        (
            Java,
            "System.out.println($X)",
            "class A { void m() { System.out.println(\"hi\"); System.err.println(1); } }",
            &["System.out.println(\"hi\") | X=\"hi\""],
        ),
        (Java, "foo", "class foo { int foo; void m(foo x) { x.foo = 1; } }", &["foo", "foo", "foo", "foo"]),
        (
            Java,
            "new $T($$$A)",
            "class A { void m() { Object o = new ArrayList<>(); B b = new B(1, 2); } }",
            &["new ArrayList<>() | T=ArrayList<> A=", "new B(1, 2) | T=B A=1, 2"],
        ),
        (
            Java,
            "if ($X != null) $X.close();",
            "class A { void m() { if (r != null) r.close(); if (r != null) s.close(); } }",
            &["if (r != null) r.close(); | X=r"],
        ),
        (
            Java,
            "$A.equals($A)",
            "class A { boolean m() { return a.equals(a) || a.equals(b); } }",
            &["a.equals(a) | A=a"],
        ),
        (
            Java,
            "try { $$$T } catch ($E $V) { $$$H }",
            "class A { void m() { try { f(); } catch (IOException e) { } } }",
            &["try { f(); } catch (IOException e) { } | T=f(); E=IOException V=e H="],
        ),
        (
            Java,
            "@Override\npublic String $M() { $$$B }",
            "class A { @Override public String toString() { return \"\"; } public String name() { return n; } }",
            &["@Override public String toString() { return \"\"; } | M=toString B=return \"\";"],
        ),
        (
            Java,
            "throw new $E($$$A);",
            "class A { void m() { throw new IllegalStateException(\"x\"); } }",
            &["throw new IllegalStateException(\"x\"); | E=IllegalStateException A=\"x\""],
        ),
        (
            Java,
            "for ($T $X : $C) { $$$B }",
            "class A { void m() { for (String s : xs) { use(s); } } }",
            &["for (String s : xs) { use(s); } | T=String X=s C=xs B=use(s);"],
        ),
    ]);
}

#[test]
fn dart() {
    check(&[
        (
            Dart,
            "if ($X != null) $X.dispose();",
            "void m() { if (a != null) a.dispose(); if (a != null) b.dispose(); }",
            &["if (a != null) a.dispose(); | X=a"],
        ),
        (Dart, "dispose($X)", "void m() { dispose(x); other(y); }", &["dispose(x) | X=x"]),
        (
            Dart,
            "print($X)",
            "void main() { print('hi'); print('$name'); }",
            &["print('hi') | X='hi'", "print('$name') | X='$name'"],
        ),
        (Dart, "foo", "class foo { int foo = 0; } void m(foo x) { x.foo; }", &["foo", "foo", "foo", "foo"]),
        (
            Dart,
            "setState($F)",
            "class S { void m() { setState(() { a = 1; }); } }",
            &["setState(() { a = 1; }) | F=() { a = 1; }"],
        ),
        (Dart, "$A == $A", "void m() { a == a; a == b; }", &["a == a | A=a"]),
    ]);
}

#[test]
fn bash() {
    check(&[
        (
            Bash,
            "echo $X",
            "echo hello\necho \"a b\"\nprintf x\n",
            &["echo hello | X=hello", "echo \"a b\" | X=\"a b\""],
        ),
        (Bash, "rm -rf $X", "rm -rf /tmp/x\nrm -f y\n", &["rm -rf /tmp/x | X=/tmp/x"]),
        (Bash, "curl $$$A", "curl -s https://x | sh\ncurl\n", &["curl -s https://x | A=-s https://x", "curl | A="]),
        (
            Bash,
            "if [ $C ]; then\n  $$$B\nfi",
            "if [ -f a ]; then\n  echo yes\nfi\n",
            &["if [ -f a ]; then\n  echo yes\nfi | C=-f a B=echo yes"],
        ),
        (Bash, "echo", "echo a\n# echo b\nx='echo c'\n", &["echo"]),
    ]);
}

#[test]
fn json() {
    check(&[
        (Json, r#"{"name": $X}"#, r#"[{"name": 1}, {"name": "x", "b": 2}]"#, &["{\"name\": 1} | X=1"]),
        (
            Json,
            r#"{"name": $N, $$$REST}"#,
            r#"[{"name": 1}, {"name": "x", "b": 2}]"#,
            &["{\"name\": 1} | N=1 REST=", "{\"name\": \"x\", \"b\": 2} | N=\"x\" REST=\"b\": 2"],
        ),
        (
            Json,
            r#""version": $V"#,
            r#"{"version": "1.0", "dependencies": {"a": {"version": "2"}}}"#,
            &["\"version\": \"1.0\" | V=\"1.0\"", "\"version\": \"2\" | V=\"2\""],
        ),
        (Json, "[$$$A]", "[1, [2, 3]]", &["[1, [2, 3]] | A=1, [2, 3]", "[2, 3] | A=2, 3"]),
        (Json, "true", r#"{"a": true, "b": "true"}"#, &["true"]),
    ]);
}

/// Backtracking, repeated captures, wildcards and layout, across languages.
#[test]
fn metavariable_semantics() {
    check(&[
        (
            Python,
            "f($$$A, 0, $$$B)",
            "f(1, 0, 2)\nf(0)\nf(1, 2)\nf(0, 0)\n",
            // The earliest end of `$$$A` that lets the rest match wins.
            &["f(1, 0, 2) | A=1 B=2", "f(0) | A= B=", "f(0, 0) | A= B=0"],
        ),
        (
            Python,
            "f($$$A) + g($$$A)",
            "f(1, 2) + g(1, 2)\nf(1) + g(2)\nf() + g()\n",
            &["f(1, 2) + g(1, 2) | A=1, 2", "f() + g() | A="],
        ),
        (Python, "f($_, $_)", "f(1, 2)\nf(1)\n", &["f(1, 2)"]),
        (Python, "f($X, $X)", "f(a.b, a . b)\nf(a, b)\n", &["f(a.b, a . b) | X=a.b"]),
        (Python, "f($X, $X)", "f(g(1), g(1))\nf(g(1), g(2))\n", &["f(g(1), g(1)) | X=g(1)"]),
        (Python, "f($X, $X)", "f(a  # one\n  , a)\n", &["f(a  # one\n  , a) | X=a"]),
        (Python, "f(\n    $X,\n)", "f(1)\nf(2,)\n", &["f(2,) | X=2"]),
        (
            Rust,
            "f($$$A, $B, $C)",
            "fn m() { f(1, 2, 3, 4); f(1, 2); f(1); }",
            &["f(1, 2, 3, 4) | A=1, 2 B=3 C=4", "f(1, 2) | A= B=1 C=2"],
        ),
        (
            Rust,
            "Some($X)",
            "fn m() { Some(\n    1,\n); Some(2); Some(3, 4); }",
            &["Some(\n    1,\n) | X=1", "Some(2) | X=2"],
        ),
        (Rust, "vec![$$$]", "fn m() { let v = vec![1, 2]; let w = vec![]; }", &["vec![1, 2]", "vec![]"]),
        (Rust, "$X.clone().clone()", "fn m() { a.clone().clone(); a.clone(); }", &["a.clone().clone() | X=a"]),
        (
            Rust,
            "if let Some($X) = $Y { $$$B }",
            "fn m() { if let Some(v) = o { use_it(v); } }",
            &["if let Some(v) = o { use_it(v); } | X=v Y=o B=use_it(v);"],
        ),
        (Rust, "$A + $B", "fn m() { 1 + 2 + 3; }", &["1 + 2 + 3 | A=1 + 2 B=3", "1 + 2 | A=1 B=2"]),
        (
            Rust,
            "struct $S { $$$F }",
            "struct P { x: i32, y: i32 }\nstruct U;",
            &["struct P { x: i32, y: i32 } | S=P F=x: i32, y: i32"],
        ),
        (Rust, "\"foo\"", "fn m() { let a = \"foo\"; let b = \"foo bar\"; }", &["\"foo\""]),
        (
            JavaScript,
            "f($$$A, last)",
            "f(1, 2, last); f(last); f(last, 1);",
            &["f(1, 2, last) | A=1, 2", "f(last) | A="],
        ),
        (JavaScript, "$X && $X.$Y", "a && a.b; a && c.b;", &["a && a.b | X=a Y=b"]),
        (JavaScript, "f(/* any */ $X)", "f(1); f(  2  );", &["f(1) | X=1", "f(  2  ) | X=2"]),
        (
            JavaScript,
            "import $X from 'react'",
            "import React from 'react';\nimport { a } from 'react';",
            &["import React from 'react' | X=React", "import { a } from 'react' | X={ a }"],
        ),
        (
            JavaScript,
            "import $X from $M",
            "import React from 'react';\nimport 'side-effect';",
            &["import React from 'react' | X=React M='react'"],
        ),
        (Go, "import $P", "package p\nimport \"fmt\"\n", &["import \"fmt\" | P=\"fmt\""]),
        (
            TypeScript,
            "function $F($$$P): $R { $$$B }",
            "function f(a: number): string { return ''; }",
            &["function f(a: number): string { return ''; } | F=f P=a: number R=string B=return '';"],
        ),
        (
            Go,
            "$X.Lock()\ndefer $X.Unlock()",
            "package p\nfunc f() {\n\tm.Lock()\n\tdefer m.Unlock()\n\tn.Lock()\n\tdefer m.Unlock()\n}",
            &["m.Lock()\n\tdefer m.Unlock() | X=m"],
        ),
        (
            Go,
            "if $E != nil { $$$ }",
            "package p\nfunc f() { if err != nil { return err }; if x == nil {} }",
            &["if err != nil { return err } | E=err"],
        ),
        (
            C,
            "$T $X = malloc($N);",
            "void f() { char *p = malloc(4); int *q = calloc(1, 4); }",
            &["char *p = malloc(4); | T=char X=*p N=4"],
        ),
        (C, "$X = malloc($N);", "void f() { p = malloc(4); }", &["p = malloc(4); | X=p N=4"]),
        (
            Java,
            "$X.get($I)",
            "class A { void m() { list.get(0); map.get(k).get(1); } }",
            &["list.get(0) | X=list I=0", "map.get(k).get(1) | X=map.get(k) I=1", "map.get(k) | X=map I=k"],
        ),
        (
            Java,
            "String $X = $V;",
            "class A { void m() { String s = \"a\"; int n = 1; } }",
            &["String s = \"a\"; | X=s V=\"a\""],
        ),
        (
            Dart,
            "Text($X)",
            "class A { Widget build(BuildContext context) { return Text('a'); } }",
            &["Text('a') | X='a'"],
        ),
        (Dart, "final $X = $V;", "void m() { final a = 1; var b = 2; }", &["final a = 1; | X=a V=1"]),
        (Bash, "export $X", "export PATH\nexport A=1\n", &["export PATH | X=PATH", "export A=1 | X=A=1"]),
        (Tsx, "<$C>$$$K</$C>", "const a = <A><b/></A>; const c = <A></B>;", &["<A><b/></A> | C=A K=<b/>"]),
        (
            Cpp,
            "std::move($X)",
            "void f() { auto b = std::move(a); auto c = std::forward<T>(d); }",
            &["std::move(a) | X=a"],
        ),
        (Json, "{}", "{\"a\": {}, \"b\": {\"c\": 1}}", &["{}"]),
    ]);
}

/// A `$$$` run followed by `;` among statements, a `$$$` run of decorators, and a
/// fragment that only Go's parse of it alone recovers.
#[test]
fn runs_of_statements_decorators_and_bare_literals() {
    check(&[
        (
            JavaScript,
            "function $F() { $$$PRE; if ($C) { $$$B } }",
            "function main() { a(); b(); if (x) { c(); } }\nfunction g() { if (y) { d(); } }\nfunction h() { a(); }",
            &[
                "function main() { a(); b(); if (x) { c(); } } | F=main PRE=a(); b(); C=x B=c();",
                "function g() { if (y) { d(); } } | F=g PRE= C=y B=d();",
            ],
        ),
        (
            TypeScript,
            "function $F() { $$$PRE; return $R; }",
            "function f() { a(); let b = 1; return b; }",
            &["function f() { a(); let b = 1; return b; } | F=f PRE=a(); let b = 1; R=b"],
        ),
        (
            C,
            "void $F(void) { $$$A; return; }",
            "void f(void) { a(); b = 2; return; }",
            &["void f(void) { a(); b = 2; return; } | F=f A=a(); b = 2;"],
        ),
        (
            Rust,
            "fn $F() { $$$A; $B }",
            "fn f() { a(); let b = 1; b }",
            &["fn f() { a(); let b = 1; b } | F=f A=a(); let b = 1; B=b"],
        ),
        (
            TypeScript,
            "@$$$DECOS\nexport class $C {}",
            "@A()\n@B()\nexport class Foo {}\n@C\nexport class Bar {}\nexport class Baz {}\n",
            &["@A()\n@B()\nexport class Foo {} | DECOS=A()\n@B() C=Foo", "@C\nexport class Bar {} | DECOS=C C=Bar"],
        ),
        (
            TypeScript,
            "@$$$D class $C { $$$B }",
            "@Component({})\n@Injectable()\nclass A { x = 1 }\nclass C {}\n",
            &["@Component({})\n@Injectable()\nclass A { x = 1 } | D=Component({})\n@Injectable() C=A B=x = 1"],
        ),
        (
            Python,
            "@$$$D\ndef $F():\n    $$$B",
            "@a\n@b(1)\ndef f():\n    pass\n\ndef g():\n    pass\n",
            &["@a\n@b(1)\ndef f():\n    pass | D=a\n@b(1) F=f B=pass"],
        ),
        (Go, "'123'", "'123'", &["'123'"]),
    ]);
}
