//! `deploy/`: the Kubernetes manifests validate against agent-sandbox's CRD schemas and
//! Kubernetes' own (and a broken copy does not), and the image `cargo xtask image` builds serves
//! every tool over MCP HTTP under gVisor, from its own toolchain, with nothing left once stopped.
//!
//! Both need what setup installs (kubernetes-validate and the MCP Python SDK in .tools/venv;
//! podman, runsc and mmdebstrap from Debian; pyright from npm); missing, they fail under `CI=true`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::sdk_client_mcp::python_sdk;

/// The Kubernetes version whose schemas the manifests are checked against (kubernetes-validate's).
const KUBERNETES: &str = "1.37.0";
/// The manifests, each checked as a whole.
const MANIFESTS: &[&str] = &["sandboxtemplate.yaml", "sandboxwarmpool.yaml", "sandboxclaim.yaml", "secret.yaml"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn shown(out: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Whether `what` is there; missing, fails under `CI=true` and says so elsewhere.
fn require(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    let message = format!("{what} is missing: run `cargo xtask setup`");
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
    eprintln!("SKIPPED: {message}");
    false
}

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program).args(args).output().is_ok_and(|out| out.status.success())
}

/// One line of `deploy_manifests.py`'s report.
#[derive(Debug)]
struct Check {
    file: String,
    kind: String,
    check: String,
    errors: Vec<String>,
}

/// Runs the validator over `files`; its checks, in order.
fn validate(python: &Path, files: &[PathBuf]) -> Vec<Check> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/deploy_manifests.py");
    let out = Command::new(python)
        .arg(script)
        .arg(workspace().join("deploy/kubernetes/schemas"))
        .arg(KUBERNETES)
        .args(files)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", shown(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let file = Path::new(v["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy().into_owned();
            Check {
                file,
                kind: v["kind"].as_str().unwrap_or_default().to_owned(),
                check: v["check"].as_str().unwrap().to_owned(),
                errors: v["errors"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_owned()).collect(),
            }
        })
        .collect()
}

/// The venv's Python when kubernetes-validate is installed there.
fn validator_python() -> Option<PathBuf> {
    let python = workspace().join(".tools/venv/bin/python");
    let there = Command::new(&python)
        .args(["-c", "import kubernetes_validate, jsonschema, yaml"])
        .output()
        .is_ok_and(|out| out.status.success());
    require("kubernetes-validate (pip, in .tools/venv)", there).then_some(python)
}

#[test]
fn the_manifests_validate_against_the_crd_schemas_and_kubernetes_core_schemas() {
    let Some(python) = validator_python() else { return };
    let dir = workspace().join("deploy/kubernetes");
    let files: Vec<PathBuf> = MANIFESTS.iter().map(|name| dir.join(name)).collect();
    let checks = validate(&python, &files);
    let made: Vec<(String, String, String)> =
        checks.iter().map(|c| (c.file.clone(), c.kind.clone(), c.check.clone())).collect();
    let expected = [
        ("sandboxtemplate.yaml", "SandboxTemplate", "CRD schema"),
        ("sandboxtemplate.yaml", "SandboxTemplate", "metadata as ObjectMeta"),
        ("sandboxtemplate.yaml", "SandboxTemplate", "podTemplate as a PodTemplate"),
        ("sandboxtemplate.yaml", "SandboxTemplate", "networkPolicy as a NetworkPolicy"),
        ("sandboxtemplate.yaml", "SandboxTemplate", "volumeClaimTemplates[workspace] as a PersistentVolumeClaim"),
        ("sandboxwarmpool.yaml", "SandboxWarmPool", "CRD schema"),
        ("sandboxwarmpool.yaml", "SandboxWarmPool", "metadata as ObjectMeta"),
        ("sandboxclaim.yaml", "SandboxClaim", "CRD schema"),
        ("sandboxclaim.yaml", "SandboxClaim", "metadata as ObjectMeta"),
        ("secret.yaml", "Secret", "core schema"),
    ]
    .map(|(f, k, c)| (f.to_owned(), k.to_owned(), c.to_owned()));
    assert_eq!(made, expected);
    for check in &checks {
        assert_eq!(check.errors, Vec::<String>::new(), "{} {}: {}", check.file, check.kind, check.check);
    }
    // What the runtime relies on, read from the manifests as validated.
    let template = std::fs::read_to_string(dir.join("sandboxtemplate.yaml")).unwrap();
    for needed in ["runtimeClassName: gvisor", "name: AGENT_TOOLS_HOST_TOKEN", "mountPath: /workspace", "port: 7420"] {
        assert!(template.contains(needed), "the template lacks {needed}");
    }
}

