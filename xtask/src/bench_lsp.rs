//! `cargo xtask bench lsp`: the supervisor's overhead over a real language
//! server, in one run, side by side.
//!
//! 1. Request overhead: the same `definition`, `references` and `hover`
//!    requests, alternating, through `lsp-supervisor` (line + symbol resolved,
//!    the file's text checked against disk, positions and ranges converted)
//!    and through a minimal raw JSON-RPC client; each side talks to its own
//!    process of the same server binary on the same project. Printed: medians
//!    and the difference (goal: at most +1 ms).
//! 2. Diagnostics on write: the file is rewritten with an error, or without
//!    it, alternately; the time from the server's `publishDiagnostics`
//!    arriving to `diagnostics_after_write` returning (goal: at most +100 ms).
//!
//! Runs in a release-built `xtask lsp-once`. Timing is printed, never asserted.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use lsp_supervisor::{Language, Supervisor, SupervisorConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::bench::{cargo, median, target_dir};
use crate::run_quiet;
use crate::workspace_root;

/// How the benchmark runs.
pub(crate) struct Options {
    rounds: usize,
    writes: usize,
    server: String,
}

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { rounds: 200, writes: 20, server: "clangd".into() };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            let value = it.next().with_context(|| format!("{arg} takes a value"))?;
            match arg {
                "--rounds" => options.rounds = value.parse::<usize>()?.max(1),
                "--writes" => options.writes = value.parse::<usize>()?.max(2),
                "--server" => options.server = value.to_string(),
                _ => bail!(
                    "unknown option `{arg}` (use --rounds N, --writes N, --server clangd|rust-analyzer|gopls|pyright|typescript-language-server)"
                ),
            }
        }
        Ok(options)
    }

    fn args(&self) -> Vec<String> {
        vec![
            "--rounds".into(),
            self.rounds.to_string(),
            "--writes".into(),
            self.writes.to_string(),
            "--server".into(),
            self.server.clone(),
        ]
    }
}

/// One benchmark case: a project, a file, a place, and an edit that introduces an error.
struct Case {
    language: Language,
    project: &'static str,
    file: &'static str,
    /// A line of the file (1-indexed) and a symbol on it for the requests.
    line: u32,
    symbol: &'static str,
    /// Appended to the file to introduce an error.
    broken_tail: &'static str,
}

fn case(server: &str) -> Result<Case> {
    Ok(match server {
        "clangd" => Case {
            language: Language::C,
            project: "lsp/c",
            file: "main.c",
            line: 8,
            symbol: "total_area",
            broken_tail: "int broken(void) { return undefined_name; }\n",
        },
        "rust-analyzer" => Case {
            language: Language::Rust,
            project: "lsp/rust",
            file: "src/main.rs",
            line: 12,
            symbol: "total_area",
            broken_tail: "fn broken() -> u32 { \"text\" }\n",
        },
        "gopls" => Case {
            language: Language::Go,
            project: "lsp/go",
            file: "main.go",
            line: 16,
            symbol: "TotalArea",
            broken_tail: "func broken() int { return \"text\" }\n",
        },
        "pyright" => Case {
            language: Language::Python,
            project: "lsp/python",
            file: "geometry/report.py",
            line: 15,
            symbol: "total_area",
            broken_tail: "broken: int = \"text\"\n",
        },
        "typescript-language-server" => Case {
            language: Language::TypeScript,
            project: "lsp/typescript",
            file: "src/main.ts",
            line: 14,
            symbol: "totalArea",
            broken_tail: "export const broken: number = \"text\";\n",
        },
        other => bail!("no benchmark case for {other}"),
    })
}

pub(crate) fn run(options: &Options) -> Result<()> {
    println!("building xtask in release …");
    run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "xtask"]))?;
    let xtask = target_dir().join("release").join("xtask");
    let status =
        std::process::Command::new(&xtask).arg("lsp-once").args(options.args()).stdin(Stdio::null()).status()?;
    if !status.success() {
        bail!("lsp-once failed ({status})");
    }
    Ok(())
}

