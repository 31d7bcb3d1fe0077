//! `agent-tools serve --http`: one host serving two runs, each at its own
//! streamable HTTP endpoint, driven by the official MCP Python SDK in both
//! connection modes (`tests/python/http_matrix.py`): search, a question, an
//! approval, a cell's own `tool()` call asked for inside the `eval` call,
//! progress, a staged edit, kernel state and breakpoints of one run out of the other's reach, and the host's
//! refusals (no token, a wrong one, a browser `Origin`, an unknown run).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::sdk_client_mcp::{python_sdk, tools_path};

pub(crate) const TOKEN: &str = "a-token-for-the-http-host-test-0123456789";

/// A host on a free loopback port, serving runs `a` and `b`; its endpoint URLs, read off its stderr.
pub(crate) struct Host {
    child: Child,
    pub(crate) urls: BTreeMap<String, String>,
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn host(a: &Path, b: &Path) -> Host {
    let runs = [format!("a={}", a.display()), format!("b={}", b.display())];
    start(&["--cap", "exec", "--ask", "--run", &runs[0], "--run", &runs[1]], 2)
}

/// A host started with `args`, once it has said where its `runs` runs are.
pub(crate) fn start(args: &[&str], runs: usize) -> Host {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .env("AGENT_TOOLS_HOST_TOKEN", TOKEN)
        .env("AGENT_TOOLS_LOG", "warn")
        .env("PATH", tools_path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut urls = BTreeMap::new();
    while urls.len() < runs {
        let line = lines.next().expect("the host ended before it served both runs").unwrap();
        if let Some(rest) = line.strip_prefix("agent-tools: run `") {
            let (name, url) = rest.split_once("` at ").unwrap();
            urls.insert(name.to_owned(), url.to_owned());
        }
    }
    // The rest of its stderr is drained, so the host never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Host { child, urls }
}

/// The host's base URL (`http://127.0.0.1:PORT`), from its `default` run's endpoint.
fn base(host: &Host) -> String {
    host.urls["default"].trim_end_matches("/runs/default/mcp").to_owned()
}

/// Runs `tests/python/SCRIPT BASE TOKEN ROOT EXTRA…` against a host's admin API; its report's
/// lines by case name, and its stderr. It must exit 0.
fn admin_script(
    python: &Path,
    script: &str,
    base: &str,
    root: &Path,
    extra: &[&str],
) -> (BTreeMap<String, Value>, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(script);
    let out = Command::new(python).arg(script).args([base, TOKEN]).arg(root).args(extra).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let cases = cases_of(&stdout);
    eprintln!("{cases:#?}");
    (cases, stderr)
}

/// A test script's report: one JSON line per case, by the case's name.
fn cases_of(stdout: &str) -> BTreeMap<String, Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .map(|case| (case["case"].as_str().unwrap().to_owned(), case))
        .collect()
}

/// Whether process `pid` has ended (a zombie counts as gone).
fn ended(pid: i32) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    state.is_empty() || state.contains(") Z ")
}

