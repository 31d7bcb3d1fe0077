//! The run's configuration, through the built binary: `agent-tools config`
//! shows each value's source with the precedence flag > environment > file >
//! default; bad values and unknown keys are refused with their place; the
//! file's settings reach the tools (`eval.timeout_s`, a custom language server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

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

/// The tree store's directory: a relative one is the root's, whether from the file, the
/// environment or a flag, and `~/` is the home directory; 0 MiB is no store.
#[test]
fn the_tree_store_directory_is_the_roots_when_relative_and_home_is_tilde() {
    let dir = root_with("[search]\ntree_store = \"cache/trees\"\n");
    let root = dir.path().display().to_string();
    let config = effective(dir.path(), &[], &[]);
    assert_eq!(config["search.tree_store"][0], json!(format!("{root}/cache/trees")));
    assert_eq!(config["search.tree_store_mb"][0], json!(1024));
    let config = effective(dir.path(), &["--set", "search.tree_store=trees"], &[]);
    assert_eq!(config["search.tree_store"][0], json!(format!("{root}/trees")));
    let config = effective(dir.path(), &[], &[("AGENT_TOOLS_SEARCH_TREE_STORE", "~/t"), ("HOME", "/home/someone")]);
    assert_eq!(config["search.tree_store"][0], json!("/home/someone/t"));
    let config = effective(dir.path(), &["--set", "search.tree_store=/abs/t", "--set", "search.tree_store_mb=0"], &[]);
    assert_eq!(config["search.tree_store"][0], json!("/abs/t"));
    assert_eq!(config["search.tree_store_mb"][0], json!(null));
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

/// A `[[lsp.server]]` entry with `helps` joins the language's primary: a write's diagnostics
/// come from both, each naming its server, and navigation stays the primary's.
#[test]
fn a_configured_helper_adds_its_diagnostics_to_the_primary() {
    let server = fixture_server();
    let dir = root_with(&format!(
        "[[lsp.server]]\nname = \"my-helper\"\ncommand = {:?}\nlanguages = [\"fixture\"]\nhelps = [\"fixture\"]\n\
         root_markers = [\"fixture.toml\"]\n",
        server.display().to_string()
    ));
    std::fs::write(dir.path().join("fixture.toml"), "").unwrap();
    std::fs::write(dir.path().join("a.fix"), "def alpha\nalpha\n").unwrap();
    // The built-in fixture server on PATH is the primary.
    let path = format!("{}:{}", server.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let args = json!({ "path": "a.fix", "content": "def alpha\nalpha\nERROR E7: made up\n" }).to_string();
    let out = agent_tools(dir.path(), &["call", "write", &args], &[("PATH", &path)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("new diagnostics in a.fix (fixture + my-helper):\n"), "{text}");
    assert!(text.contains("a.fix:3:1 error[E7]: made up (fixture, from fixture)"), "{text}");
    assert!(text.contains("a.fix:3:1 error[E7]: made up (fixture, from my-helper)"), "{text}");
    let out = agent_tools(dir.path(), &["config", "--json"], &[]);
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    assert_eq!(config["lsp_servers"][0]["helps"], json!(["fixture"]), "{config}");
    // Only built-in languages are helped.
    let dir = root_with("[[lsp.server]]\nname = \"h\"\ncommand = \"h\"\nlanguages = [\"python\"]\nhelps = [\"toy\"]\n");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("lsp.server.helps"), "{}", stderr(&out));
}

#[test]
fn the_documented_example_is_a_valid_configuration() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md")).unwrap();
    let start = docs.find("```toml\n# agent-tools.toml\n").expect("docs/config.md's example agent-tools.toml") + 8;
    let example = &docs[start..start + docs[start..].find("```\n").unwrap()];
    let dir = root_with(example);
    let out = agent_tools(dir.path(), &["config", "--json"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(config["lsp_servers"][0]["name"], "my-pyright");
    assert_eq!(
        config["lsp_servers"][2]["language"],
        json!({ "id": "zig", "extensions": ["zig", "zon"], "language_id": "zig" })
    );
    assert_eq!(config["lsp_servers"][2]["languages"], json!(["zig"]));
    assert_eq!(config["lsp_servers"][3]["helps"], json!(["typescript", "javascript"]));
    assert_eq!(config["debug_adapters"][0]["name"], "netcoredbg");
    assert_eq!(config["debug_adapters"][0]["launch"], json!({ "type": "coreclr", "stopAtEntry": false }));
    assert_eq!(config["debug_adapters"][1]["name"], "lldb");
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

/// The fixture debug adapter, built by `cargo xtask fixtures` beside the tests' own executable.
fn fixture_adapter() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().and_then(Path::parent).unwrap().join("fixture-dap-adapter");
    assert!(path.is_file(), "run `cargo xtask fixtures` first");
    path
}

/// `agent-tools serve` at `root` with `env`, none of the caller's own settings.
async fn serve(root: &Path, env: &[(&str, &str)]) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.arg("serve").arg("--root").arg(root).env("AGENT_TOOLS_LOG", "warn");
        for (var, _) in std::env::vars().filter(|(v, _)| v.starts_with("AGENT_TOOLS_") && v != "AGENT_TOOLS_LOG") {
            cmd.env_remove(var);
        }
        cmd.envs(env.iter().copied());
    });
    ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap()
}

