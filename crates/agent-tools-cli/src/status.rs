//! `agent-tools status`: what this checkout can use: the shipped grammars (the
//! structural tools' resource), their extensions and how many files of each
//! language the root holds (gitignore-aware walk), and which interpreter each
//! `eval` kernel would run, or why there is none, and which debug adapters
//! `debug` could start (or which half of detection is missing). It starts no
//! server, adapter or kernel (only version probes) and reads no file contents.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use agent_tools::Workspace;
use astmatch::Lang;
use serde::Serialize;

/// What `agent-tools status` reports about the checkout at the root: the tools,
/// the languages' files, kernels, language servers, debug adapters, the
/// enclosure and the MCP revisions; rendered as text or serialized as JSON.
#[derive(Debug, Serialize)]
pub struct Status {
    root: PathBuf,
    /// The configuration file in force, or why there is none.
    pub configuration: String,
    tools: Vec<&'static str>,
    languages: Vec<LanguageStatus>,
    kernels: Vec<KernelStatus>,
    /// Per language and server: whether it is used here, or which half of detection is missing.
    pub language_servers: Vec<ServerAvailability>,
    /// Per debug adapter: whether `debug` can start it here, or which half of detection is missing.
    pub debug_adapters: Vec<AdapterStatus>,
    /// Where the project's code runs (kernels, workers), and whether that works here.
    pub enclosure: EnclosureStatus,
    /// The MCP revisions `serve` speaks, and how a call that needs the human asks on each.
    mcp: Vec<McpRevision>,
}

/// One MCP revision `serve` speaks, and how questions reach the human on it.
#[derive(Debug, Serialize)]
pub struct McpRevision {
    revision: &'static str,
    /// How `ask_user` and the approval cards of `serve --ask` reach the human.
    questions: &'static str,
}

/// Every revision rmcp knows, newest first, with how questions travel on it.
fn mcp_revisions() -> Vec<McpRevision> {
    let mut revisions: Vec<McpRevision> = rmcp::model::ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(|version| McpRevision {
            revision: version.as_str(),
            questions: if !version.has_initialize() {
                "input-required results, answered by the client's retry (SEP-2322); in a task (SEP-2663, \
                 for a client that declares it), input requests answered by tasks/update"
            } else if version.as_str() >= "2025-06-18" {
                "elicitation/create requests"
            } else {
                "none: the revision has no elicitation, so ask_user has nobody to ask and --ask denies"
            },
        })
        .collect();
    revisions.sort_by(|a, b| b.revision.cmp(a.revision));
    revisions
}

/// The run's enclosure: its mode, whether it works here, and for bwrap what
/// the sandbox shows from outside the root.
#[derive(Debug, Default, Serialize)]
pub struct EnclosureStatus {
    /// `none`, `bwrap` or `command`.
    mode: &'static str,
    /// What is in force: `host`, `bwrap (no network, root writable)`, `command prefix …`.
    description: String,
    /// Whether processes can start in it; when not, every call that needs it fails.
    available: bool,
    /// Why not, when it is not available.
    why: Option<String>,
    /// Whether language servers run in it too (`enclosure.language_servers`).
    language_servers: bool,
    /// bwrap: what is visible from outside the root, in mount order, for a
    /// command run with this process's `PATH` (a tool's own program and `PATH`
    /// add their directories at its start); empty in the other modes.
    binds: Vec<BindStatus>,
    /// bwrap: the secret places those binds or the host's `/` would show,
    /// masked (an empty read-only directory, an empty file).
    masked: Vec<PathBuf>,
    /// bwrap: why the binds could not be worked out (a root or extra path
    /// that does not exist); every enclosed call then fails the same way.
    binds_error: Option<String>,
}

/// A path from outside the root that a bwrap sandbox binds, with its access and why.
#[derive(Debug, Serialize)]
pub struct BindStatus {
    path: PathBuf,
    /// `read-only` or `writable`.
    access: &'static str,
    /// `toolchain`, `tool on PATH`, `ro_paths` or `rw_paths`.
    why: &'static str,
}

