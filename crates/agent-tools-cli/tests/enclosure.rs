//! The enclosure through the built binary: `--enclosure` and `[enclosure]`
//! as settings (layers, refusals with their place), `status` saying what is in
//! force, `eval` and `vibe_*` running in the real bubblewrap (writes outside
//! the root refused; the root read-only under a `read` cap), and a command
//! prefix that every kernel, worker, project checker and debug adapter starts through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn agent_tools(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
    command.args(args).current_dir(root);
    for (var, _) in std::env::vars().filter(|(v, _)| v.starts_with("AGENT_TOOLS_")) {
        command.env_remove(var);
    }
    command.envs(env.iter().copied()).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// Whether bwrap works here; fails under `CI=true` when it does not.
fn bwrap_ready() -> bool {
    match enclosure::Enclosure::bwrap("/").check() {
        Ok(()) => true,
        Err(error) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
            eprintln!("SKIPPED: {error}");
            false
        }
    }
}

/// A canary outside every temporary root, which bwrap shows read-only.
fn canary(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-enclosure-canaries");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "untouched").unwrap();
    path
}

fn setting(root: &Path, args: &[&str], env: &[(&str, &str)], key: &str) -> Value {
    let mut all = vec!["config", "--json"];
    all.extend_from_slice(args);
    let out = agent_tools(root, &all, env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let entry = config["settings"].as_array().unwrap().iter().find(|s| s["key"] == key).unwrap().clone();
    json!([entry["value"], entry["source"]])
}

#[test]
fn the_enclosure_settings_layer_and_bad_ones_name_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("agent-tools.toml");
    std::fs::write(&file, "[enclosure]\nmode = \"bwrap\"\nnetwork = true\nrw_paths = [\"cache\"]\n").unwrap();
    let name = file.display().to_string();
    assert_eq!(setting(dir.path(), &[], &[], "enclosure.mode"), json!(["bwrap", format!("file {name}:2")]));
    assert_eq!(setting(dir.path(), &[], &[], "enclosure.network"), json!([true, format!("file {name}:3")]));
    let cache = dir.path().join("cache").display().to_string();
    assert_eq!(setting(dir.path(), &[], &[], "enclosure.rw_paths"), json!([[cache], format!("file {name}:4")]));
    assert_eq!(setting(dir.path(), &[], &[], "enclosure.ro_paths"), json!([[], "default"]));
    let env = [("AGENT_TOOLS_ENCLOSURE_MODE", "none")];
    assert_eq!(setting(dir.path(), &[], &env, "enclosure.mode"), json!(["none", "env AGENT_TOOLS_ENCLOSURE_MODE"]));
    let flag = ["--enclosure", "bwrap"];
    assert_eq!(setting(dir.path(), &flag, &env, "enclosure.mode"), json!(["bwrap", "flag --enclosure"]));
    let prefix = [("AGENT_TOOLS_ENCLOSURE_PREFIX", r#"["docker", "exec", "-i", "app"]"#)];
    assert_eq!(
        setting(dir.path(), &["--enclosure", "command"], &prefix, "enclosure.prefix"),
        json!([["docker", "exec", "-i", "app"], "env AGENT_TOOLS_ENCLOSURE_PREFIX"])
    );

    // A language server in or out of the enclosure, whatever enclosure.language_servers says.
    std::fs::write(&file, "[[lsp.server]]\nname = \"clangd\"\nenclosed = true\n").unwrap();
    let out = agent_tools(dir.path(), &["config", "--json"], &[]);
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(config["lsp_servers"][0]["enclosed"], true);
    std::fs::write(&file, "[[lsp.server]]\nname = \"clangd\"\nenclosed = \"yes\"\n").unwrap();
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert_eq!(
        stderr(&out),
        format!("agent-tools: {name}:3:12: lsp.server.enclosed: expected true or false, found the string \"yes\"\n")
    );

    std::fs::write(&file, "[enclosure]\nmode = \"docker\"\n").unwrap();
    let out = agent_tools(dir.path(), &["status"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "agent-tools: {name}:2:8: enclosure.mode: expected one of \"none\", \"bwrap\", \"command\", found the string \"docker\"\n"
        )
    );
    std::fs::write(&file, "[enclosure]\nenv = [\"NOEQUALS\"]\n").unwrap();
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert_eq!(
        stderr(&out),
        format!(
            "agent-tools: {name}:2:7: enclosure.env: expected an array of \"NAME=VALUE\" strings, found an array\n"
        )
    );
    std::fs::remove_file(&file).unwrap();
    let out = agent_tools(
        dir.path(),
        &["call", "eval", r#"{"code": "1", "description": "one"}"#, "--enclosure", "command"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("enclosure.mode: \"command\" needs enclosure.prefix"), "{}", stderr(&out));
}

#[test]
fn status_and_eval_in_bwrap() {
    if !bwrap_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = agent_tools(dir.path(), &["status", "--json", "--enclosure", "bwrap"], &[]);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        status["enclosure"],
        json!({
            "mode": "bwrap",
            "description": "bwrap (no network, root writable)",
            "available": true,
            "why": null,
            "language_servers": false
        })
    );
    let out = agent_tools(dir.path(), &["status"], &[]);
    assert!(
        stdout(&out).contains("\nenclosure (eval kernels, vibe workers, debug adapters, project checkers): host\n"),
        "{}",
        stdout(&out)
    );

    let canary = canary("eval");
    let code = format!(
        "open('made.txt', 'w').write('in')\ntry:\n    open({:?}, 'w').write('out')\nexcept OSError as e:\n    print(type(e).__name__, e.errno)",
        canary.display().to_string()
    );
    let args = json!({"code": code, "description": "write inside and outside the root"}).to_string();
    let out = agent_tools(dir.path(), &["call", "eval", &args, "--enclosure", "bwrap"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // Read-only where the host shows through (EROFS); absent under the private /tmp (ENOENT).
    let errno = if canary.starts_with("/tmp") { "FileNotFoundError 2" } else { "OSError 30" };
    assert_eq!(stdout(&out), format!("[a new python kernel, in bwrap (no network, root writable)]\n{errno}\n\n"));
    assert_eq!(std::fs::read_to_string(dir.path().join("made.txt")).unwrap(), "in");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");

    // A bwrap that is not there: status says so, and the cell never runs.
    let broken = [("PATH", "/nonexistent")];
    let out = agent_tools(dir.path(), &["status", "--json", "--enclosure", "bwrap"], &broken);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(status["enclosure"]["available"], false, "{status}");
}

#[tokio::test]
async fn vibe_workers_in_bwrap_and_a_read_cap_makes_the_root_read_only() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
    if !bwrap_ready() {
        return;
    }
    let canary = canary("vibe");
    for (cap, expected) in [("exec", "inside outside-refused"), ("read", "inside-refused outside-refused")] {
        let dir = tempfile::tempdir().unwrap();
        let worker = format!(
            "(echo x > note.txt 2>/dev/null && printf inside || printf inside-refused); (echo x > '{}' 2>/dev/null && echo ' outside' || echo ' outside-refused')",
            canary.display()
        );
        let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
            cmd.args(["serve", "--vibe", "--vibe-fast-cmd", &worker, "--enclosure", "bwrap", "--cap", cap])
                .current_dir(dir.path())
                .env("AGENT_TOOLS_LOG", "warn");
        });
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
        common::call(&client, "vibe_spawn", json!({"brief": "write", "label": "writer"})).await;
        let waited = common::call(&client, "vibe_wait", json!({"worker_id": "w1"})).await;
        let worker = waited.structured_content.unwrap();
        assert_eq!(worker["last_result"], format!("{expected}\n"), "cap {cap}: {worker}");
        assert_eq!(dir.path().join("note.txt").exists(), cap == "exec");
        client.cancel().await.unwrap();
    }
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

#[tokio::test]
async fn every_process_of_the_project_starts_through_the_prefix() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("entered.log");
    let wrapper = dir.path().join("enter.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexport ENTERED=yes\nexec \"$@\"\n", log.display()),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let prefix = json!([wrapper.display().to_string()]).to_string();
    let config = format!("[enclosure]\nmode = \"command\"\nprefix = {prefix}\nenv = [\"FROM_CONFIG=1\"]\n");
    std::fs::write(dir.path().join("agent-tools.toml"), config).unwrap();
    // A broken crate for the checker, and a Python project (its venv with debugpy) for the debugger.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let broken = workspace.join("fixtures/lsp/rust-broken");
    std::fs::copy(broken.join("Cargo.toml"), dir.path().join("Cargo.toml")).unwrap();
    std::fs::copy(broken.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::copy(broken.join("src/main.rs"), dir.path().join("src/main.rs")).unwrap();
    std::fs::write(dir.path().join("requirements.txt"), "").unwrap();
    std::fs::write(dir.path().join("hello.py"), "print('hello')\n").unwrap();
    std::os::unix::fs::symlink(workspace.join(".tools/venv").canonicalize().unwrap(), dir.path().join(".venv"))
        .unwrap();
    // pyright, the Python project's checker, from the project's node_modules/.bin.
    let node_modules = workspace.join(".tools/node/node_modules").canonicalize().unwrap();
    std::os::unix::fs::symlink(node_modules, dir.path().join("node_modules")).unwrap();

    let out = agent_tools(dir.path(), &["status"], &[]);
    assert!(stdout(&out).contains(&format!(
        "enclosure (eval kernels, vibe workers, debug adapters, project checkers): command prefix `{}`",
        wrapper.display()
    )));

    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.args(["serve", "--vibe", "--vibe-fast-cmd", "echo \"$ENTERED $FROM_CONFIG\""])
            .current_dir(dir.path())
            .env("AGENT_TOOLS_LOG", "warn");
    });
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let py = "import os\nprint(os.environ.get('ENTERED'), os.environ.get('FROM_CONFIG'))";
    let cell = common::call(&client, "eval", json!({"code": py, "description": "where am I"})).await;
    let cell = cell.structured_content.unwrap();
    assert_eq!(cell["outputs"][0]["text"], "yes 1\n", "{cell}");
    assert_eq!(cell["enclosure"], format!("command prefix `{}`", wrapper.display()));
    let js = "process.env.ENTERED";
    let cell =
        common::call(&client, "eval", json!({"code": js, "language": "javascript", "description": "where am I"})).await;
    assert_eq!(cell.structured_content.unwrap()["outputs"][0]["data"]["text/plain"], "'yes'");
    common::call(&client, "vibe_spawn", json!({"brief": "go", "label": "entered"})).await;
    let waited = common::call(&client, "vibe_wait", json!({"worker_id": "w1"})).await;
    assert_eq!(waited.structured_content.unwrap()["last_result"], "yes 1\n");
    // The project checkers behind diagnostics "*": cargo check on the broken crate, pyright.
    let checked = common::call(&client, "lsp", json!({"action": "diagnostics", "file": "*"})).await;
    let text = common::text(&checked);
    assert!(text.contains("E0384"), "{text}");
    // A debug launch: debugpy's adapter through the prefix, the program under it.
    let launched = common::call(&client, "debug", json!({"op": "launch", "program": "hello.py"})).await;
    let launched = format!("{:?}", launched.structured_content);
    assert!(launched.contains("exited"), "{launched}");
    client.cancel().await.unwrap();
    // Each process through the prefix: the Python kernel, the Node kernel, the worker,
    // cargo check and pyright, debugpy's adapter (the program it starts runs under it).
    let logged = std::fs::read_to_string(&log).unwrap();
    // Each line: env --default-signal=INT -C DIR NAME=VALUE… PROGRAM ARGS…
    let program = |line: &str| line.split(' ').skip(4).find(|word| !word.contains('=')).unwrap_or("").to_owned();
    let programs: Vec<String> = logged.lines().map(program).collect();
    assert_eq!(logged.lines().count(), 6, "{logged}");
    assert!(logged.lines().all(|line| line.starts_with("env --default-signal=INT -C ")), "{logged}");
    // A kernel's frames travel on stdio through a prefix: `sh -c SHIM INTERPRETER -c|-e BOOTSTRAP`.
    let lines: Vec<&str> = logged.lines().collect();
    assert!(programs[0] == "sh" && lines[0].contains("/.venv/bin/python -c import io"), "{logged}");
    assert!(programs[1] == "sh" && lines[1].contains("node -e (()=>"), "{logged}");
    assert_eq!(programs[2], "sh", "{logged}");
    let mut checkers = vec![programs[3].rsplit('/').next().unwrap(), programs[4].rsplit('/').next().unwrap()];
    checkers.sort_unstable();
    assert_eq!(checkers, ["cargo", "pyright"], "{logged}");
    assert!(programs[5].ends_with(".venv/bin/python") && logged.contains("debugpy.adapter"), "{logged}");
}
