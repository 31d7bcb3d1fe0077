//! A project checker that writes a gigabyte: a stand-in `pyright` (a real `sh` script on the
//! project's `.venv/bin`) prints one finding as pyright's JSON, then a gigabyte of
//! whitespace. Its output is read up to `checker_output_limit`, the finding before the cut
//! is kept, the cut is named with its figures, and this process's peak memory stays far
//! under what the checker wrote.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;

use lsp_supervisor::{Language, Supervisor, SupervisorConfig};

const GIB: u64 = 1 << 30;

/// This process's peak resident memory (`VmHWM` in `/proc/self/status`), in kB.
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_checker_that_writes_a_gigabyte_is_cut_and_keeps_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(root.join("a.py"), "x: int = 'one'\n").unwrap();
    let bin = root.join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let finding = format!(
        r#"{{"generalDiagnostics": [{{"file": "{}", "severity": "error", "message": "str is not int", "rule": "reportAssignmentType", "range": {{"start": {{"line": 0, "character": 9}}, "end": {{"line": 0, "character": 14}}}}}}]}}"#,
        root.join("a.py").display()
    );
    let script = format!("#!/bin/sh\nprintf '%s' '{finding}'\nhead -c {GIB} /dev/zero | tr '\\0' ' '\nexit 1\n");
    std::fs::write(bin.join("pyright"), script).unwrap();
    std::fs::set_permissions(bin.join("pyright"), std::fs::Permissions::from_mode(0o755)).unwrap();

    let mut config = SupervisorConfig::new(&root);
    config.checker_output_limit = 1 << 20;
    let supervisor = Supervisor::new(config);
    let before = peak_kb();
    let runs = supervisor.project_diagnostics(Some(Language::Python)).await.unwrap();
    let grown = peak_kb().saturating_sub(before);

    let [run] = runs.as_slice() else { panic!("{runs:?}") };
    let written = finding.len() as u64 + GIB;
    assert_eq!(
        run.cut.as_deref(),
        Some(
            format!(
                "`{} --outputjson` in {}: its stdout was cut at 1048576 bytes ({written} written); the diagnostics listed are those read before the cut",
                bin.join("pyright").display(),
                root.display()
            )
            .as_str()
        )
    );
    assert_eq!(run.failure, None);
    let messages: Vec<(u32, u32, &str)> =
        run.diagnostics.iter().map(|d| (d.location.line, d.location.column, d.message.as_str())).collect();
    assert_eq!(messages, [(1, 10, "str is not int")]);
    assert!(grown < 64 * 1024, "peak memory grew by {grown} kB while the checker wrote {written} bytes");
}