/// The enclosure's status; for bwrap this runs the probe (`bwrap … true`) once.
pub fn enclosure(enclosure: &enclosure::Enclosure, language_servers: bool) -> EnclosureStatus {
    let checked = enclosure.check();
    let plan = match enclosure.mode {
        enclosure::Mode::Bwrap => enclosure.plan(&std::process::Command::new("true")).map_err(|e| e.to_string()),
        _ => Ok(enclosure::Plan::default()),
    };
    let (plan, binds_error) = match plan {
        Ok(plan) => (plan, None),
        Err(error) => (enclosure::Plan::default(), Some(error)),
    };
    EnclosureStatus {
        language_servers: language_servers && !enclosure.is_host(),
        mode: enclosure.mode.name(),
        description: enclosure.describe(),
        available: checked.is_ok(),
        why: checked.err().map(|e| e.to_string()),
        binds: plan
            .binds()
            .map(|bind| BindStatus {
                path: bind.path.clone(),
                access: if bind.writable { "writable" } else { "read-only" },
                why: bind.reason.name(),
            })
            .collect(),
        masked: plan.masks.iter().map(|mask| mask.path.clone()).collect(),
        binds_error,
    }
}

/// One debug adapter: whether `debug` can start it here, with the marker and
/// command found, or what is missing.
#[derive(Debug, Serialize)]
pub struct AdapterStatus {
    id: &'static str,
    usable: bool,
    /// The root marker found.
    marker: Option<String>,
    /// The adapter's command, when it resolved and ran.
    command: Option<PathBuf>,
    detail: String,
}

/// Detects the debug adapters at the root (each binary is probed with `--version` or similar).
pub async fn debug_adapters(
    workspace: &Workspace,
    settings: &crate::config::Settings,
    enclosure: &enclosure::Enclosure,
) -> Vec<AdapterStatus> {
    let mut detection = crate::wiring::debug_config(settings).detection;
    detection.inside = enclosure.looks_inside().then(|| enclosure.clone());
    dap_session::detect_all(workspace.root(), &detection)
        .await
        .into_iter()
        .map(|report| AdapterStatus {
            id: report.id.name(),
            usable: report.usable(),
            marker: report.marker.clone(),
            command: report.command.as_ref().map(|c| c.program.clone()),
            detail: report.detail,
        })
        .collect()
}

/// One language server for one language: whether it is chosen or a helper,
/// whether it is usable here, its root and binary, or why it is not usable.
#[derive(Debug, Serialize)]
pub struct ServerAvailability {
    language: &'static str,
    server: &'static str,
    /// The server `lsp` uses for this language here (its primary).
    chosen: bool,
    /// Whether it is one of the language's helpers: when usable, its diagnostics
    /// and code actions are added to the primary's.
    helper: bool,
    usable: bool,
    /// The directory the server would run for (its root), relative to the root.
    root: Option<PathBuf>,
    /// Why that directory: "Cargo workspace at .", "outermost compile_commands.json at or above it", "nearest go.mod".
    reason: Option<String>,
    /// Without a marker at the root: the project roots below it that the server serves.
    projects: Vec<PathBuf>,
    binary: Option<PathBuf>,
    version: Option<String>,
    /// Why it is not usable (missing root marker, binary, or both).
    why: Option<String>,
}

/// Detection of every known language server at the workspace root (each binary's probe runs once).
pub async fn language_servers(workspace: &Workspace, settings: &crate::config::Settings) -> Vec<ServerAvailability> {
    let supervisor = lsp_supervisor::Supervisor::new(crate::wiring::lsp_config(workspace, settings));
    supervisor
        .availability(workspace.root())
        .await
        .into_iter()
        .filter(|a| a.language != lsp_supervisor::Language::Fixture)
        .map(|a| {
            let why = match (&a.root, &a.binary) {
                (Ok(_), Ok(_)) => None,
                (Err(_), Ok(_)) if !a.projects.is_empty() => None,
                (Err(r), Ok(_)) => Some(r.clone()),
                (Ok(_), Err(b)) => Some(b.clone()),
                (Err(r), Err(b)) => Some(format!("{r}; and {b}")),
            };
            ServerAvailability {
                language: a.language.id(),
                server: a.server,
                chosen: a.chosen,
                helper: a.helper,
                usable: a.usable(),
                root: a.root.as_ref().ok().map(|r| workspace.relative(r).to_path_buf()),
                reason: a.reason.clone(),
                projects: a.projects.iter().map(|p| workspace.relative(p).to_path_buf()).collect(),
                binary: a.binary.as_ref().ok().map(|b| b.path.clone()),
                version: a.binary.as_ref().ok().map(|b| b.version.clone()),
                why,
            }
        })
        .collect()
}