fn matrix(python: &Path, mode: &str) -> (BTreeMap<String, Value>, tempfile::TempDir, tempfile::TempDir) {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(a.path().join("app.py"), "x = foo(1)\n").unwrap();
    std::fs::write(b.path().join("app.py"), "y = foo(2)\n").unwrap();
    let host = host(a.path(), b.path());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/http_matrix.py");
    let out = Command::new(python)
        .arg(script)
        .args([mode, &host.urls["a"], &host.urls["b"], TOKEN])
        .current_dir(a.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{mode}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let cases = cases_of(&stdout);
    (cases, a, b)
}

#[test]
fn two_runs_over_streamable_http_answer_the_python_sdk_in_both_modes_and_stay_apart() {
    let Some(python) = python_sdk() else { return };
    for mode in ["auto", "legacy"] {
        let (cases, a, b) = matrix(&python, mode);
        eprintln!("{mode}:\n{}", cases.values().map(|c| format!("  {c}\n")).collect::<String>());
        let search = &cases["search"];
        assert_eq!(search["is_error"], false, "{mode}: {search}");
        assert!(search["text"].as_str().unwrap().contains("app.py:1:5: foo(1)"), "{mode}: {search}");
        assert_eq!(cases["ask answer"]["text"], "the user answered: 2. blue", "{mode}");
        let allowed = &cases["approval allowed"];
        assert_eq!(allowed["shown"], json!(["Allow write (write tier) to run?"]), "{mode}: {allowed}");
        assert_eq!(std::fs::read_to_string(a.path().join("allowed.txt")).unwrap(), "yes\n", "{mode}");
        let cell = &cases["cell tool approval"];
        assert_eq!(
            cell["shown"],
            json!(["Allow eval (exec tier) to run?", "Allow write (write tier) to run?"]),
            "{mode}: {cell}"
        );
        assert_eq!(std::fs::read_to_string(a.path().join("from_cell.txt")).unwrap(), "hi\n", "{mode}");
        let progress = &cases["eval progress"];
        assert!(progress["notifications"].as_u64().unwrap() >= 1, "{mode}: {progress}");
        assert_eq!((&progress["growing"], &progress["text"]), (&json!(true), &json!("0\n1\n2\n3\n")), "{mode}");
        // Run a's staged edit is not run b's: refused there, and neither file changed.
        assert_eq!(cases["staged in a"]["is_error"], false, "{mode}");
        let crossed = &cases["a's edit from b"];
        assert_eq!(crossed["is_error"], true, "{mode}: {crossed}");
        assert!(crossed["text"].as_str().unwrap().starts_with("unknown edit_id"), "{mode}: {crossed}");
        assert_eq!(std::fs::read_to_string(a.path().join("app.py")).unwrap(), "x = foo(1)\n", "{mode}");
        assert_eq!(std::fs::read_to_string(b.path().join("app.py")).unwrap(), "y = foo(2)\n", "{mode}");
        assert!(cases["search in b"]["text"].as_str().unwrap().contains("app.py:1:5: foo(2)"), "{mode}");
        // Run a's kernel state is not run b's: b's kernel is its own.
        let kept = &cases["a's kernel"];
        assert_eq!((kept["text"].as_str().unwrap().trim(), &kept["is_error"]), ("42", &json!(false)), "{mode}: {kept}");
        // Run a's debug breakpoints are not run b's: b's debugger has none, and no session.
        assert_eq!(cases["a's breakpoint"]["is_error"], false, "{mode}: {}", cases["a's breakpoint"]);
        let debug = &cases["debug status in b"];
        assert_eq!(debug["structured"], json!({"breakpoints": [], "session": null}), "{mode}: {debug}");
        let crossed = &cases["a's kernel from b"];
        assert_eq!(
            (crossed["text"].as_str().unwrap().trim(), &crossed["is_error"]),
            ("False", &json!(false)),
            "{mode}"
        );
        assert_eq!(
            cases["refusals"],
            json!({
                "case": "refusals",
                "none": 401, "none_challenge": "Bearer",
                "wrong": 401, "wrong_challenge": "Bearer error=\"invalid_token\"",
                "origin": 403, "unknown": 404,
            }),
            "{mode}"
        );
    }
}

/// The admin API: a run opened at run time answers with its own token only, and
/// closing it ends its kernel (checked by pid) and its endpoint.
#[test]
fn a_run_opened_through_the_admin_api_has_its_own_token_and_closing_it_ends_its_processes() {
    let Some(python) = python_sdk() else { return };
    let root = tempfile::tempdir().unwrap();
    let host = start(&["--cap", "exec", "--root", &root.path().display().to_string()], 1);
    let base = base(&host);
    let (cases, _) = admin_script(&python, "http_admin.py", &base, root.path(), &[]);
    let refused = &cases["refused opens"];
    assert_eq!(
        (&refused["none"], &refused["bad"], &refused["above"]),
        (&json!(401), &json!(400), &json!(400)),
        "{refused}"
    );
    assert!(refused["bad_error"].as_str().unwrap().starts_with("cannot open a run at "), "{refused}");
    assert!(refused["above_error"].as_str().unwrap().contains("unknown variant `admin`"), "{refused}");
    let opened = &cases["opened"];
    assert_eq!((&opened["status"], &opened["id"], &opened["token_length"]), (&json!(201), &json!("r1"), &json!(64)));
    assert_eq!(opened["url"], format!("{base}/runs/r1/mcp"));
    let kernel = &cases["kernel"];
    assert_eq!(kernel["is_error"], false, "{kernel}");
    let pid: i32 = kernel["text"].as_str().unwrap().trim().parse().unwrap_or_else(|e| panic!("{e}: {kernel}"));
    assert_eq!(
        cases["closed"],
        json!({"case": "closed", "host_token_on_run": 401, "closed": 204, "after": 404, "again": 404}),
    );
    assert!(ended(pid), "the closed run's kernel {pid} is still running");
}

/// Two runs opened on one checkout share its language server (one pyright, found by pid in
/// each run's `lsp status`); closing one leaves the other's answers and server as they were.
#[test]
fn runs_on_one_checkout_share_one_language_server_and_one_runs_end_leaves_it_to_the_other() {
    let Some(python) = python_sdk() else { return };
    let pyright = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/node/node_modules/.bin/pyright-langserver");
    if !pyright.is_file() {
        assert!(std::env::var("CI").is_err(), "pyright is missing under CI: run `cargo xtask setup`");
        eprintln!("skipped: pyright is not installed (`cargo xtask setup`)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("pyproject.toml"), "[project]\nname = \"app\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(root.path().join("app.py"), "def greet(name):\n    return name\n\n\ngreet(\"world\")\n").unwrap();
    let host = start(&["--cap", "exec", "--root", &root.path().display().to_string(), "--lsp", "python=pyright"], 1);
    let (cases, stderr) = admin_script(&python, "http_shared.py", &base(&host), root.path(), &[]);
    // The legacy session's DELETE is answered as the SDK expects (204), not logged as a failure.
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
    for run in ["first definition", "second definition", "second after the first closed"] {
        assert_eq!(cases[run]["is_error"], false, "{run}: {}", cases[run]);
        assert!(cases[run]["text"].as_str().unwrap().contains("app.py:1:5"), "{run}: {}", cases[run]);
    }
    // `pyright for .: running, pid N, up …, 0 restarts, 1 open documents, shared with 1 other run`
    let pyright = |status: &Value| -> (u32, String) {
        let line = status.as_str().unwrap().lines().find(|l| l.trim_start().starts_with("pyright for .")).unwrap();
        let pid = line.split(", pid ").nth(1).and_then(|r| r.split(',').next()).unwrap().parse().unwrap();
        (pid, line.to_owned())
    };
    let (first, first_line) = pyright(&cases["first status"]["text"]);
    let (second, second_line) = pyright(&cases["second status"]["text"]);
    assert_eq!(first, second, "one pyright for both runs:\n{first_line}\n{second_line}");
    assert!(first_line.ends_with("shared with 1 other run") && second_line.ends_with("shared with 1 other run"));
    let watched = |status: &Value| status.as_str().unwrap().contains("the root: watched for changes on disk");
    assert!(watched(&cases["second status"]["text"]), "the run that joined watches the root too");
    assert!(watched(&cases["second after the first closed"]["status"]), "and goes on watching it");
    let after = &cases["second after the first closed"];
    assert_eq!(after["closed"], 204);
    let (left, left_line) = pyright(&after["status"]);
    assert_eq!(left, first, "the first run's end left the server to the second: {left_line}");
    assert!(!left_line.contains("shared with"), "{left_line}");
}

/// `host.run_idle_s`: a run opened through the admin API is kept while a call runs longer
/// than the idle time, then closed once idle, its kernel ended (checked by pid) and its
/// endpoint gone.
#[test]
fn an_opened_run_idle_for_host_run_idle_s_is_closed_and_a_running_call_keeps_it() {
    let Some(python) = python_sdk() else { return };
    let root = tempfile::tempdir().unwrap();
    let root_arg = root.path().display().to_string();
    let host = start(&["--cap", "exec", "--root", &root_arg, "--set", "host.run_idle_s=1"], 1);
    let (cases, _) = admin_script(&python, "http_idle.py", &base(&host), root.path(), &["1"]);
    let cell = &cases["long cell"];
    assert_eq!(cell["is_error"], false, "the run was not closed while its call ran: {cell}");
    let pid: i32 = cell["text"].as_str().unwrap().trim().parse().unwrap_or_else(|e| panic!("{e}: {cell}"));
    // A late request is told why the run is gone.
    assert_eq!(
        cases["after the idle time"],
        json!({
            "case": "after the idle time", "status": 404, "delete": 404,
            "text": "no run `r1` on this host: it was closed after 1 s with no request (host.run_idle_s)\n",
        })
    );
    assert!(ended(pid), "the idle run's kernel {pid} is still running");
}

#[test]
fn a_host_without_a_token_refuses_to_bind_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["serve", "--http", "0.0.0.0:0", "--root"])
        .arg(dir.path())
        .env_remove("AGENT_TOOLS_HOST_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refusing to serve 0.0.0.0:0 without a token"), "{stderr}");
}

