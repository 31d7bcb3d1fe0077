//! Diagnostics on write cover the files a write broke: a signature change
//! that breaks callers in other files is reported by each real language
//! server, in the write's own result (`other_files`), or the result says the
//! server cannot tell (pylsp, ruff). On the fixture projects of
//! `fixtures/lsp/` and on real code nobody here wrote (Go's `encoding/json`,
//! the `dissimilar` crate, Python's `json` package, tree-sitter's C runtime),
//! each copied to a temporary directory first. A server missing here fails
//! the test under `CI=true` (`cargo xtask setup` installs them all) and skips
//! it otherwise; real code missing from the machine is skipped the same way.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_tools::{DiagnosticsOnWrite, LspWiring, Registry, Surface, Tier, ToolResult, Workspace};
use lsp_supervisor::{Language, Supervisor, SupervisorConfig};
use serde_json::{Value, json};

/// One test at a time: several real servers at once on a small machine would
/// make each wait longer than the tests need to show anything.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn copy_dir(from: &Path, to: &Path, keep: &dyn Fn(&Path) -> bool) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == "node_modules" || name == ".cache" || name == "__pycache__" || !keep(&path) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&path, &to.join(&name), keep);
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}

/// A fixture project (`fixtures/lsp/<rel>`) in a new temporary directory.
fn fixture(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&workspace_root().join("fixtures/lsp").join(rel), dir.path(), &|_| true);
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// Skips (or, under `CI=true`, fails) for want of `what`.
fn missing(what: &str) {
    let message = format!("{what}; run `cargo xtask setup`");
    assert!(std::env::var_os("CI").is_none(), "{message}");
    eprintln!("skipped: {message}");
}

/// A write surface over `root` whose `write`/`edit` have diagnostics on
/// write, with `server` chosen for `language`; `None` when it is not usable here.
async fn surface(root: &Path, language: Language, server: &str) -> Option<(Surface, Arc<Supervisor>)> {
    let tools = workspace_root().join(".tools");
    let mut config = SupervisorConfig::new(root);
    config.extra_path = vec![tools.join("node/node_modules/.bin"), tools.join("venv/bin")];
    config.preferred.insert(language, server.to_string());
    config.request_timeout = Duration::from_secs(60);
    config.diagnostics_timeout = Duration::from_secs(60);
    let supervisor = Arc::new(Supervisor::new(config));
    let availability = supervisor.availability(root).await;
    let entry = availability.iter().find(|a| a.language == language && a.server == server).unwrap();
    if let Err(why) = &entry.binary {
        missing(&format!("{server} is not usable here: {why}"));
        return None;
    }
    let workspace = Workspace::new(root).unwrap();
    let diagnostics = Arc::new(DiagnosticsOnWrite::new(Arc::clone(&supervisor), workspace.clone()));
    let registry = Registry::builder()
        .with_lsp(LspWiring::new(Arc::clone(&supervisor), workspace.clone()))
        .with_checked_file_tools(workspace, diagnostics)
        .build()
        .unwrap();
    Some((Arc::new(registry).surface(Tier::Write), supervisor))
}

/// `edit` of one occurrence of `old` in `path` (relative to the root).
async fn edit(surface: &Surface, path: &str, old: &str, new: &str) -> ToolResult {
    let r = surface.call("edit", json!({ "path": path, "old_string": old, "new_string": new })).await.unwrap();
    assert!(!r.is_error, "{}", r.text);
    r
}

