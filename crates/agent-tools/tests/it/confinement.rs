//! Path confinement, attacked: a table of escape attempts through every tool
//! that takes a path or writes (`ast_grep`, `ast_edit`, `resolve`, `write`,
//! `edit`, `apply_patch`, `lsp`, `lsp_rename`, `debug`, and `eval`'s
//! in-cell `tool()`), each refused with a message that says why, and a canary
//! beside the root that is never read into a result nor changed. A server's
//! workspace edit reaching outside is lsp-supervisor's test
//! (`a_server_edit_that_reaches_outside_the_root_is_refused_whichever_way`).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::Path;
use std::sync::Arc;

use agent_tools::{AstmatchWiring, DebugWiring, KernelWiring, LspWiring, Registry, Surface, Tier, Workspace};
use serde_json::{Value, json};

const CANARY: &str = "CANARY_TEXT foo(7)\n";

/// `base/work` is the root (with `src/a.py`); `base/outside/canary.py` is the
/// canary, reached from the root by a symlinked directory, a symlinked file,
/// a symlink loop and a hard link.
fn layout(base: &Path) -> Workspace {
    let root = base.join("work");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(root.join("src/a.py"), "foo(1)\n").unwrap();
    std::fs::write(root.join("pyproject.toml"), "").unwrap();
    std::fs::write(base.join("outside/canary.py"), CANARY).unwrap();
    std::os::unix::fs::symlink(base.join("outside"), root.join("out_dir")).unwrap();
    std::os::unix::fs::symlink(base.join("outside/canary.py"), root.join("canary_link.py")).unwrap();
    std::os::unix::fs::symlink(root.join("loop_b"), root.join("loop_a")).unwrap();
    std::os::unix::fs::symlink(root.join("loop_a"), root.join("loop_b")).unwrap();
    Workspace::new(&root).unwrap()
}

fn surface(workspace: &Workspace) -> Surface {
    let root = workspace.root();
    let mut kernel = kernel::KernelConfig::new(root);
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python");
    if venv.exists() {
        kernel.python = Some(venv);
    }
    let supervisor = Arc::new(lsp_supervisor::Supervisor::new(lsp_supervisor::SupervisorConfig::new(root)));
    let debug = Arc::new(dap_session::DebugSupervisor::new(dap_session::DebugConfig::default()));
    let registry = Registry::builder()
        .with_astmatch(AstmatchWiring::new(workspace.clone()))
        .with_lsp(LspWiring::new(supervisor, workspace.clone()))
        .with_file_tools(workspace.clone())
        .with_debug(DebugWiring::new(debug, workspace.clone(), "confinement"))
        .with_kernels(KernelWiring::new(Arc::new(kernel::Kernels::new(kernel))))
        .build()
        .unwrap();
    Arc::new(registry).surface(Tier::Exec)
}

/// What an attempt must come back with: refused (an error whose text has all
/// of these words), or, for a path that names a place inside the root, done there.
enum Expect {
    Refused(&'static [&'static str]),
}