/// README's "One host for many runs": the client snippets, by heading and fence language.
const HTTP_SNIPPETS: &[(&str, &str)] = &[
    ("Claude Code over HTTP", "sh"),
    ("Codex over HTTP", "toml"),
    ("Cursor over HTTP", "json"),
    ("VS Code over HTTP", "json"),
    ("Zed over HTTP", "json"),
];

/// The URL and `Authorization` header a client snippet gives, with its way of naming the
/// token (`${AGENT_TOOLS_TOKEN}`, `${env:…}`, `${input:…}`, Codex's `bearer_token_env_var`,
/// Zed's `TOKEN` written in place) replaced by `token`.
fn http_snippet(client: &str, language: &str, text: &str, token: &str) -> (String, String) {
    let fill = |header: &str| {
        ["${AGENT_TOOLS_TOKEN}", "${env:AGENT_TOOLS_TOKEN}", "${input:agent-tools-token}"]
            .iter()
            .fold(header.to_owned(), |h, name| h.replace(name, token))
            .replace("Bearer TOKEN", &format!("Bearer {token}"))
    };
    match language {
        "sh" => {
            let line = text.lines().find(|l| l.starts_with("claude mcp add --transport http agent-tools ")).unwrap();
            let url = line.split_whitespace().nth(6).unwrap().to_owned();
            let header = line.split_once("--header \"").unwrap().1.trim_end_matches('"');
            (url, fill(header.strip_prefix("Authorization: ").unwrap()))
        }
        "toml" => {
            let value: toml::Value = toml::from_str(text).unwrap();
            let entry = &value["mcp_servers"]["agent-tools"];
            assert_eq!(entry["bearer_token_env_var"].as_str(), Some("AGENT_TOOLS_TOKEN"), "{client}");
            (entry["url"].as_str().unwrap().to_owned(), format!("Bearer {token}"))
        }
        _ => {
            let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{client}: {e}"));
            let entry = match client {
                "VS Code over HTTP" => {
                    assert_eq!(value["inputs"][0]["id"], "agent-tools-token", "{client}");
                    &value["servers"]["agent-tools"]
                }
                "Zed over HTTP" => &value["context_servers"]["agent-tools"],
                _ => &value["mcpServers"]["agent-tools"],
            };
            let header = entry["headers"]["Authorization"].as_str().unwrap();
            (entry["url"].as_str().unwrap().to_owned(), fill(header))
        }
    }
}

