//! `lsp status`: the servers running, the watch, and each language's server,
//! as values made from the supervisor's and worded from them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lsp_supervisor::Language;
use schemars::JsonSchema;
use serde::Serialize;

use super::words::{count, duration_text, indent};

/// `status`: the servers running, the watch, and each language's server.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusOutput {
    /// Paths here are absolute, as the supervisor holds them.
    pub running: Vec<ServerStatusOutput>,
    /// Whether changes on disk are watched, and how widely.
    pub watching: String,
    /// Each language's servers at the root, usable or not.
    pub availability: Vec<AvailabilityOutput>,
    /// The working directory, which the words show paths relative to.
    #[serde(skip)]
    pub root: PathBuf,
    /// Servers the host stopped to keep under its memory budget; for the words.
    #[serde(skip)]
    pub stopped_over_budget: u64,
    /// `lsp.request_timeout_s`, in ms; for the words.
    #[serde(skip)]
    pub request_timeout_ms: u128,
}

/// Whether a language's server is usable at the root, and why not.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AvailabilityOutput {
    /// The language's id: rust, python, typescript, javascript, c, cpp, go, or one the configuration defines.
    pub language: String,
    /// The server's id.
    pub server: &'static str,
    /// Whether it is the server routing picks for the language (its primary).
    pub chosen: bool,
    /// Whether it is one of the language's helpers: when usable, its diagnostics
    /// and code actions are added to the primary's.
    pub helper: bool,
    /// Whether its root marker is found and its binary runs.
    pub usable: bool,
    /// Its root, relative to the working directory (empty for the working
    /// directory itself); `null` when there is none, and `root_error` says why.
    pub root: Option<PathBuf>,
    /// Why there is no root.
    pub root_error: Option<String>,
    /// Why that root (the toolchain's rule).
    pub reason: Option<String>,
    /// Sub-projects of the language under the root.
    pub projects: Vec<PathBuf>,
    /// The program that runs; `null` when none does, and `binary_error` says why.
    pub binary: Option<PathBuf>,
    /// Why no program runs.
    pub binary_error: Option<String>,
    /// The binary's version line, with its name; for the words.
    #[serde(skip)]
    pub version: Option<String>,
}

/// The state of one (server, root) slot.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerStatusOutput {
    /// The server's id.
    pub server: &'static str,
    /// The root it serves, absolute.
    pub root: PathBuf,
    /// Why this root ("Cargo workspace of crates/x", "outermost compile_commands.json that lists it", …).
    pub root_reason: String,
    /// The program started.
    pub binary: Option<PathBuf>,
    /// `running`, `starting`, `crashed (…); restarts on next use`, `gave up after N crashes …`, `stopped`.
    pub state: String,
    /// The running process's id.
    pub pid: Option<u32>,
    /// The position encoding agreed with the server (LSP `positionEncoding`).
    pub encoding: Option<EncodingOutput>,
    /// What it is busy with: its oldest progress (title, message, percentage), its check on save included.
    pub busy: Option<String>,
    /// Whether it is still loading what answers need (`loading: …`) or has loaded
    /// all but what build scripts and proc macros generate (`partly loaded, still …`); `null` when ready.
    pub load: Option<String>,
    /// Documents it has open.
    pub open_documents: usize,
    /// Crashes in a row without an answered request between them.
    pub crashes: u32,
    /// Processes started for this root after the first (after crashes).
    pub restarts: u32,
    /// What the last exit was (`last_exit.what`).
    pub last_crash: Option<String>,
    /// How the last process ended: its status and stderr tail.
    pub last_exit: Option<ServerExitOutput>,
    /// After it has given up: why (the last crash, with its stderr tail).
    pub gave_up: Option<String>,
    /// How long the running process has been up, in ms.
    pub uptime_ms: Option<u128>,
    /// How long its first request may wait for its first load, in ms, when that is
    /// longer than the request timeout (rust-analyzer on a cold project).
    pub first_load_timeout_ms: Option<u128>,
    /// The last errors and warnings the server showed (`window/showMessage`).
    pub messages: Vec<String>,
    /// How many other runs of the host use this process too (0 when it is this run's alone).
    pub shared_with: usize,
}

/// A position encoding (LSP `PositionEncodingKind`).
// No doc comments on the variants: schemars would turn the plain `enum` into a `oneOf`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EncodingOutput {
    Utf8,
    Utf16,
    Utf32,
}

/// How a server process ended (or failed to start).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerExitOutput {
    /// "exited with status 3", "sent a malformed frame: …", "did not answer initialize …".
    pub what: String,
    /// The last lines it wrote to stderr.
    pub stderr_tail: String,
}

