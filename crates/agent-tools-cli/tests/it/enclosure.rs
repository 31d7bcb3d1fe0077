//! The enclosure through the built binary: `--enclosure` and `[enclosure]`
//! as settings (layers, refusals with their place), `status` saying what is in
//! force, `eval` and `vibe_*` running in the real bubblewrap (writes outside
//! the root refused; the root read-only under a `read` cap), and a command
//! prefix that every kernel, worker, project checker and debug adapter starts through.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

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
    let mut status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    // What it binds from this host's home: the secrets test checks it on a home of its own.
    for key in ["binds", "masked"] {
        assert!(status["enclosure"].as_object_mut().unwrap().remove(key).unwrap().is_array(), "{status}");
    }
    assert!(status["enclosure"].as_object_mut().unwrap().remove("binds_error").unwrap().is_null(), "{status}");
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
    // A bind that cannot be worked out is said, not shown as nothing bound.
    let missing = ["status", "--enclosure", "bwrap", "--set", "enclosure.ro_paths=[\"/nonexistent/data\"]"];
    let out = agent_tools(dir.path(), &missing, &[]);
    assert!(
        stdout(&out).contains(
            "\n  bound from outside the root: unknown: the enclosure's read-only path `/nonexistent/data` does not exist\n"
        ),
        "{}{}",
        stdout(&out),
        stderr(&out)
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
    let asked = dir.path().join("asked.log");
    let wrapper = dir.path().join("enter.sh");
    // What is looked up or ended inside (`sh -c SCRIPT`) is logged apart from what runs there.
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$*\" in\n  *'for c do'*) echo lookup >> '{asked}';;\n  *carriers*) echo end >> '{asked}';;\n  *) echo \"$@\" >> '{log}';;\nesac\nexport ENTERED=yes\nexec \"$@\"\n",
            asked = asked.display(),
            log = log.display()
        ),
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
    // cargo check and pyright, debugpy's adapter (the program it starts runs under it),
    // and the probes that detect the adapters (`-c import debugpy`, `--help`, `version`).
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = logged.lines().collect();
    // Each line: env --default-signal=INT -C DIR NAME=VALUE… PROGRAM ARGS…
    assert!(lines.iter().all(|line| line.starts_with("env --default-signal=INT -C ")), "{logged}");
    let count = |needle: &str| lines.iter().filter(|line| line.contains(needle)).count();
    // A kernel's frames travel on stdio through a prefix: `sh -c SHIM INTERPRETER -c|-e BOOTSTRAP`.
    assert_eq!(count("exec \"$0\" \"$@\" /"), 2, "{logged}");
    assert_eq!(count("/.venv/bin/python -c import io"), 1, "{logged}");
    assert_eq!(count("node -e (()=>"), 1, "{logged}");
    assert_eq!(count("sh -c echo \"$ENTERED $FROM_CONFIG\""), 1, "{logged}");
    assert_eq!(count("/cargo check --message-format=json"), 1, "{logged}");
    assert_eq!(count("/node_modules/.bin/pyright --outputjson"), 1, "{logged}");
    assert_eq!(count("/.venv/bin/python -m debugpy.adapter"), 1, "{logged}");
    let probes = count("/.venv/bin/python -c import debugpy") + count(" --help") + count(" version");
    assert!(probes >= 3, "{logged}");
    assert_eq!(lines.len(), 6 + probes, "{logged}");
    // The checkers run on the enclosure's own PATH, not one made of the host's directories.
    assert!(!logged.contains("PATH="), "{logged}");
    // The interpreters, debugpy's Python and the worker's leftovers were asked of the prefix too.
    let asked = std::fs::read_to_string(&asked).unwrap();
    assert!(asked.lines().any(|l| l == "lookup") && asked.lines().any(|l| l == "end"), "{asked}");
}