/// The requests a fixture server or adapter logged (`FIXTURE_*_LOG`), one JSON value a line.
fn logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test]
async fn a_custom_debug_adapter_launches_stops_terminates_and_attaches_over_stdio_and_over_tcp() {
    let adapter = fixture_adapter().display().to_string();
    for (name, reach) in [
        ("toy-debugger", String::new()),
        ("toy-debugger-tcp", "transport = \"tcp\"\nargs = [\"--listen\", \"127.0.0.1:0\"]\n".to_owned()),
    ] {
        // The fake program's language is made up: nothing built in debugs `.toy` files.
        // An attached program spins: a short run timeout ends the wait for its first stop.
        let dir = root_with(&format!(
            "[debug]\nrun_timeout_s = 1\n\n[[debug.adapter]]\nname = \"{name}\"\ncommand = {adapter:?}\n{reach}\
             markers = [\"toy.project\"]\nextensions = [\"toy\"]\nprogram_field = \"script\"\n\
             launch = {{ toyMode = \"fast\", stopOnEntry = false }}\nattach = {{ toyAttach = \"yes\" }}\n"
        ));
        std::fs::write(dir.path().join("toy.project"), "").unwrap();
        std::fs::write(dir.path().join("main.toy"), include_str!("../../../../fixtures/debug/fixture/main.dart"))
            .unwrap();
        let log = dir.path().join("adapter.log");
        let log_var = log.display().to_string();
        let client = serve(dir.path(), &[("FIXTURE_DAP_PROGRAM_FIELD", "script"), ("FIXTURE_DAP_LOG", &log_var)]).await;

        let adapters = common::call(&client, "debug", json!({ "op": "adapters" })).await;
        assert!(
            common::text(&adapters).contains(&format!("{name}: usable: toy.project at the root, {adapter} runs")),
            "{}",
            common::text(&adapters)
        );
        let set =
            common::call(&client, "debug", json!({ "op": "breakpoints", "file": "main.toy", "lines": [5] })).await;
        assert_eq!(common::text(&set), "breakpoints in main.toy at lines 5; sent to the adapter at launch");
        // No adapter named: the program's extension picks the configured one.
        let launched = common::call(&client, "debug", json!({ "op": "launch", "program": "main.toy" })).await;
        let text = common::text(&launched);
        assert_eq!(launched.is_error, Some(false), "{name}: {text}");
        assert!(text.starts_with(&format!("launched main.toy under {name}")), "{text}");
        assert!(text.ends_with("stopped (breakpoint) at main.toy:5 in greet, thread 1"), "{text}");
        let stack = common::call(&client, "debug", json!({ "op": "stack" })).await;
        assert_eq!(
            common::text(&stack),
            "#0 main.toy:5 in greet (frame_id 1001)\n#1 main.toy:4 in main (frame_id 1000)"
        );
        let terminated = common::call(&client, "debug", json!({ "op": "terminate" })).await;
        assert_eq!(common::text(&terminated), format!("terminated: the program and the {name} adapter are gone"));
        // Attach names the configured adapter, as a built-in one is named.
        let attached = common::call(&client, "debug", json!({ "op": "attach", "port": 9, "adapter": name })).await;
        let text = common::text(&attached);
        assert_eq!(attached.is_error, Some(false), "{name}: {text}");
        assert!(text.starts_with(&format!("attached {name} to 127.0.0.1:9")), "{text}");
        let detached = common::call(&client, "debug", json!({ "op": "terminate" })).await;
        assert_eq!(
            common::text(&detached),
            format!("detached: the attached program keeps running; the {name} session is over")
        );
        client.cancel().await.unwrap();

        // The launch request carried the program in the configured field, and the `launch` table's fields.
        let launch = logged(&log).into_iter().find(|m| m["command"] == "launch").unwrap();
        let arguments = &launch["arguments"];
        assert_eq!(arguments["script"], dir.path().join("main.toy").display().to_string(), "{arguments}");
        assert_eq!(arguments["program"], Value::Null, "{arguments}");
        assert_eq!(arguments["toyMode"], "fast", "{arguments}");
        assert_eq!(arguments["cwd"], dir.path().display().to_string(), "{arguments}");
        let attach = logged(&log).into_iter().find(|m| m["command"] == "attach").unwrap();
        assert_eq!(attach["arguments"], json!({ "host": "127.0.0.1", "port": 9, "toyAttach": "yes" }));
    }
}