fn rows() -> Vec<(&'static str, Value, Expect)> {
    use Expect::Refused;
    let escapes: &[&str] = &["refused", "escapes the working directory"];
    let outside: &[&str] = &["refused", "outside the working directory"];
    let symlink: &[&str] = &["refused", "goes through a symlink to", "outside the working directory"];
    let grep = |path: &str| json!({"pattern": "foo($X)", "path": path, "language": "python"});
    let edit = |path: &str| json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": path, "language": "python"});
    let patch = |body: &str| json!({"patch": format!("*** Begin Patch\n{body}\n*** End Patch")});
    vec![
        // `..` in every position, and absolute paths elsewhere.
        ("ast_grep", grep(".."), Refused(escapes)),
        ("ast_grep", grep("../outside"), Refused(escapes)),
        ("ast_grep", grep("src/../../outside/canary.py"), Refused(escapes)),
        ("ast_grep", grep("./src/../.."), Refused(escapes)),
        ("ast_grep", grep("/etc"), Refused(outside)),
        ("ast_edit", edit("../outside/canary.py"), Refused(escapes)),
        ("write", json!({"path": "../outside/canary.py", "content": "x"}), Refused(escapes)),
        ("write", json!({"path": "src/../../outside/new.py", "content": "x"}), Refused(escapes)),
        ("write", json!({"path": "/tmp/agent-tools-confinement-new.py", "content": "x"}), Refused(outside)),
        ("edit", json!({"path": "../outside/canary.py", "old_string": "foo", "new_string": "bar"}), Refused(escapes)),
        ("apply_patch", patch("*** Add File: ../outside/added.py\n+x"), Refused(escapes)),
        (
            "apply_patch",
            patch("*** Update File: ../outside/canary.py\n@@\n-CANARY_TEXT foo(7)\n+changed"),
            Refused(escapes),
        ),
        ("apply_patch", patch("*** Delete File: ../outside/canary.py"), Refused(escapes)),
        (
            "apply_patch",
            patch("*** Update File: src/a.py\n*** Move to: ../outside/moved.py\n@@\n-foo(1)\n+foo(2)"),
            Refused(escapes),
        ),
        ("lsp", json!({"action": "diagnostics", "file": "../outside/canary.py"}), Refused(escapes)),
        ("lsp", json!({"action": "hover", "file": "/etc/hostname", "line": 1, "symbol": "x"}), Refused(outside)),
        (
            "lsp_rename",
            json!({"file": "../outside/canary.py", "line": 1, "symbol": "foo", "new_name": "bar"}),
            Refused(escapes),
        ),
        ("debug", json!({"op": "breakpoints", "file": "../outside/canary.py", "lines": [1]}), Refused(escapes)),
        ("debug", json!({"op": "launch", "program": "../outside/canary.py"}), Refused(escapes)),
        ("debug", json!({"op": "launch", "program": "/bin/true"}), Refused(outside)),
        ("debug", json!({"op": "launch", "program": "src/a.py", "cwd": "../outside"}), Refused(escapes)),
        // A symlinked directory, a symlinked file and a symlink loop inside the root.
        ("ast_grep", grep("out_dir"), Refused(symlink)),
        ("ast_grep", grep("canary_link.py"), Refused(symlink)),
        ("ast_edit", edit("out_dir/canary.py"), Refused(symlink)),
        ("write", json!({"path": "out_dir/new.py", "content": "x"}), Refused(symlink)),
        ("write", json!({"path": "canary_link.py", "content": "x"}), Refused(symlink)),
        ("edit", json!({"path": "canary_link.py", "old_string": "foo", "new_string": "bar"}), Refused(symlink)),
        (
            "apply_patch",
            patch("*** Update File: out_dir/canary.py\n@@\n-CANARY_TEXT foo(7)\n+changed"),
            Refused(symlink),
        ),
        ("lsp", json!({"action": "symbols", "file": "canary_link.py"}), Refused(symlink)),
        ("debug", json!({"op": "breakpoints", "file": "out_dir/canary.py", "lines": [1]}), Refused(symlink)),
        ("ast_grep", grep("loop_a"), Refused(&["loop_a"])),
        ("write", json!({"path": "loop_a/x.py", "content": "x"}), Refused(&["loop_a"])),
    ]
}

fn canary_intact(base: &Path) {
    assert_eq!(std::fs::read_to_string(base.join("outside/canary.py")).unwrap(), CANARY, "the canary changed");
    let outside: Vec<String> = std::fs::read_dir(base.join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name().display().to_string())
        .collect();
    assert_eq!(outside, ["canary.py"], "nothing was added beside it");
    assert!(!Path::new("/tmp/agent-tools-confinement-new.py").exists());
}

