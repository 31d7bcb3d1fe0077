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
//! 3. Cross-file: a function's signature changes (a parameter added) and
//!    changes back, alternately, in the file that defines it; the time from the
//!    write to the written file's answer and to the other files' answer
//!    (`other_files_after_write`: the callers it broke, or that it cannot tell),
//!    as diagnostics on write waits for both. Every server of the table,
//!    pylsp and ruff included (they answer at once that they cannot tell).
//!
//! `--server all` runs each server in turn; `--only requests|writes|cross-file`
//! runs one part.
//!
//! Runs in a release-built `xtask-suites lsp-once`. Timing is printed, never asserted.

use std::path::{Path, PathBuf};
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
    only: Option<String>,
}

/// Every server with a case, in the order `--server all` runs them.
const SERVERS: [&str; 7] =
    ["clangd", "rust-analyzer", "gopls", "pyright", "pylsp", "ruff", "typescript-language-server"];
const PARTS: [&str; 3] = ["requests", "writes", "cross-file"];

impl Options {
    pub(crate) fn parse(args: &[&str]) -> Result<Self> {
        let mut options = Options { rounds: 200, writes: 20, server: "clangd".into(), only: None };
        let mut it = args.iter();
        while let Some(&arg) = it.next() {
            let value = it.next().with_context(|| format!("{arg} takes a value"))?;
            match arg {
                "--rounds" => options.rounds = value.parse::<usize>()?.max(1),
                "--writes" => options.writes = value.parse::<usize>()?.max(2),
                "--server" => options.server = value.to_string(),
                "--only" if PARTS.contains(value) => options.only = Some(value.to_string()),
                _ => bail!(
                    "unknown option `{arg} {value}` (use --rounds N, --writes N, --server all|{}, --only {})",
                    SERVERS.join("|"),
                    PARTS.join("|")
                ),
            }
        }
        Ok(options)
    }

    fn args(&self) -> Vec<String> {
        let mut args = vec![
            "--rounds".into(),
            self.rounds.to_string(),
            "--writes".into(),
            self.writes.to_string(),
            "--server".into(),
            self.server.clone(),
        ];
        if let Some(only) = &self.only {
            args.extend(["--only".into(), only.clone()]);
        }
        args
    }

    fn runs(&self, part: &str) -> bool {
        self.only.as_deref().is_none_or(|only| only == part)
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
    /// Whether the server answers `definition` (ruff does not): the request part needs it.
    navigates: bool,
    /// The cross-file case: in this file, this signature becomes that one, which breaks callers elsewhere.
    cross: (&'static str, &'static str, &'static str),
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
            navigates: true,
            cross: (
                "shapes.h",
                "double total_area(const struct square *squares, int n);",
                "double total_area(const struct square *squares, int n, double scale);",
            ),
        },
        "rust-analyzer" => Case {
            language: Language::Rust,
            project: "lsp/rust",
            file: "src/main.rs",
            line: 12,
            symbol: "total_area",
            broken_tail: "fn broken() -> u32 { \"text\" }\n",
            navigates: true,
            cross: (
                "src/shapes.rs",
                "pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64 {",
                "pub fn total_area(shapes: &[Box<dyn Shape>], _scale: f64) -> f64 {",
            ),
        },
        "gopls" => Case {
            language: Language::Go,
            project: "lsp/go",
            file: "main.go",
            line: 16,
            symbol: "TotalArea",
            broken_tail: "func broken() int { return \"text\" }\n",
            navigates: true,
            cross: (
                "shapes/shapes.go",
                "func TotalArea(shapes []Shape) float64 {",
                "func TotalArea(shapes []Shape, scale float64) float64 {",
            ),
        },
        "pyright" | "pylsp" | "ruff" => Case {
            language: Language::Python,
            project: "lsp/python",
            file: "geometry/report.py",
            line: 15,
            symbol: "total_area",
            // pylsp and ruff do not check types; an unused import is an error to all three.
            broken_tail: if server == "pyright" { "broken: int = \"text\"\n" } else { "import os\n" },
            navigates: server != "ruff",
            cross: (
                "geometry/shapes.py",
                "def total_area(circles: list[Circle]) -> float:",
                "def total_area(circles: list[Circle], scale: float) -> float:",
            ),
        },
        "typescript-language-server" => Case {
            language: Language::TypeScript,
            project: "lsp/typescript",
            file: "src/main.ts",
            line: 14,
            symbol: "totalArea",
            broken_tail: "export const broken: number = \"text\";\n",
            navigates: true,
            cross: (
                "src/shapes.ts",
                "export function totalArea(shapes: Shape[]): number {",
                "export function totalArea(shapes: Shape[], scale: number): number {",
            ),
        },
        other => bail!("no benchmark case for {other}"),
    })
}