/// The secrets table through the built binary: a home with a canary at every
/// well-known secret place, its `~/.cargo/bin` and `~/.local/bin` on `PATH`,
/// canaries in the host's environment too, and each kind of enclosed process
/// running `fixtures/enclosure/probe-secrets.sh`: the Python and the Node
/// kernel (from a cell), a vibe worker, the project checker (`cargo check`'s
/// build script), debugpy's adapter (its Python is a wrapper that probes
/// first) and the debuggee it starts, and an enclosed language server
/// (pylsp behind a wrapper that probes first).
#[tokio::test]
async fn no_enclosed_process_kind_reads_a_secret() {
    use rmcp::ServiceExt as _;
    use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
    if !bwrap_ready() {
        return;
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let fixtures = workspace.join("fixtures/enclosure");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-secrets");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let base = base.canonicalize().unwrap();
    let nonce = format!("{}-{}", std::process::id(), std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos());
    let planted = Command::new("sh").arg(fixtures.join("plant-secrets.sh")).arg(&base).arg(&nonce).status().unwrap();
    assert!(planted.success());
    let (home, root) = (base.join("home"), base.join("project"));
    // The probe runs from the root, which every sandbox shows wherever the checkout is.
    let probe_script = root.join("probe-secrets.sh");
    std::fs::copy(fixtures.join("probe-secrets.sh"), &probe_script).unwrap();
    // The sandbox's /tmp is its own: a base under the host's /tmp (a checkout there)
    // is not shown at all, so its .env files are absent rather than masked.
    let base_shown = !base.starts_with("/tmp");
    let probe = |kind: &str| {
        format!(
            "sh '{}' {nonce} '{}' '{}'",
            probe_script.display(),
            root.join("secrets.tsv").display(),
            root.join(format!("report-{kind}.tsv")).display()
        )
    };
    let script = |name: &str, body: String| {
        let path = root.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        path
    };
    // A crate whose build script probes, a Python project (its venv with debugpy and pylsp).
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"probed\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    let build = format!(
        "fn main() {{\n    std::process::Command::new(\"sh\").args([\"-c\", {:?}]).status().unwrap();\n}}\n",
        probe("project-checker")
    );
    std::fs::write(root.join("build.rs"), build).unwrap();
    std::fs::write(root.join("requirements.txt"), "").unwrap();
    // No .venv in the root, which debugpy's detection would take before debug.python.
    let venv_bin = workspace.join(".tools/venv/bin");
    // pyright, the Python project's checker, from the project's node_modules/.bin.
    let node_modules = workspace.join(".tools/node/node_modules").canonicalize().unwrap();
    std::os::unix::fs::symlink(node_modules, root.join("node_modules")).unwrap();
    let debuggee = format!("import subprocess\nsubprocess.run(['sh', '-c', {:?}])\n", probe("debuggee"));
    std::fs::write(root.join("debuggee.py"), debuggee).unwrap();
    let python = venv_bin.join("python");
    // Detection runs these on the host (`-c 'import debugpy'`, `--version`): they probe only when serving.
    let adapter = script(
        "adapter-python.sh",
        format!(
            "case \"$*\" in *debugpy.adapter*) {} </dev/null >/dev/null 2>&1;; esac\nexec '{}' \"$@\"",
            probe("debug-adapter"),
            python.display()
        ),
    );
    let pylsp = script(
        "pylsp.sh",
        format!(
            "case \"$*\" in *--version*) ;; *) {} </dev/null >/dev/null 2>&1;; esac\nexec '{}' \"$@\"",
            probe("language-server"),
            venv_bin.join("pylsp").display()
        ),
    );
    // The wrappers exec the workspace's tools by path, which the enclosure cannot read from a
    // script: `ro_paths` names them, as a user's wrapper would (and a checkout under /tmp,
    // which the enclosure replaces, needs it).
    let tools = workspace.join(".tools");
    let config = format!(
        "[enclosure]\nmode = \"bwrap\"\nro_paths = [{:?}]\n\n[eval]\npython = {:?}\n\n[debug]\npython = {:?}\n\n[lsp]\nservers.python = \"pylsp\"\n\n[[lsp.server]]\nname = \"pylsp\"\ncommand = {:?}\nenclosed = true\n",
        tools.display().to_string(),
        python.display().to_string(),
        adapter.display().to_string(),
        pylsp.display().to_string()
    );
    std::fs::write(root.join("agent-tools.toml"), config).unwrap();

    // The host's: its home planted, its toolchain directories first on PATH, canaries in its environment.
    let real_home = PathBuf::from(std::env::var("HOME").unwrap());
    let path = format!(
        "{}:{}:{}",
        home.join(".cargo/bin").display(),
        home.join(".local/bin").display(),
        std::env::var("PATH").unwrap()
    );
    let canary = format!("CANARY-{nonce}");
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| real_home.join(".cargo").display().to_string());
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| real_home.join(".rustup").display().to_string());
    let worker = probe("vibe-worker");
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent-tools")).configure(|cmd| {
        cmd.args(["serve", "--vibe", "--vibe-fast-cmd", &worker])
            .current_dir(&root)
            .env("AGENT_TOOLS_LOG", "warn")
            .env("HOME", &home)
            .env("PATH", &path)
            .env("CARGO_HOME", &cargo_home)
            .env("RUSTUP_HOME", &rustup_home)
            .env("CARGO_REGISTRY_TOKEN", &canary)
            .env("GITHUB_TOKEN", &canary)
            .env("AWS_SECRET_ACCESS_KEY", &canary);
    });
    // status lists what is bound from outside the root, and the secret places masked.
    let env = [("HOME", home.to_str().unwrap()), ("PATH", path.as_str())];
    let out = agent_tools(&root, &["status", "--json"], &env);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    let venv = home.join(".local/share/pipx/venvs/piped");
    let bind = |path: PathBuf, why: &str| json!({"path": path, "access": "read-only", "why": why});
    assert_eq!(
        status["enclosure"]["binds"],
        json!([
            bind(home.join(".cargo/bin"), "toolchain"),
            bind(home.join(".cargo/registry"), "toolchain"),
            bind(home.join(".local/bin"), "toolchain"),
            bind(home.join(".local/lib"), "toolchain"),
            bind(venv.join("bin"), "tool on PATH"),
            bind(venv.join("lib"), "tool on PATH"),
            bind(venv.join("pyvenv.cfg"), "tool on PATH"),
            bind(tools.clone(), "ro_paths"),
        ])
    );
    let mut masked: Vec<String> =
        status["enclosure"]["masked"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    masked.sort();
    let mut expected = vec![base.join(".env"), base.join(".env.local"), home.join(".local/bin/.env")];
    if !base_shown {
        expected.drain(..2);
    }
    assert_eq!(masked, expected.iter().map(|p| p.display().to_string()).collect::<Vec<_>>());
    let out = agent_tools(&root, &["status"], &env);
    let line = stdout(&out).lines().find(|l| l.starts_with("  bound from outside the root: ")).map(str::to_owned);
    assert_eq!(
        line.as_deref(),
        Some(format!("  bound from outside the root: {}/.cargo/bin (toolchain, read-only), {0}/.cargo/registry (toolchain, read-only), {0}/.local/bin (toolchain, read-only), {0}/.local/lib (toolchain, read-only), {1}/bin (tool on PATH, read-only), {1}/lib (tool on PATH, read-only), {1}/pyvenv.cfg (tool on PATH, read-only), {2} (ro_paths, read-only)", home.display(), venv.display(), tools.display()).as_str()),
        "{}",
        stdout(&out)
    );

    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let py = format!("import subprocess\nsubprocess.run(['sh', '-c', {:?}])\nprint('probed')", probe("python-kernel"));
    let cell = common::call(&client, "eval", json!({"code": py, "description": "probe"})).await;
    assert_eq!(common::text(&cell), "[a new python kernel, in bwrap (no network, root writable)]\nprobed\n");
    let js = format!("require('child_process').execSync({:?}); 'probed'", probe("node-kernel"));
    let cell =
        common::call(&client, "eval", json!({"code": js, "language": "javascript", "description": "probe"})).await;
    assert!(common::text(&cell).contains("'probed'"), "{}", common::text(&cell));
    common::call(&client, "vibe_spawn", json!({"brief": "probe", "label": "prober"})).await;
    common::call(&client, "vibe_wait", json!({"worker_id": "w1"})).await;
    let checked = common::call(&client, "lsp", json!({"action": "diagnostics", "file": "*"})).await;
    assert!(!checked.is_error.unwrap_or(false), "{}", common::text(&checked));
    let launched = common::call(&client, "debug", json!({"op": "launch", "program": "debuggee.py"})).await;
    let launched = format!("{:?}", launched.structured_content);
    assert!(launched.contains("exited"), "{launched}");
    std::fs::write(root.join("hello.py"), "def greet():\n    return 1\n").unwrap();
    let outline = common::call(&client, "lsp", json!({"action": "symbols", "file": "hello.py"})).await;
    assert!(common::text(&outline).contains("greet"), "{}", common::text(&outline));
    client.cancel().await.unwrap();

    let kinds = [
        "python-kernel",
        "node-kernel",
        "vibe-worker",
        "project-checker",
        "debug-adapter",
        "debuggee",
        "language-server",
    ];
    let reports: Vec<Vec<(String, String)>> = kinds
        .iter()
        .map(|kind| {
            let report = root.join(format!("report-{kind}.tsv"));
            let text = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{}: {e}", report.display()));
            text.lines().map(|line| line.split_once('\t').map(|(a, b)| (a.to_owned(), b.to_owned())).unwrap()).collect()
        })
        .collect();
    let mut table = format!("| place | {} |\n|---|{}\n", kinds.join(" | "), "---|".repeat(kinds.len()));
    for (row, (place, _)) in reports[0].iter().enumerate() {
        let cells: Vec<&str> = reports.iter().map(|report| report[row].1.as_str()).collect();
        table.push_str(&format!("| {place} | {} |\n", cells.join(" | ")));
    }
    eprintln!("{table}");
    for (kind, report) in kinds.iter().zip(&reports) {
        assert_eq!(report.len(), enclosure::SECRETS.len() + 4 + 3, "{kind}: {report:?}");
        for (place, verdict) in report {
            // Only the .env files that the host's / or a bound directory shows are there, as empty files.
            let above = [".env above the root", ".env.local above the root"];
            let masked = place == ".env in ~/.local/bin" || (base_shown && above.contains(&place.as_str()));
            let expected = if masked { "masked" } else { "hidden" };
            assert_eq!(verdict, expected, "{kind}: {place}\n{table}");
        }
    }
}