impl From<lsp_supervisor::ServerStatus> for ServerStatusOutput {
    fn from(s: lsp_supervisor::ServerStatus) -> ServerStatusOutput {
        use lsp_supervisor::PositionEncoding;
        ServerStatusOutput {
            server: s.server,
            root: s.root,
            root_reason: s.root_reason,
            binary: s.binary,
            state: s.state,
            pid: s.pid,
            encoding: s.encoding.map(|e| match e {
                PositionEncoding::Utf8 => EncodingOutput::Utf8,
                PositionEncoding::Utf16 => EncodingOutput::Utf16,
                PositionEncoding::Utf32 => EncodingOutput::Utf32,
            }),
            busy: s.busy,
            load: s.load,
            open_documents: s.open_documents,
            crashes: s.crashes,
            restarts: s.restarts,
            last_crash: s.last_crash,
            last_exit: s.last_exit.map(|e| ServerExitOutput { what: e.what, stderr_tail: e.stderr_tail }),
            gave_up: s.gave_up,
            uptime_ms: s.uptime_ms,
            first_load_timeout_ms: s.first_load_timeout_ms,
            messages: s.messages,
            shared_with: s.shared_with,
        }
    }
}

impl ServerExitOutput {
    /// `what`, then the stderr tail when there is one.
    fn describe(&self) -> String {
        if self.stderr_tail.trim().is_empty() {
            self.what.clone()
        } else {
            format!("{}; its stderr ended with:\n{}", self.what, self.stderr_tail.trim_end())
        }
    }
}

impl StatusOutput {
    pub(super) fn words(&self) -> String {
        let root = |path: &Path| {
            let rel = path.strip_prefix(&self.root).unwrap_or(path);
            if rel.as_os_str().is_empty() { ".".to_string() } else { rel.display().to_string() }
        };
        let relative = |text: &str| text.replace(&format!("{}/", self.root.display()), "");
        let mut text = String::from("servers:\n");
        if self.running.is_empty() {
            text.push_str("  none running (a server starts on first use)\n");
        }
        for s in &self.running {
            let reason = if s.root_reason.is_empty() { String::new() } else { format!(" ({})", s.root_reason) };
            let mut line = format!("  {} for {}{reason}: {}", s.server, root(&s.root), s.state);
            if let Some(pid) = s.pid {
                line.push_str(&format!(", pid {pid}"));
            }
            if let Some(up) = s.uptime_ms {
                line.push_str(&format!(", up {}", duration_text(up)));
            }
            line.push_str(&format!(", {}, {} open documents", count(s.restarts as usize, "restart"), s.open_documents));
            if s.shared_with > 0 {
                line.push_str(&format!(", shared with {}", count(s.shared_with, "other run")));
            }
            if let Some(busy) = &s.busy {
                line.push_str(&format!(", busy: {busy}"));
            }
            let _ = writeln!(text, "{line}");
            if let Some(load) = &s.load {
                let _ = writeln!(text, "    {load}");
            }
            if let Some(first) = s.first_load_timeout_ms {
                let _ = writeln!(
                    text,
                    "    its first request may wait up to {} for its first load (a cold project), later ones {}",
                    duration_text(first),
                    duration_text(self.request_timeout_ms)
                );
            }
            match (&s.gave_up, &s.last_exit) {
                (Some(why), _) => {
                    let _ = writeln!(text, "    gave up because: {}", indent(&relative(why)));
                }
                (None, Some(exit)) => {
                    let _ = writeln!(text, "    last exit: {}", indent(&relative(&exit.describe())));
                }
                (None, None) => {}
            }
            for message in &s.messages {
                let _ = writeln!(text, "    it said: {message}");
            }
        }
        if self.stopped_over_budget > 0 {
            let _ = writeln!(
                text,
                "  the host has stopped {} no run was using before its idle time, to keep under its memory budget",
                count(usize::try_from(self.stopped_over_budget).unwrap_or(usize::MAX), "language server")
            );
        }
        let _ = writeln!(text, "the root: {}", self.watching);
        text.push_str("languages at the root:\n");
        let shown = |p: &Path| if p.as_os_str().is_empty() { ".".to_string() } else { p.display().to_string() };
        for a in self.availability.iter().filter(|a| a.language != Language::Fixture.id() || a.usable) {
            let projects: Vec<String> = a.projects.iter().map(|p| format!("{}/", shown(p))).collect();
            let version = a.version.as_deref().unwrap_or_default();
            let root = a.root.as_ref().ok_or(a.root_error.as_deref().unwrap_or_default());
            let binary = a.binary.as_ref().ok_or(a.binary_error.as_deref().unwrap_or_default());
            let verdict = match (root, binary) {
                (Err(_), Ok(_)) if a.chosen && !projects.is_empty() => {
                    format!("used for the projects in {} ({version})", projects.join(", "))
                }
                (Ok(root), Ok(_)) if a.chosen => format!(
                    "used for {}{}: {version}",
                    shown(root),
                    a.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default(),
                ),
                (Ok(root), Ok(_)) if a.helper => {
                    format!("helps with diagnostics and code actions for {}: {version}", shown(root))
                }
                (Ok(_), Ok(_)) => "usable, not chosen".to_string(),
                (Err(why), Ok(_)) => format!("binary found, but {why}"),
                (Ok(_), Err(why)) => format!("root marker found, but {why}"),
                (Err(_), Err(why)) => format!("no root marker and {why}"),
            };
            let _ = writeln!(text, "  {:<11} {:<27} {verdict}", a.language, a.server);
        }
        text
    }
}
