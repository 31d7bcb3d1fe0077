//! Every `lsp` action against every real language server, on the fixture
//! projects of `fixtures/lsp/` (copied to a temporary directory first). The
//! expected values are the ones recorded in `fixtures/lsp/FACTS.md`.
//! A server missing here fails the test under `CI=true` (`cargo xtask setup`
//! installs them all) and skips it otherwise.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;

use lsp_supervisor::{Capped, Language, Location, Navigation, Severity, Supervisor, Symbol};

/// `rel/path:line:column` of each location.
fn places(root: &Path, locations: &Capped<Location>) -> Vec<String> {
    locations
        .items
        .iter()
        .map(|l| format!("{}:{}:{}", l.path.strip_prefix(root).unwrap().display(), l.line, l.column))
        .collect()
}

fn nav_places(root: &Path, nav: &Navigation) -> Vec<String> {
    places(root, &nav.locations)
}

fn names(symbols: &Capped<Symbol>, depth: usize) -> Vec<String> {
    symbols.items.iter().filter(|s| s.depth == depth).map(|s| s.name.clone()).collect()
}

async fn file_diagnostics(sup: &Supervisor, path: &Path) -> Vec<(u32, u32, Severity, Option<String>, String)> {
    let report = sup.diagnostics(path).await.unwrap();
    assert!(report.complete, "diagnostics of {} not complete", path.display());
    report
        .diagnostics
        .iter()
        .map(|d| (d.location.line, d.location.column, d.severity, d.code.clone(), d.message.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_answers_every_action() {
    let (_dir, root) = common::project("lsp/rust");
    let Some(sup) = common::supervisor(&root, Language::Rust, "rust-analyzer").await else { return };
    let main = root.join("src/main.rs");
    let shapes = root.join("src/shapes.rs");

    let nav = sup.definition(&main, 14, "total_area").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.rs:43:8"]);
    assert_eq!(nav.cursor.column, 32);
    let nav = sup.type_definition(&main, 8, "circle").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.rs:13:12"]);
    let nav = sup.implementation(&shapes, 4, "Shape").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.rs:22:16", "src/shapes.rs:32:16"]);
    let nav = sup.references(&main, 14, "total_area", 50).await.unwrap();
    assert_eq!(
        nav_places(&root, &nav),
        ["src/main.rs:5:25", "src/main.rs:12:26", "src/main.rs:14:32", "src/shapes.rs:43:8", "src/shapes.rs:52:5"]
    );
    let capped = sup.references(&main, 14, "total_area", 2).await.unwrap();
    assert_eq!((capped.locations.items.len(), capped.locations.total), (2, 5));
    let (_, hover) = sup.hover(&main, 14, "total_area").await.unwrap();
    let hover = hover.unwrap();
    assert!(hover.contains("pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64"), "{hover}");
    assert!(hover.contains("The sum of the areas of `shapes`."), "{hover}");
    let (_, symbols) = sup.document_symbols(&shapes, 200).await.unwrap();
    assert_eq!(
        names(&symbols, 0),
        ["Shape", "Circle", "Square", "impl Shape for Circle", "impl Shape for Square", "total_area", "mean_area"]
    );
    let (_, found) = sup.workspace_symbols("total", &main, 100).await.unwrap();
    assert_eq!(found.items.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["total_area"]);
    assert!(file_diagnostics(&sup, &main).await.is_empty());
    // A write that changes no diagnostic: rust-analyzer publishes nothing again
    // (native or `cargo check`), yet the answer is final once its check has run.
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, text.replace("//! Prints the areas", "//! Prints the area")).unwrap();
    let report = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(report.complete && report.diagnostics.is_empty(), "{report:?}");

    // Rename across both files, all applied.
    let outcome = sup.rename(&main, 14, "total_area", "sum_of_areas").await.unwrap();
    let mut changed: Vec<String> =
        outcome.files.iter().map(|f| f.path.strip_prefix(&root).unwrap().display().to_string()).collect();
    changed.sort();
    assert_eq!(changed, ["src/main.rs", "src/shapes.rs"]);
    assert_eq!(outcome.edits, 5);
    assert!(std::fs::read_to_string(&shapes).unwrap().contains("pub fn sum_of_areas("));
    let nav = sup.references(&main, 14, "sum_of_areas", 50).await.unwrap();
    assert_eq!(nav.locations.total, 5);
    sup.shutdown().await;

    // The known and fixable error, in its own project: native first, then flycheck after a save.
    let (_dir, root) = common::project("lsp/rust-broken");
    let sup = Supervisor::new(common::config(&root));
    let main = root.join("src/main.rs");
    let found = file_diagnostics(&sup, &main).await;
    assert!(
        found.iter().any(|d| d.0 == 6 && d.1 == 5 && d.2 == Severity::Error && d.3.as_deref() == Some("E0384")),
        "{found:?}"
    );
    let actions = sup.code_actions(&main, 6, "count").await.unwrap().actions;
    assert!(
        actions.iter().any(|a| a.title == "Change it to be mutable" && a.kind.as_deref() == Some("quickfix")),
        "{actions:?}"
    );
    // Written without the error, then with it again: the native diagnostic goes and comes back.
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, text.replace("let count = 1;", "let mut count = 1;")).unwrap();
    let fixed = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(
        fixed.complete && fixed.diagnostics.iter().all(|d| d.severity != Severity::Error),
        "{:?}",
        fixed.diagnostics
    );
    std::fs::write(&main, &text).unwrap();
    let broken = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(broken.complete);
    assert!(
        broken.diagnostics.iter().any(|d| d.code.as_deref() == Some("E0384") && d.location.line == 6),
        "{:?}",
        broken.diagnostics
    );
    // A write elsewhere in the file: the same error, published by nobody again, still stands.
    std::fs::write(&main, format!("{text}// a comment\n")).unwrap();
    let same = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(same.complete, "{same:?}");
    assert_eq!(same.diagnostics, broken.diagnostics);
    let checked = sup.project_diagnostics(Some(Language::Rust)).await.unwrap();
    let errors: Vec<_> = checked[0].diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{:?}", checked[0].diagnostics);
    assert_eq!((errors[0].code.as_deref(), errors[0].location.line, errors[0].location.column), (Some("E0384"), 6, 5));
    assert_eq!(errors[0].message, "cannot assign twice to immutable variable `count`");
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pyright_answers_every_action() {
    let (_dir, root) = common::project("lsp/python");
    let Some(sup) = common::supervisor(&root, Language::Python, "pyright").await else { return };
    let report = root.join("geometry/report.py");
    let shapes = root.join("geometry/shapes.py");
    let nav = sup.definition(&report, 15, "total_area").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["geometry/shapes.py:17:5"]);
    let nav = sup.type_definition(&report, 14, "unit").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["geometry/shapes.py:6:7"]);
    let error = sup.implementation(&shapes, 6, "Circle").await.unwrap_err();
    assert!(error.to_string().contains("does not support textDocument/implementation"), "{error}");
    let nav = sup.references(&report, 15, "total_area", 50).await.unwrap();
    assert_eq!(
        nav_places(&root, &nav),
        [
            "geometry/report.py:3:48",
            "geometry/report.py:9:21",
            "geometry/report.py:15:16",
            "geometry/shapes.py:17:5",
            "geometry/shapes.py:26:12"
        ]
    );
    let (_, hover) = sup.hover(&report, 15, "total_area").await.unwrap();
    let hover = hover.unwrap();
    assert!(hover.contains("def total_area(circles: list[Circle]) -> float"), "{hover}");
    assert!(hover.contains("The sum of the areas of `circles`."), "{hover}");
    let (_, symbols) = sup.document_symbols(&shapes, 200).await.unwrap();
    assert_eq!(names(&symbols, 0), ["Circle", "total_area", "mean_area"]);
    let (_, found) = sup.workspace_symbols("total", &report, 100).await.unwrap();
    assert_eq!(found.items.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["total_area"]);
    assert!(file_diagnostics(&sup, &report).await.is_empty());
    let broken = file_diagnostics(&sup, &root.join("geometry/broken.py")).await;
    let errors: Vec<_> = broken.iter().filter(|d| d.2 == Severity::Error).collect();
    assert_eq!(errors.len(), 1, "{broken:?}");
    assert_eq!((errors[0].0, errors[0].1, errors[0].3.as_deref()), (7, 17, Some("reportAssignmentType")));
    assert!(errors[0].4.starts_with("Type \"Circle\" is not assignable to declared type \"float\""), "{}", errors[0].4);
    let checked = sup.project_diagnostics(Some(Language::Python)).await.unwrap();
    let errors: Vec<_> = checked[0].diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].location.line, errors[0].code.as_deref()), (7, Some("reportAssignmentType")));

    let outcome = sup.rename(&report, 15, "total_area", "sum_of_areas").await.unwrap();
    assert_eq!(outcome.files.len(), 2);
    assert!(std::fs::read_to_string(&shapes).unwrap().contains("def sum_of_areas("));
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pylsp_answers_what_it_supports() {
    let (_dir, root) = common::project("lsp/python");
    let Some(sup) = common::supervisor(&root, Language::Python, "pylsp").await else { return };
    let report = root.join("geometry/report.py");
    let nav = sup.definition(&report, 15, "total_area").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["geometry/shapes.py:17:5"]);
    let nav = sup.references(&report, 15, "total_area", 50).await.unwrap();
    assert_eq!(nav.locations.total, 5);
    let (_, hover) = sup.hover(&report, 15, "total_area").await.unwrap();
    assert!(hover.unwrap().contains("total_area(circles: list[Circle]) -> float"));
    let broken = file_diagnostics(&sup, &root.join("geometry/broken.py")).await;
    assert_eq!(broken, [(3, 1, Severity::Warning, None, "'os' imported but unused".to_string())]);
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ruff_lints_and_offers_the_fix() {
    let (_dir, root) = common::project("lsp/python");
    let Some(sup) = common::supervisor(&root, Language::Python, "ruff").await else { return };
    let broken = root.join("geometry/broken.py");
    assert!(file_diagnostics(&sup, &root.join("geometry/report.py")).await.is_empty());
    let found = file_diagnostics(&sup, &broken).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1, found[0].2, found[0].3.as_deref()), (3, 8, Severity::Warning, Some("F401")));
    assert!(found[0].4.starts_with("`os` imported but unused"), "{}", found[0].4);
    let actions = sup.code_actions(&broken, 3, "os").await.unwrap().actions;
    assert!(actions.iter().any(|a| a.title == "Ruff (F401): Remove unused import: `os`"), "{actions:?}");
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn typescript_language_server_answers_every_action() {
    let (_dir, root) = common::project("lsp/typescript");
    let Some(sup) = common::supervisor(&root, Language::TypeScript, "typescript-language-server").await else { return };
    let main = root.join("src/main.ts");
    let shapes = root.join("src/shapes.ts");
    let nav = sup.definition(&main, 14, "totalArea").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.ts:36:17"]);
    let nav = sup.type_definition(&main, 8, "circle").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.ts:10:14"]);
    let nav = sup.implementation(&shapes, 2, "Shape").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["src/shapes.ts:10:14", "src/shapes.ts:23:14"]);
    let nav = sup.references(&main, 14, "totalArea", 50).await.unwrap();
    assert_eq!(
        nav_places(&root, &nav),
        ["src/main.ts:1:43", "src/main.ts:12:12", "src/main.ts:14:16", "src/shapes.ts:36:17", "src/shapes.ts:42:36"]
    );
    let (_, hover) = sup.hover(&main, 14, "totalArea").await.unwrap();
    let hover = hover.unwrap();
    assert!(
        hover.contains("totalArea(shapes: Shape[]): number") && hover.contains("The sum of the areas of `shapes`."),
        "{hover}"
    );
    let (_, symbols) = sup.document_symbols(&shapes, 200).await.unwrap();
    assert_eq!(names(&symbols, 0), ["Circle", "meanArea", "Shape", "Square", "totalArea"]);
    let (_, found) = sup.workspace_symbols("total", &main, 100).await.unwrap();
    assert!(found.items.iter().any(|s| s.name == "totalArea"), "{found:?}");
    assert!(file_diagnostics(&sup, &main).await.is_empty());
    let broken = root.join("src/broken.ts");
    let found = file_diagnostics(&sup, &broken).await;
    assert_eq!(found, [(2, 25, Severity::Error, Some("2304".to_string()), "Cannot find name 'Circle'.".to_string())]);
    let actions = sup.code_actions(&broken, 2, "Circle").await.unwrap().actions;
    assert!(actions.iter().any(|a| a.title == "Add import from \"./shapes\""), "{actions:?}");

    // A write that leaves a file clean: the server publishes nothing for it (a
    // kind's list that stays empty is not published again), yet the answer is final.
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, text.replace("One line about", "A line about")).unwrap();
    let report = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(report.complete && report.diagnostics.is_empty(), "{report:?}");
    // A semantic error and a suggestion (severity hint), each as the server publishes it.
    std::fs::write(&main, format!("{text}export function f(): number {{\n  const unused = 1;\n  return \"x\";\n}}\n"))
        .unwrap();
    let report = sup.diagnostics_after_write(&main).await.unwrap();
    assert!(report.complete, "{report:?}");
    let found: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| (d.location.line, d.location.column, d.severity, d.code.clone(), d.message.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (17, 9, Severity::Hint, Some("6133".into()), "'unused' is declared but its value is never read.".into()),
            (18, 3, Severity::Error, Some("2322".into()), "Type 'string' is not assignable to type 'number'.".into()),
        ]
    );
    std::fs::write(&main, &text).unwrap();
    assert!(sup.diagnostics_after_write(&main).await.unwrap().diagnostics.is_empty());
    let checked = sup.project_diagnostics(Some(Language::TypeScript)).await.unwrap();
    let d = &checked[0].diagnostics;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].location.line, d[0].location.column, d[0].code.as_deref()), (2, 25, Some("TS2304")));

    // From a use of the imported name: the declaration is renamed too, not a local alias added.
    let outcome = sup.rename(&main, 14, "totalArea", "sumOfAreas").await.unwrap();
    assert_eq!(outcome.files.len(), 2);
    assert!(std::fs::read_to_string(&shapes).unwrap().contains("export function sumOfAreas("));
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn clangd_answers_every_action() {
    let (_dir, root) = common::project("lsp/c");
    let Some(sup) = common::supervisor(&root, Language::C, "clangd").await else { return };
    let main = root.join("main.c");
    // Without an index clangd knows the open files only: open the three.
    for file in ["main.c", "shapes.c", "shapes.h"] {
        assert!(file_diagnostics(&sup, &root.join(file)).await.is_empty(), "{file}");
    }
    let nav = sup.definition(&main, 7, "square_area").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["shapes.c:3:8"]);
    let nav = sup.type_definition(&main, 6, "squares").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["shapes.h:6:8"]);
    let nav = sup.implementation(&root.join("shapes.h"), 11, "square_area").await.unwrap();
    assert!(nav.locations.items.is_empty());
    let nav = sup.references(&main, 7, "square_area", 50).await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["main.c:7:26", "shapes.c:3:8", "shapes.c:10:16", "shapes.h:11:8"]);
    // broken.c calls it too, but clangd has no index without a compilation database, and says so.
    assert!(nav.warning.as_deref().unwrap().starts_with("clangd has no project index here"), "{:?}", nav.warning);
    let error = sup.rename(&main, 7, "square_area", "sq_area").await.unwrap_err();
    assert!(error.to_string().contains("a rename would change only those"), "{error}");
    assert!(std::fs::read_to_string(root.join("shapes.c")).unwrap().contains("square_area"));
    let (_, hover) = sup.hover(&main, 7, "square_area").await.unwrap();
    let hover = hover.unwrap();
    assert!(
        hover.contains("double square_area(const struct square *s)") && hover.contains("The area of `s`, in"),
        "{hover}"
    );
    let (_, symbols) = sup.document_symbols(&root.join("shapes.c"), 200).await.unwrap();
    assert_eq!(names(&symbols, 0), ["square_area", "total_area"]);
    let (_, found) = sup.workspace_symbols("total", &main, 100).await.unwrap();
    assert!(found.items.iter().any(|s| s.name == "total_area"), "{found:?}");
    let broken = root.join("broken.c");
    let found = file_diagnostics(&sup, &broken).await;
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].0, found[0].1, found[0].3.as_deref()), (7, 1, Some("expected_semi_after_stmt")));
    assert!(found[0].4.starts_with("Expected ';' after return statement"), "{}", found[0].4);
    let actions = sup.code_actions(&broken, 7, "}").await.unwrap().actions;
    assert!(actions.iter().any(|a| a.title == "insert ';'"), "{actions:?}");

    // With a compilation database clangd indexes the project: the rename reaches every file.
    let template = std::fs::read_to_string(root.join("compile_commands.json.in")).unwrap();
    std::fs::write(root.join("compile_commands.json"), template.replace("@DIR@", root.to_str().unwrap())).unwrap();
    sup.reload(None).await;
    let nav = sup.references(&main, 7, "square_area", 50).await.unwrap();
    assert_eq!(nav.warning, None);
    let outcome = sup.rename(&main, 7, "square_area", "sq_area").await.unwrap();
    let mut changed: Vec<String> =
        outcome.files.iter().map(|f| f.path.strip_prefix(&root).unwrap().display().to_string()).collect();
    changed.sort();
    assert_eq!(changed, ["broken.c", "main.c", "shapes.c", "shapes.h"]);
    // Its index does not see files change on disk: the renamed files are opened, so the
    // new name is found everywhere at once.
    let nav = sup.references(&main, 7, "sq_area", 50).await.unwrap();
    assert_eq!(nav.locations.total, 5, "{:?}", nav_places(&root, &nav));
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn gopls_answers_every_action() {
    let (_dir, root) = common::project("lsp/go");
    let Some(sup) = common::supervisor(&root, Language::Go, "gopls").await else { return };
    let main = root.join("main.go");
    let shapes = root.join("shapes/shapes.go");
    let nav = sup.definition(&main, 16, "TotalArea").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["shapes/shapes.go:33:6"]);
    let nav = sup.type_definition(&main, 11, "circle").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["shapes/shapes.go:13:6"]);
    let nav = sup.implementation(&shapes, 7, "Shape").await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["shapes/shapes.go:13:6", "shapes/shapes.go:23:6"]);
    let nav = sup.references(&main, 16, "TotalArea", 50).await.unwrap();
    assert_eq!(nav_places(&root, &nav), ["main.go:14:30", "main.go:16:32", "report.go:19:16", "shapes/shapes.go:33:6"]);
    let (_, hover) = sup.hover(&main, 16, "TotalArea").await.unwrap();
    let hover = hover.unwrap();
    assert!(hover.contains("func shapes.TotalArea(shapes []shapes.Shape) float64"), "{hover}");
    assert!(hover.contains("TotalArea is the sum of the areas of shapes."), "{hover}");
    let (_, symbols) = sup.document_symbols(&shapes, 200).await.unwrap();
    assert_eq!(names(&symbols, 0), ["Shape", "Circle", "(Circle).Area", "Square", "(Square).Area", "TotalArea"]);
    let (_, found) = sup.workspace_symbols("TotalArea", &main, 100).await.unwrap();
    assert_eq!(found.items[0].name, "TotalArea");
    assert!(file_diagnostics(&sup, &main).await.is_empty());
    let broken = root.join("broken/broken.go");
    let found = file_diagnostics(&sup, &broken).await;
    assert_eq!(
        found,
        [(4, 8, Severity::Error, Some("UnusedImport".to_string()), "\"os\" imported but not used".to_string())]
    );
    let actions = sup.code_actions(&broken, 4, "os").await.unwrap().actions;
    assert!(actions.iter().any(|a| a.title == "Delete import:  \"os\""), "{actions:?}");
    let checked = sup.project_diagnostics(Some(Language::Go)).await.unwrap();
    let d = &checked[0].diagnostics;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!((d[0].location.line, d[0].location.column), (4, 8));

    let outcome = sup.rename(&main, 16, "TotalArea", "SumOfAreas").await.unwrap();
    assert_eq!(outcome.files.len(), 3);
    assert!(std::fs::read_to_string(&shapes).unwrap().contains("func SumOfAreas("));
    sup.shutdown().await;
}