#[test]
fn custom_debug_adapters_are_listed_by_status_and_config_and_a_built_in_one_changes_its_fields() {
    let adapter = fixture_adapter().display().to_string();
    let dir = root_with(&format!(
        "[[debug.adapter]]\nname = \"toy-debugger\"\ncommand = {adapter:?}\ntransport = \"tcp\"\n\
         args = [\"--listen\", \"127.0.0.1:0\"]\nmarkers = [\"toy.project\"]\nextensions = [\"toy\"]\n\n\
         [[debug.adapter]]\nname = \"dart\"\ncommand = {adapter:?}\n"
    ));
    std::fs::write(dir.path().join("pubspec.yaml"), "name: x\n").unwrap();
    let file = dir.path().join("agent-tools.toml").display().to_string();

    let out = agent_tools(dir.path(), &["status", "--json"], &[("PATH", "/usr/bin:/bin")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let adapters = status["debug_adapters"].as_array().unwrap();
    let ids: Vec<&str> = adapters.iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["dart", "debugpy", "lldb", "delve", "toy-debugger"]);
    // dart runs the configured command (there is no dart on this PATH); the new adapter misses its marker.
    assert_eq!(adapters[0]["usable"], true, "{}", adapters[0]);
    assert_eq!(adapters[0]["command"], adapter);
    assert_eq!(adapters[4]["usable"], false);
    assert_eq!(adapters[4]["detail"], format!("not usable: no root marker (toy.project at the root); {adapter} runs"));
    let out = agent_tools(dir.path(), &["status"], &[("PATH", "/usr/bin:/bin")]);
    assert!(
        stdout(&out).contains("toy-debugger not usable: no root marker (toy.project at the root)"),
        "{}",
        stdout(&out)
    );

    let out = agent_tools(dir.path(), &["config", "--json"], &[]);
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let custom = &config["debug_adapters"][0];
    assert_eq!(custom["name"], "toy-debugger");
    assert_eq!(custom["transport"], "tcp");
    assert_eq!(custom["args"], json!(["--listen", "127.0.0.1:0"]));
    assert_eq!(custom["extensions"], json!(["toy"]));
    assert_eq!(custom["source"], format!("file {file}:1"));
    assert_eq!(config["debug_adapters"][1]["name"], "dart");
    let out = agent_tools(dir.path(), &["config"], &[]);
    assert!(
        stdout(&out).contains(&format!(
            "[[debug.adapter]] toy-debugger = {adapter} --listen 127.0.0.1:0  # file {file}:1\n    transport tcp; \
             markers toy.project; programs .toy\n"
        )),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_debug_adapter_entry_is_refused_with_its_place() {
    let refused = |config: &str| {
        let dir = root_with(config);
        let out = agent_tools(dir.path(), &["config"], &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        let file = dir.path().join("agent-tools.toml").display().to_string();
        stderr(&out).replace(&file, "FILE")
    };
    assert_eq!(
        refused("[[debug.adapter]]\nname = \"toy\"\ncommand = \"toy-dap\"\nmarkers = [\"m\"]\ntransport = \"pipe\"\n"),
        "agent-tools: FILE:5:13: debug.adapter.transport: expected \"stdio\" or \"tcp\" (the adapter prints the \
         address it listens on), found the string \"pipe\"\n"
    );
    assert_eq!(
        refused("[[debug.adapter]]\nname = \"toy\"\ncommand = \"toy-dap\"\n"),
        "agent-tools: FILE:1:1: debug.adapter.markers: expected at least one root marker file, found none\n"
    );
    assert_eq!(
        refused("[[debug.adapter]]\nname = \"dlv\"\ncommand = \"/opt/dlv\"\n"),
        "agent-tools: FILE:2:8: debug.adapter.name: expected a new adapter's name, or a built-in one's as written \
         (dart, debugpy, lldb, delve) to change it, found \"dlv\" (another name of delve)\n"
    );
    assert_eq!(
        refused("[[debug.adapter]]\nname = \"toy\"\ncommand = \"toy-dap\"\nmarkers = [\"m\"]\nlaunch = 3\n"),
        "agent-tools: FILE:5:10: debug.adapter.launch: expected a table of fields for the DAP `launch` request's \
         arguments, found the integer 3\n"
    );
    assert!(refused("[[debug.adapter]]\nname = \"toy\"\nprogram_feild = \"x\"\n").starts_with(
        "agent-tools: FILE:3:1: unknown key `debug.adapter.program_feild`: did you mean `program_field`?"
    ),);
}

#[test]
fn a_custom_language_routes_its_files_to_its_server() {
    let server = fixture_server().display().to_string();
    let dir = root_with(&format!(
        "[lsp]\nservers.toy = \"toy-server\"\noutline_cap = 2\nreferences_cap = 1\n\n\
         [[lsp.server]]\nname = \"toy-server\"\ncommand = {server:?}\nlanguage = \"toy\"\nextensions = [\"toy\"]\n\
         language_id = \"toylang\"\nroot_markers = [\"toy.project\"]\n"
    ));
    let file = dir.path().join("agent-tools.toml").display().to_string();
    std::fs::write(dir.path().join("toy.project"), "").unwrap();
    std::fs::write(dir.path().join("a.toy"), "def alpha\ndef beta\ndef gamma\nalpha\nERROR E7: made up\n").unwrap();
    let log = dir.path().join("server.log");
    let env = [("FIXTURE_LSP_LOG", log.to_str().unwrap())];

    // The outline, cut at the configured cap.
    let out = agent_tools(dir.path(), &["call", "lsp", r#"{"action": "symbols", "file": "a.toy"}"#], &env);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("symbols in a.toy (toy-server): 3 (showing 2 of 3)\n"), "{text}");
    assert!(text.contains("alpha") && text.contains("beta") && !text.contains("gamma"), "{text}");
    let references = r#"{"action": "references", "file": "a.toy", "line": 4, "symbol": "alpha"}"#;
    let out = agent_tools(dir.path(), &["call", "lsp", references], &env);
    assert_eq!(stdout(&out), "references of a.toy:4:1 `alpha`: 2 (showing 1 of 2)\na.toy:1:5  def alpha\n");
    // A search across languages asks it too.
    let out = agent_tools(dir.path(), &["call", "lsp", r#"{"action": "symbols", "query": "gam"}"#], &env);
    assert_eq!(stdout(&out), "symbols matching \"gam\" (toy-server for .): 1\nfunction gamma  a.toy:3:5\n");
    // The file's diagnostics come from its server.
    let out = agent_tools(dir.path(), &["call", "lsp", r#"{"action": "diagnostics", "file": "a.toy"}"#], &env);
    assert!(stdout(&out).contains("a.toy:5:1 error[E7]: made up"), "{}{}", stdout(&out), stderr(&out));
    // The file was opened with the configured languageId.
    let opened: Vec<Value> = logged(&log).into_iter().filter(|m| m["method"] == "textDocument/didOpen").collect();
    assert!(!opened.is_empty());
    assert!(opened.iter().all(|m| m["params"]["textDocument"]["languageId"] == "toylang"), "{opened:?}");

    // config and status show the language and its server.
    let out = agent_tools(dir.path(), &["config"], &[]);
    let text = stdout(&out);
    assert!(text.contains(&format!("[[lsp.server]] toy-server = {server}   # file {file}:6\n")), "{text}");
    assert!(text.contains("    languages: toy\n    language toy (its own): .toy, languageId toylang\n"), "{text}");
    assert!(text.contains("lsp.servers.toy = \"toy-server\""), "{text}");
    assert!(text.contains("lsp.outline_cap = 2"), "{text}");
    let out = agent_tools(dir.path(), &["status", "--json"], &[]);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let toy: Vec<&Value> =
        status["language_servers"].as_array().unwrap().iter().filter(|s| s["language"] == "toy").collect();
    assert_eq!(toy.len(), 1, "{toy:?}");
    assert_eq!(toy[0]["server"], "toy-server");
    assert_eq!(toy[0]["usable"], true, "{}", toy[0]);
    assert_eq!(toy[0]["chosen"], true);
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

#[test]
fn a_bad_custom_language_is_refused_with_its_place() {
    let refused = |config: &str, args: &[&str]| {
        let dir = root_with(config);
        let mut all = vec!["config"];
        all.extend_from_slice(args);
        let out = agent_tools(dir.path(), &all, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
        let file = dir.path().join("agent-tools.toml").display().to_string();
        stderr(&out).replace(&file, "FILE")
    };
    let server = "[[lsp.server]]\nname = \"toy-server\"\ncommand = \"toy-ls\"\nroot_markers = [\"toy.project\"]\n";
    assert_eq!(
        refused(&format!("{server}language = \"toy\"\nextensions = [\"toy\", \".py\"]\n"), &[]),
        "agent-tools: FILE:6:14: lsp.server.extensions: expected extensions no built-in language has (.py files \
         are python's), found \"py\"\n"
    );
    assert_eq!(
        refused(&format!("{server}language = \"python\"\nextensions = [\"py3\"]\n"), &[]),
        "agent-tools: FILE:5:12: lsp.server.language: expected the name of a language of its own (not a built-in \
         one: rust, python, typescript, javascript, c, cpp, go, fixture; those go in `languages`), found \"python\"\n"
    );
    assert_eq!(
        refused(&format!("{server}language = \"toy\"\n"), &[]),
        "agent-tools: FILE:1:1: lsp.server.extensions: expected the file extensions of toy, found none\n"
    );
    assert_eq!(
        refused(&format!("{server}extensions = [\"toy\"]\n"), &[]),
        "agent-tools: FILE:5:14: lsp.server.extensions: expected extensions of a known language (rust, python, \
         typescript, javascript, c, cpp, go, fixture), or with `language`, of a language of the server's own, found \
         \"toy\"\n"
    );
    // A language named for a server must exist (here, a typo of the one the file defines).
    let defined = format!("{server}language = \"toy\"\nextensions = [\"toy\"]\n");
    let said = refused(&defined, &["--lsp", "tyo=toy-server"]);
    assert!(
        said.starts_with("agent-tools: --lsp: lsp.servers.tyo: did you mean `toy`? unknown language \"tyo\""),
        "{said}"
    );
    // A second server may serve the language another entry defines.
    let dir = root_with(&format!(
        "{defined}\n[[lsp.server]]\nname = \"toy-two\"\ncommand = \"toy-ls\"\nlanguages = [\"toy\"]\nroot_markers = [\"x\"]\n"
    ));
    let out = agent_tools(dir.path(), &["config", "--json", "--lsp", "toy=toy-two"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(config["lsp_servers"][1]["languages"], json!(["toy"]));
    // Its server is a setting like a built-in language's, from the environment too.
    let config = effective(dir.path(), &[], &[("AGENT_TOOLS_LSP_SERVERS_TOY", "toy-two")]);
    assert_eq!(config["lsp.servers.toy"], json!(["toy-two", "env AGENT_TOOLS_LSP_SERVERS_TOY"]));
    let out = agent_tools(dir.path(), &["config"], &[("AGENT_TOOLS_LSP_SERVERS_TOY", "rust-analyzer")]);
    assert_eq!(
        stderr(&out),
        "agent-tools: environment variable AGENT_TOOLS_LSP_SERVERS_TOY: no server \"rust-analyzer\" for toy; known: toy-server, toy-two\n"
    );
}
