//! `agent-tools serve` driven by a second real client, the official TypeScript
//! MCP SDK (`tests/node/sdk_client.mjs`, the SDK from `.tools/node`, which
//! `cargo xtask setup` installs): a cell that runs past the client's request
//! timeout returns because progress reset the timer, so does a human's
//! answer given after that timeout, a call without a progress token hears
//! none, and a runaway cell
//! cancelled through the SDK's `AbortSignal` frees the kernel, whose next
//! cell answers with the state set before. The client's timeout and the
//! cell's sleep are short here (3 s, 4 s) and set by
//! `AGENT_TOOLS_TEST_SDK_TIMEOUT_MS` and `AGENT_TOOLS_TEST_SDK_SLEEP_S`. The
//! cell ends just after a 2 s progress tick, so its last progress and its
//! response are written close together: the test reads the order off the wire
//! (every progress before its response), apart from the order in which the
//! SDK dispatches them.
//!
//! The same SDK also checks (`tests/node/sdk_client_checks.mjs`): every tool
//! declares an `outputSchema`, the SDK's own validator (ajv) accepts every
//! structured result of a round of calls on a small Python project, the root's
//! `agent-tools.toml` sets the eval budget, and a bad one stops the server
//! with the file, line and column.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `.tools/node/node_modules` when node and the SDK are there. Missing, the
/// test fails under `CI=true` and says what is missing elsewhere.
fn sdk() -> Option<PathBuf> {
    let modules = workspace_root().join(".tools/node/node_modules");
    let node = Command::new("node").arg("--version").output().is_ok_and(|out| out.status.success());
    let sdk = modules.join("@modelcontextprotocol/sdk/package.json").exists();
    if node && sdk {
        return Some(modules);
    }
    let message = format!(
        "{} missing: run `cargo xtask setup` (it installs @modelcontextprotocol/sdk into .tools/node)",
        if node { "the TypeScript MCP SDK is" } else { "node is" }
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn the_typescript_sdk_keeps_a_long_cell_alive_by_progress_and_cancels_a_runaway_one() {
    let Some(node_modules) = sdk() else { return };
    let dir = tempfile::tempdir().unwrap();
    let timeout_ms = setting("AGENT_TOOLS_TEST_SDK_TIMEOUT_MS", 3000);
    let sleep_s = setting("AGENT_TOOLS_TEST_SDK_SLEEP_S", 4);
    let args = json!({
        "bin": env!("CARGO_BIN_EXE_agent-tools"),
        "root": dir.path(),
        "node_modules": node_modules,
        "timeout_ms": timeout_ms,
        "sleep_s": sleep_s,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/sdk_client.mjs");
    let out = Command::new("node").arg(script).arg(args.to_string()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK client failed: {stderr}");
    let findings: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("unreadable findings ({e}): {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));

    let long = &findings["long"];
    assert_eq!(long["ok"], true, "the long cell did not return: {long}");
    assert_eq!(long["is_error"], false, "{long}");
    assert!(long["text"].as_str().unwrap().contains("'slept'"), "{long}");
    assert!(long["seconds"].as_f64().unwrap() * 1000.0 > timeout_ms as f64, "it ran past the timeout: {long}");
    let progress = long["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "{long}");
    // Increasing, readable, and none after the answer.
    let values: Vec<f64> = progress.iter().map(|p| p["progress"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    assert!(progress.iter().all(|p| p["after_answer"] == false), "{long}");
    assert!(progress.iter().any(|p| p["message"].as_str().unwrap().contains("last output: sleeping")), "{long}");
    // The first about 2 s in, then at least every 10 s (generously).
    let at: Vec<f64> = progress.iter().map(|p| p["at"].as_f64().unwrap()).collect();
    assert!(at[0] >= 1500.0, "{at:?}");
    assert!(at.windows(2).all(|w| w[1] - w[0] < 10_000.0), "{at:?}");

    let ask = &findings["ask"];
    assert_eq!(ask["ok"], true, "the answer given after the timeout was lost: {ask}");
    assert!(ask["text"].as_str().unwrap().contains("the user answered: 2. sqlite"), "{ask}");
    assert!(ask["seconds"].as_f64().unwrap() * 1000.0 > timeout_ms as f64, "{ask}");
    assert!(
        ask["progress"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["message"].as_str().unwrap().contains("waiting for the user's answer")),
        "{ask}"
    );

    assert_eq!(findings["untracked_errors"], json!([]), "progress without a token: {findings}");
    // On the wire, every request's progress comes before its response, never after.
    let wire = findings["wire"].as_object().unwrap();
    for (id, heard) in wire {
        let heard: Vec<&str> = heard.as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
        let answered = heard.iter().position(|k| *k == "response");
        assert!(answered.is_none_or(|at| at == heard.len() - 1), "request {id} heard {heard:?}");
    }
    // Nothing the SDK could not place: no progress for a token it did not give, no
    // response to the request it cancelled. The one exception is the SDK's own: it
    // dispatches a notification a microtask after a response read in the same chunk,
    // so progress written just before the response may find its handler gone; the
    // wire shows it came first.
    let misplaced: Vec<&Value> = findings["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|error| {
            let error = error.as_str().unwrap();
            let Some(notification) = error.split("unknown token: ").nth(1) else { return true };
            let token = serde_json::from_str::<Value>(notification).unwrap()["params"]["progressToken"].to_string();
            let heard = &wire[&token];
            heard.as_array().unwrap().last() != Some(&json!("response"))
        })
        .collect();
    assert!(misplaced.is_empty(), "{misplaced:?}\n{findings}");

    let cancel = &findings["cancel"];
    assert!(cancel["rejected"].as_str().is_some_and(|e| e.contains("the user pressed stop")), "{cancel}");
    let next = cancel["next"].as_str().unwrap();
    assert!(next.contains("42"), "the state survived: {cancel}");
    assert!(next.contains("the previous cell was cancelled and interrupted"), "{cancel}");
    // Generous: the interrupt lands at once; only a broken cancel waits for the 5-minute budget.
    assert!(cancel["next_seconds"].as_f64().unwrap() < 30.0, "{cancel}");

    // serve --ask: the approval card, allowed then denied.
    let approval = &findings["approval"];
    assert_eq!(approval["allowed"], json!({"text": "created allowed.txt (12 bytes)", "is_error": false}), "{approval}");
    assert_eq!(approval["denied"]["is_error"], true, "{approval}");
    assert!(
        approval["denied"]["text"]
            .as_str()
            .unwrap()
            .starts_with("refused: write did not run, because the user denied it")
    );
    assert_eq!(approval["shown"], json!(["Allow write (write tier) to run?", "Allow write (write tier) to run?"]));
    assert_eq!(std::fs::read_to_string(dir.path().join("allowed.txt")).unwrap(), "allowed.txt\n");
    assert!(!dir.path().join("denied.txt").exists());
}

/// `PATH` with the tools `cargo xtask setup` installed first (pyright, pylsp, debugpy's Python).
pub(crate) fn tools_path() -> String {
    let root = workspace_root();
    let mut dirs = vec![root.join(".tools/venv/bin"), root.join(".tools/node/node_modules/.bin")];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

#[test]
fn the_typescript_sdk_validates_every_structured_result_and_reads_the_configuration() {
    let Some(node_modules) = sdk() else { return };
    typescript_checks(&node_modules, None);
}

/// The same checks through a run of `serve --http`, with the SDK's `StreamableHTTPClientTransport`.
#[test]
fn the_typescript_sdk_over_streamable_http_validates_every_structured_result() {
    let Some(node_modules) = sdk() else { return };
    typescript_checks(&node_modules, Some(()));
}

/// `tests/node/sdk_client_checks.mjs` against a stdio server, or (`http`) a host's run at the same root.
fn typescript_checks(node_modules: &Path, http: Option<()>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("agent-tools.toml"), "[eval]\ntimeout_s = 2\n").unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"app\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(root.join("app.py"), "def greet(name):\n    print(\"hello\", name)\n\n\ngreet(\"world\")\n")
        .unwrap();
    let bad = tempfile::tempdir().unwrap();
    std::fs::write(bad.path().join("agent-tools.toml"), "[eval]\ntimeout_s = \"soon\"\n").unwrap();
    let mut args = json!({
        "bin": env!("CARGO_BIN_EXE_agent-tools"),
        "root": root,
        "bad_root": bad.path(),
        "node_modules": node_modules,
        "path": tools_path(),
    });
    let root_arg = root.display().to_string();
    let _host = http.map(|()| {
        let host = crate::http_mcp::start(&["--cap", "exec", "--root", &root_arg], 1);
        args["url"] = json!(host.urls["default"]);
        args["token"] = json!(crate::http_mcp::TOKEN);
        host
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node/sdk_client_checks.mjs");
    let out = Command::new("node").arg(script).arg(args.to_string()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the SDK client failed: {stderr}");
    let findings: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("unreadable findings ({e}): {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));

    // Every tool declares an object schema for its structured value.
    let tools = findings["tools"].as_object().unwrap();
    assert_eq!(tools.len(), 11, "every tool of the run is listed: {tools:?}");
    for (name, schema) in tools {
        assert_eq!(schema["type"], "object", "{name}: {schema}");
    }
    // The SDK validated each structured result against it: a mismatch would have thrown.
    let calls = findings["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 17, "{findings}");
    for call in calls {
        assert_eq!(call["ok"], true, "the SDK refused a result: {call}");
        assert_eq!(call["is_error"], false, "{call}");
        assert!(call["structured"].is_object(), "a success without a structured value: {call}");
    }
    let by_name = |name: &'static str| calls.iter().filter(move |c| c["name"] == name);
    let grep = by_name("ast_grep").next().unwrap();
    assert_eq!(grep["structured"]["total"], 1, "{grep}");
    assert_eq!(grep["structured"]["matches"][0]["captures"]["A"]["text"], "\"hello\", name", "{grep}");
    assert_eq!(grep["structured"]["matches"][0]["captures"]["A"]["nodes"][1]["column"], 20, "{grep}");
    let def = by_name("ast_grep").nth(1).unwrap();
    assert_eq!(
        def["structured"]["matches"][0]["captures"]["F"],
        json!({ "multi": false, "text": "greet", "line": 1, "column": 5 })
    );
    let hover = calls.iter().find(|c| c["args"]["action"] == "hover").unwrap();
    assert!(hover["structured"]["hover"].as_str().is_some_and(|h| h.contains("greet")), "{hover}");
    let resolve = by_name("resolve").next().unwrap();
    assert_eq!(resolve["structured"]["action"], "accept", "{resolve}");
    assert_eq!(resolve["structured"]["files"], json!(["app.py"]), "{resolve}");
    let edit = by_name("edit").next().unwrap();
    assert_eq!(edit["structured"]["replacements"], 1, "{edit}");
    assert!(edit["structured"]["diagnostics"].is_array(), "diagnostics on write joined the value: {edit}");
    let patch = by_name("apply_patch").next().unwrap();
    assert_eq!(
        patch["structured"]["files"][0],
        json!({ "action": "added", "path": "notes.txt", "added": 1 }),
        "{patch}"
    );
    let adapters = by_name("debug").next().unwrap();
    assert!(adapters["structured"]["adapters"].as_array().is_some_and(|a| a.len() >= 4), "{adapters}");
    let cell = by_name("eval").next().unwrap();
    assert_eq!(cell["structured"]["outputs"][0], json!({ "output_type": "stream", "name": "stdout", "text": "hi\n" }));
    assert_eq!(cell["structured"]["outputs"][1]["output_type"], "execute_result", "{cell}");

    // The file's eval budget (2 s) interrupted the sleeping cell.
    let budget = &findings["budget"];
    assert_eq!(budget["ok"], true, "{budget}");
    assert_eq!(
        budget["structured"]["status"],
        json!({ "status": "timed_out", "action": "interrupted", "inactivity_seconds": 2 })
    );
    assert!(budget["seconds"].as_f64().unwrap() < 30.0, "generous; the cell sleeps 60 s: {budget}");
    assert_eq!(findings["errors"], json!([]), "{findings}");

    // The bad file stops the server before it speaks MCP, and says where.
    let bad_config = &findings["bad_config"];
    assert_eq!(bad_config["connected"], false, "{bad_config}");
    let file = bad.path().join("agent-tools.toml").display().to_string();
    assert!(
        bad_config["stderr"].as_str().unwrap().contains(&format!(
            "{file}:2:13: eval.timeout_s: expected a positive number of seconds, found the string \"soon\""
        )),
        "{bad_config}"
    );
}

/// `.tools/venv`'s Python when the official MCP Python SDK (`mcp`, pinned by
/// `cargo xtask setup`) imports there. Missing, the test fails under `CI=true`.
pub(crate) fn python_sdk() -> Option<PathBuf> {
    let python = workspace_root().join(".tools/venv/bin/python");
    let version = Command::new(&python)
        .args(["-c", "import importlib.metadata as m; print(m.version('mcp'))"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if let Some(version) = version {
        assert!(version.starts_with("2."), "the MCP Python SDK in .tools/venv is {version}, not 2.x");
        return Some(python);
    }
    let message = "the MCP Python SDK is missing: run `cargo xtask setup` (it installs mcp into .tools/venv)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    None
}

/// Runs `tests/python/sdk_matrix.py` in `mode` and returns its cases by name.
fn python_matrix(python: &Path, mode: &str) -> std::collections::BTreeMap<String, Value> {
    let dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_matrix.py");
    let out = Command::new(python)
        .arg(script)
        .args([env!("CARGO_BIN_EXE_agent-tools"), mode])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{mode}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let cases: std::collections::BTreeMap<String, Value> = stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .map(|case| (case["case"].as_str().unwrap().to_owned(), case))
        .collect();
    eprintln!("{mode}:\n{}", cases.values().map(|c| format!("  {c}\n")).collect::<String>());
    cases
}

/// The cases both protocol generations share, with what each must say.
fn assert_shared_cases(cases: &std::collections::BTreeMap<String, Value>) {
    let answer = &cases["ask answer"];
    assert_eq!(answer["text"], "the user answered: 2. blue");
    assert_eq!(answer["shown"], "Which color?");
    assert!(cases["ask skip"]["text"].as_str().unwrap().starts_with("the user skipped the question"));
    assert!(cases["ask decline"]["text"].as_str().unwrap().starts_with("the user skipped the question"));
    assert_eq!(cases["ask unfit then fit"]["text"], "the user answered: 1. red");
    assert_eq!(cases["ask unfit then fit"]["shown"], "'green' is not one of the options ('red', 'blue')");
    let progress = &cases["eval progress"];
    assert!(progress["notifications"].as_u64().unwrap() >= 1, "{progress}");
    assert_eq!(progress["growing"], true);
    assert!(progress["text"].as_str().unwrap().ends_with("0\n1\n2\n3\n"), "{progress}");
    assert_eq!(
        cases["eval cancelled"]["text"],
        "[the previous cell was cancelled and interrupted; the kernel's state is kept]\n42\n"
    );
    let allowed = &cases["approval allowed"];
    assert_eq!((&allowed["is_error"], &allowed["written"]), (&json!(false), &json!("yes\n")), "{allowed}");
    assert_eq!(allowed["shown"], "Allow write (write tier) to run?");
    let denied = &cases["approval denied"];
    assert_eq!((&denied["is_error"], &denied["written"]), (&json!(true), &Value::Null), "{denied}");
    assert!(denied["text"].as_str().unwrap().starts_with("refused: write did not run, because the user denied it"));
    // The cell's own `tool()` call is asked for in the same `eval` call, and runs once allowed.
    let cell = &cases["cell tool approval"];
    assert_eq!((&cell["is_error"], &cell["written"]), (&json!(false), &json!("hi\n")), "{cell}");
    assert_eq!(cell["shown"], json!(["Allow eval (exec tier) to run?", "Allow write (write tier) to run?"]), "{cell}");
    assert!(cell["text"].as_str().unwrap().contains("from_cell.txt"), "{cell}");
}

#[test]
fn the_python_sdk_in_its_default_mode_gets_questions_and_approvals_as_input_required_results() {
    let Some(python) = python_sdk() else { return };
    let cases = python_matrix(&python, "auto");
    assert_eq!(cases["protocol"]["version"], "2026-07-28");
    assert_shared_cases(&cases);
    let timeout = &cases["ask timeout"];
    assert_eq!(timeout["is_error"], true);
    assert!(timeout["text"].as_str().unwrap().starts_with("refused: the question expired"), "{timeout}");
    let required = &cases["input required"];
    assert_eq!((&required["result_type"], &required["keys"]), (&json!("input_required"), &json!(["question"])));
    assert_eq!(required["message"], "Allow write (write tier) to run?");
    for case in ["forged state", "altered state", "state for other arguments"] {
        let refused = &cases[case];
        assert_eq!((&refused["is_error"], &refused["written"]), (&json!(true), &Value::Null), "{case}: {refused}");
        assert!(
            refused["text"].as_str().unwrap().starts_with("refused: the requestState is not one this run gave"),
            "{case}: {refused}"
        );
    }
    assert_eq!(cases["state for other arguments"]["written"], Value::Null);
    let answered = &cases["state answered"];
    assert_eq!((&answered["is_error"], &answered["written"]), (&json!(false), &json!("forged\n")), "{answered}");
    let replayed = &cases["state replayed"];
    assert_eq!((&replayed["is_error"], &replayed["written"]), (&json!(true), &Value::Null), "{replayed}");
    assert!(replayed["text"].as_str().unwrap().starts_with("refused: this requestState was used already"));
    let again = &cases["retry without answer"];
    assert_eq!(again["result_type"], "input_required");
    assert!(again["message"].as_str().unwrap().starts_with("the answer is empty"), "{again}");
    assert_eq!(again["written"], Value::Null);
}

#[test]
fn the_python_sdk_in_legacy_mode_gets_questions_and_approvals_as_elicitation_requests() {
    let Some(python) = python_sdk() else { return };
    let cases = python_matrix(&python, "legacy");
    assert_eq!(cases["protocol"]["version"], "2025-11-25");
    assert_shared_cases(&cases);
    let timeout = &cases["ask timeout"];
    assert!(timeout["text"].as_str().unwrap().starts_with("the question timed out with no answer"), "{timeout}");
    assert!(!cases.contains_key("forged state"));
}

/// `status --json` says which revisions `serve` speaks and how questions travel on each.
#[test]
fn status_says_how_questions_travel_on_each_revision() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        Command::new(env!("CARGO_BIN_EXE_agent-tools")).args(["status", "--json"]).current_dir(dir.path()).output();
    let status: Value = serde_json::from_slice(&out.unwrap().stdout).unwrap();
    let elicits = "elicitation/create requests";
    let none = "none: the revision has no elicitation, so ask_user has nobody to ask and --ask denies";
    assert_eq!(
        status["mcp"],
        json!([
            {"revision": "2026-07-28", "questions": "input-required results, answered by the client's retry (SEP-2322); in a task (SEP-2663, for a client that declares it), input requests answered by tasks/update"},
            {"revision": "2025-11-25", "questions": elicits},
            {"revision": "2025-06-18", "questions": elicits},
            {"revision": "2025-03-26", "questions": none},
            {"revision": "2024-11-05", "questions": none},
        ])
    );
}
