//! One server per workspace, as the toolchain draws it: the root chosen for a
//! file (Cargo workspaces, `go.work`, the outermost compilation database,
//! tsconfig references, Python projects with their `.venv`), checked on small
//! layouts made here, and with the real servers: this very workspace runs one
//! rust-analyzer, a nested `CMakeLists.txt` does not split a C project (and
//! clangd's index stays out of it), a `go.work` gets one gopls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use std::path::{Path, PathBuf};

use lsp_supervisor::{Language, ServerSpec, Supervisor, choose_root};

/// A temporary directory with `files` (path, text), canonical.
fn layout(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text.replace("@ROOT@", root.to_str().unwrap())).unwrap();
    }
    (dir, root)
}

fn spec(id: &str) -> ServerSpec {
    ServerSpec::builtin().into_iter().find(|s| s.id == id).unwrap()
}

/// The root chosen for `file` by `server`'s rule, relative (`.` for the root), and why.
fn check(files: &[(&str, &str)], server: &str, file: &str, expected: Option<(&str, &str)>) {
    let (_dir, root) = layout(files);
    let got = choose_root(&spec(server), &root, &root.join(file)).map(|c| {
        let rel = c.dir.strip_prefix(&root).unwrap().display().to_string();
        (if rel.is_empty() { ".".to_string() } else { rel }, c.why)
    });
    let expected = expected.map(|(d, w)| (d.to_string(), w.to_string()));
    assert_eq!(got, expected, "{server} for {file}");
}

const MEMBER: &str = "[package]\nname = \"m\"\nversion = \"0.1.0\"\n";

#[test]
fn rust_files_get_the_cargo_workspace_that_lists_their_package() {
    let listed = "[workspace]\nmembers = [\"crates/a\", \"tools/*\"]\nexclude = [\"tools/old\"]\n";
    let files = [
        ("Cargo.toml", listed),
        ("crates/a/Cargo.toml", MEMBER),
        ("crates/a/src/lib.rs", ""),
        ("tools/gen/Cargo.toml", MEMBER),
        ("tools/gen/src/main.rs", ""),
        ("tools/old/Cargo.toml", MEMBER),
        ("tools/old/src/main.rs", ""),
        ("crates/b/Cargo.toml", MEMBER),
        ("crates/b/src/lib.rs", ""),
        ("own/Cargo.toml", "[package]\nname = \"own\"\nversion = \"0.1.0\"\n[workspace]\n"),
        ("own/src/main.rs", ""),
    ];
    check(&files, "rust-analyzer", "crates/a/src/lib.rs", Some((".", "Cargo workspace of crates/a")));
    check(&files, "rust-analyzer", "tools/gen/src/main.rs", Some((".", "Cargo workspace of tools/gen")));
    check(
        &files,
        "rust-analyzer",
        "tools/old/src/main.rs",
        Some(("tools/old", "Cargo.toml of tools/old, which the workspace at . excludes")),
    );
    check(
        &files,
        "rust-analyzer",
        "crates/b/src/lib.rs",
        Some(("crates/b", "Cargo.toml of crates/b, which the workspace at . does not list")),
    );
    check(&files, "rust-analyzer", "own/src/main.rs", Some(("own", "Cargo workspace at own (the package's own)")));
    check(&files, "rust-analyzer", "build.rs", Some((".", "Cargo workspace at .")));
    // No workspace: the package is the root.
    let single = [("Cargo.toml", MEMBER), ("src/main.rs", "")];
    check(&single, "rust-analyzer", "src/main.rs", Some((".", "Cargo.toml of . (no workspace above it)")));
}

#[test]
fn this_workspace_is_one_cargo_workspace() {
    let root = common::workspace();
    let ra = spec("rust-analyzer");
    for member in ["crates/lsp-supervisor/src/lib.rs", "crates/astmatch/src/lib.rs", "xtask/src/main.rs"] {
        let choice = choose_root(&ra, &root, &root.join(member)).unwrap();
        assert_eq!(choice.dir, root, "{member}");
    }
    // The fixture projects are projects of their own (`[workspace]` in each).
    let own = choose_root(&ra, &root, &root.join("fixtures/lsp/rust/src/main.rs")).unwrap();
    assert_eq!(own.dir, root.join("fixtures/lsp/rust"));
}

