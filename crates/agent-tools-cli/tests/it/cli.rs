//! The `agent-tools` binary run as a process: `call`, `tools`, `status`, exit statuses,
//! and `serve` started as README's client snippets start it.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const APP: &str = "def foo(a):\n    return a\n\nx = foo(1)\nfoo(bar)\n";

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    dir
}

fn agent_tools(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agent-tools")).args(args).current_dir(root).output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn call_prints_text() {
    let dir = fixture();
    let out = agent_tools(dir.path(), &["call", "ast_grep", r#"{"pattern": "foo($X)", "language": "python"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "2 matches (showing 2) in 1 file, pattern parsed as statement (python)\n\
         app.py:4:5: foo(1)  [$X = 1]\n\
         app.py:5:1: foo(bar)  [$X = bar]\n"
    );
}

/// Two `call`s are two processes: the first parses and writes the tree store, the
/// second loads the tree from it and parses nothing; an edited file is parsed again.
/// A store that cannot be written is said to be so, and the search still answers.
#[test]
fn a_second_call_loads_the_tree_the_first_stored() {
    let dir = fixture();
    let store = tempfile::tempdir().unwrap();
    let set = format!("search.tree_store={}", store.path().join("trees").display());
    let call = |root: &Path, set: &str| -> Value {
        let args = ["call", "ast_grep", r#"{"pattern": "foo($X)", "language": "python"}"#, "--json", "--set", set];
        let out = agent_tools(root, &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let loaded_written = |value: &Value| {
        let store = &value["parse_cache"]["store"];
        (value["total"].as_u64().unwrap(), store["loaded"].as_u64().unwrap(), store["written"].as_u64().unwrap())
    };
    assert_eq!(loaded_written(&call(dir.path(), &set)), (2, 0, 1));
    assert_eq!(loaded_written(&call(dir.path(), &set)), (2, 1, 0));
    std::fs::write(dir.path().join("app.py"), format!("{APP}foo(baz)\n")).unwrap();
    assert_eq!(loaded_written(&call(dir.path(), &set)), (3, 0, 1));

    // A file where the store's directory should be.
    let blocked = store.path().join("file");
    std::fs::write(&blocked, "").unwrap();
    let set = format!("search.tree_store={}", blocked.display());
    let value = call(dir.path(), &set);
    assert_eq!(loaded_written(&value), (3, 0, 0));
    let error = value["parse_cache"]["store"]["error"].as_str().unwrap();
    assert!(error.starts_with(&format!("cannot write in {}: ", blocked.display())), "{error}");
    let out = agent_tools(
        dir.path(),
        &["call", "ast_grep", r#"{"pattern": "foo($X)", "language": "python"}"#, "--set", &set],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!(
            "\nnote: the tree store keeps no trees ({error}); set `search.tree_store` to a writable directory"
        )),
        "{}",
        stdout(&out)
    );
}

#[test]
fn call_json_prints_the_structured_value() {
    let dir = fixture();
    let root = dir.path().display().to_string();
    let out = agent_tools(
        Path::new("/"),
        &[
            "call",
            "ast_grep",
            r#"{"pattern": "foo($X)", "path": "app.py"}"#,
            "--root",
            &root,
            "--json",
            "--cap",
            "read",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(value["total"], 2);
    assert_eq!(value["language"], "python");
    assert_eq!(
        value["matches"][1],
        json!({"file": "app.py", "line": 5, "column": 1, "end_line": 5, "end_column": 9, "text": "foo(bar)", "context": "statement",
               "captures": {"X": {"multi": false, "text": "bar", "line": 5, "column": 5}}})
    );
}

#[test]
fn exit_status_says_what_happened() {
    let dir = fixture();
    // The tool reported an error.
    let out = agent_tools(dir.path(), &["call", "ast_grep", r#"{"pattern": "foo($X)"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).starts_with("language is required"), "{}", stdout(&out));
    let out = agent_tools(dir.path(), &["call", "ast_grep", r#"{"pattern": "foo($X)", "path": "nope.py"}"#, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(serde_json::from_str::<Value>(&stdout(&out)).unwrap(), json!({"error": "path not found: 'nope.py'"}));
    // Refused: above the cap, unknown tool, bad arguments.
    let out = agent_tools(
        dir.path(),
        &["call", "ast_edit", r#"{"pattern": "foo($X)", "rewrite": "bar($X)"}"#, "--cap", "read"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), "refused: ast_edit is write tier; this surface is capped at read\n");
    assert_eq!(stdout(&out), "");
    let out = agent_tools(dir.path(), &["call", "nope", "{}"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "unknown tool 'nope'; available tools: ast_grep, ast_edit, resolve, lsp, lsp_rename, write, edit, apply_patch, debug, ask_user, eval\n"
    );
    let out = agent_tools(dir.path(), &["call", "ast_grep", "{}"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), "invalid arguments for ast_grep: missing field `pattern`\n");
    // Usage errors.
    let out = agent_tools(dir.path(), &["call", "ast_grep", "{not json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("agent-tools: the arguments are not valid JSON"), "{}", stderr(&out));
    let out = agent_tools(dir.path(), &["call", "ast_grep", "{}", "--cap", "root"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown tier 'root'; expected read, write or exec"), "{}", stderr(&out));
}

#[test]
fn call_edit_then_resolve_is_two_runs_so_the_id_is_gone() {
    let dir = fixture();
    let out = agent_tools(
        dir.path(),
        &["call", "ast_edit", r#"{"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"}"#],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("(proposed) 2 replacements in 1 file"), "{}", stdout(&out));
    let out = agent_tools(dir.path(), &["call", "resolve", r#"{"edit_id": "edit_1", "action": "accept"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "unknown edit_id 'edit_1': it was never staged or is already resolved\n");
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), APP);
}

/// The one-shot command says its staged change ends with it, and `--accept`
/// stages and writes in one go; `--accept` for another tool is misuse.
#[test]
fn call_says_a_staged_change_ends_with_it_and_accept_writes_it() {
    let dir = fixture();
    let edit = r#"{"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"}"#;
    let out = agent_tools(dir.path(), &["call", "ast_edit", edit]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).trim_end().ends_with(
            "(this command ends here, and the staged change with it: nothing was written; run it again with \
             --accept to write it, or use `agent-tools serve`, where a later resolve can reach it)"
        ),
        "{}",
        stdout(&out)
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), APP);
    let out = agent_tools(dir.path(), &["call", "ast_edit", edit, "--accept"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.starts_with("(proposed) 2 replacements in 1 file"), "{printed}");
    assert!(printed.contains("accepted edit_1: 2 replacements written to 1 file\n  app.py\n"), "{printed}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("app.py")).unwrap(),
        "def foo(a):\n    return a\n\nx = bar(1)\nbar(bar)\n"
    );
    let out = agent_tools(dir.path(), &["call", "ast_grep", r#"{"pattern": "bar($X)"}"#, "--yes"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--accept is for ast_edit"), "{}", stderr(&out));
}

#[test]
fn tools_lists_what_the_cap_allows() {
    let dir = fixture();
    let out = agent_tools(dir.path(), &["tools", "--cap", "read"]);
    assert_eq!(out.status.code(), Some(0));
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ast_grep", "lsp", "ask_user"]);
    assert_eq!(tools[0]["tier"], "read");
    assert_eq!(tools[0]["parallel_safe"], true);
    assert_eq!(tools[0]["input_schema"]["required"], json!(["pattern"]));
    let out = agent_tools(dir.path(), &["tools"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ast_grep",
            "ast_edit",
            "resolve",
            "lsp",
            "lsp_rename",
            "write",
            "edit",
            "apply_patch",
            "debug",
            "ask_user",
            "eval"
        ]
    );
    // --vibe lists the workers' tools too, as `serve --vibe` registers them.
    let out = agent_tools(dir.path(), &["tools", "--vibe", "--cap", "read"]);
    let tools: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = tools.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["ast_grep", "lsp", "ask_user", "vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"]
    );
}

/// The command's help names every tool family, not structural search alone.
#[test]
fn help_describes_every_tool() {
    let out = agent_tools(Path::new("."), &["--help"]);
    let help = stdout(&out);
    for tool in ["lsp_rename", "ast_edit", "apply_patch", "debug", "eval", "ask_user", "vibe_*"] {
        assert!(help.contains(tool), "--help does not name {tool}: {help}");
    }
}

#[test]
fn status_counts_files_per_language() {
    let dir = fixture();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "\n").unwrap();
    std::fs::write(dir.path().join(".gitignore"), "ignored/\n").unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::create_dir(dir.path().join("ignored")).unwrap();
    std::fs::write(dir.path().join("ignored/x.py"), "\n").unwrap();
    let out = agent_tools(dir.path(), &["status", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let counts: Vec<(String, u64)> = status["languages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["files"] != 0)
        .map(|l| (l["id"].as_str().unwrap().to_string(), l["files"].as_u64().unwrap()))
        .collect();
    assert_eq!(counts, [("python".to_string(), 1), ("rust".to_string(), 2)]);
    assert_eq!(status["tools"], json!(["ast_grep", "ast_edit", "resolve"]));
    let out = agent_tools(dir.path(), &["status"]);
    let text = stdout(&out);
    assert!(text.contains("\npython            1  .py .pyi\n"), "{text}");
    assert!(text.contains("\nrust              2  .rs\n"), "{text}");
    // No root marker here: every language server says so, whatever is installed.
    let servers = status["language_servers"].as_array().unwrap();
    let ids: Vec<&str> = servers.iter().map(|s| s["server"].as_str().unwrap()).collect();
    assert!(ids.contains(&"rust-analyzer") && ids.contains(&"pyright") && ids.contains(&"gopls"), "{ids:?}");
    for server in servers {
        assert_eq!(server["usable"], false, "{server}");
        assert!(server["why"].as_str().unwrap().starts_with("no root marker ("), "{server}");
    }
    assert!(text.contains("language servers for lsp, lsp_rename and diagnostics on write"), "{text}");
}

#[test]
fn lsp_choice_names_a_known_server() {
    let dir = fixture();
    let out = agent_tools(dir.path(), &["status", "--lsp", "python=nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), "agent-tools: --lsp: no server \"nope\" for python; known: pyright, pylsp, ruff\n");
    let out = agent_tools(dir.path(), &["status", "--json", "--lsp", "python=ruff"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn lsp_choice_names_a_primary_and_its_helpers() {
    let dir = fixture();
    let python = |args: &[&str]| -> Vec<(String, bool)> {
        let out = agent_tools(dir.path(), args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let status: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let servers = status["language_servers"].as_array().unwrap().iter();
        servers
            .filter(|s| s["language"] == "python")
            .map(|s| (s["server"].as_str().unwrap().to_string(), s["helper"].as_bool().unwrap()))
            .collect()
    };
    let helpers = |list: Vec<(String, bool)>| -> Vec<String> {
        list.into_iter().filter(|(_, helper)| *helper).map(|(server, _)| server).collect()
    };
    // By default ruff helps; one server named alone takes none; `+` names them.
    assert_eq!(helpers(python(&["status", "--json"])), ["ruff"]);
    assert!(helpers(python(&["status", "--json", "--lsp", "python=pyright"])).is_empty());
    assert_eq!(helpers(python(&["status", "--json", "--lsp", "python=pylsp+ruff"])), ["ruff"]);
    assert_eq!(helpers(python(&["status", "--json", "--lsp", "python=ruff+pylsp"])), ["pylsp"]);

    let refused = |choice: &str| {
        let out = agent_tools(dir.path(), &["status", "--lsp", choice]);
        assert_eq!(out.status.code(), Some(2), "{choice}");
        stderr(&out)
    };
    assert_eq!(
        refused("python=pyright+nope"),
        "agent-tools: --lsp: no server \"nope\" for python; known: pyright, pylsp, ruff\n"
    );
    assert_eq!(
        refused("python=pyright+"),
        "agent-tools: --lsp: lsp.servers.python: \"pyright+\" has an empty server name; write the primary, then each \
         helper after a `+` (`pyright+ruff`)\n"
    );
    assert_eq!(refused("python=ruff+ruff"), "agent-tools: --lsp: lsp.servers.python: \"ruff+ruff\" names ruff twice\n");
}

#[test]
fn call_ask_without_a_terminal_is_denied_at_once() {
    let dir = fixture();
    let args = r#"{"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"}"#;
    let out = agent_tools(dir.path(), &["call", "--ask", "ast_edit", args]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        "refused: ast_edit did not run, because it needs a human's approval and no human is attached to give it; do not retry the same call unchanged (do the task another way, or ask the user)\n"
    );
    // Read tier is allowed by the default policy and runs without asking.
    let out =
        agent_tools(dir.path(), &["call", "--ask", "ast_grep", r#"{"pattern": "foo($X)", "language": "python"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(dir.path().join("app.py")).unwrap(), APP);
}

/// Ctrl-C (SIGINT to the command) cancels a running call: exit 130, nothing
/// on stdout, and the kernel it started is gone. Its stderr is not a
/// terminal here, so no progress is written to it either.
#[test]
fn ctrl_c_cancels_a_running_call_and_exits_130() {
    let dir = fixture();
    let code = "import os\nopen('started', 'w').write(str(os.getpid()))\nwhile True:\n    pass";
    let args = json!({"code": code, "description": "spin until cancelled"}).to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["call", "eval", &args])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = dir.path().join("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let kernel_pid = loop {
        if let Ok(pid) = std::fs::read_to_string(&started)
            && !pid.is_empty()
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "the cell never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("eval cancelled (Ctrl-C)"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("running"), "no progress off a terminal: {}", stderr(&out));
    // The kernel went with the call (reaped, or a zombie awaiting its reaper).
    let gone = (0..100).any(|_| {
        let running = std::fs::read_to_string(format!("/proc/{kernel_pid}/stat"))
            .is_ok_and(|state| state.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')));
        if running {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        !running
    });
    assert!(gone, "kernel {kernel_pid} still running");
}

/// With stderr on a terminal (a pseudo-terminal here) and stdout a pipe,
/// `call` shows progress on stderr, one line rewritten in place and cleared
/// at the end, and stdout carries the result alone.
#[test]
fn progress_goes_to_a_terminals_stderr_never_to_stdout() {
    use std::io::Read as _;
    let dir = fixture();
    let pty = nix::pty::openpty(None, None).unwrap();
    let code = "import time\nprint('warming up', flush=True)\ntime.sleep(3)\n'done'";
    let args = json!({"code": code, "description": "print, then sleep a while"}).to_string();
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
    command
        .args(["call", "eval", &args])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::from(pty.slave));
    let child = command.spawn().unwrap();
    // Our copy of the terminal's slave end goes, so reading ends with the command.
    drop(command);
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buffer[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    });
    let out = child.wait_with_output().unwrap();
    let terminal = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{terminal}");
    assert_eq!(stdout(&out).trim_end(), "warming up\n'done'");
    assert!(terminal.contains("\r\x1b[2K2 s: running; last output: warming up"), "{terminal:?}");
    assert!(terminal.ends_with("\r\x1b[2K"), "the line is cleared at the end: {terminal:?}");
}

/// The snippets of README's "Use it from your MCP client": the client's heading, the
/// fence's language, and how to find the server's command and arguments in it.
const CLIENT_SNIPPETS: &[(&str, &str)] = &[
    ("Claude Code", "sh"),
    ("Claude Code", "json"),
    ("Codex", "toml"),
    ("Cursor", "json"),
    ("VS Code", "json"),
    ("Zed", "json"),
    ("Any client, with uvx", "json"),
];

/// Every client snippet in the README names `agent-tools` with arguments that start
/// a server, in a fresh directory, that answers MCP `initialize` and ends when its
/// stdin closes. A snippet missing or malformed fails here, so the README cannot
/// hand out a configuration that does not start.
#[test]
fn every_client_snippet_in_the_readme_starts_a_server_that_initializes() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let section = readme_section(&readme, "## Use it from your MCP client");
    for &(client, language) in CLIENT_SNIPPETS {
        let blocks = fenced_blocks(subsection(section, client), language);
        // The installed command's snippet, then (where a client has one) its `uvx` form.
        let uvx = blocks.iter().filter(|b| b.contains("\"uvx\"") || b.contains("-- uvx ")).count();
        let wanted = if matches!(client, "Any client, with uvx" | "Claude Code") && language != "sh" { 1 } else { 2 };
        let wanted_uvx = if client == "Any client, with uvx" { 1 } else { wanted - 1 };
        assert_eq!(
            (blocks.len(), uvx),
            (wanted, wanted_uvx),
            "README: {client}'s ```{language} snippets (all, uvx forms)"
        );
        for block in &blocks {
            let (command, args) = snippet_command(client, language, block);
            assert_eq!(command, "agent-tools", "{client} ({language})");
            let dir = fixture();
            let root = dir.path().to_str().unwrap();
            let args: Vec<String> = args.iter().map(|arg| arg.replace("${workspaceFolder}", root)).collect();
            let answer = initialize(dir.path(), &args);
            let result = &answer["result"];
            assert_eq!(answer["id"], 1, "{client} ({language}): {answer}");
            assert_eq!(result["serverInfo"]["name"], "agent-tools", "{client} ({language}): {answer}");
            assert!(result["protocolVersion"].is_string(), "{client} ({language}): {answer}");
            assert!(result["capabilities"]["tools"].is_object(), "{client} ({language}): {answer}");
        }
    }
}

/// The README's install line builds this crate, whose binary is the command every
/// client snippet starts.
#[test]
fn the_readmes_install_line_builds_the_agent_tools_command() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let blocks = fenced_blocks(readme_section(&readme, "## Install"), "sh");
    assert_eq!(
        blocks,
        [
            // The wheel from PyPI, whose console scripts run this crate's command (crates/agent-tools-py).
            "uvx agent-tools-server serve --root .    # the MCP server, run without installing it\n\
             pipx install agent-tools-server          # the `agent-tools` command\n\
             pip install agent-tools-server           # the command and the Python module `agent_tools`",
            "cargo install --locked --path crates/agent-tools-cli",
            // The same wheel from a checkout (`cargo xtask dist`, tested in xtask-suites).
            "cargo xtask setup && cargo xtask dist && pip install target/dist/agent_tools_server-*.whl",
        ]
    );
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-tools-py/pyproject.toml");
    let python: toml::Value = toml::from_str(&std::fs::read_to_string(python).unwrap()).unwrap();
    assert_eq!(python["project"]["name"].as_str(), Some("agent-tools-server"));
    for script in ["agent-tools", "agent-tools-server"] {
        assert_eq!(python["project"]["scripts"][script].as_str(), Some("agent_tools._cli:main"), "{script}");
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).ends_with("crates/agent-tools-cli"));
    let manifest = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&manifest).unwrap();
    assert_eq!(manifest["package"]["name"].as_str(), Some("agent-tools-cli"));
    assert_eq!(manifest["bin"][0]["name"].as_str(), Some("agent-tools"));
}

/// CI runs the test command the README states: `.ci/run` runs both of its steps.
#[test]
fn ci_runs_the_test_command_the_readme_states() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = fenced_blocks(readme_section(&readme, "## Run the tests"), "sh");
    assert_eq!(blocks, ["cargo xtask setup && cargo xtask test"]);
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let commands: Vec<&str> = ci.lines().map(|line| line.trim().trim_end_matches("</dev/null").trim_end()).collect();
    for step in blocks[0].split(" && ") {
        assert!(commands.contains(&step), ".ci/run does not run `{step}`");
    }
}

/// The text under `heading` up to the next heading of its level.
pub(crate) fn readme_section<'a>(readme: &'a str, heading: &str) -> &'a str {
    let start = readme.find(&format!("\n{heading}\n")).unwrap_or_else(|| panic!("README has no `{heading}`"));
    let body = &readme[start + heading.len() + 2..];
    body.find("\n## ").map_or(body, |end| &body[..end])
}

/// The text under `### {name}` in a section, up to the next `### `.
pub(crate) fn subsection<'a>(section: &'a str, name: &str) -> &'a str {
    let heading = format!("\n### {name}\n");
    let start = section.find(&heading).unwrap_or_else(|| panic!("README has no `### {name}` under the clients"));
    let body = &section[start + heading.len()..];
    body.find("\n### ").map_or(body, |end| &body[..end])
}

/// The contents of every fenced block tagged `language`.
pub(crate) fn fenced_blocks(text: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.strip_prefix("```") == Some(language) {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push(block.join("\n"));
        }
    }
    blocks
}

/// The command and arguments a client would start, read from its snippet as the
/// client reads it (a `claude mcp add` line: what follows `--`).
fn snippet_command(client: &str, language: &str, text: &str) -> (String, Vec<String>) {
    let strings = |value: &Value| -> Vec<String> {
        let array = value.as_array().unwrap_or_else(|| panic!("{client}: `args` is not an array: {value}"));
        array
            .iter()
            .map(|arg| arg.as_str().unwrap_or_else(|| panic!("{client}: {arg} is not a string")).to_owned())
            .collect()
    };
    let entry = match (client, language) {
        ("Claude Code", "sh") => {
            let line = text
                .lines()
                .find(|l| l.starts_with("claude mcp add "))
                .unwrap_or_else(|| panic!("Claude Code: no `claude mcp add` line"));
            let words: Vec<&str> = line.split_whitespace().collect();
            let dash = words
                .iter()
                .position(|w| *w == "--")
                .unwrap_or_else(|| panic!("Claude Code: no `--` before the command: {line}"));
            assert_eq!(words[dash - 1], "agent-tools", "the server's name: {line}");
            let args = words[dash + 2..].iter().map(|w| (*w).to_owned()).collect();
            return through_uvx(client, words[dash + 1].to_owned(), args);
        }
        ("Codex", "toml") => {
            let value: toml::Value = toml::from_str(text).unwrap_or_else(|e| panic!("Codex: {e}"));
            serde_json::to_value(&value["mcp_servers"]["agent-tools"]).unwrap()
        }
        (_, "json") => {
            let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{client}: {e}"));
            let servers = match client {
                "VS Code" => "servers",
                "Zed" => "context_servers",
                _ => "mcpServers",
            };
            value[servers]["agent-tools"].clone()
        }
        _ => panic!("no reader for {client} ({language})"),
    };
    match client {
        "VS Code" => assert_eq!(entry["type"], "stdio", "VS Code: {entry}"),
        "Zed" => assert_eq!(entry["source"], "custom", "Zed: {entry}"),
        _ => {}
    }
    let command = entry["command"].as_str().unwrap_or_else(|| panic!("{client}: no `command` in {entry}"));
    through_uvx(client, command.to_owned(), strings(&entry["args"]))
}

/// A snippet's command as this test starts it: `uvx agent-tools-server ARGS` runs the PyPI
/// package's command by the distribution's name, which is this command
/// (crates/agent-tools-py/tests/it/wheel.rs runs the uvx snippet with a built wheel).
fn through_uvx(client: &str, command: String, args: Vec<String>) -> (String, Vec<String>) {
    if command != "uvx" {
        return (command, args);
    }
    match args.as_slice() {
        [package, rest @ ..] if package == "agent-tools-server" => ("agent-tools".to_owned(), rest.to_vec()),
        _ => panic!("{client}: uvx runs `agent-tools-server ARGS`, not {args:?}"),
    }
}

/// Starts `agent-tools ARGS` in `dir`, sends one `initialize` request line, and returns
/// the first line it answers, parsed; then closes its stdin and checks that it ends.
fn initialize(dir: &Path, args: &[String]) -> Value {
    use std::io::{BufRead as _, Write as _};
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "readme-snippet", "version": "0"}
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    // Read on a thread, so a server that never answers fails the test instead of hanging it.
    let (sent, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = stdout.read_line(&mut line).map(|_| line);
        let _ = sent.send(read);
    });
    let line = answered.recv_timeout(std::time::Duration::from_secs(60));
    drop(stdin);
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(output) = ended.recv_timeout(std::time::Duration::from_secs(60)) else {
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        panic!("agent-tools {args:?} did not end when its stdin closed");
    };
    let output = output.unwrap();
    let line = match line {
        Ok(Ok(line)) if !line.is_empty() => line,
        other => panic!("agent-tools {args:?} gave no answer ({other:?}); stderr: {}", stderr(&output)),
    };
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("agent-tools {args:?} answered {line:?}: {e}"))
}