/// The validators are awake: a misspelled field, a wrong type and a missing required field are
/// refused by the CRD schema, and the misspelling by Kubernetes' pod schema too.
#[test]
fn a_broken_manifest_is_refused_by_the_crd_and_core_schemas() {
    let Some(python) = validator_python() else { return };
    let dir = workspace().join("deploy/kubernetes");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let broken = [
        ("template.yaml", read("sandboxtemplate.yaml").replace("runtimeClassName:", "runtimeClasName:")),
        ("pool.yaml", read("sandboxwarmpool.yaml").replace("replicas: 2", "replicas: two")),
        ("claim.yaml", read("sandboxclaim.yaml").replace("warmPoolRef:", "warmPool:")),
    ];
    let files: Vec<PathBuf> = broken
        .iter()
        .map(|(name, text)| {
            let path = scratch.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let errors: BTreeMap<(String, String), Vec<String>> =
        validate(&python, &files).into_iter().map(|c| ((c.file, c.check), c.errors)).collect();
    let of = |file: &str, check: &str| errors[&(file.to_owned(), check.to_owned())].clone();
    assert_eq!(
        of("template.yaml", "CRD schema"),
        ["spec.podTemplate.spec: Additional properties are not allowed ('runtimeClasName' was unexpected)"]
    );
    assert_eq!(
        of("template.yaml", "podTemplate as a PodTemplate"),
        ["template.spec: Additional properties are not allowed ('runtimeClasName' was unexpected)"]
    );
    assert_eq!(of("template.yaml", "networkPolicy as a NetworkPolicy"), Vec::<String>::new());
    assert_eq!(of("pool.yaml", "CRD schema"), ["spec.replicas: 'two' is not of type 'integer'"]);
    assert_eq!(
        of("claim.yaml", "CRD schema"),
        [
            "spec: 'warmPoolRef' is a required property",
            "spec: Additional properties are not allowed ('warmPool' was unexpected)"
        ]
    );
}

/// The image the test builds (`cargo xtask image --binary THIS_BUILD --tag TAG`).
const TAG: &str = "localhost/agent-tools:test";
const TOKEN: &str = "an-image-test-token-0123456789abcdef";

/// A container removed, with its volumes, however the test ends.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("podman").args(["rm", "--force", "--volumes", "--time", "2", &self.0]).output();
    }
}

fn podman(args: &[&str]) -> Output {
    Command::new("podman").args(args).output().unwrap()
}

/// The host's processes whose command line names `id` (conmon, runsc's sandbox and gofer).
fn host_processes_of(id: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(id) {
            found.push(format!("{pid}: {}", cmdline.trim()));
        }
    }
    found
}