#[test]
fn go_files_get_the_go_work_that_uses_their_module() {
    let files = [
        ("go.work", "go 1.19\n\nuse (\n\t./app\n\t./lib // the library\n)\n"),
        ("app/go.mod", "module example.com/app\n\ngo 1.19\n"),
        ("app/main.go", ""),
        ("lib/go.mod", "module example.com/lib\n\ngo 1.19\n"),
        ("lib/lib.go", ""),
        ("other/go.mod", "module example.com/other\n\ngo 1.19\n"),
        ("other/x.go", ""),
    ];
    check(&files, "gopls", "app/main.go", Some((".", "go.work at . uses app")));
    check(&files, "gopls", "lib/lib.go", Some((".", "go.work at . uses lib")));
    check(&files, "gopls", "other/x.go", Some(("other", "nearest go.mod (other); the go.work at . does not use it")));
    check(&files[1..3], "gopls", "app/main.go", Some(("app", "nearest go.mod (app)")));
}

#[test]
fn c_files_get_the_outermost_compilation_database_that_lists_them() {
    let database = r#"[
        { "directory": "@ROOT@/build", "file": "../src/json.c", "command": "cc -c ../src/json.c" },
        { "directory": "@ROOT@", "file": "tests/test_json.c", "command": "cc -c tests/test_json.c" }
    ]"#;
    let files = [
        ("CMakeLists.txt", ""),
        ("compile_commands.json", database),
        ("src/json.c", ""),
        ("src/json.h", ""),
        ("tests/CMakeLists.txt", ""),
        ("tests/test_json.c", ""),
        ("tests/helpers.h", ""),
        ("fuzzing/CMakeLists.txt", ""),
        ("fuzzing/fuzz.c", ""),
    ];
    let outermost = Some((".", "outermost compile_commands.json that lists it"));
    check(&files, "clangd", "tests/test_json.c", outermost);
    check(&files, "clangd", "src/json.c", outermost);
    // A header: any listed file in its directory tree.
    check(&files, "clangd", "tests/helpers.h", outermost);
    check(&files, "clangd", "src/json.h", outermost);
    // Not listed: the nearest marker, saying so.
    check(
        &files,
        "clangd",
        "fuzzing/fuzz.c",
        Some(("fuzzing", "nearest CMakeLists.txt (fuzzing) (no compile_commands.json lists it)")),
    );
    let in_build = [("CMakeLists.txt", ""), ("build/compile_commands.json", database), ("src/json.c", "")];
    check(&in_build, "clangd", "src/json.c", Some((".", "outermost build/compile_commands.json that lists it")));
}

#[test]
fn typescript_files_get_the_tsconfig_whose_references_reach_them() {
    let files = [
        (
            "tsconfig.json",
            "{\n  // solution\n  \"files\": [],\n  \"references\": [{ \"path\": \"./packages/core\" },],\n}\n",
        ),
        ("packages/core/tsconfig.json", "{ \"references\": [{ \"path\": \"../util/tsconfig.json\" }] }"),
        ("packages/core/src/a.ts", ""),
        ("packages/util/tsconfig.json", "{}"),
        ("packages/util/b.ts", ""),
        ("packages/alone/package.json", "{}"),
        ("packages/alone/c.js", ""),
    ];
    check(
        &files,
        "typescript-language-server",
        "packages/core/src/a.ts",
        Some((".", "tsconfig.json at . references packages/core")),
    );
    // Through core's references.
    check(
        &files,
        "typescript-language-server",
        "packages/util/b.ts",
        Some((".", "tsconfig.json at . references packages/util")),
    );
    check(
        &files,
        "typescript-language-server",
        "packages/alone/c.js",
        Some(("packages/alone", "nearest package.json (packages/alone)")),
    );
}

