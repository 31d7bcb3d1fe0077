//! The JavaScript kernel against the real `node`: REPL-style redeclaration,
//! top-level await, display, errors, and loading the project's modules.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use kernel::CellStatus;

#[tokio::test]
async fn state_and_redeclaration_across_cells() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let first =
        js(&kernels, "let x = 1; const y = 2; class A { m() { return 1 } }; function f() { return x + y }").await;
    assert_eq!(first.status, CellStatus::Ok, "{}", first.text());
    let second = js(&kernels, "let x = 10; const y = 20; class A { m() { return 2 } }; f() + new A().m()").await;
    assert_eq!(second.status, CellStatus::Ok, "{}", second.text());
    assert_eq!(result_text(&second).as_deref(), Some("32"));
    let undefined = js(&kernels, "let z = 3").await;
    assert_eq!(result_text(&undefined), None);
}

#[tokio::test]
async fn top_level_await() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result =
        js(&kernels, "const v = await new Promise((resolve) => setTimeout(() => resolve(21), 10));\nv * 2").await;
    assert_eq!(result_text(&result).as_deref(), Some("42"), "{}", result.text());
    let again = js(&kernels, "v").await;
    assert_eq!(result_text(&again).as_deref(), Some("21"));
    let rejected = js(&kernels, "await Promise.reject(new Error('nope'))").await;
    assert_eq!(rejected.status, CellStatus::Error);
    assert!(rejected.text().contains("Error: nope"), "{}", rejected.text());
}

#[tokio::test]
async fn display_and_echo_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result =
        js(&kernels, "console.log('before'); display(1, 'two'); display.html('<b>x</b>'); ({a: [1, 2]})").await;
    let shown = displays(&result);
    assert_eq!(shown.len(), 3);
    assert_eq!(shown[0]["text/plain"], "1");
    assert_eq!(shown[1]["text/plain"], "'two'");
    assert_eq!(shown[2]["text/html"], "<b>x</b>");
    assert_eq!(result_text(&result).as_deref(), Some("{ a: [ 1, 2 ] }"));
    assert!(streams(&result).starts_with("before"));
}

#[tokio::test]
async fn error_stack_points_into_cell() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result = js(&kernels, "function f() {\n  throw new TypeError('bad value')\n}\nf()").await;
    assert_eq!(result.status, CellStatus::Error);
    assert_eq!(error_name(&result).as_deref(), Some("TypeError"));
    let text = result.text();
    assert!(text.contains("cell-1:2:"), "{text}");
    assert!(!text.contains("kernel-driver") && !text.contains("node:inspector"), "{text}");
    let syntax = js(&kernels, "let = = 1").await;
    assert_eq!(error_name(&syntax).as_deref(), Some("SyntaxError"));
}

#[tokio::test]
async fn require_and_import_project_modules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("helper.js"), "module.exports = { add: (a, b) => a + b };\n").unwrap();
    std::fs::write(dir.path().join("esm.mjs"), "export const greet = (name) => `hi ${name}`;\n").unwrap();
    let kernels = kernels(dir.path());
    let required = js(&kernels, "const { add } = require('./helper.js'); add(2, 3)").await;
    assert_eq!(result_text(&required).as_deref(), Some("5"), "{}", required.text());
    let imported = js(&kernels, "const m = await import('./esm.mjs'); m.greet('you')").await;
    assert_eq!(result_text(&imported).as_deref(), Some("'hi you'"), "{}", imported.text());
    let builtin = js(&kernels, "const os = await import('node:os'); typeof os.platform()").await;
    assert_eq!(result_text(&builtin).as_deref(), Some("'string'"), "{}", builtin.text());
}