/// Tabs, CRLF, a BOM and characters outside the BMP before the symbol, on a
/// UTF-8 server (rust-analyzer) and a UTF-16 one (pyright).
#[tokio::test(flavor = "multi_thread")]
async fn awkward_text_positions_come_out_right_on_utf8_and_utf16_servers() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"awkward\"\nversion = \"0\"\n").unwrap();
    std::fs::write(
        root.join("awkward.py"),
        "\u{feff}def target():\r\n\treturn 1\r\n\r\nlabel = \"😀𝒳é\"; value = target()\r\n",
    )
    .unwrap();
    if let Some(sup) = common::supervisor(&root, Language::Python, "pyright").await {
        let file = root.join("awkward.py");
        let nav = sup.definition(&file, 4, "target").await.unwrap();
        assert_eq!(nav.cursor.column, 24);
        assert_eq!(nav_places(&root, &nav), ["awkward.py:1:5"]);
        let refs = sup.references(&file, 1, "target", 50).await.unwrap();
        assert_eq!(nav_places(&root, &refs), ["awkward.py:1:5", "awkward.py:4:24"]);
        assert_eq!(format!("{:?}", sup.status().await[0].encoding), "Some(Utf16)");
        sup.shutdown().await;
    }

    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"awkward\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "\u{feff}fn target() -> u32 {\r\n\t1\r\n}\r\n\r\nfn main() {\r\n\tlet _label = \"😀𝒳é\"; let _v = target();\r\n}\r\n",
    )
    .unwrap();
    if let Some(sup) = common::supervisor(&root, Language::Rust, "rust-analyzer").await {
        let file = root.join("src/main.rs");
        let nav = sup.definition(&file, 6, "target").await.unwrap();
        assert_eq!(nav.cursor.column, 31);
        assert_eq!(nav_places(&root, &nav), ["src/main.rs:1:4"]);
        let refs = sup.references(&file, 1, "target", 50).await.unwrap();
        assert_eq!(nav_places(&root, &refs), ["src/main.rs:1:4", "src/main.rs:6:31"]);
        assert_eq!(format!("{:?}", sup.status().await[0].encoding), "Some(Utf8)");
        sup.shutdown().await;
    }
}