/// The measurement itself, in the release build.
pub(crate) fn once_command(args: &[&str]) -> Result<()> {
    let options = Options::parse(args)?;
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(measure(&options))
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "target" || name == ".cache" || name == "node_modules" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(&name))?;
        } else {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

async fn measure(options: &Options) -> Result<()> {
    let case = case(&options.server)?;
    let tmp = std::env::temp_dir().join(format!("agent-tools-bench-lsp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_dir(&workspace_root().join("fixtures").join(case.project), &tmp)?;
    let root = tmp.canonicalize()?;
    let file = root.join(case.file);
    let tools = workspace_root().join(".tools");
    let mut config = SupervisorConfig::new(&root);
    config.extra_path = vec![tools.join("node/node_modules/.bin"), tools.join("venv/bin")];
    config.preferred.insert(case.language, options.server.clone());
    let supervisor = Arc::new(Supervisor::new(config));

    // Warm up ours (waits for loading) and learn the binary and the position it resolved to.
    let nav =
        supervisor.definition(&file, case.line, case.symbol).await.context("definition through the supervisor")?;
    let availability = supervisor.availability(&root).await;
    let binary = availability
        .iter()
        .find(|a| a.server == options.server && a.language == case.language)
        .and_then(|a| a.binary.as_ref().ok())
        .context("server binary")?
        .path
        .clone();
    let spec = lsp_supervisor::ServerSpec::builtin().into_iter().find(|s| s.id == options.server).context("spec")?;
    let text = std::fs::read_to_string(&file)?;
    let line_text = text.lines().nth(case.line as usize - 1).unwrap_or("");
    let byte = line_text.find(case.symbol).context("symbol on line")?;
    // The raw client offers no encoding, so the server uses UTF-16; the fixture lines are ASCII.
    let character = line_text[..byte].encode_utf16().count();
    let mut raw = RawClient::start(&binary, &spec.args, &root).await?;
    raw.initialize(&root).await?;
    let uri = lsp_supervisor::path_to_uri(&file);
    raw.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": case.language.language_id(&file), "version": 1, "text": text } })).await?;
    let position = json!({ "line": case.line - 1, "character": character });
    // Warm up the raw side until it answers with the same definition count.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let answer = raw
            .request("textDocument/definition", json!({ "textDocument": { "uri": uri }, "position": position }))
            .await?;
        let count = match &answer {
            Value::Array(a) => a.len(),
            Value::Object(_) => 1,
            _ => 0,
        };
        if count == nav.locations.total || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    println!("server:    {} ({})", options.server, binary.display());
    println!("project:   fixtures/{} ({}:{} `{}`)", case.project, case.file, case.line, case.symbol);
    println!("rounds:    {}, alternating ours and raw per request\n", options.rounds);
    println!("{:<12} {:>12} {:>12} {:>10}", "request", "ours ms", "raw ms", "ours-raw");
    let mut worst: f64 = f64::MIN;
    for (name, method) in [
        ("definition", "textDocument/definition"),
        ("references", "textDocument/references"),
        ("hover", "textDocument/hover"),
    ] {
        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for _ in 0..options.rounds {
            let t = Instant::now();
            match name {
                "definition" => drop(supervisor.definition(&file, case.line, case.symbol).await?),
                "references" => drop(supervisor.references(&file, case.line, case.symbol, 50).await?),
                _ => drop(supervisor.hover(&file, case.line, case.symbol).await?),
            }
            ours.push(t.elapsed());
            let mut params = json!({ "textDocument": { "uri": uri }, "position": position });
            if name == "references" {
                params["context"] = json!({ "includeDeclaration": true });
            }
            let t = Instant::now();
            raw.request(method, params).await?;
            theirs.push(t.elapsed());
        }
        let (a, b) = (median(&ours), median(&theirs));
        worst = worst.max(a - b);
        println!("{name:<12} {a:>12.3} {b:>12.3} {:>+10.3}", a - b);
    }
    println!("\nrequest overhead (worst median difference): {worst:+.3} ms (goal ≤ +1 ms)");

    // Diagnostics on write: the time from the publication's arrival to the answer.
    let mut after_publish = Vec::new();
    let mut whole = Vec::new();
    let mut incomplete = 0;
    for i in 0..options.writes {
        let content = if i % 2 == 0 { format!("{text}{}", case.broken_tail) } else { text.clone() };
        std::fs::write(&file, &content)?;
        let t = Instant::now();
        let report = supervisor.diagnostics_after_write(&file).await?;
        let done = Instant::now();
        whole.push(done - t);
        match (report.complete, report.published_at) {
            (true, Some(at)) => after_publish.push(done.saturating_duration_since(at)),
            _ => incomplete += 1,
        }
    }
    println!(
        "diagnostics on write: {} writes, median {:.1} ms from the write, {:.1} ms after the server's publication (goal ≤ +100 ms){}",
        options.writes,
        median(&whole),
        median(&after_publish),
        if incomplete > 0 { format!("; {incomplete} pending") } else { String::new() }
    );
    supervisor.shutdown().await;
    raw.stop().await;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
}

/// A minimal LSP client: one request at a time, notifications and server requests skipped (requests answered with null).
struct RawClient {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    next: i64,
}

impl RawClient {
    async fn start(binary: &Path, args: &[String], root: &Path) -> Result<RawClient> {
        let mut child = tokio::process::Command::new(binary)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?);
        Ok(RawClient { child, stdin, stdout, next: 1 })
    }

    async fn send(&mut self, message: &Value) -> Result<()> {
        let body = message.to_string();
        self.stdin.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn read(&mut self) -> Result<Value> {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).await? == 0 {
                bail!("server closed its output");
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some(v) = header.strip_prefix("Content-Length:") {
                length = v.trim().parse()?;
            }
        }
        let mut body = vec![0u8; length];
        self.stdout.read_exact(&mut body).await?;
        Ok(serde_json::from_slice(&body)?)
    }

    async fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params })).await
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next;
        self.next += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        loop {
            let message = self.read().await?;
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id") {
                    let answer = json!({ "jsonrpc": "2.0", "id": request_id, "result": null });
                    self.send(&answer).await?;
                }
                continue;
            }
            if message.get("id") == Some(&json!(id)) {
                return Ok(message.get("result").cloned().unwrap_or(Value::Null));
            }
        }
    }

    async fn initialize(&mut self, root: &Path) -> Result<()> {
        let uri = lsp_supervisor::path_to_uri(root);
        self.request("initialize", json!({ "processId": std::process::id(), "rootUri": uri, "capabilities": {}, "workspaceFolders": [{ "uri": uri, "name": "bench" }] })).await?;
        self.notify("initialized", json!({})).await
    }

    async fn stop(mut self) {
        let _ = self.request("shutdown", Value::Null).await;
        let _ = self.notify("exit", Value::Null).await;
        let _ = self.child.kill().await;
    }
}