#[derive(Debug, Serialize)]
struct KernelStatus {
    language: String,
    /// The interpreter `eval` would start, if one was found.
    interpreter: Option<PathBuf>,
    /// Where it was found (`configured`, `project venv …`, `PATH`), or why none was.
    detail: String,
}

#[derive(Debug, Serialize)]
struct LanguageStatus {
    id: &'static str,
    extensions: Vec<String>,
    files: usize,
}

impl Status {
    /// Walks the root (honouring .gitignore, skipping hidden files) and counts files per language.
    /// `kernel` is the configured one, whose interpreters are reported.
    /// `enclosure` is where kernels run: a prefix's container is where their interpreters are looked for.
    pub fn gather(
        workspace: &Workspace,
        tools: Vec<&'static str>,
        kernel: &kernel::KernelConfig,
        enclosure: &enclosure::Enclosure,
    ) -> Status {
        let mut counts: BTreeMap<Lang, usize> = BTreeMap::new();
        for entry in ignore::WalkBuilder::new(workspace.root()).build().flatten() {
            if entry.file_type().is_some_and(|t| t.is_file())
                && let Some(lang) = Lang::from_path(entry.path())
            {
                *counts.entry(lang).or_default() += 1;
            }
        }
        let languages = Lang::ALL
            .iter()
            .map(|&lang| LanguageStatus {
                id: lang.id(),
                extensions: lang.extensions().iter().map(|e| format!(".{e}")).collect(),
                files: counts.get(&lang).copied().unwrap_or(0),
            })
            .collect();
        let kernels = kernel::interpreter_reports(kernel, enclosure)
            .into_iter()
            .map(|report| match report.found {
                Ok(found) => KernelStatus {
                    language: report.language.to_string(),
                    interpreter: Some(found.program),
                    detail: {
                        let source = match found.source {
                            kernel::InterpreterSource::Configured => "configured".to_string(),
                            kernel::InterpreterSource::ProjectVenv(venv) => format!("the project's {venv}"),
                            kernel::InterpreterSource::Path => "on PATH".to_string(),
                        };
                        match found.inside {
                            Some(inside) => format!("{source}, found inside the enclosure ({inside})"),
                            None => source,
                        }
                    },
                },
                Err(why) => KernelStatus { language: report.language.to_string(), interpreter: None, detail: why },
            })
            .collect();
        Status {
            root: workspace.root().to_path_buf(),
            configuration: String::new(),
            tools,
            languages,
            kernels,
            language_servers: Vec::new(),
            debug_adapters: Vec::new(),
            enclosure: EnclosureStatus::default(),
            mcp: mcp_revisions(),
        }
    }