/// The README's host starts as its systemd unit says (its `ExecStart`, with the home
/// directory a temporary one and port 0), and each client snippet's URL and header
/// answer MCP `initialize` there (`curl`, as a client's first request), while the same
/// URL without the header gets 401.
#[test]
fn every_http_client_snippet_in_the_readme_reaches_a_run_of_a_running_host() {
    use crate::cli::{fenced_blocks, readme_section, subsection};
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let section = readme_section(&readme, "## One host for many runs");
    let head = &section[..section.find("\n### ").unwrap()];
    let foreground = fenced_blocks(head, "sh");
    assert!(
        foreground[0].contains("agent-tools serve --http 127.0.0.1:7420 --root ~/src/app --cap exec"),
        "{foreground:?}"
    );
    let unit = fenced_blocks(head, "ini");
    let exec = unit[0].lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
    let home = tempfile::tempdir().unwrap();
    let token = "a-token-from-the-token-file-0123456789abcdef";
    std::fs::create_dir_all(home.path().join("src/app")).unwrap();
    std::fs::create_dir_all(home.path().join(".config/agent-tools")).unwrap();
    std::fs::write(home.path().join(".config/agent-tools/token"), format!("{token}\n")).unwrap();
    let words: Vec<String> =
        exec.split_whitespace().map(|w| w.replace("%h", &home.path().display().to_string())).collect();
    assert!(words[0].ends_with("/.cargo/bin/agent-tools"), "{exec}");
    assert_eq!(words[1..4], ["serve", "--http", "127.0.0.1:7420"], "{exec}");
    let args: Vec<&str> = words[4..].iter().map(String::as_str).collect();
    let host = start(&args, 1);
    let url = &host.urls["default"];
    let port = url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"readme-snippet","version":"0"}}}"#;
    let post = |url: &str, header: Option<&str>| {
        let mut curl = Command::new("curl");
        curl.args(["-s", "-w", "\n%{http_code}", "-H", "Content-Type: application/json"]).args([
            "-H",
            "Accept: application/json, text/event-stream",
            "-d",
            initialize,
            url,
        ]);
        if let Some(header) = header {
            curl.args(["-H", &format!("Authorization: {header}")]);
        }
        let out = curl.output().expect("curl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for &(client, language) in HTTP_SNIPPETS {
        let blocks = fenced_blocks(subsection(section, client), language);
        assert_eq!(blocks.len(), 1, "README: {client} should have one ```{language} snippet");
        let (snippet_url, header) = http_snippet(client, language, &blocks[0], token);
        assert_eq!(snippet_url, "http://127.0.0.1:7420/runs/default/mcp", "{client}");
        let url = snippet_url.replace("7420", port);
        let answer = post(&url, Some(&header));
        assert!(answer.ends_with("\n200"), "{client}: {answer}");
        assert!(answer.contains(r#""serverInfo":{"name":"agent-tools""#), "{client}: {answer}");
        assert!(post(&url, None).ends_with("\n401"), "{client}: without the header");
    }
}

/// `serve --host URL`: two stdio servers that are runs of one running host, driven at once by
/// the Python SDK's stdio client in both modes, answer every kind of call (search, a definition,
/// a question through the client, a cell's progress), share the host's one language server, and
/// their runs are closed when their clients close (each kernel ended, checked by pid).
#[test]
fn serve_host_forwards_a_stdio_clients_run_to_a_running_host_and_closes_it_at_the_end() {
    // The README's stdio snippet is what the script's clients start, with the test host's URL.
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let section = readme.split("shares the host too").nth(1).expect("README has the `serve --host` snippet");
    let block = section.split("```json\n").nth(1).and_then(|b| b.split("```").next()).unwrap();
    let snippet: Value = serde_json::from_str(block).unwrap_or_else(|e| panic!("{e}: {block}"));
    let server = &snippet["mcpServers"]["agent-tools"];
    assert_eq!(server["command"], "agent-tools");
    assert_eq!(server["args"], json!(["serve", "--host", "http://127.0.0.1:7420"]));
    assert_eq!(server["env"]["AGENT_TOOLS_HOST_TOKEN"], "${AGENT_TOOLS_TOKEN}");
    let Some(python) = python_sdk() else { return };
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("pyproject.toml"), "[project]\nname = \"app\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(root.path().join("app.py"), "def greet(name):\n    return name\n\n\ngreet(\"world\")\n").unwrap();
    let host = start(&["--cap", "exec", "--root", &root.path().display().to_string()], 1);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/stdio_forward.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_agent-tools"))
        .args([&base(&host), TOKEN])
        .arg(root.path())
        .env("PATH", tools_path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let cases = cases_of(&stdout);
    let mut kernels = Vec::new();
    let mut servers = Vec::new();
    for mode in ["auto", "legacy"] {
        let names = &cases[&format!("{mode} tools")]["names"];
        assert_eq!(names.as_array().unwrap().len(), 11, "{mode}: {names}");
        let search = &cases[&format!("{mode} search")];
        assert!(
            search["text"].as_str().unwrap().ends_with("app.py:5:1: greet(\"world\")  [$X = \"world\"]"),
            "{search}"
        );
        let definition = &cases[&format!("{mode} definition")];
        assert_eq!(definition["text"], "definition of app.py:5:1 `greet`: 1\napp.py:1:5  def greet(name):", "{mode}");
        assert_eq!(cases[&format!("{mode} ask")]["text"], "the user answered: 2. blue", "{mode}");
        let eval = &cases[&format!("{mode} eval")];
        let lines: Vec<&str> = eval["text"].as_str().unwrap().lines().collect();
        assert_eq!(lines[..3], ["0", "1", "2"], "{mode}: {eval}");
        assert!(eval["notifications"].as_u64().unwrap() >= 1, "{mode}: progress came through: {eval}");
        kernels.push(lines[3].parse::<i32>().unwrap_or_else(|e| panic!("{e}: {eval}")));
        // `pyright for . (nearest pyproject.toml): running, pid N, …, shared with 1 other run`
        let status = cases[&format!("{mode} status")]["text"].as_str().unwrap().to_owned();
        let line = status.lines().find(|l| l.contains("for . (nearest pyproject.toml): running")).unwrap().to_owned();
        assert!(line.ends_with("shared with 1 other run"), "{mode}: {line}");
        servers.push(line.split(", pid ").nth(1).and_then(|r| r.split(',').next()).unwrap().to_owned());
    }
    assert_ne!(kernels[0], kernels[1], "each run has its own kernel");
    assert_eq!(servers[0], servers[1], "one language server for both runs");
    for pid in kernels {
        assert!(ended(pid), "the kernel {pid} of a run whose client closed is still running");
    }
}

/// `serve --host URL` says what is wrong before it serves: no host at the URL, no token, a
/// wrong token, and command-line configuration the host's run would not see.
#[test]
fn serve_host_refuses_with_a_reason_when_it_cannot_open_its_run() {
    let root = tempfile::tempdir().unwrap();
    let run = |args: &[&str], token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_agent-tools"));
        command.args(["serve", "--root"]).arg(root.path()).args(args).env_remove("AGENT_TOOLS_HOST_TOKEN");
        if let Some(token) = token {
            command.env("AGENT_TOOLS_HOST_TOKEN", token);
        }
        let out = command.stdin(Stdio::null()).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    // A port nothing listens on: bound and dropped.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (code, stderr) = run(&["--host", &format!("http://{free}")], Some(TOKEN));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("no host answers at http://{free}")), "{stderr}");
    assert!(stderr.contains("start one with `agent-tools serve --http ADDR`"), "{stderr}");

    let host = start(&["--cap", "write", "--root", &root.path().display().to_string()], 1);
    let (code, stderr) = run(&["--host", &base(&host)], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("needs the host's token: set AGENT_TOOLS_HOST_TOKEN or give --token-file"), "{stderr}");
    let (_, stderr) = run(&["--host", &base(&host)], Some("not-the-token"));
    assert!(stderr.contains("refused the token"), "{stderr}");
    let (_, stderr) = run(&["--host", &base(&host), "--cap", "exec"], Some(TOKEN));
    assert!(
        stderr.contains("did not open a run (400 Bad Request): cap exec is above this host's cap, write"),
        "{stderr}"
    );
    let (_, stderr) = run(&["--host", &base(&host), "--set", "lsp.idle_s=1"], Some(TOKEN));
    assert!(stderr.contains("serve --host: the host's configuration applies to its runs"), "{stderr}");
}

/// What one run holds is out of another's reach (the Python SDK on 2026-07-28): run a's
/// launched debug session stopped at a breakpoint, its running worker (started in a's root,
/// alive by pid after b's attempts) and a question waiting in an input-required round, whose
/// `requestState` b cannot answer. Each is then used in run a as if b had not tried.
#[test]
fn a_runs_debug_session_worker_and_pending_question_are_out_of_another_runs_reach() {
    let Some(python) = python_sdk() else { return };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(a.path().join("pyproject.toml"), "[project]\nname = \"a\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(a.path().join("dbg.py"), "a = 1\nb = 2\nprint(a + b)\n").unwrap();
    let runs = [format!("a={}", a.path().display()), format!("b={}", b.path().display())];
    let worker = "echo $$ > worker.pid; exec sleep 600";
    let host = start(&["--cap", "exec", "--vibe", "--vibe-fast-cmd", worker, "--run", &runs[0], "--run", &runs[1]], 2);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/http_isolation.py");
    let out = Command::new(&python).arg(script).args([&host.urls["a"], &host.urls["b"], TOKEN]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let cases = cases_of(&stdout);
    let text = |case: &str| cases[case]["text"].as_str().unwrap().to_owned();
    // The debug session.
    assert!(
        text("a launches").ends_with("stopped (breakpoint) at dbg.py:2 in <module>, thread 1"),
        "{}",
        text("a launches")
    );
    assert_eq!(cases["b status"]["structured"], json!({"breakpoints": [], "session": null}));
    for case in ["b continue", "b terminate"] {
        assert_eq!(
            (&cases[case]["is_error"], text(case).as_str()),
            (&json!(true), "no debug session is running; launch or attach first"),
            "{case}"
        );
    }
    assert!(
        text("a status").starts_with("debugpy session (launched dbg.py): stopped (breakpoint) at dbg.py:2"),
        "{}",
        text("a status")
    );
    assert_eq!(
        cases["a continue"]["structured"],
        json!({"exit_code": 0, "reason": "the program finished", "state": "exited"})
    );
    // The worker.
    assert_eq!(cases["b list"]["structured"], json!({"workers": []}));
    for case in ["b kill", "b wait"] {
        assert_eq!(
            (&cases[case]["is_error"], text(case).as_str()),
            (&json!(true), "no worker 'w1' (known: none)"),
            "{case}"
        );
    }
    assert_eq!(cases["a list"]["structured"]["workers"][0]["status"], "running");
    let pid_file = a.path().join("worker.pid");
    let mut pid = String::new();
    for _ in 0..250 {
        pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if !pid.trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid: i32 = pid.trim().parse().unwrap_or_else(|e| panic!("{e}: the worker wrote no pid in run a's root"));
    assert!(!ended(pid), "b's vibe_kill did not reach a's worker");
    assert!(!b.path().join("worker.pid").exists());
    // The question in its round.
    assert_eq!(cases["a asks"]["result_type"], "input_required");
    let crossed = text("b answers a's question");
    assert!(crossed.starts_with("refused: the requestState is not one this run gave"), "{crossed}");
    assert_eq!(text("a answers"), "the user answered: 2. blue");
    // The host's end (SIGTERM) ends a's worker.
    let host_pid = nix::unistd::Pid::from_raw(i32::try_from(host.child.id()).unwrap());
    nix::sys::signal::kill(host_pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    for _ in 0..250 {
        if ended(pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(ended(pid), "a's worker {pid} outlived the host");
}
