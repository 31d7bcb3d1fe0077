//! The run's configuration, through the built binary: `agent-tools config`
//! shows each value's source with the precedence flag > environment > file >
//! default; bad values and unknown keys are refused with their place; the
//! file's settings reach the tools (`eval.timeout_s`, a custom language server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn agent_tools(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
    command.args(args).current_dir(root);
    // The caller's own settings must not leak into what the tests check.
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

fn root_with(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent-tools.toml"), config).unwrap();
    dir
}

/// `agent-tools config --json`: key → (value, source).
fn effective(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut all = vec!["config", "--json"];
    all.extend_from_slice(args);
    let out = agent_tools(root, &all, env);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let settings = config["settings"].as_array().unwrap();
    settings.iter().map(|s| (s["key"].as_str().unwrap().to_owned(), json!([s["value"], s["source"]]))).collect()
}

#[test]
fn precedence_is_flag_then_environment_then_file_then_default() {
    let dir =
        root_with("[eval]\ntimeout_s = 7\n\n[debug]\nttl_s = 70\nrun_timeout_s = 8\n\n[lsp]\nrequest_timeout_s = 9\n");
    let file = dir.path().join("agent-tools.toml").display().to_string();
    let config = effective(
        dir.path(),
        &["--set", "eval.timeout_s=5"],
        &[("AGENT_TOOLS_EVAL_TIMEOUT_S", "6"), ("AGENT_TOOLS_DEBUG_TTL_S", "60")],
    );
    assert_eq!(config["eval.timeout_s"], json!([5.0, "flag --set eval.timeout_s=5"]));
    assert_eq!(config["debug.ttl_s"], json!([60.0, "env AGENT_TOOLS_DEBUG_TTL_S"]));
    assert_eq!(config["debug.run_timeout_s"], json!([8.0, format!("file {file}:6")]));
    assert_eq!(config["lsp.request_timeout_s"], json!([9.0, format!("file {file}:9")]));
    assert_eq!(config["eval.interrupt_grace_s"], json!([3.0, "default"]));
    assert_eq!(config["eval.python"], json!([null, "default"]));

    // `--no-config` leaves the root's file out; `--config FILE` reads another.
    let config = effective(dir.path(), &["--no-config"], &[]);
    assert_eq!(config["eval.timeout_s"], json!([300.0, "default"]));
    let other = root_with("[eval]\ntimeout_s = 11\n");
    let other_file = other.path().join("agent-tools.toml").display().to_string();
    let config = effective(dir.path(), &["--config", &other_file], &[]);
    assert_eq!(config["eval.timeout_s"], json!([11.0, format!("file {other_file}:2")]));

    // The text form names the file and each source.
    let out = agent_tools(dir.path(), &["config"], &[("AGENT_TOOLS_DEBUG_TTL_S", "60")]);
    let text = stdout(&out);
    assert!(text.starts_with(&format!("configuration file: {file}\n")), "{text}");
    assert!(text.contains(&format!("# file {file}:2")), "{text}");
    assert!(text.contains("# env AGENT_TOOLS_DEBUG_TTL_S"), "{text}");

    // status says which file is in force.
    let out = agent_tools(dir.path(), &["status", "--json"], &[]);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(status["configuration"], file);
}