pub(crate) fn run(options: &Options) -> Result<()> {
    println!("building xtask-suites in release …");
    run_quiet(cargo().args(["build", "--quiet", "--release", "-p", "xtask-suites"]))?;
    let xtask = target_dir().join("release").join("xtask-suites");
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
    let servers: Vec<&str> = if options.server == "all" { SERVERS.to_vec() } else { vec![options.server.as_str()] };
    let mut cross = Vec::new();
    for server in servers {
        if options.server == "all" {
            println!("\n======== {server}");
        }
        if let Some(figures) = measure_server(server, options).await? {
            cross.push((server, figures));
        }
    }
    if cross.len() > 1 {
        println!("\ncross-file answer, median ms from the write (written file / other files):");
        for (server, (written, others, what)) in cross {
            println!("  {server:<28} {written:>8.1} {others:>8.1}   {what}");
        }
    }
    Ok(())
}

/// One server's parts; the cross-file figures (medians in ms to the written
/// file's and to the other files' answer, and what the last answer said) when that part ran.
async fn measure_server(server: &str, options: &Options) -> Result<Option<(f64, f64, String)>> {
    let case = case(server)?;
    let tmp = std::env::temp_dir().join(format!("agent-tools-bench-lsp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    copy_dir(&workspace_root().join("fixtures").join(case.project), &tmp)?;
    let root = tmp.canonicalize()?;
    let file = root.join(case.file);
    let tools = workspace_root().join(".tools");
    let mut config = SupervisorConfig::new(&root);
    config.extra_path = vec![tools.join("node/node_modules/.bin"), tools.join("venv/bin")];
    config.preferred.insert(case.language, server.to_string());
    let supervisor = Arc::new(Supervisor::new(config));
    let availability = supervisor.availability(&root).await;
    let binary = availability
        .iter()
        .find(|a| a.server == server && a.language == case.language)
        .and_then(|a| a.binary.as_ref().ok())
        .with_context(|| format!("{server} is not usable here; run `cargo xtask setup`"))?
        .path
        .clone();
    println!("server:    {} ({})", server, binary.display());
    println!("project:   fixtures/{} ({}:{} `{}`)", case.project, case.file, case.line, case.symbol);
    if options.runs("requests") && case.navigates {
        requests(&supervisor, &case, server, &binary, &root, options).await?;
    }
    if options.runs("writes") {
        writes(&supervisor, &case, &file, options).await?;
    }
    let cross =
        if options.runs("cross-file") { Some(cross_file(&supervisor, &case, &root, options).await?) } else { None };
    supervisor.shutdown().await;
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(cross)
}

/// Part 1: the same requests through the supervisor and a raw client.
async fn requests(
    supervisor: &Supervisor,
    case: &Case,
    server: &str,
    binary: &Path,
    root: &Path,
    options: &Options,
) -> Result<()> {
    let file = root.join(case.file);
    // Warm up ours (waits for loading) and learn the position it resolved to.
    let nav =
        supervisor.definition(&file, case.line, case.symbol).await.context("definition through the supervisor")?;
    let spec = lsp_supervisor::ServerSpec::builtin().into_iter().find(|s| s.id == server).context("spec")?;
    let text = std::fs::read_to_string(&file)?;
    let line_text = text.lines().nth(case.line as usize - 1).unwrap_or("");
    let byte = line_text.find(case.symbol).context("symbol on line")?;
    // The raw client offers no encoding, so the server uses UTF-16; the fixture lines are ASCII.
    let character = line_text[..byte].encode_utf16().count();
    let mut raw = RawClient::start(binary, &spec.args, root).await?;
    raw.initialize(root).await?;
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
    raw.stop().await;
    Ok(())
}

/// Part 2: diagnostics on write, the time from the publication's arrival to the answer.
async fn writes(supervisor: &Supervisor, case: &Case, file: &Path, options: &Options) -> Result<()> {
    let text = std::fs::read_to_string(file)?;
    // The baseline read, as diagnostics on write takes it before a first write.
    supervisor.diagnostics(file).await?;
    let mut after_publish = Vec::new();
    let mut whole = Vec::new();
    let mut incomplete = 0;
    for i in 0..options.writes {
        let content = if i % 2 == 0 { format!("{text}{}", case.broken_tail) } else { text.clone() };
        std::fs::write(file, &content)?;
        let t = Instant::now();
        let report = supervisor.diagnostics_after_write(file).await?;
        let done = Instant::now();
        whole.push(done - t);
        match (report.complete, report.published_at) {
            (true, Some(at)) => after_publish.push(done.saturating_duration_since(at)),
            _ => incomplete += 1,
        }
    }
    std::fs::write(file, &text)?;
    println!(
        "diagnostics on write: {} writes, median {:.1} ms from the write, {:.1} ms after the server's publication (goal ≤ +100 ms){}",
        options.writes,
        median(&whole),
        median(&after_publish),
        if incomplete > 0 { format!("; {incomplete} pending") } else { String::new() }
    );
    Ok(())
}

/// Part 3: a signature changed and changed back, alternately; per write the
/// time to the written file's answer and to the other files' answer, as
/// diagnostics on write takes them (the other files' baseline before each write).
async fn cross_file(
    supervisor: &Supervisor,
    case: &Case,
    root: &Path,
    options: &Options,
) -> Result<(f64, f64, String)> {
    let (rel, from, to) = case.cross;
    let file = root.join(rel);
    let text = std::fs::read_to_string(&file)?;
    anyhow::ensure!(text.contains(from), "{rel} does not hold `{from}`");
    let changed = text.replacen(from, to, 1);
    let paths = vec![file.clone()];
    supervisor.diagnostics(&file).await?;
    let mut baselines = Vec::new();
    let mut written = Vec::new();
    let mut others = Vec::new();
    let mut incomplete = 0;
    let mut said = String::new();
    for i in 0..options.writes {
        let t = Instant::now();
        let mut before = supervisor.other_files_before_write(&paths).await;
        before.mark_write();
        baselines.push(t.elapsed());
        std::fs::write(&file, if i % 2 == 0 { &changed } else { &text })?;
        let t = Instant::now();
        let report = supervisor.diagnostics_after_write(&file).await?;
        written.push(t.elapsed());
        let pending: Vec<PathBuf> = if report.complete { Vec::new() } else { paths.clone() };
        let reports = supervisor.other_files_after_write(before, &pending, t).await;
        others.push(t.elapsed());
        for r in &reports {
            incomplete += usize::from(!r.complete);
            if i % 2 == 0 {
                said = summary(r, root);
            }
        }
    }
    std::fs::write(&file, &text)?;
    let (w, o) = (median(&written), median(&others));
    println!(
        "cross-file: {} writes of {rel}, median {w:.1} ms from the write to its own answer, {o:.1} ms to the other files' ({said}); the other files' baseline before each write {:.1} ms{}",
        options.writes,
        median(&baselines),
        if incomplete > 0 { format!("; {incomplete} pending") } else { String::new() }
    );
    Ok((w, o, said))
}

/// What a breaking write's other-files report said, in brief: per file its new diagnostics.
fn summary(r: &lsp_supervisor::OtherFilesReport, root: &Path) -> String {
    if r.way == lsp_supervisor::OtherFiles::WrittenOnly {
        return format!("{} reports only the written file", r.server);
    }
    let key = |d: &lsp_supervisor::Diagnostic| (d.severity, d.code.clone(), d.message.clone());
    let files: Vec<String> = r
        .files
        .iter()
        .filter_map(|f| {
            let mut before: Vec<_> = f.before.iter().flatten().map(key).collect();
            let mut new = 0;
            for d in &f.now {
                match before.iter().position(|k| *k == key(d)) {
                    Some(at) => drop(before.swap_remove(at)),
                    None => new += 1,
                }
            }
            (new > 0).then(|| format!("{} +{new}", f.path.strip_prefix(root).unwrap_or(&f.path).display()))
        })
        .collect();
    if files.is_empty() { "nothing new in other files".to_string() } else { files.join(", ") }
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
