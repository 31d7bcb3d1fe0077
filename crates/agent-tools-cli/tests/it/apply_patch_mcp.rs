//! `apply_patch` through `agent-tools serve` and rmcp's client: a multi-file
//! patch with diagnostics on write for every file it touches (the fixture
//! language server on the server's PATH; `cargo xtask fixtures` builds it), and
//! a refused patch that writes nothing.
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
async fn a_patch_over_mcp_writes_all_and_reports_what_it_broke() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("fixture.toml"), "").unwrap();
    std::fs::write(root.join("a.fix"), "def alpha\r\nalpha\r\n").unwrap();
    std::fs::write(root.join("notes.txt"), "keep\n").unwrap();
    let client = connect(root).await;

    let tools = client.list_all_tools().await.unwrap();
    let tool = tools.iter().find(|t| t.name == "apply_patch").unwrap();
    let hints = tool.annotations.as_ref().unwrap();
    assert_eq!((hints.read_only_hint, hints.destructive_hint), (Some(false), Some(true)));

    let patch = "*** Begin Patch
*** Update File: a.fix
@@ def alpha
 alpha
+ERROR E7: made up
*** Add File: sub/b.fix
+def beta
*** End Patch";
    let result = call(&client, "apply_patch", json!({ "patch": patch })).await;
    assert_ne!(result.is_error, Some(true), "{}", text(&result));
    assert_eq!(
        text(&result),
        "updated a.fix (+1 \u{2212}0)\nadded sub/b.fix (+1)\n\n\
         new diagnostics in a.fix (fixture):\na.fix:3:1 error[E7]: made up (fixture)\n\
         no new diagnostics in sub/b.fix (fixture)\n\
         no new diagnostics in other files (fixture)"
    );
    let structured = result.structured_content.clone().unwrap();
    assert_eq!(structured["files"][0], json!({ "action": "updated", "path": "a.fix", "added": 1, "removed": 0 }));
    assert_eq!(structured["diagnostics"][0]["new"][0]["code"], "E7");
    // The CRLF file stays CRLF, the added line too.
    assert_eq!(std::fs::read_to_string(root.join("a.fix")).unwrap(), "def alpha\r\nalpha\r\nERROR E7: made up\r\n");
    assert_eq!(std::fs::read_to_string(root.join("sub/b.fix")).unwrap(), "def beta\n");

    // A hunk that does not match refuses the whole patch: the first section is not written either.
    let before = std::fs::read(root.join("a.fix")).unwrap();
    let patch = "*** Begin Patch
*** Update File: a.fix
@@
-ERROR E7: made up
*** Update File: notes.txt
@@
-gone
*** End Patch";
    let result = call(&client, "apply_patch", json!({ "patch": patch })).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).starts_with("refused: hunk 1 of notes.txt (patch line 6) does not match"),
        "{}",
        text(&result)
    );
    assert!(text(&result).ends_with("nothing was written"), "{}", text(&result));
    assert_eq!(std::fs::read(root.join("a.fix")).unwrap(), before);
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "keep\n");
    client.cancel().await.unwrap();
}