    /// Plain text for a terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "root: {}", self.root.display());
        let _ = writeln!(out, "configuration: {}", self.configuration);
        let enclosure = &self.enclosure;
        match &enclosure.why {
            None => {
                let _ = writeln!(
                    out,
                    "enclosure (eval kernels, vibe workers, debug adapters, project checkers{}): {}",
                    if enclosure.language_servers { ", language servers" } else { "" },
                    enclosure.description
                );
            }
            Some(why) => {
                let _ = writeln!(
                    out,
                    "enclosure (eval kernels, vibe workers, debug adapters, project checkers{}): {}: unavailable, calls that need it fail: {why}",
                    if enclosure.language_servers { ", language servers" } else { "" },
                    enclosure.description
                );
            }
        }
        if enclosure.mode == "bwrap" {
            let binds: Vec<String> = enclosure
                .binds
                .iter()
                .map(|bind| format!("{} ({}, {})", bind.path.display(), bind.why, bind.access))
                .collect();
            let binds = match &enclosure.binds_error {
                Some(error) => format!("unknown: {error}"),
                None if binds.is_empty() => "nothing".to_owned(),
                None => binds.join(", "),
            };
            let _ = writeln!(out, "  bound from outside the root: {binds}");
            if !enclosure.masked.is_empty() {
                let masked: Vec<String> = enclosure.masked.iter().map(|path| path.display().to_string()).collect();
                let _ = writeln!(out, "  secret places masked inside them: {}", masked.join(", "));
            }
        }
        let mut by_kind: Vec<(&str, Vec<&str>)> = Vec::new();
        for revision in &self.mcp {
            match by_kind.iter_mut().find(|(questions, _)| *questions == revision.questions) {
                Some((_, revisions)) => revisions.push(revision.revision),
                None => by_kind.push((revision.questions, vec![revision.revision])),
            }
        }
        let kinds: Vec<String> =
            by_kind.iter().map(|(questions, revisions)| format!("{}: {questions}", revisions.join(", "))).collect();
        let _ = writeln!(out, "serve speaks MCP {}; questions and approval cards travel as", {
            let all: Vec<&str> = self.mcp.iter().map(|r| r.revision).collect();
            all.join(", ")
        });
        for kind in kinds {
            let _ = writeln!(out, "  {kind}");
        }
        let _ = writeln!(
            out,
            "structural search and rewrite ({}): available, {} tree-sitter grammars",
            self.tools.join(", "),
            self.languages.len()
        );
        let _ = writeln!(out);
        let _ = writeln!(out, "{:<12} {:>6}  extensions", "language", "files");
        for lang in &self.languages {
            let _ = writeln!(out, "{:<12} {:>6}  {}", lang.id, lang.files, lang.extensions.join(" "));
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "language servers for lsp, lsp_rename and diagnostics on write (started on first use):");
        for s in &self.language_servers {
            let verdict = match (&s.why, s.chosen) {
                (None, true) if !s.projects.is_empty() => {
                    let projects: Vec<String> = s.projects.iter().map(|p| format!("{}/", p.display())).collect();
                    format!("used for the projects in {}: {}", projects.join(", "), s.version.as_deref().unwrap_or(""))
                }
                (None, true) => {
                    let name = s.binary.as_ref().and_then(|b| b.file_name()).and_then(|n| n.to_str()).unwrap_or("");
                    let version = s.version.as_deref().unwrap_or("");
                    let version =
                        if version.contains(name) { version.to_string() } else { format!("{name} {version}") };
                    let root = match s.root.as_deref().map(|r| r.display().to_string()) {
                        Some(r) if r.is_empty() => ".".to_string(),
                        Some(r) => r,
                        None => ".".to_string(),
                    };
                    let reason = s.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
                    format!("used for {root}{reason}: {version}")
                }
                (None, false) if s.helper => {
                    format!(
                        "helper: its diagnostics and code actions join the primary's: {}",
                        s.version.as_deref().unwrap_or("")
                    )
                }
                (None, false) => "usable (another server is chosen)".to_string(),
                (Some(why), _) if s.helper => format!("helper, unusable: {why}"),
                (Some(why), _) => format!("unusable: {why}"),
            };
            let _ = writeln!(out, "{:<12} {:<27} {verdict}", s.language, s.server);
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "eval kernels (started on first use):");
        for k in &self.kernels {
            match &k.interpreter {
                Some(program) => {
                    let _ = writeln!(out, "{:<12} {} ({})", k.language, program.display(), k.detail);
                }
                None => {
                    let _ = writeln!(out, "{:<12} unavailable: {}", k.language, k.detail);
                }
            }
        }
        if !self.debug_adapters.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "debug adapters for debug (started on launch or attach):");
            for a in &self.debug_adapters {
                let _ = writeln!(out, "{:<12} {}", a.id, a.detail);
            }
        }
        out
    }
}
