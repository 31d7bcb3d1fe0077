//! The wheel on its own: built by maturin (the dev profile, reusing the target directory's
//! artifacts), installed into a fresh venv that has nothing else, and its `agent-tools`
//! console script run there: `--version`, `status`, a `call`'s exit statuses, and `serve`
//! answering MCP `initialize` on stdio; then the same server through `uvx --from WHEEL`,
//! offline. Nothing is fetched: pip installs from the file with `--no-index`.

use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{maturin, require, shown, venv_bin};

/// A fresh directory under the target's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A root with one Rust file, whose `.unwrap()` is on line 2.
fn rust_root() -> PathBuf {
    let root = scratch("wheel-root");
    std::fs::write(root.join("main.rs"), "fn main() {\n    let n: u8 = \"4\".parse().unwrap();\n}\n").unwrap();
    root
}

/// Sends MCP `initialize` to the server `command` starts, returns its answer's line, and
/// checks that it ends once its stdin closes.
fn initialize(mut command: Command) -> serde_json::Value {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wheel-test", "version": "0"}}
    });
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "serve ended with {status}");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not an MCP answer ({e}): {line:?}"))
}

#[test]
fn a_wheel_in_a_fresh_venv_runs_the_command() {
    if !require("setup's venv", &venv_bin("python")) || !require("maturin (pip)", &venv_bin("maturin")) {
        return;
    }
    let dist = scratch("wheel-dist");
    let built = maturin(&["build", "--profile", "dev", "--out", dist.to_str().unwrap()]);
    assert!(built.status.success(), "maturin build failed:\n{}", shown(&built));
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist).unwrap().map(|e| e.unwrap().path()).collect();
    let [wheel] = wheels.as_slice() else { panic!("one wheel expected in {}: {wheels:?}", dist.display()) };
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("agent_tools_server-0.1.0-cp310-abi3-") && name.ends_with(".whl"), "{name}");

    let venv = scratch("wheel-venv");
    let made = Command::new(venv_bin("python")).args(["-m", "venv"]).arg(&venv).output().unwrap();
    assert!(made.status.success(), "{}", shown(&made));
    let pip = Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--no-index", "--disable-pip-version-check"])
        .arg(wheel)
        .output()
        .unwrap();
    assert!(pip.status.success(), "{}", shown(&pip));
    let listed = Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let others: Vec<&str> =
        listed.lines().filter(|l| !l.starts_with("pip==") && !l.starts_with("setuptools==")).collect();
    assert_eq!(others, ["agent-tools-server==0.1.0"], "the venv has only the wheel (and pip)");

    let command = venv.join("bin/agent-tools");
    let root = rust_root();
    let run = |args: &[&str]| {
        Command::new(&command).args(args).current_dir(&root).env_remove("VIRTUAL_ENV").output().unwrap()
    };
    let version = run(&["--version"]);
    assert_eq!(
        (version.status.code(), String::from_utf8_lossy(&version.stdout).as_ref()),
        (Some(0), "agent-tools 0.1.0\n")
    );
    let status = run(&["status"]);
    assert_eq!(status.status.code(), Some(0), "{}", shown(&status));
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(text.starts_with(&format!("root: {}\n", root.display())), "{text}");
    assert!(
        text.contains(
            "structural search and rewrite (ast_grep, ast_edit, resolve): available, 12 tree-sitter grammars"
        ),
        "{text}"
    );
    assert!(text.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["rust", "1", ".rs"]), "{text}");
    // The exit statuses are the binary's: 0 found, 1 a tool error, 2 refused or misused.
    let found = run(&["call", "ast_grep", r#"{"pattern": "$X.unwrap()", "language": "rust"}"#]);
    assert_eq!(found.status.code(), Some(0), "{}", shown(&found));
    assert!(
        String::from_utf8_lossy(&found.stdout).contains("main.rs:2:17: \"4\".parse().unwrap()"),
        "{}",
        shown(&found)
    );
    let failed = run(&["call", "ast_grep", r#"{"pattern": "$$$A", "language": "rust"}"#]);
    assert_eq!(failed.status.code(), Some(1), "{}", shown(&failed));
    let refused = run(&["call", "--cap", "read", "write", r#"{"path": "x", "content": ""}"#]);
    assert_eq!(refused.status.code(), Some(2), "{}", shown(&refused));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr),
        "refused: write is write tier; this surface is capped at read\n"
    );
    let misused = run(&["frobnicate"]);
    assert_eq!(misused.status.code(), Some(2), "{}", shown(&misused));
    assert!(String::from_utf8_lossy(&misused.stderr).starts_with("error: unrecognized subcommand 'frobnicate'"));

    let mut serve = Command::new(&command);
    serve.args(["serve", "--cap", "exec", "--root"]).arg(&root);
    let answer = initialize(serve);
    assert_eq!(answer["result"]["serverInfo"]["name"], "agent-tools", "{answer}");

    // The command by the distribution's name, as `uvx` finds it.
    let by_name = Command::new(venv.join("bin/agent-tools-server")).arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&by_name.stdout), "agent-tools 0.1.0\n", "{}", shown(&by_name));

    // The README's uvx snippet, from this wheel instead of PyPI, offline.
    if require("uv (pip)", &venv_bin("uvx")) {
        let mut uvx = Command::new(venv_bin("uvx"));
        uvx.arg("--offline")
            .arg("--from")
            .arg(wheel)
            .args(readme_uvx_args())
            .args(["--root"])
            .arg(&root)
            .env("UV_CACHE_DIR", scratch("wheel-uv-cache"))
            .env_remove("VIRTUAL_ENV");
        let answer = initialize(uvx);
        assert_eq!(answer["result"]["serverInfo"]["name"], "agent-tools", "{answer}");
    }
}

/// The `args` of the README's uvx snippet (`agent-tools-server serve …`): the package by its name.
fn readme_uvx_args() -> Vec<String> {
    let readme = std::fs::read_to_string(crate::common::workspace().join("README.md")).unwrap();
    let section = readme.split("\n### Any client, with uvx\n").nth(1).expect("README has the uvx snippet");
    let json = section.split("```json\n").nth(1).and_then(|rest| rest.split("\n```").next()).unwrap();
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    let entry = &value["mcpServers"]["agent-tools"];
    assert_eq!(entry["command"], "uvx", "{entry}");
    let args: Vec<String> =
        entry["args"].as_array().unwrap().iter().map(|arg| arg.as_str().unwrap().to_owned()).collect();
    assert_eq!(args.first().map(String::as_str), Some("agent-tools-server"), "uvx runs the package's own command");
    args
}
