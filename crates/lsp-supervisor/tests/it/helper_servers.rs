//! A language with a primary server and helpers: Python with pyright (navigation,
//! rename) and ruff (lint and its fixes) beside it, by default when both are
//! installed. Facts from `fixtures/lsp/FACTS.md` (`python/`).

use crate::common;

use std::path::Path;

use lsp_supervisor::{Language, Severity, Supervisor, SupervisorConfig};

/// The supervisor with the built-in defaults (no server chosen for Python);
/// `None` (test skipped) when pyright or ruff is not usable here and `CI` is
/// not set; a panic under `CI=true`.
async fn pyright_and_ruff(config: SupervisorConfig, root: &Path) -> Option<Supervisor> {
    let supervisor = Supervisor::new(config);
    common::usable(&supervisor, root, Language::Python, &["pyright", "ruff"]).await.then_some(supervisor)
}

#[tokio::test(flavor = "multi_thread")]
async fn python_has_pyright_for_navigation_and_ruff_for_lint_and_fixes() {
    let (_dir, root) = common::project("lsp/python");
    let Some(sup) = pyright_and_ruff(common::config(&root), &root).await else { return };
    let availability = sup.availability(&root).await;
    let python: Vec<_> = availability
        .iter()
        .filter(|a| a.language == Language::Python)
        .map(|a| (a.server, a.chosen, a.helper))
        .collect();
    assert_eq!(python, [("pyright", true, false), ("pylsp", false, false), ("ruff", false, true)]);

    let broken = root.join("geometry/broken.py");
    let report = root.join("geometry/report.py");

    // Navigation is the primary's.
    let nav = sup.definition(&report, 15, "total_area").await.unwrap();
    assert_eq!(nav.server, "pyright");
    let found: Vec<_> = nav.locations.items.iter().map(|l| (l.path.strip_prefix(&root).unwrap(), l.line)).collect();
    assert_eq!(found, [(Path::new("geometry/shapes.py"), 17)]);

    // Code actions are everyone's, each naming its server: pyright offers none here.
    let offered = sup.code_actions(&broken, 3, "os").await.unwrap();
    assert!(offered.helpers_failed.is_empty(), "{:?}", offered.helpers_failed);
    let titles: Vec<_> = offered.actions.iter().map(|a| (a.server, a.title.as_str())).collect();
    assert!(titles.contains(&("ruff", "Ruff (F401): Remove unused import: `os`")), "{titles:?}");
    assert!(offered.actions.iter().all(|a| a.server == "ruff"), "{titles:?}");

    // Diagnostics are everyone's too.
    let file = sup.diagnostics(&broken).await.unwrap();
    assert!(file.complete, "{file:?}");
    assert_eq!((file.server, file.helpers.as_slice()), ("pyright", ["ruff"].as_slice()));
    let seen: Vec<_> = file
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Hint)
        .map(|d| (d.server, d.location.line, d.location.column, d.code.as_deref()))
        .collect();
    assert_eq!(seen, [(Some("ruff"), 3, 8, Some("F401")), (Some("pyright"), 7, 17, Some("reportAssignmentType"))]);

    // After a write, ruff's finding on the new text is there, named as ruff's.
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::write(&report, text.replacen("from geometry.shapes", "import json\n\nfrom geometry.shapes", 1)).unwrap();
    let written = sup.diagnostics_after_write(&report).await.unwrap();
    assert!(written.complete, "{written:?}");
    let seen: Vec<_> = written
        .diagnostics
        .iter()
        .filter(|d| d.severity != Severity::Hint)
        .map(|d| (d.server, d.location.line, d.code.as_deref()))
        .collect();
    assert_eq!(seen, [(Some("ruff"), 3, Some("F401"))]);
    assert!(written.diagnostics.iter().any(|d| d.message.starts_with("`json` imported but unused")));
    sup.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_helper_that_is_missing_or_crashes_leaves_the_primary_answering_and_is_named() {
    let (_dir, root) = common::project("lsp/python");
    let broken = root.join("geometry/broken.py");
    let report = root.join("geometry/report.py");

    // A named helper whose binary is not there.
    let mut config = common::config(&root);
    for spec in &mut config.servers {
        if spec.id == "ruff" {
            spec.programs = vec!["ruff-that-is-not-installed".into()];
        }
    }
    config.helpers.insert(Language::Python, vec!["ruff".into()]);
    let Some(sup) = common::supervisor_with(config, Language::Python, "pyright").await else { return };
    let offered = sup.code_actions(&broken, 3, "os").await.unwrap();
    assert!(offered.actions.is_empty(), "{:?}", offered.actions);
    assert_eq!(offered.helpers_failed.len(), 1);
    assert_eq!(offered.helpers_failed[0].server, "ruff");
    assert!(offered.helpers_failed[0].why.contains("ruff-that-is-not-installed"), "{:?}", offered.helpers_failed);
    let file = sup.diagnostics(&broken).await.unwrap();
    // Its findings are missing, so the list is not complete; the primary's are there.
    assert!(!file.complete);
    assert_eq!(file.helpers_failed.iter().map(|f| f.server.as_str()).collect::<Vec<_>>(), ["ruff"]);
    assert!(file.diagnostics.iter().any(|d| d.code.as_deref() == Some("reportAssignmentType")));
    sup.shutdown().await;

    // A helper that crashes on the request: the fixture server, made to serve Python.
    let mut config = common::config(&root);
    let mut crashing = config.servers.iter().find(|s| s.id == "fixture").unwrap().clone();
    crashing.languages = vec![Language::Python];
    crashing.root_markers = vec!["pyproject.toml"];
    crashing.env = vec![("FIXTURE_LSP_CRASH_ON".into(), "textDocument/codeAction".into())];
    config.servers.push(crashing);
    config.helpers.insert(Language::Python, vec!["fixture".into()]);
    let Some(sup) = common::supervisor_with(config, Language::Python, "pyright").await else { return };
    let offered = sup.code_actions(&broken, 3, "os").await.unwrap();
    assert!(offered.actions.is_empty(), "{:?}", offered.actions);
    assert_eq!(offered.helpers_failed.len(), 1, "{:?}", offered.helpers_failed);
    assert_eq!(offered.helpers_failed[0].server, "fixture");
    assert!(
        offered.helpers_failed[0].why.contains("crashing on textDocument/codeAction"),
        "{:?}",
        offered.helpers_failed
    );
    let nav = sup.definition(&report, 15, "total_area").await.unwrap();
    assert_eq!((nav.server, nav.locations.items[0].line), ("pyright", 17));
    sup.shutdown().await;
}