#[test]
fn python_files_get_the_nearest_project_file_with_its_venv() {
    let files = [
        ("pyproject.toml", ""),
        ("app/x.py", ""),
        ("docs/requirements.txt", ""),
        ("docs/conf.py", ""),
        ("plugins/p/setup.py", ""),
        ("plugins/p/.venv/bin/python", ""),
        ("plugins/p/p.py", ""),
    ];
    check(&files, "pyright", "app/x.py", Some((".", "nearest pyproject.toml")));
    // A requirements.txt is not a project of its own inside one.
    check(&files, "pyright", "docs/conf.py", Some((".", "nearest pyproject.toml")));
    check(
        &files,
        "pyright",
        "plugins/p/p.py",
        Some(("plugins/p", "nearest setup.py (plugins/p), with .venv beside it")),
    );
    check(&files[2..4], "pyright", "docs/conf.py", Some(("docs", "nearest requirements.txt (docs)")));
}

/// This workspace runs one rust-analyzer: files of two member crates are
/// answered by one process for the workspace root.
#[tokio::test(flavor = "multi_thread")]
async fn this_workspace_runs_one_rust_analyzer() {
    let root = common::workspace();
    let mut config = common::config(&root);
    for spec in &mut config.servers {
        if spec.id == "rust-analyzer" {
            // No `cargo check` of the whole workspace once it has loaded, and no build
            // scripts or proc macros built first (minutes on 2 cores): the answers asked
            // for here, a plain function's definition and a file's symbols, need neither.
            spec.initialization_options = serde_json::json!({
                "checkOnSave": false,
                "cachePriming": { "enable": false },
                "cargo": { "buildScripts": { "enable": false } },
                "procMacro": { "enable": false },
            });
        }
    }
    config.watch = false;
    let sup = Supervisor::new(config);
    let entry = sup.availability(&root).await.into_iter().find(|a| a.server == "rust-analyzer").unwrap();
    if let Err(why) = &entry.binary {
        assert!(std::env::var_os("CI").is_none(), "rust-analyzer is not usable: {why}");
        eprintln!("skipped: rust-analyzer is not usable here: {why}");
        return;
    }
    assert_eq!(entry.root.as_deref().ok(), Some(root.as_path()));
    assert_eq!(entry.reason.as_deref(), Some("Cargo workspace at ."));
    let line_of = |file: &Path, needle: &str| -> u32 {
        let text = std::fs::read_to_string(file).unwrap();
        u32::try_from(text.lines().position(|l| l.contains(needle)).unwrap() + 1).unwrap()
    };
    let supervisor_rs = root.join("crates/lsp-supervisor/src/supervisor.rs");
    let nav = sup
        .definition(&supervisor_rs, line_of(&supervisor_rs, "let Some(choice) = choose_root("), "choose_root")
        .await
        .unwrap();
    assert_eq!(nav.locations.items[0].path, root.join("crates/lsp-supervisor/src/detect.rs"), "{nav:?}");
    let xtask = root.join("xtask/src/main.rs");
    let nav = sup.document_symbols(&xtask, 200).await.unwrap();
    assert!(!nav.1.items.is_empty());
    let status = sup.status().await;
    let ra: Vec<_> = status.iter().filter(|s| s.server == "rust-analyzer").collect();
    assert_eq!(ra.len(), 1, "{status:?}");
    assert_eq!(ra[0].root, root);
    assert_eq!(ra[0].root_reason, "Cargo workspace of crates/lsp-supervisor");
    assert_eq!(ra[0].first_load_timeout_ms, Some(120_000));
    sup.shutdown().await;
}

