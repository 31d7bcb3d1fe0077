//! Path arguments resolve inside the working directory; escapes are refused.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use agent_tools::{AstmatchWiring, PathError, Registry, Tier, Workspace, resolve_path};
use serde_json::json;

/// A root `work/` with `src/a.py`, beside a sibling `outside/` holding `secret.py`.
fn layout() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("work/src")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("work/src/a.py"), "foo(1)\n").unwrap();
    std::fs::write(dir.path().join("outside/secret.py"), "foo(2)\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside"), dir.path().join("work/link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("work/src"), dir.path().join("work/inner")).unwrap();
    let workspace = Workspace::new(dir.path().join("work")).unwrap();
    (dir, workspace)
}

fn check(workspace: &Workspace, given: &str, expected: Result<&str, &str>) {
    let root = workspace.root();
    let got = resolve_path(root, given)
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .map_err(|e| e.to_string());
    let expected = expected.map(str::to_string).map_err(|e| e.replace("ROOT", &root.display().to_string()));
    assert_eq!(got, expected, "path {given:?}");
}

#[test]
fn resolves_inside_and_refuses_escapes() {
    let (dir, ws) = layout();
    let outside = dir.path().canonicalize().unwrap().join("outside");
    check(&ws, "src/a.py", Ok("src/a.py"));
    check(&ws, "./src/../src/a.py", Ok("src/a.py"));
    check(&ws, "", Ok(""));
    check(&ws, ".", Ok(""));
    check(&ws, "inner/a.py", Ok("src/a.py"));
    check(&ws, &ws.root().join("src").display().to_string(), Ok("src"));
    check(&ws, "..", Err("refused: path '..' escapes the working directory ROOT"));
    check(&ws, "../outside/secret.py", Err("refused: path '../outside/secret.py' escapes the working directory ROOT"));
    check(&ws, "src/../../outside", Err("refused: path 'src/../../outside' escapes the working directory ROOT"));
    check(&ws, "/etc/passwd", Err("refused: path '/etc/passwd' is outside the working directory ROOT"));
    let secret = outside.join("secret.py").display().to_string();
    check(&ws, &secret, Err(&format!("refused: path '{secret}' is outside the working directory ROOT")));
    check(
        &ws,
        "link/secret.py",
        Err(&format!(
            "refused: path 'link/secret.py' goes through a symlink to {}, outside the working directory ROOT",
            outside.join("secret.py").display()
        )),
    );
    check(
        &ws,
        "link/missing.py",
        Err(&format!(
            "refused: path 'link/missing.py' goes through a symlink to {}, outside the working directory ROOT",
            outside.join("missing.py").display()
        )),
    );
    check(&ws, "src/missing.py", Err("path not found: 'src/missing.py'"));
}

#[test]
fn path_errors_are_typed() {
    let (_dir, ws) = layout();
    assert_eq!(ws.resolve("nope"), Err(PathError::NotFound { given: "nope".into() }));
    assert_eq!(ws.resolve("../x"), Err(PathError::Escapes { given: "../x".into(), root: ws.root().to_path_buf() }));
}

#[tokio::test]
async fn tools_refuse_paths_outside_the_root() {
    let (_dir, ws) = layout();
    let root = ws.root().to_path_buf();
    let surface =
        Arc::new(Registry::builder().with_astmatch(AstmatchWiring::new(ws)).build().unwrap()).surface(Tier::Exec);
    let grep = |path: &str| json!({"pattern": "foo($X)", "path": path, "language": "python"});
    for (path, expected) in [
        ("../outside", format!("refused: path '../outside' escapes the working directory {}", root.display())),
        ("/etc", format!("refused: path '/etc' is outside the working directory {}", root.display())),
        ("missing", "path not found: 'missing'".to_string()),
    ] {
        let result = surface.call("ast_grep", grep(path)).await.unwrap();
        assert!(result.is_error);
        assert_eq!(result.text, expected);
    }
    let result =
        surface.call("ast_edit", json!({"pattern": "foo($X)", "rewrite": "bar($X)", "path": "link"})).await.unwrap();
    assert!(result.is_error);
    assert!(result.text.starts_with("refused: path 'link' goes through a symlink to "), "{}", result.text);
    // The walk from the root does not follow the symlink out either.
    let result = surface.call("ast_grep", json!({"pattern": "foo($X)", "language": "python"})).await.unwrap();
    let files: Vec<&str> = result.structured.as_ref().unwrap()["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["src/a.py"]);
}

/// Found by the `root_paths` fuzz target: a dangling symlink resolved to itself, so a
/// write through it would have landed wherever it points, and a loop resolved for writing.
#[tokio::test]
async fn dangling_symlinks_are_followed_and_loops_refused() {
    let (dir, ws) = layout();
    let root = ws.root().to_path_buf();
    let outside = dir.path().canonicalize().unwrap().join("outside");
    std::os::unix::fs::symlink(outside.join("new.py"), root.join("dangling_out")).unwrap();
    std::os::unix::fs::symlink("src/new.py", root.join("dangling_in")).unwrap();
    std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
    assert_eq!(
        ws.resolve_for_write("dangling_out"),
        Err(PathError::SymlinkOutside {
            given: "dangling_out".into(),
            target: outside.join("new.py"),
            root: root.clone()
        })
    );
    // Inside, the write goes where the link points; reading it is "not found".
    assert_eq!(ws.resolve_for_write("dangling_in"), Ok(root.join("src/new.py")));
    assert_eq!(ws.resolve("dangling_in"), Err(PathError::NotFound { given: "dangling_in".into() }));
    assert!(matches!(ws.resolve_for_write("loop"), Err(PathError::SymlinkLoop { .. })));
    assert_eq!(
        ws.resolve_for_write("loop/x.py").map_err(|e| e.to_string()),
        Err(format!(
            "refused: path 'loop/x.py' goes through the symlink {}, which cannot be followed (a loop)",
            root.join("loop").display()
        ))
    );

    // Through the tool: nothing is written outside.
    let surface = Arc::new(Registry::builder().with_file_tools(ws).build().unwrap()).surface(Tier::Exec);
    let result = surface.call("write", json!({"path": "dangling_out", "content": "x = 1\n"})).await;
    let text = match result {
        Ok(result) => {
            assert!(result.is_error, "{}", result.text);
            result.text
        }
        Err(error) => error.to_string(),
    };
    assert!(text.contains("goes through a symlink to"), "{text}");
    assert!(!outside.join("new.py").exists());
}
