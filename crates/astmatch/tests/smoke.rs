use astmatch::{Lang, Pattern, search_source};

fn show(lang: Lang, pat: &str, src: &str) -> Vec<String> {
    let p = Pattern::compile(pat, lang).unwrap();
    search_source(&p, src)
        .iter()
        .map(|m| {
            let caps: Vec<String> = m.captures.iter().map(|c| format!("{}={}", c.name, &src[c.range.clone()])).collect();
            format!("{} [{}] ({})", &src[m.range.clone()], caps.join(" "), p.context())
        })
        .collect()
}

#[test]
fn smoke() {
    eprintln!("{:?}", show(Lang::Python, "foo($X)", "a = foo(1)\nfoo(bar)\n# foo(c)\ns = 'foo(d)'\nf'{foo(e)}'\n"));
    eprintln!("{:?}", show(Lang::Rust, "f($$$A, $LAST)", "fn main() { f(1, 2, 3); f(1); f(); }"));
    eprintln!("{:?}", show(Lang::Dart, "if ($X != null) $X.dispose();", "void m() { if (a != null) a.dispose(); if (a != null) b.dispose(); }"));
    eprintln!("{:?}", show(Lang::Dart, "dispose(x)", "void m() { dispose(x); }"));
    eprintln!("{:?}", show(Lang::JavaScript, "foo", "let foo = 1; obj.foo(); class foo {}; `${foo}`"));
    eprintln!("{:?}", show(Lang::Python, "a = 1\nb = 2", "a = 1\nb = 2\nc = 3\na = 1\nb = 2\n"));
    eprintln!("{:?}", show(Lang::Json, r#"{"name": $X}"#, r#"[{"name": 1}, {"name": "x", "b": 2}]"#));
    eprintln!("{:?}", show(Lang::Go, "fmt.Println($$$A)", "package main\nfunc main() { fmt.Println(\"a\", b) }"));
}