/// The one server's entry of a write's `other_files`.
fn others(r: &ToolResult) -> &Value {
    let list = r.structured.as_ref().unwrap()["other_files"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{}", r.text);
    &list[0]
}

/// `(path, new_count)` of each other file with new diagnostics.
fn broken_files(r: &ToolResult) -> Vec<(String, u64)> {
    others(r)["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f["new_count"].as_u64().unwrap()))
        .collect()
}

/// The `(severity, code)` of an other file's new diagnostics, in order.
fn new_codes(r: &ToolResult, path: &str) -> Vec<(String, String)> {
    let files = others(r)["files"].as_array().unwrap();
    let file = files.iter().find(|f| f["path"] == path).unwrap_or_else(|| panic!("{path} not in {}", r.text));
    file["new"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["severity"].as_str().unwrap().to_string(), d["code"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn status(r: &ToolResult) -> &str {
    others(r)["status"].as_str().unwrap()
}

fn errors(codes: &[(&str, &str)]) -> Vec<(String, String)> {
    codes.iter().map(|(s, c)| (s.to_string(), c.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn gopls_reports_the_callers_in_other_files_and_packages() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("go");
    let Some((surface, supervisor)) = surface(&root, Language::Go, "gopls").await else { return };
    let signature = "func TotalArea(shapes []Shape) float64 {";
    let changed = "func TotalArea(shapes []Shape, scale float64) float64 {";
    let r = edit(&surface, "shapes/shapes.go", signature, changed).await;
    // Another package's two files; `broken/broken.go`'s unused import was there before.
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["way"], "published");
    assert_eq!(broken_files(&r), [("main.go".to_string(), 2), ("report.go".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "main.go"), errors(&[("error", "WrongArgCount"), ("error", "WrongArgCount")]));
    assert!(
        r.text.contains("new diagnostics in 2 other files (gopls): main.go (2), report.go (1):\nmain.go:14:"),
        "{}",
        r.text
    );
    assert!(r.text.contains("not enough arguments in call to shapes.TotalArea"), "{}", r.text);
    assert!(!r.text.contains("broken.go"), "{}", r.text);
    // Put back: the callers compile again.
    let r = edit(&surface, "shapes/shapes.go", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    assert!(r.text.ends_with("no new diagnostics in other files (gopls); 3 earlier diagnostics gone"), "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gopls_on_encoding_json() {
    let _serial = SERIAL.lock().await;
    let source = Path::new("/usr/lib/go-1.19/src/encoding/json");
    if !source.is_dir() {
        missing(&format!("{} is not on this machine", source.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let test_or_fuzz = |p: &Path| {
        let name = p.file_name().unwrap().to_string_lossy();
        !(name.ends_with("_test.go") || name == "fuzz.go" || name == "testdata")
    };
    copy_dir(source, dir.path(), &test_or_fuzz);
    std::fs::write(dir.path().join("go.mod"), "module example.com/json\n\ngo 1.19\n").unwrap();
    let root = dir.path().canonicalize().unwrap();
    let Some((surface, supervisor)) = surface(&root, Language::Go, "gopls").await else { return };
    let r = edit(
        &surface,
        "scanner.go",
        "func stateEndValue(s *scanner, c byte) int {",
        "func stateEndValue(s *scanner, c byte, strict bool) int {",
    )
    .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(broken_files(&r), [("decode.go".to_string(), 1), ("stream.go".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "stream.go"), errors(&[("error", "WrongArgCount")]));
    supervisor.shutdown().await;
}

/// A Cargo workspace of two crates: `a` (`lib.rs` calls nothing, `other.rs`
/// calls `add_one`) and `b`, which calls `a::twice` and has a warning of its own.
fn cargo_workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let files = [
        ("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n"),
        ("a/Cargo.toml", "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        (
            "b/Cargo.toml",
            "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\na = { path = \"../a\" }\n",
        ),
        (
            "a/src/lib.rs",
            "mod other;\npub use other::twice;\n\n/// Adds one.\npub fn add_one(x: i32) -> i32 {\n    x + 1\n}\n",
        ),
        (
            "a/src/other.rs",
            "/// Twice `x`.\npub fn twice(x: i32) -> i32 {\n    crate::add_one(x) + crate::add_one(x) - 2\n}\n",
        ),
        ("b/src/main.rs", "fn main() {\n    let unused = 3;\n    println!(\"{}\", a::twice(2));\n}\n"),
    ];
    for (rel, text) in files {
        std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
        std::fs::write(root.join(rel), text).unwrap();
    }
    (dir, root)
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_reports_callers_in_other_files_and_other_crates() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = cargo_workspace();
    let Some((surface, supervisor)) = surface(&root, Language::Rust, "rust-analyzer").await else { return };
    // A caller in another crate of the workspace, through a re-export (`b` calls
    // `a::twice`, which `a/src/lib.rs` re-exports with `pub use other::twice`): `a`
    // still compiles, `b` does not. rust-analyzer publishes it; no importer scan is needed.
    let r = edit(&surface, "a/src/other.rs", "pub fn twice(x: i32) -> i32 {", "pub fn twice(x: i32, _y: i32) -> i32 {")
        .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["way"], "published");
    let files = broken_files(&r);
    assert_eq!(files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["b/src/main.rs"], "{}", r.text);
    let codes = new_codes(&r, "b/src/main.rs");
    assert_eq!(codes[0], ("error".to_string(), "E0061".to_string()), "{}", r.text);
    assert!(codes.iter().all(|c| c.1 == "E0061"), "`unused` was there before: {}", r.text);
    assert!(r.text.contains("this function takes 2 arguments but 1 argument was supplied"), "{}", r.text);
    let r = edit(&surface, "a/src/other.rs", "pub fn twice(x: i32, _y: i32) -> i32 {", "pub fn twice(x: i32) -> i32 {")
        .await;
    // The errors are gone. rustc runs lints only on a crate without errors, so
    // `b`'s unused variable, hidden while it had one, is back: it left the
    // ledger when it disappeared, so it counts as new again.
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["fixed"].as_u64(), Some(3), "{}", r.text);
    assert_eq!(
        new_codes(&r, "b/src/main.rs"),
        errors(&[("warning", "unused_variables"), ("hint", "unused_variables")]),
        "{}",
        r.text
    );
    // A caller in another file of the same crate.
    let r =
        edit(&surface, "a/src/lib.rs", "pub fn add_one(x: i32) -> i32 {", "pub fn add_one(x: i32, _y: i32) -> i32 {")
            .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    let files = broken_files(&r);
    assert_eq!(files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["a/src/other.rs"], "{}", r.text);
    // Two calls, each with `cargo check`'s error and its two hints, and (the
    // file is open, written before) rust-analyzer's own error.
    let call = [("error", "E0061"), ("hint", "E0061"), ("hint", "E0061"), ("error", "E0107")];
    assert_eq!(new_codes(&r, "a/src/other.rs"), errors(&[call, call].concat()), "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_on_the_dissimilar_crate() {
    let _serial = SERIAL.lock().await;
    let Some(source) = registry_crate("dissimilar-") else {
        missing("no `dissimilar` crate in the cargo registry");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    copy_dir(&source.join("src"), &root.join("src"), &|_| true);
    // Its own manifest names dev-dependencies that are not here; the library needs none.
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"dissimilar\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    let Some((surface, supervisor)) = surface(&root, Language::Rust, "rust-analyzer").await else { return };
    let r = edit(
        &surface,
        "src/find.rs",
        "pub fn find(haystack: &[char], needle: &[char]) -> Option<usize> {",
        "pub fn find(haystack: &[char], needle: &[char], _from: usize) -> Option<usize> {",
    )
    .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    let files = broken_files(&r);
    assert_eq!(files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["src/range.rs"], "{}", r.text);
    assert_eq!(new_codes(&r, "src/range.rs")[0], ("error".to_string(), "E0061".to_string()), "{}", r.text);
    supervisor.shutdown().await;
}

/// The newest `<prefix><version>` directory in the cargo registry's sources.
fn registry_crate(prefix: &str) -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))?;
    let mut found: Vec<PathBuf> = std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .flat_map(|index| std::fs::read_dir(index.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix)))
        .collect();
    found.sort();
    found.pop()
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_reports_the_importers_a_signature_change_breaks() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("python");
    let Some((surface, supervisor)) = surface(&root, Language::Python, "pyright").await else { return };
    let signature = "def total_area(circles: list[Circle]) -> float:";
    let changed = "def total_area(circles: list[Circle], scale: float) -> float:";
    let r = edit(&surface, "geometry/shapes.py", signature, changed).await;
    // Both importers were read; `broken.py`'s type error was there before.
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!((others(&r)["way"].as_str(), others(&r)["importers"].as_u64()), (Some("importers"), Some(2)));
    assert_eq!(broken_files(&r), [("geometry/report.py".to_string(), 2)], "{}", r.text);
    assert_eq!(
        new_codes(&r, "geometry/report.py"),
        errors(&[("error", "reportCallIssue"), ("error", "reportCallIssue")])
    );
    assert!(
        r.text.contains(
            "new diagnostics in 1 other file (pyright; 2 files import geometry/shapes.py): geometry/report.py (2):\n\
             geometry/report.py:9:"
        ),
        "{}",
        r.text
    );
    let r = edit(&surface, "geometry/shapes.py", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    assert!(
        r.text.ends_with(
            "no new diagnostics in other files (pyright; 2 files import geometry/shapes.py); 2 earlier diagnostics gone"
        ),
        "{}",
        r.text
    );
    // A patch that deletes the module: what imported it says so.
    let patch = "*** Begin Patch\n*** Delete File: geometry/shapes.py\n*** End Patch\n";
    let r = surface.call("apply_patch", json!({ "patch": patch })).await.unwrap();
    assert!(!r.is_error, "{}", r.text);
    assert_eq!(status(&r), "new", "{}", r.text);
    let files: Vec<String> = broken_files(&r).into_iter().map(|f| f.0).collect();
    assert_eq!(files, ["geometry/broken.py", "geometry/report.py"], "{}", r.text);
    assert!(new_codes(&r, "geometry/report.py").iter().all(|c| c.0 == "error"), "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_reports_an_importer_that_imports_through_a_reexport() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("python-reexport");
    let Some((surface, supervisor)) = surface(&root, Language::Python, "pyright").await else { return };
    let signature = "def area(width: float, height: float) -> float:";
    let changed = "def area(width: float, height: float, depth: float) -> float:";
    // `app.py` imports `area` from `pkg`, whose `__init__.py` imports it from `pkg.core`.
    let r = edit(&surface, "pkg/core.py", signature, changed).await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["importers"].as_u64(), Some(2), "{}", r.text);
    assert_eq!(broken_files(&r), [("app.py".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "app.py"), errors(&[("error", "reportCallIssue")]));
    assert!(r.text.contains("app.py:5:"), "{}", r.text);
    let r = edit(&surface, "pkg/core.py", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_on_the_json_package() {
    let _serial = SERIAL.lock().await;
    let source = Path::new("/usr/lib/python3.11/json");
    if !source.is_dir() {
        missing(&format!("{} is not on this machine", source.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    copy_dir(source, &root.join("json"), &|_| true);
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"json-copy\"\nversion = \"0\"\n").unwrap();
    let Some((surface, supervisor)) = surface(&root, Language::Python, "pyright").await else { return };
    let r = edit(
        &surface,
        "json/decoder.py",
        "def __init__(self, *, object_hook=None, parse_float=None,",
        "def __init__(self, *, mode, object_hook=None, parse_float=None,",
    )
    .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(broken_files(&r), [("json/__init__.py".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "json/__init__.py"), errors(&[("error", "reportCallIssue")]));
    assert!(r.text.contains("json/__init__.py:241:"), "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_reports_the_importers_a_signature_change_breaks() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("typescript");
    let Some((surface, supervisor)) = surface(&root, Language::TypeScript, "typescript-language-server").await else {
        return;
    };
    let signature = "export function totalArea(shapes: Shape[]): number {";
    let changed = "export function totalArea(shapes: Shape[], scale: number): number {";
    let r = edit(&surface, "src/shapes.ts", signature, changed).await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["importers"].as_u64(), Some(1), "{}", r.text);
    assert_eq!(broken_files(&r), [("src/main.ts".to_string(), 2)], "{}", r.text);
    assert_eq!(new_codes(&r, "src/main.ts"), errors(&[("error", "2554"), ("error", "2554")]));
    assert!(r.text.contains("src/main.ts:12:"), "{}", r.text);
    assert!(r.text.contains("Expected 2 arguments, but got 1."), "{}", r.text);
    let r = edit(&surface, "src/shapes.ts", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_reports_an_importer_that_imports_through_a_barrel() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("typescript-reexport");
    let Some((surface, supervisor)) = surface(&root, Language::TypeScript, "typescript-language-server").await else {
        return;
    };
    let signature = "export function area(width: number, height: number): number {";
    let changed = "export function area(width: number, height: number, depth: number): number {";
    // `src/main.ts` imports `area` from `./lib`, whose `index.ts` has `export * from "./core"`.
    let r = edit(&surface, "src/lib/core.ts", signature, changed).await;
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["importers"].as_u64(), Some(2), "{}", r.text);
    assert_eq!(broken_files(&r), [("src/main.ts".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "src/main.ts"), errors(&[("error", "2554")]));
    assert!(r.text.contains("src/main.ts:4:"), "{}", r.text);
    let r = edit(&surface, "src/lib/core.ts", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn clangd_reports_the_files_that_include_a_changed_header() {
    let _serial = SERIAL.lock().await;
    let (_dir, root) = fixture("c");
    let Some((surface, supervisor)) = surface(&root, Language::C, "clangd").await else { return };
    let signature = "double total_area(const struct square *squares, int n);";
    let changed = "double total_area(const struct square *squares, int n, double scale);";
    let r = edit(&surface, "shapes.h", signature, changed).await;
    // `broken.c`'s missing semicolon was there before.
    assert_eq!(status(&r), "new", "{}", r.text);
    assert_eq!(others(&r)["importers"].as_u64(), Some(3), "{}", r.text);
    assert_eq!(broken_files(&r), [("main.c".to_string(), 1), ("shapes.c".to_string(), 1)], "{}", r.text);
    assert_eq!(new_codes(&r, "main.c"), errors(&[("error", "typecheck_call_too_few_args")]));
    assert_eq!(new_codes(&r, "shapes.c"), errors(&[("error", "conflicting_types")]));
    assert!(
        r.text
            .contains("new diagnostics in 2 other files (clangd; 3 files include shapes.h): main.c (1), shapes.c (1):"),
        "{}",
        r.text
    );
    let r = edit(&surface, "shapes.h", changed, signature).await;
    assert_eq!(status(&r), "no new", "{}", r.text);
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn clangd_on_the_tree_sitter_runtime() {
    let _serial = SERIAL.lock().await;
    let Some(source) = registry_crate("tree-sitter-0.") else {
        missing("no `tree-sitter` crate in the cargo registry");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    copy_dir(&source.join("include"), &root.join("include"), &|_| true);
    copy_dir(&source.join("src"), &root.join("src"), &|p| {
        p.file_name().is_some_and(|n| n != "wasm-stdlib" && n != "wasm") && !p.to_string_lossy().ends_with(".rs")
    });
    std::fs::write(root.join("compile_flags.txt"), "-std=c11\n-Iinclude\n-Isrc\n").unwrap();
    let Some((surface, supervisor)) = surface(&root, Language::C, "clangd").await else { return };
    let r = edit(
        &surface,
        "src/get_changed_ranges.h",
        "  TSRangeArray *differences\n);",
        "  TSRangeArray *differences,\n  bool strict\n);",
    )
    .await;
    assert_eq!(status(&r), "new", "{}", r.text);
    // The three files that include it, and the amalgamation that includes them.
    assert_eq!(others(&r)["importers"].as_u64(), Some(4), "{}", r.text);
    let files: Vec<String> = broken_files(&r).into_iter().map(|f| f.0).collect();
    assert_eq!(files, ["src/get_changed_ranges.c", "src/lib.c", "src/parser.c", "src/tree.c"], "{}", r.text);
    assert_eq!(new_codes(&r, "src/tree.c")[0], ("error".to_string(), "typecheck_call_too_few_args".to_string()));
    supervisor.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pylsp_and_ruff_say_they_cannot_tell() {
    let _serial = SERIAL.lock().await;
    for server in ["pylsp", "ruff"] {
        let (_dir, root) = fixture("python");
        let Some((surface, supervisor)) = surface(&root, Language::Python, server).await else { continue };
        let r = edit(
            &surface,
            "geometry/shapes.py",
            "def total_area(circles: list[Circle]) -> float:",
            "def total_area(circles: list[Circle], scale: float) -> float:",
        )
        .await;
        assert_eq!(
            (others(&r)["status"].as_str(), others(&r)["way"].as_str()),
            (Some("not checked"), Some("written_only"))
        );
        assert!(
            r.text.ends_with(&format!("other files not checked: {server} reports only the written file")),
            "{}",
            r.text
        );
        supervisor.shutdown().await;
    }
}
