//! The servers' view is the disk's view, and a rename is complete, refused,
//! or says what it left — with the real servers, on projects made in a
//! temporary directory:
//! - rename, then revert the files behind the server's back (as `git checkout .`
//!   does), then rename again: the second rename reaches every use (pyright, gopls);
//! - uses in files the server's configuration leaves out are listed, not renamed
//!   (pyright `include`, a `tsconfig.json` that includes only `source/`);
//! - a typescript rename keeps shorthand property and destructuring keys, and a
//!   rename asked at an imported use renames the declaration.
//!
//! A server missing here fails the test under `CI=true` and skips it otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use lsp_supervisor::{Language, RenameOutcome, Supervisor};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// `rel/path` of every file a rename changed.
fn changed(root: &Path, outcome: &RenameOutcome) -> Vec<String> {
    outcome.files.iter().map(|f| f.path.strip_prefix(root).unwrap().display().to_string()).collect()
}

/// Renames, reverts the files on disk behind the server's back, renames again:
/// the second rename must change the same files with the same number of edits.
async fn rename_twice_across_a_checkout(
    sup: &Supervisor,
    root: &Path,
    files: &[(&str, &str)],
    (file, line, symbol, new_name): (&str, u32, &str, &str),
) -> (RenameOutcome, RenameOutcome) {
    let first = sup.rename(&root.join(file), line, symbol, new_name).await.unwrap();
    for (rel, _) in files {
        assert!(!read(root, rel).contains(&format!("{symbol}(")), "{rel} still calls {symbol} after the first rename");
    }
    // `git checkout .`: every file back as it was, written by someone else.
    for (rel, text) in files {
        write(root, rel, text);
    }
    let second = sup.rename(&root.join(file), line, symbol, new_name).await.unwrap();
    for (rel, _) in files {
        assert!(
            !read(root, rel).contains(&format!("{symbol}(")),
            "{rel} still calls {symbol} after the second rename: a partial rename"
        );
    }
    (first, second)
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_renames_completely_after_the_files_were_reverted_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let files = [
        ("pyproject.toml", "[project]\nname = \"pkg\"\nversion = \"0\"\n"),
        ("pkg/__init__.py", ""),
        (
            "pkg/utils.py",
            "def to_key(value):\n    return str(value)\n\n\ndef keys(items):\n    return [to_key(i) for i in items]\n",
        ),
        (
            "pkg/models.py",
            "from pkg.utils import to_key\n\n\nclass Model:\n    def key(self):\n        return to_key(self)\n",
        ),
        ("pkg/api.py", "from pkg import utils\n\n\ndef handle(x):\n    return utils.to_key(x) + utils.to_key(x)\n"),
    ];
    for (rel, text) in files {
        write(&root, rel, text);
    }
    let Some(sup) = common::supervisor(&root, Language::Python, "pyright").await else { return };
    let (first, second) =
        rename_twice_across_a_checkout(&sup, &root, &files, ("pkg/utils.py", 1, "to_key", "as_key")).await;
    assert_eq!(changed(&root, &first), ["pkg/api.py", "pkg/models.py", "pkg/utils.py"]);
    assert_eq!(first.edits, 6);
    assert_eq!(changed(&root, &second), changed(&root, &first));
    assert_eq!(second.edits, first.edits);
    let nav = sup.references(&root.join("pkg/utils.py"), 1, "as_key", 50).await.unwrap();
    assert_eq!(nav.locations.total, 6, "references see every file as it is on disk");
}