#[test]
fn the_image_serves_every_tool_over_http_under_gvisor_and_leaves_nothing_once_stopped() {
    let Some(python) = python_sdk() else { return };
    let engines = require("podman (apt)", runs("podman", &["--version"]))
        && require("runsc (apt, gVisor)", runs("runsc", &["--version"]))
        && require("mmdebstrap (apt)", runs("mmdebstrap", &["--version"]));
    if !engines {
        return;
    }
    // The image of this build's binary; the root filesystem is setup's cached one.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(workspace())
        .args(["xtask", "image", "--binary", env!("CARGO_BIN_EXE_agent-tools"), "--tag", TAG])
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo xtask image failed: {}", shown(&out));
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));

    // The project, on the volume: a call in app.py to a function of lib.py.
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"app\"\nversion = \"0.1.0\"\n").unwrap();
    std::fs::write(root.join("lib.py"), "def greet(name):\n    message = f\"hello, {name}\"\n    return message\n")
        .unwrap();
    std::fs::write(root.join("app.py"), "from lib import greet\n\nwho = \"world\"\nprint(greet(who))\n").unwrap();

    // gVisor with its own network stack off, inside podman's network namespace: only the
    // loopback port given is published (docs/deploy.md says why).
    let name = format!("agent-tools-image-test-{}", std::process::id());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let container = Container(name.clone());
    let out = Command::new("podman")
        .args(["--runtime=runsc", "--runtime-flag=network=host", "run", "--detach", "--name", &name])
        .args(["--publish", &format!("127.0.0.1:{port}:7420")])
        .args(["--env", &format!("AGENT_TOOLS_HOST_TOKEN={TOKEN}")])
        .args(["--volume", &format!("{}:/workspace:U", root.display())])
        .arg(TAG)
        .output()
        .unwrap();
    assert!(out.status.success(), "podman run: {}", shown(&out));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let published = podman(&["port", &name]);
    assert_eq!(String::from_utf8_lossy(&published.stdout).trim(), format!("7420/tcp -> 127.0.0.1:{port}"));
    let runtime = podman(&["inspect", "--format", "{{.OCIRuntime}}", &name]);
    assert_eq!(String::from_utf8_lossy(&runtime.stdout).trim(), "runsc");

    // The image's own probe (the Kubernetes template's) says when the server answers MCP.
    let probe = ["exec", &name, "python3", "/usr/local/lib/agent-tools/probe.py"];
    let started = std::time::Instant::now();
    let mut last = podman(&probe);
    while !last.status.success() && started.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(200));
        last = podman(&probe);
    }
    assert!(last.status.success(), "the probe never passed: {}", shown(&last));
    let wrong = Command::new("podman")
        .args(["exec", "--env", "AGENT_TOOLS_HOST_TOKEN=not-the-token", &name])
        .args(["python3", "/usr/local/lib/agent-tools/probe.py"])
        .output()
        .unwrap();
    assert!(!wrong.status.success() && shown(&wrong).contains("initialize answered 401"), "{}", shown(&wrong));
    assert!(!host_processes_of(&id).is_empty(), "no host process names the container {id}");

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/image_mcp.py");
    let url = format!("http://127.0.0.1:{port}/runs/default/mcp");
    let out = Command::new(&python).arg(script).args([&url, TOKEN]).output().unwrap();
    let logs = podman(&["logs", &name]);
    assert!(out.status.success(), "{}\ncontainer log:\n{}", shown(&out), shown(&logs));
    let cases: BTreeMap<String, Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|case| (case["case"].as_str().unwrap().to_owned(), case))
        .collect();
    eprintln!("{cases:#?}");
    let text = |case: &str| -> String {
        let case = &cases[case];
        assert_eq!(case["is_error"], false, "{case}");
        case["text"].as_str().unwrap().to_owned()
    };
    assert!(text("ast_grep").contains("app.py:4:7: greet(who)"), "{}", text("ast_grep"));
    assert!(text("lsp definition").contains("lib.py:1:5  def greet(name):"), "{}", text("lsp definition"));
    // The cell ran on the container's Python, in the volume, as the image's user.
    let eval = text("eval");
    assert!(eval.contains("/usr/bin/python3 /workspace 1000") && eval.contains("42"), "{eval}");
    assert!(text("debug launch").contains("stopped (breakpoint) at lib.py:3 in greet"), "{}", text("debug launch"));
    assert_eq!(text("debug evaluate"), "message: str = 'hello, world'");
    assert!(text("debug continue").contains("the program finished (exit code 0)"), "{}", text("debug continue"));
    assert_eq!(text("debug output"), "hello, world\n");

    // SIGTERM through tini: the server ends its runs and exits 0.
    let stopped = podman(&["stop", "--time", "20", &name]);
    assert!(stopped.status.success(), "{}", shown(&stopped));
    let code = podman(&["inspect", "--format", "{{.State.ExitCode}}", &name]);
    assert_eq!(String::from_utf8_lossy(&code.stdout).trim(), "0", "{}", shown(&podman(&["logs", &name])));
    let removed = podman(&["rm", "--volumes", &name]);
    assert!(removed.status.success(), "{}", shown(&removed));
    drop(container);
    let left = podman(&["ps", "--all", "--quiet", "--filter", &format!("name=^{name}$")]);
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "", "a container is left");
    let started = std::time::Instant::now();
    while !host_processes_of(&id).is_empty() && started.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(host_processes_of(&id), Vec::<String>::new(), "host processes are left");
}

/// The status line of a raw `POST` of MCP `initialize` to `url` with `Host: host` and the token.
fn initialize_status(url: &str, host: &str) -> String {
    use std::io::{Read as _, Write as _};
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        crate::http_mcp::TOKEN,
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    String::from_utf8_lossy(&head).trim().to_owned()
}

/// A pod is reached by its Service's name: `host.allowed_hosts` names it (the image allows any
/// Host with `*`, which a host without a token refuses to start with).
#[test]
fn host_allowed_hosts_lets_a_service_name_through_and_star_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let service = "sandbox-1.agent-sandboxes.svc.cluster.local";
    let named = crate::http_mcp::start(&["--root", &root, "--set", &format!("host.allowed_hosts=[\"{service}\"]")], 1);
    let url = &named.urls["default"];
    assert_eq!(initialize_status(url, &format!("{service}:7420")), "HTTP/1.1 200");
    assert_eq!(initialize_status(url, "elsewhere.example:7420"), "HTTP/1.1 403");
    let plain = crate::http_mcp::start(&["--root", &root], 1);
    assert_eq!(initialize_status(&plain.urls["default"], &format!("{service}:7420")), "HTTP/1.1 403");
    assert_eq!(initialize_status(&plain.urls["default"], "127.0.0.1"), "HTTP/1.1 200");
    let any = crate::http_mcp::start(&["--root", &root, "--set", "host.allowed_hosts=[\"*\"]"], 1);
    assert_eq!(initialize_status(&any.urls["default"], "elsewhere.example:7420"), "HTTP/1.1 200");

    let out = Command::new(env!("CARGO_BIN_EXE_agent-tools"))
        .args(["serve", "--http", "127.0.0.1:0", "--root", &root, "--set", "host.allowed_hosts=[\"*\"]"])
        .env_remove("AGENT_TOOLS_HOST_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        shown(&out).contains("host.allowed_hosts holds \"*\" (any Host) but the host has no token"),
        "{}",
        shown(&out)
    );
}