#[tokio::test]
async fn every_escape_attempt_is_refused_and_the_canary_is_untouched() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let workspace = layout(&base);
    let surface = surface(&workspace);
    let rows = rows();
    assert!(rows.len() >= 30, "{} attempts", rows.len());
    let mut refused = 0;
    for (tool, args, expect) in rows {
        let result = surface.call(tool, args.clone()).await.unwrap();
        let Expect::Refused(words) = expect;
        assert!(result.is_error, "{tool} {args}: not refused: {}", result.text);
        for word in words {
            assert!(result.text.contains(word), "{tool} {args}: {:?} lacks {word:?}", result.text);
        }
        assert!(!result.text.contains("CANARY_TEXT"), "{tool} {args}: the canary's text was read: {}", result.text);
        canary_intact(&base);
        refused += 1;
    }
    eprintln!("escape attempts refused: {refused}");
}

/// (That `ast_grep`'s walk does not follow a link out is `paths.rs`'s test.)
#[tokio::test]
async fn a_rewrite_of_the_whole_root_never_stages_a_file_behind_a_link() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let workspace = layout(&base);
    let surface = surface(&workspace);
    let staged = surface
        .call("ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "language": "python"}))
        .await
        .unwrap();
    assert_eq!(staged.structured.as_ref().unwrap()["files"][0]["path"], "src/a.py", "{}", staged.text);
    assert_eq!(staged.structured.as_ref().unwrap()["files"].as_array().unwrap().len(), 1);
    canary_intact(&base);
}

#[tokio::test]
async fn a_file_swapped_for_a_symlink_out_between_staging_and_accept_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let workspace = layout(&base);
    let surface = surface(&workspace);
    let staged = surface
        .call("ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "src", "language": "python"}))
        .await
        .unwrap();
    let id = staged.structured.as_ref().unwrap()["edit_id"].as_str().unwrap().to_owned();
    let a = workspace.root().join("src/a.py");
    std::fs::remove_file(&a).unwrap();
    std::os::unix::fs::symlink(base.join("outside/canary.py"), &a).unwrap();
    let accepted = surface.call("resolve", json!({"edit_id": id, "action": "accept"})).await.unwrap();
    assert!(accepted.is_error, "{}", accepted.text);
    assert!(accepted.text.contains("src/a.py"), "{}", accepted.text);
    canary_intact(&base);
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_replaced_never_written_through() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let workspace = layout(&base);
    let surface = surface(&workspace);
    // A hard link is a name inside the root for the canary's own inode: writes go through
    // a temporary file and a rename, so the name gets a new file and the canary stays.
    std::fs::hard_link(base.join("outside/canary.py"), workspace.root().join("hard.py")).unwrap();
    let written = surface.call("write", json!({"path": "hard.py", "content": "replaced\n"})).await.unwrap();
    assert!(!written.is_error, "{}", written.text);
    assert_eq!(std::fs::read_to_string(workspace.root().join("hard.py")).unwrap(), "replaced\n");
    canary_intact(&base);
    std::fs::hard_link(base.join("outside/canary.py"), workspace.root().join("hard2.py")).unwrap();
    let edited = surface
        .call("edit", json!({"path": "hard2.py", "old_string": "foo(7)", "new_string": "bar(7)"}))
        .await
        .unwrap();
    assert!(!edited.is_error, "{}", edited.text);
    canary_intact(&base);
}

#[tokio::test]
async fn a_cell_that_changes_directory_still_writes_inside_the_root_through_tool() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path().canonicalize().unwrap();
    let workspace = layout(&base);
    let surface = surface(&workspace);
    let code = format!(
        "%cd {}\nresult = tool('write', {{'path': 'from_cell.py', 'content': 'x'}})\nimport os\nos.getcwd()",
        base.join("outside").display()
    );
    let cell = surface.call("eval", json!({"code": code, "description": "cd out, then write"})).await.unwrap();
    assert!(!cell.is_error, "{}", cell.text);
    // The path is the root's, whatever the cell's directory.
    assert!(workspace.root().join("from_cell.py").exists(), "{}", cell.text);
    let escape = "tool('write', {'path': '../outside/from_cell.py', 'content': 'x'})";
    let refused = surface.call("eval", json!({"code": escape, "description": "write outside"})).await.unwrap();
    assert!(refused.is_error && refused.text.contains("escapes the working directory"), "{}", refused.text);
    canary_intact(&base);
}