#[tokio::test(flavor = "multi_thread")]
async fn gopls_renames_completely_after_the_files_were_reverted_behind_its_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let files = [
        ("go.mod", "module example.com/m\n\ngo 1.19\n"),
        ("util.go", "package m\n\n// Double doubles.\nfunc Double(x int) int { return 2 * x }\n"),
        ("a.go", "package m\n\nfunc A() int { return Double(1) + Double(2) }\n"),
        ("sub/b.go", "package sub\n\nimport \"example.com/m\"\n\nfunc B() int { return m.Double(3) }\n"),
    ];
    for (rel, text) in files {
        write(&root, rel, text);
    }
    let Some(sup) = common::supervisor(&root, Language::Go, "gopls").await else { return };
    let (first, second) = rename_twice_across_a_checkout(&sup, &root, &files, ("util.go", 4, "Double", "Twice")).await;
    assert_eq!(changed(&root, &first), ["a.go", "sub/b.go", "util.go"]);
    assert_eq!(first.edits, 5, "the declaration, its doc comment is not code, 3 calls: {first:?}");
    assert_eq!(changed(&root, &second), changed(&root, &first));
    assert_eq!(second.edits, first.edits);
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_lists_the_uses_its_configuration_leaves_out_and_does_not_rename_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(
        &root,
        "pyproject.toml",
        "[project]\nname = \"pkg\"\nversion = \"0\"\n\n[tool.pyright]\ninclude = [\"pkg\"]\n",
    );
    write(&root, "pkg/__init__.py", "");
    write(&root, "pkg/utils.py", "def to_key_val_list(value):\n    return list(value)\n");
    write(&root, "pkg/core.py", "from pkg.utils import to_key_val_list\n\nITEMS = to_key_val_list({})\n");
    let test = "from pkg.utils import to_key_val_list\n\n\ndef test_it():\n    assert to_key_val_list([]) == []\n    # to_key_val_list is checked above\n";
    write(&root, "tests/test_utils.py", test);
    let Some(sup) = common::supervisor(&root, Language::Python, "pyright").await else { return };
    let outcome = sup.rename(&root.join("pkg/utils.py"), 1, "to_key_val_list", "pairs").await.unwrap();
    assert_eq!(changed(&root, &outcome), ["pkg/core.py", "pkg/utils.py"]);
    let places: Vec<(String, u32)> = outcome
        .not_covered
        .iter()
        .map(|l| (l.location.path.strip_prefix(&root).unwrap().display().to_string(), l.location.line))
        .collect();
    assert_eq!(places, [("tests/test_utils.py".to_string(), 1), ("tests/test_utils.py".to_string(), 5)]);
    let why = outcome.not_covered[0].excluded.clone().unwrap();
    assert!(why.contains("includes only pkg"), "{why}");
    let comment: Vec<u32> = outcome.unresolved.iter().map(|l| l.location.line).collect();
    assert_eq!(comment, [6], "the mention in a comment is listed as unresolved");
    assert_eq!(read(&root, "tests/test_utils.py"), test, "files outside the configuration are not renamed");
    // References say so too.
    let nav = sup.references(&root.join("pkg/utils.py"), 1, "pairs", 50).await.unwrap();
    assert_eq!(nav.locations.total, 3);
    let warning = nav.warning.unwrap_or_default();
    assert!(warning.starts_with("1 file under ") && warning.contains("not searched"), "{warning}");
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_renames_keep_keys_and_reach_the_declaration_from_an_import() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    write(&root, "package.json", "{ \"name\": \"t\", \"version\": \"1.0.0\" }\n");
    write(
        &root,
        "tsconfig.json",
        "{\n  // the sources only\n  \"compilerOptions\": { \"strict\": true },\n  \"include\": [\"source\"],\n}\n",
    );
    write(
        &root,
        "source/a.ts",
        "export const foo = 1;\nexport const o = { foo };\nexport interface S { ready: boolean }\nexport function check(s: S): boolean {\n  const { ready } = s;\n  return ready;\n}\n",
    );
    write(&root, "source/b.ts", "import { foo } from \"./a\";\nexport const total = foo + 1;\n");
    let test = "import { foo } from \"../source/a\";\nexport const t = foo;\n";
    write(&root, "test/a.test.ts", test);
    let Some(sup) = common::supervisor(&root, Language::TypeScript, "typescript-language-server").await else {
        return;
    };
    // Asked at the import's use: the declaration is renamed, not a local alias added.
    let outcome = sup.rename(&root.join("source/b.ts"), 2, "foo", "bar").await.unwrap();
    assert_eq!(changed(&root, &outcome), ["source/a.ts", "source/b.ts"]);
    assert_eq!(outcome.asked_at.as_ref().map(|l| (l.line, l.column)), Some((1, 14)));
    let a = read(&root, "source/a.ts");
    assert!(a.starts_with("export const bar = 1;\nexport const o = { foo: bar };\n"), "{a}");
    assert_eq!(read(&root, "source/b.ts"), "import { bar } from \"./a\";\nexport const total = bar + 1;\n");
    let places: Vec<(String, u32)> = outcome
        .not_covered
        .iter()
        .map(|l| (l.location.path.strip_prefix(&root).unwrap().display().to_string(), l.location.line))
        .collect();
    assert_eq!(places, [("test/a.test.ts".to_string(), 1), ("test/a.test.ts".to_string(), 2)]);
    assert_eq!(read(&root, "test/a.test.ts"), test);

    // A property renamed: destructuring keeps the local name.
    let outcome = sup.rename(&root.join("source/a.ts"), 3, "ready", "done").await.unwrap();
    assert_eq!(changed(&root, &outcome), ["source/a.ts"]);
    let a = read(&root, "source/a.ts");
    assert!(a.contains("interface S { done: boolean }") && a.contains("const { done: ready } = s;"), "{a}");
}