/// A write that leaves a file's diagnostics as they were (a comment added at
/// the end) gets a final answer with the same list on every server, whether or
/// not the server publishes an unchanged list again.
/// A project, its language, a server, a clean file, a file with diagnostics, and a comment to append.
type Case = (&'static str, Language, &'static str, Option<&'static str>, Option<&'static str>, &'static str);

#[tokio::test(flavor = "multi_thread")]
async fn a_write_that_changes_no_diagnostic_is_final_on_every_server() {
    let cases: [Case; 8] = [
        ("lsp/rust", Language::Rust, "rust-analyzer", Some("src/main.rs"), None, "// a comment\n"),
        ("lsp/rust-broken", Language::Rust, "rust-analyzer", None, Some("src/main.rs"), "// a comment\n"),
        (
            "lsp/python",
            Language::Python,
            "pyright",
            Some("geometry/report.py"),
            Some("geometry/broken.py"),
            "# a comment\n",
        ),
        (
            "lsp/python",
            Language::Python,
            "pylsp",
            Some("geometry/report.py"),
            Some("geometry/broken.py"),
            "# a comment\n",
        ),
        (
            "lsp/python",
            Language::Python,
            "ruff",
            Some("geometry/report.py"),
            Some("geometry/broken.py"),
            "# a comment\n",
        ),
        (
            "lsp/typescript",
            Language::TypeScript,
            "typescript-language-server",
            Some("src/main.ts"),
            Some("src/broken.ts"),
            "// a comment\n",
        ),
        ("lsp/c", Language::C, "clangd", Some("main.c"), Some("broken.c"), "// a comment\n"),
        ("lsp/go", Language::Go, "gopls", Some("main.go"), Some("broken/broken.go"), "// a comment\n"),
    ];
    for (project, language, server, clean, broken, comment) in cases {
        let (_dir, root) = common::project(project);
        let Some(sup) = common::supervisor(&root, language, server).await else { continue };
        for (file, is_clean) in clean.map(|f| (f, true)).into_iter().chain(broken.map(|f| (f, false))) {
            let path = root.join(file);
            let before = file_diagnostics(&sup, &path).await;
            assert_eq!(before.is_empty(), is_clean, "{server} {file}: {before:?}");
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, format!("{text}{comment}")).unwrap();
            let report = sup.diagnostics_after_write(&path).await.unwrap();
            assert!(report.complete, "{server} {file}: {report:?}");
            let after: Vec<_> = report
                .diagnostics
                .iter()
                .map(|d| (d.location.line, d.location.column, d.severity, d.code.clone(), d.message.clone()))
                .collect();
            assert_eq!(after, before, "{server} {file}");
        }
        sup.shutdown().await;
    }
}