/// A nested `CMakeLists.txt` (tests/) with the compilation database at the
/// root: one clangd for the root, whose index reaches from the test file into
/// the library, and writes nothing into the project.
#[tokio::test(flavor = "multi_thread")]
async fn a_nested_cmakelists_does_not_split_a_c_project_and_clangd_leaves_no_cache() {
    let database = r#"[
        { "directory": "@ROOT@", "file": "src/area.c", "command": "cc -Iinclude -c src/area.c" },
        { "directory": "@ROOT@", "file": "tests/test_area.c", "command": "cc -Iinclude -c tests/test_area.c" }
    ]"#;
    let (_dir, root) = layout(&[
        ("CMakeLists.txt", "add_subdirectory(tests)\n"),
        ("compile_commands.json", database),
        ("include/area.h", "#ifndef AREA_H\n#define AREA_H\ndouble square_area(double side);\n#endif\n"),
        ("src/area.c", "#include \"area.h\"\n\ndouble square_area(double side) { return side * side; }\n"),
        ("tests/CMakeLists.txt", "add_executable(test_area test_area.c)\n"),
        (
            "tests/test_area.c",
            "#include \"area.h\"\n\nint main(void) {\n    return square_area(2.0) == 4.0 ? 0 : 1;\n}\n",
        ),
    ]);
    let Some(sup) = common::supervisor(&root, Language::C, "clangd").await else { return };
    let test = root.join("tests/test_area.c");
    let refs = sup.references(&test, 4, "square_area", 50).await.unwrap();
    let mut files: Vec<String> =
        refs.locations.items.iter().map(|l| l.path.strip_prefix(&root).unwrap().display().to_string()).collect();
    files.sort();
    files.dedup();
    // The library's definition is found from the test file: the index covers both.
    assert!(files.contains(&"src/area.c".to_string()), "{files:?}");
    let status = sup.status().await;
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!(
        (status[0].root.as_path(), status[0].root_reason.as_str()),
        (root.as_path(), "outermost compile_commands.json that lists it")
    );
    // A rename from the test file reaches the library and its header.
    let outcome = sup.rename(&test, 4, "square_area", "sq_area").await.unwrap();
    let mut changed: Vec<String> =
        outcome.files.iter().map(|f| f.path.strip_prefix(&root).unwrap().display().to_string()).collect();
    changed.sort();
    assert_eq!(changed, ["include/area.h", "src/area.c", "tests/test_area.c"]);
    sup.shutdown().await;
    assert!(!root.join(".cache").exists(), "clangd wrote its index into the project");
    assert!(!root.join("tests/.cache").exists());
    let index = lsp_supervisor::index_cache_dir(&root).unwrap();
    assert!(index.join("compile_commands.json").exists(), "{}", index.display());
    std::fs::remove_dir_all(index).unwrap();
}

/// Without a compilation database, clangd indexes nothing in the background
/// and leaves no `.cache/` either.
#[tokio::test(flavor = "multi_thread")]
async fn clangd_without_a_database_leaves_no_cache() {
    let (_dir, root) = common::project("lsp/c");
    let Some(sup) = common::supervisor(&root, Language::C, "clangd").await else { return };
    let nav = sup.definition(&root.join("main.c"), 7, "square_area").await.unwrap();
    assert_eq!(nav.locations.items.len(), 1);
    sup.shutdown().await;
    assert!(!root.join(".cache").exists(), "clangd wrote its index into the project");
}

/// A `go.work` with two modules: one gopls for the workspace, which goes from one module into the other.
#[tokio::test(flavor = "multi_thread")]
async fn a_go_work_runs_one_gopls() {
    let (_dir, root) = layout(&[
        ("go.work", "go 1.19\n\nuse (\n\t./app\n\t./lib\n)\n"),
        // The replace keeps the go command off the network (no module proxy here).
        (
            "app/go.mod",
            "module example.com/app\n\ngo 1.19\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n",
        ),
        ("app/main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() {\n\tprintln(lib.Area(2))\n}\n"),
        ("lib/go.mod", "module example.com/lib\n\ngo 1.19\n"),
        (
            "lib/lib.go",
            "package lib\n\n// Area is the area of a square.\nfunc Area(side int) int {\n\treturn side * side\n}\n",
        ),
    ]);
    let Some(sup) = common::supervisor(&root, Language::Go, "gopls").await else { return };
    let nav = sup.definition(&root.join("app/main.go"), 6, "Area").await.unwrap();
    let found: Vec<_> = nav.locations.items.iter().map(|l| (l.path.clone(), l.line)).collect();
    assert_eq!(found, [(root.join("lib/lib.go"), 4)]);
    let (_, symbols) = sup.document_symbols(&root.join("lib/lib.go"), 200).await.unwrap();
    assert_eq!(symbols.items[0].name, "Area");
    let status = sup.status().await;
    assert_eq!(status.len(), 1, "{status:?}");
    assert_eq!((status[0].root.as_path(), status[0].root_reason.as_str()), (root.as_path(), "go.work at . uses app"));
    sup.shutdown().await;
}