/// The same trap on the other servers: a local renamed where it fills a field
/// or a keyword argument keeps the field's or the keyword's name, and a field
/// renamed changes every key (rust-analyzer, pyright, gopls).
#[tokio::test(flavor = "multi_thread")]
async fn renames_keep_field_and_keyword_names_on_rust_python_and_go() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let rust = "struct S {\n    x: i32,\n}\n\nfn make() -> S {\n    let x = 1;\n    S { x }\n}\n\nfn main() {\n    let S { x } = make();\n    println!(\"{x}\");\n}\n";
    write(&root, "rs/Cargo.toml", "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n");
    write(&root, "rs/src/main.rs", rust);
    let python = "def scale(value, factor=2):\n    return value * factor\n\n\ndef use():\n    value = 3\n    return scale(value=value) + scale(value, factor=value)\n";
    write(&root, "py/pyproject.toml", "[project]\nname = \"t\"\nversion = \"0\"\n");
    write(&root, "py/m.py", python);
    let go = "package t\n\ntype T struct {\n\tx int\n}\n\nfunc Make() T {\n\tx := 1\n\treturn T{x: x}\n}\n";
    write(&root, "go/go.mod", "module t\n\ngo 1.19\n");
    write(&root, "go/t.go", go);

    if let Some(sup) = common::supervisor(&root, Language::Rust, "rust-analyzer").await {
        let main = root.join("rs/src/main.rs");
        sup.rename(&main, 6, "x", "y").await.unwrap();
        assert!(
            read(&root, "rs/src/main.rs").contains("let y = 1;\n    S { x: y }"),
            "{}",
            read(&root, "rs/src/main.rs")
        );
        write(&root, "rs/src/main.rs", rust);
        let outcome = sup.rename(&main, 2, "x", "z").await.unwrap();
        let renamed = read(&root, "rs/src/main.rs");
        assert!(renamed.contains("S { z: x }") && renamed.contains("let S { z: x } = make();"), "{renamed}");
        assert_eq!(outcome.edits, 3);
        sup.shutdown().await;
    }
    if let Some(sup) = common::supervisor(&root, Language::Python, "pyright").await {
        let m = root.join("py/m.py");
        sup.rename(&m, 6, "value", "v").await.unwrap();
        assert!(read(&root, "py/m.py").ends_with("    v = 3\n    return scale(value=v) + scale(v, factor=v)\n"));
        write(&root, "py/m.py", python);
        sup.rename(&m, 1, "value", "amount").await.unwrap();
        let renamed = read(&root, "py/m.py");
        assert!(renamed.starts_with("def scale(amount, factor=2):\n    return amount * factor\n"), "{renamed}");
        assert!(renamed.ends_with("    return scale(amount=value) + scale(value, factor=value)\n"), "{renamed}");
        sup.shutdown().await;
    }
    if let Some(sup) = common::supervisor(&root, Language::Go, "gopls").await {
        let t = root.join("go/t.go");
        sup.rename(&t, 8, "x", "y").await.unwrap();
        assert!(read(&root, "go/t.go").ends_with("\ty := 1\n\treturn T{x: y}\n}\n"));
        write(&root, "go/t.go", go);
        sup.rename(&t, 4, "x", "z").await.unwrap();
        let renamed = read(&root, "go/t.go");
        assert!(renamed.contains("\tz int\n") && renamed.ends_with("\tx := 1\n\treturn T{z: x}\n}\n"), "{renamed}");
        sup.shutdown().await;
    }
}