/// rust-analyzer clears a file's `cargo check` findings while the check a save
/// started runs, and publishes them again a moment after the check's progress
/// ends; a loaded machine makes that moment longer than any fixed quiet time.
/// With no quiet time at all (`settle` zero), each answer after a write is
/// still final only with the check's findings in it.
#[tokio::test(flavor = "multi_thread")]
async fn rust_analyzer_is_final_after_a_save_only_with_the_checks_findings() {
    let (_dir, root) = common::project("lsp/rust-broken");
    let mut config = common::config(&root);
    config.settle = std::time::Duration::ZERO;
    let Some(sup) = common::supervisor_with(config, Language::Rust, "rust-analyzer").await else { return };
    let path = root.join("src/main.rs");
    let before = file_diagnostics(&sup, &path).await;
    let sources: Vec<_> = sup.diagnostics(&path).await.unwrap().diagnostics.into_iter().map(|d| d.source).collect();
    assert!(
        sources.contains(&Some("rustc".to_string())),
        "cargo check's findings are missing before any write: {sources:?}"
    );
    for round in 1..=3 {
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{text}// comment {round}\n")).unwrap();
        let report = sup.diagnostics_after_write(&path).await.unwrap();
        assert!(report.complete, "round {round}: {report:?}");
        let after: Vec<_> = report
            .diagnostics
            .iter()
            .map(|d| (d.location.line, d.location.column, d.severity, d.code.clone(), d.message.clone()))
            .collect();
        assert_eq!(after, before, "round {round}");
    }
    sup.shutdown().await;
}

/// rust-analyzer whose `cargo metadata` fails (a path dependency that is not
/// there) loads no project and answers `definition` with nothing; that is
/// an error saying it could not load the project and why, not "no definition".
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_answer_from_rust_analyzer_that_could_not_load_the_project_is_an_error() {
    let (_dir, root) = common::project("lsp/rust");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        format!("{manifest}\n[dependencies]\nabsent = {{ path = \"../absent\" }}\n"),
    )
    .unwrap();
    let Some(sup) = common::supervisor(&root, Language::Rust, "rust-analyzer").await else { return };
    let error = sup.definition(&root.join("src/main.rs"), 14, "total_area").await.unwrap_err().to_string();
    assert!(
        error.starts_with("rust-analyzer could not load the project, so its empty answer says nothing: "),
        "{error}"
    );
    assert!(
        error.contains("Failed to load workspaces (error: failed to load manifest for dependency `absent`"),
        "the reason names the missing dependency: {error}"
    );
    sup.shutdown().await;
}
