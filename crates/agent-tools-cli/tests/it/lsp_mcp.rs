//! `lsp`, `lsp_rename` and the `write`/`edit` tools with diagnostics on write,
//! through `agent-tools serve` and rmcp's client, with the fixture language
//! server on the server's PATH (`cargo xtask fixtures` builds it).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::json;

use crate::common::{call, text};

fn fixture_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    assert!(dir.join("fixture-lsp-server").is_file(), "run `cargo xtask fixtures` first");
    dir
}

async fn connect(root: &Path) -> RunningService<RoleClient, ()> {
    let path = std::env::join_paths(
        std::iter::once(fixture_dir()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).env("PATH", &path).env("AGENT_TOOLS_LOG", "warn");
    });
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

#[tokio::test]
async fn writes_over_mcp_report_new_diagnostics_and_lsp_answers() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fixture.toml"), "").unwrap();
    std::fs::write(dir.path().join("a.fix"), "def alpha\nalpha\n").unwrap();
    let client = connect(dir.path()).await;

    let result =
        call(&client, "write", json!({ "path": "a.fix", "content": "def alpha\nalpha\nERROR E7: made up\n" })).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(
        text(&result),
        "replaced a.fix (34 bytes)\n\nnew diagnostics in a.fix (fixture):\na.fix:3:1 error[E7]: made up (fixture)\n\
         no new diagnostics in other files (fixture)"
    );
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["diagnostics"][0]["new"][0]["code"], "E7");

    // The same error moved down a line is not new; the edit's own result says so.
    let result =
        call(&client, "edit", json!({ "path": "a.fix", "old_string": "alpha\nERROR", "new_string": "alpha\n\nERROR" }))
            .await;
    assert_eq!(
        text(&result),
        "replaced 1 occurrence in a.fix\n\nno new diagnostics in a.fix (fixture)\nno new diagnostics in other files (fixture)"
    );

    let result =
        call(&client, "lsp", json!({ "action": "references", "file": "a.fix", "line": 2, "symbol": "alpha" })).await;
    assert_eq!(text(&result), "references of a.fix:2:1 `alpha`: 2\na.fix:1:5  def alpha\na.fix:2:1  alpha");
    let result =
        call(&client, "lsp_rename", json!({ "file": "a.fix", "line": 1, "symbol": "alpha", "new_name": "beta" })).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert!(std::fs::read_to_string(dir.path().join("a.fix")).unwrap().starts_with("def beta\nbeta\n"));
    client.cancel().await.unwrap();
}