#[test]
fn a_bad_value_names_file_line_column_key_expected_and_found() {
    let dir = root_with("# a comment\n[eval]\ntimeout_s = \"soon\"\n");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let file = dir.path().join("agent-tools.toml").display().to_string();
    assert_eq!(
        stderr(&out),
        format!(
            "agent-tools: {file}:3:13: eval.timeout_s: expected a positive number of seconds, found the string \"soon\"\n"
        )
    );
    // The same refusal stops a tool call before it runs.
    let out = agent_tools(dir.path(), &["call", "ast_grep", r#"{"pattern": "x"}"#], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(&format!("{file}:3:13: eval.timeout_s")), "{}", stderr(&out));

    // From the environment or a flag, the variable or the flag is named.
    let clean = tempfile::tempdir().unwrap();
    let out = agent_tools(clean.path(), &["config"], &[("AGENT_TOOLS_DEBUG_TTL_S", "-1")]);
    assert_eq!(
        stderr(&out),
        "agent-tools: environment variable AGENT_TOOLS_DEBUG_TTL_S: debug.ttl_s: expected a positive number of \
         seconds, found \"-1\"\n"
    );
    let out = agent_tools(clean.path(), &["config", "--set", "approval.write=maybe"], &[]);
    assert_eq!(
        stderr(&out),
        "agent-tools: flag --set approval.write=maybe: approval.write: expected one of \"allow\", \"ask\", \"deny\", \
         found \"maybe\"\n"
    );
}

#[test]
fn an_unknown_key_suggests_the_nearest() {
    let dir = root_with("[eval]\ntimeout = 3\n");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let file = dir.path().join("agent-tools.toml").display().to_string();
    assert!(
        stderr(&out)
            .starts_with(&format!("agent-tools: {file}:2:1: unknown key `eval.timeout`: did you mean `timeout_s`?")),
        "{}",
        stderr(&out)
    );
    let dir = root_with("[[lsp.server]]\nname = \"x\"\ncomand = \"x\"\n");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert!(
        stderr(&out).contains(":3:1: unknown key `lsp.server.comand`: did you mean `command`?"),
        "{}",
        stderr(&out)
    );
    let clean = tempfile::tempdir().unwrap();
    let out = agent_tools(clean.path(), &["config", "--set", "vibe.max_runing=2"], &[]);
    assert!(stderr(&out).contains("unknown key `vibe.max_runing`: did you mean `max_running`?"), "{}", stderr(&out));
}

#[test]
fn the_files_eval_budget_interrupts_a_sleeping_cell() {
    let dir = root_with("[eval]\ntimeout_s = 2\n");
    let args = json!({"code": "import time\ntime.sleep(30)", "description": "sleep past the budget"}).to_string();
    let started = std::time::Instant::now();
    let out = agent_tools(dir.path(), &["call", "eval", &args, "--json"], &[]);
    let result: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(result["status"]["status"], "timed_out", "{result}");
    assert_eq!(result["status"]["inactivity_seconds"], 2, "{result}");
    // Generous: far below the cell's 30 s, whatever the machine's load.
    assert!(started.elapsed() < std::time::Duration::from_secs(25), "{:?}", started.elapsed());
}

/// The fixture server, built by `cargo xtask fixtures` beside the tests' own executable.
fn fixture_server() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("fixture-lsp-server");
    assert!(path.is_file(), "run `cargo xtask fixtures` first");
    path
}

#[test]
fn a_custom_language_server_is_used_for_its_language() {
    let server = fixture_server();
    let dir = root_with(&format!(
        "[[lsp.server]]\nname = \"my-fix-server\"\ncommand = {:?}\nextensions = [\"fix\"]\nroot_markers = [\"fixture.toml\"]\n",
        server.display().to_string()
    ));
    std::fs::write(dir.path().join("fixture.toml"), "").unwrap();
    std::fs::write(dir.path().join("a.fix"), "def alpha\nalpha\n").unwrap();
    // The built-in fixture server is not on this PATH: only the configured command can answer.
    let args = json!({ "path": "a.fix", "content": "def alpha\nalpha\nERROR E7: made up\n" }).to_string();
    let out = agent_tools(dir.path(), &["call", "write", &args], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("new diagnostics in a.fix (my-fix-server):\na.fix:3:1 error[E7]: made up"),
        "{}",
        stdout(&out)
    );
    // `lsp.servers` (and `--lsp`) can name it like a built-in one.
    let out = agent_tools(dir.path(), &["config", "--lsp", "fixture=my-fix-server"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("lsp.servers.fixture = \"my-fix-server\""), "{}", stdout(&out));
}

#[test]
fn the_readme_example_is_a_valid_configuration() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("```toml\n# agent-tools.toml\n").expect("the README's example agent-tools.toml") + 8;
    let example = &readme[start..start + readme[start..].find("```\n").unwrap()];
    let dir = root_with(example);
    let out = agent_tools(dir.path(), &["config", "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(config["lsp_servers"][0]["name"], "my-pyright");
    assert_eq!(config["approval_rules"][0]["scope"], "path secrets");
}

#[test]
fn the_files_approval_rules_decide_call_ask() {
    let dir = root_with("[approval]\nwrite = \"allow\"\n\n[[approval.rule]]\ntool = \"ast_grep\"\naction = \"deny\"\n");
    std::fs::write(dir.path().join("app.py"), "foo(1)\n").unwrap();
    let grep = r#"{"pattern": "foo($X)", "language": "python"}"#;
    let out = agent_tools(dir.path(), &["call", "--ask", "ast_grep", grep], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("ast_grep did not run, because the host's policy denies"), "{}", stderr(&out));
    // Write allowed: an edit runs without a terminal to ask on.
    let edit = r#"{"pattern": "foo($X)", "rewrite": "bar($X)", "path": "app.py"}"#;
    let out = agent_tools(dir.path(), &["call", "--ask", "ast_edit", edit], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The rules are the policy of --ask; without it the call runs.
    let out = agent_tools(dir.path(), &["call", "ast_grep", grep], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test]
async fn serve_takes_the_vibe_commands_and_wait_cap_from_the_file_and_flags_win() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};

    let dir = root_with("[vibe]\nfast_cmd = \"sleep 30\"\ngood_cmd = \"rev\"\nmax_wait_s = 1\n");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.args(["serve", "--vibe", "--vibe-good-cmd", "tr a-z A-Z"])
            .current_dir(dir.path())
            .env("AGENT_TOOLS_LOG", "warn");
    });
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    // The flag's good command, not the file's `rev`.
    common::call(&client, "vibe_spawn", json!({"brief": "abc", "label": "shout", "tier": "good"})).await;
    let waited = common::call(&client, "vibe_wait", json!({"worker_id": "w1"})).await;
    assert_eq!(waited.structured_content.unwrap()["last_result"], "ABC");
    // The file's fast command sleeps; a 60 s wait is cut to the file's 1 s cap.
    common::call(&client, "vibe_spawn", json!({"brief": "x", "label": "sleeper"})).await;
    let started = std::time::Instant::now();
    let waited = common::call(&client, "vibe_wait", json!({"worker_id": "w2", "timeout_seconds": 60})).await;
    assert_eq!(waited.structured_content.unwrap()["status"], "running");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    client.cancel().await.unwrap();
}

#[test]
fn the_lsp_caps_are_settings_with_the_tools_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let config = effective(dir.path(), &["--set", "lsp.symbols_cap=7"], &[("AGENT_TOOLS_LSP_REFERENCES_CAP", "5")]);
    assert_eq!(config["lsp.references_cap"], json!([5, "env AGENT_TOOLS_LSP_REFERENCES_CAP"]));
    assert_eq!(config["lsp.symbols_cap"], json!([7, "flag --set lsp.symbols_cap=7"]));
    assert_eq!(config["lsp.outline_cap"], json!([200, "default"]));
    let dir = root_with("[lsp]\nreferences_cap = 0\n");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert!(
        stderr(&out).ends_with(":2:18: lsp.references_cap: expected a positive whole number, found the integer 0\n"),
        "{}",
        stderr(&out)
    );
}
