//! The run's configuration: `agent-tools.toml` at the root (or `--config
//! FILE`; `--no-config` skips the root's), environment variables
//! `AGENT_TOOLS_<SECTION>_<KEY>`, and flags (`--set section.key=value`, `--lsp
//! LANG=SERVER`, `serve --vibe-fast-cmd`/`--vibe-good-cmd`), merged with the
//! precedence flag > environment > file > built-in default; every value keeps
//! where it came from, for `agent-tools config`.
//!
//! The file is parsed by the `toml` crate with spans and walked against the
//! table of known settings ([`settings`]), so a refusal names the place (file,
//! line and column; or the variable or flag), the key, what was expected and
//! what was found, and an unknown key gets the nearest known one. Defaults are
//! read from the leaf crates' own defaults, never written twice. This module
//! only reads and checks; `wiring.rs` turns the values into the leaf crates'
//! configurations. The lists (`[[lsp.server]]`, `[[debug.adapter]]`,
//! `[[approval.rule]]`) are replaced whole by a higher layer (an env var or
//! `--set` holding a TOML array of inline tables), not merged entry by entry.
//! A `[[lsp.server]]` entry may define a language of its own (`language`,
//! `extensions`, `language_id`); once the layers are merged, those languages
//! are defined process-wide ([`Language::define`]), so `lsp.servers.LANG`
//! and routing by extension know them.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_tools::{Action, Rule, Tier};
use anyhow::{anyhow, bail};
use lsp_supervisor::Language;
use serde::Serialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The file looked for at the run's root.
pub const FILE_NAME: &str = "agent-tools.toml";

/// What a setting holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A positive number of seconds (integer or float).
    Seconds,
    /// A number of seconds; 0 means no limit.
    SecondsOrNone,
    /// A positive whole number.
    Count,
    /// A non-empty string.
    Text,
    /// `allow`, `ask` or `deny`.
    Action,
    /// The id of a language server (built-in or `[[lsp.server]]`) for the
    /// language named by the key's last part.
    Server,
    /// `none`, `bwrap` or `command`.
    Enclosure,
    /// `true` or `false`.
    Bool,
    /// An array of strings (from the environment or a flag: a TOML array,
    /// `["docker", "exec", "-i", "app"]`).
    Strings,
    /// An array of `NAME=VALUE` strings.
    EnvList,
}

impl Kind {
    fn expected(self) -> &'static str {
        match self {
            Kind::Seconds => "a positive number of seconds",
            Kind::SecondsOrNone => "a number of seconds (0 for no limit)",
            Kind::Count => "a positive whole number",
            Kind::Text => "a non-empty string",
            Kind::Action => "one of \"allow\", \"ask\", \"deny\"",
            Kind::Server => "a language server's id (a string)",
            Kind::Enclosure => "one of \"none\", \"bwrap\", \"command\"",
            Kind::Bool => "true or false",
            Kind::Strings => "an array of strings",
            Kind::EnvList => "an array of \"NAME=VALUE\" strings",
        }
    }
}

/// A setting's value; `Unset` where the default is "none" or "discovered".
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Unset,
    Number(f64),
    Count(u64),
    Text(String),
    Bool(bool),
    List(Vec<String>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Unset => f.write_str("(unset)"),
            Value::Number(n) => write!(f, "{n}"),
            Value::Count(n) => write!(f, "{n}"),
            Value::Text(s) => write!(f, "{s:?}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::List(items) => write!(f, "{items:?}"),
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Source {
    #[default]
    Default,
    /// The configuration file, at this 1-indexed line and character column.
    File { path: PathBuf, line: usize, column: usize },
    /// This environment variable.
    Env(String),
    /// This flag, as given (`--set eval.timeout_s=5`, `--lsp`).
    Flag(String),
}

impl Source {
    /// Where a refusal points: `FILE:LINE:COLUMN` in the file, else the variable or flag.
    pub fn place(&self) -> String {
        match self {
            Source::Default => "the default".to_owned(),
            Source::File { path, line, column } => format!("{}:{line}:{column}", path.display()),
            Source::Env(var) => format!("environment variable {var}"),
            Source::Flag(flag) => format!("flag {flag}"),
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File { path, line, .. } => write!(f, "file {}:{line}", path.display()),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

struct Setting {
    key: String,
    kind: Kind,
    default: Value,
    doc: &'static str,
}

fn setting(key: &str, kind: Kind, default: Value, doc: &'static str) -> Setting {
    Setting { key: key.to_owned(), kind, default, doc }
}

fn secs(d: Duration) -> Value {
    Value::Number(d.as_secs_f64())
}

fn count(n: usize) -> Value {
    Value::Count(n as u64)
}

/// Every scalar setting, with its default taken from the leaf crate that owns it.
fn settings() -> Vec<Setting> {
    use Kind::*;
    let kernel = kernel::KernelConfig::new(".");
    let debug = dap_session::DebugConfig::default();
    let lsp = lsp_supervisor::SupervisorConfig::new(".");
    let caps = agent_tools::LspCaps::default();
    let roster = vibe_roster::RosterConfig::default();
    let mut all = vec![
        setting(
            "eval.timeout_s",
            Seconds,
            secs(kernel.inactivity_timeout),
            "a cell is interrupted after this long without output",
        ),
        setting(
            "eval.interrupt_grace_s",
            Seconds,
            secs(kernel.interrupt_grace),
            "after an interrupt, how long before the kernel is killed",
        ),
        setting("eval.start_timeout_s", Seconds, secs(kernel.start_timeout), "how long a kernel may take to start"),
        setting(
            "eval.python",
            Text,
            Value::Unset,
            "the Python interpreter (unset: the project's .venv or venv, then python3 on PATH)",
        ),
        setting("eval.node", Text, Value::Unset, "the node interpreter (unset: node on PATH)"),
        setting(
            "eval.max_output_chars",
            Count,
            count(kernel.limits.max_stream_chars),
            "stream text kept per cell, in characters",
        ),
        setting("eval.max_rich_outputs", Count, count(kernel.limits.max_rich_outputs), "rich outputs kept per cell"),
        setting(
            "debug.python",
            Text,
            Value::Unset,
            "the Python that runs debugpy (unset: the project's venv, then PATH)",
        ),
        setting("debug.ttl_s", Seconds, secs(debug.ttl), "a debug session's hard lifetime"),
        setting(
            "debug.run_timeout_s",
            Seconds,
            secs(debug.limits.run_timeout),
            "how long launch, continue and the steps wait for a stop",
        ),
        setting(
            "debug.request_timeout_s",
            Seconds,
            secs(debug.limits.request_timeout),
            "how long one adapter request may go unanswered",
        ),
        setting(
            "debug.start_timeout_s",
            Seconds,
            secs(debug.limits.start_timeout),
            "how long an adapter's start-up may take",
        ),
        setting("debug.output_chars", Count, count(debug.limits.output_limit), "debuggee output kept, in characters"),
        setting("debug.stack_cap", Count, count(debug.limits.stack_cap), "frames returned by stack"),
        setting("debug.variables_cap", Count, count(debug.limits.variables_cap), "children returned by variables"),
        setting("lsp.request_timeout_s", Seconds, secs(lsp.request_timeout), "timeout of each language server request"),
        setting("lsp.init_timeout_s", Seconds, secs(lsp.init_timeout), "timeout of a server's initialize"),
        setting(
            "lsp.diagnostics_timeout_s",
            Seconds,
            secs(lsp.diagnostics_timeout),
            "how long diagnostics are waited for after a write",
        ),
        setting("lsp.references_cap", Count, count(caps.references), "references returned by lsp references"),
        setting(
            "lsp.symbols_cap",
            Count,
            count(caps.workspace_symbols),
            "symbols returned by an lsp symbols search (query)",
        ),
        setting("lsp.outline_cap", Count, count(caps.document_symbols), "symbols returned by a file's lsp outline"),
    ];
    for language in Language::ALL {
        all.push(setting(
            &format!("lsp.servers.{}", language.id()),
            Server,
            Value::Unset,
            "the server for this language (unset: the first usable, custom servers first)",
        ));
    }
    all.extend([
        setting(
            "ask.timeout_s",
            Seconds,
            secs(crate::rounds::QUESTION_TIMEOUT),
            "how long a question of serve on MCP 2026-07-28 waits for the client's retry with the answer",
        ),
        setting("approval.read", Action, Value::Text("allow".into()), "what --ask does with read tools (unset: ask)"),
        setting("approval.write", Action, Value::Unset, "what --ask does with write tools (unset: ask)"),
        setting("approval.exec", Action, Value::Unset, "what --ask does with exec tools (unset: ask)"),
        setting("vibe.fast_cmd", Text, Value::Unset, "the sh -c command line of fast workers (serve --vibe)"),
        setting("vibe.good_cmd", Text, Value::Unset, "the sh -c command line of good workers (serve --vibe)"),
        setting(
            "vibe.run_timeout_s",
            SecondsOrNone,
            roster.run_timeout.map_or(Value::Unset, secs),
            "a worker's run is stopped after this long (0: no limit)",
        ),
        setting("vibe.max_running", Count, count(roster.max_running), "workers running at once; the rest queue"),
        setting("vibe.default_wait_s", Seconds, secs(roster.default_wait), "vibe_wait's timeout when none is given"),
        setting("vibe.max_wait_s", Seconds, secs(roster.max_wait), "the cap on every vibe_wait"),
        setting(
            "enclosure.mode",
            Kind::Enclosure,
            Value::Text("none".into()),
            "where the project's code runs: none (the host), bwrap (a sandbox), command (through enclosure.prefix)",
        ),
        setting("enclosure.network", Bool, Value::Bool(false), "whether a bwrap sandbox keeps the network"),
        setting(
            "enclosure.prefix",
            Strings,
            Value::List(Vec::new()),
            "mode command: the argv put before every command, e.g. [\"docker\", \"exec\", \"-i\", \"app\"]",
        ),
        setting("enclosure.ro_paths", Strings, Value::List(Vec::new()), "bwrap: extra paths visible read-only"),
        setting("enclosure.rw_paths", Strings, Value::List(Vec::new()), "bwrap: extra paths visible writable"),
        setting("enclosure.env", EnvList, Value::List(Vec::new()), "extra NAME=VALUE variables set inside"),
        setting(
            "enclosure.language_servers",
            Bool,
            Value::Bool(false),
            "whether language servers run in the enclosure too (some need the network or a cache outside the root)",
        ),
    ]);
    all
}

/// The settings that hold a program's path, taken relative to the root.
const PATH_KEYS: [&str; 3] = ["eval.python", "eval.node", "debug.python"];

/// The settings that hold lists of paths, each taken relative to the root.
const PATH_LIST_KEYS: [&str; 2] = ["enclosure.ro_paths", "enclosure.rw_paths"];

/// The list settings: arrays of tables, replaced whole by a higher layer.
const LISTS: [&str; 3] = ["lsp.server", "debug.adapter", "approval.rule"];

/// One value with its source.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    pub source: Source,
    /// The environment variable that sets it.
    pub env: String,
    pub doc: &'static str,
}

/// A `[[lsp.server]]` entry: a new server, or (named like a built-in one) a
/// change to it; fields left out keep the built-in's.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CustomServer {
    pub name: String,
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    /// From `languages` and the languages of `extensions` (with `language`, the new one).
    #[serde(serialize_with = "language_ids")]
    pub languages: Vec<Language>,
    /// A language of its own the entry defines (`language`, `extensions`, `language_id`).
    pub language: Option<NewLanguage>,
    /// Languages other entries of the list define, defined (and moved to
    /// `languages`) once the layers are merged.
    #[serde(skip)]
    pending: Vec<String>,
    pub root_markers: Option<Vec<String>>,
    pub probe_args: Option<Vec<String>>,
    pub initialization_options: Option<serde_json::Value>,
    pub settings: Option<serde_json::Value>,
    pub env: Vec<(String, String)>,
    /// Whether this server runs in the run's enclosure (over `enclosure.language_servers`).
    pub enclosed: Option<bool>,
    pub source: Source,
}

/// A language a `[[lsp.server]]` entry defines: its id, its files' extensions
/// (without the dot) and the LSP `languageId` its files are opened with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewLanguage {
    pub id: String,
    pub extensions: Vec<String>,
    pub language_id: String,
}

fn language_ids<S: serde::Serializer>(languages: &[Language], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(languages.iter().map(|l| l.id()))
}

/// A `[[debug.adapter]]` entry: a new adapter, or (named like a built-in
/// one) a change to it; fields left out keep the built-in's.
#[derive(Debug, Clone, Serialize)]
pub struct CustomAdapter {
    #[serde(flatten)]
    pub spec: dap_session::AdapterSpec,
    pub source: Source,
}

/// An `[[approval.rule]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct RuleEntry {
    /// `tier read`, `tool write`, `path src/`.
    pub scope: String,
    pub action: String,
    #[serde(skip)]
    pub rule: Rule,
    pub source: Source,
}

/// The flags that set configuration, gathered before the root is known.
#[derive(Debug, Default, Clone)]
pub struct Flags {
    /// `--config FILE`.
    pub file: Option<PathBuf>,
    /// `--no-config`.
    pub no_config: bool,
    /// `(key, value, the flag as given)`, in order; later ones win.
    pub sets: Vec<(String, String, String)>,
}

impl Flags {
    /// `--set section.key=value`.
    pub fn set(&mut self, assignment: &str) -> anyhow::Result<()> {
        let Some((key, value)) = assignment.split_once('=') else {
            bail!("--set takes section.key=value (e.g. eval.timeout_s=60), not {assignment:?}");
        };
        self.sets.push((key.trim().to_owned(), value.to_owned(), format!("--set {assignment}")));
        Ok(())
    }

    /// `--lsp LANG=SERVER`, the flag form of `lsp.servers.LANG`.
    pub fn lsp(&mut self, choice: &str) -> anyhow::Result<()> {
        let Some((language, server)) = choice.split_once('=') else {
            bail!("--lsp takes LANG=SERVER (e.g. python=pylsp), not {choice:?}");
        };
        // The language may be one the configuration defines: checked once the layers are merged.
        let language = language.trim();
        if language.is_empty() || language.contains('.') {
            bail!("--lsp takes LANG=SERVER (e.g. python=pylsp), not {choice:?}");
        }
        self.sets.push((format!("lsp.servers.{language}"), server.trim().to_owned(), "--lsp".to_owned()));
        Ok(())
    }

    /// A specific flag that sets one key (`--vibe-fast-cmd`).
    pub fn flag(&mut self, key: &str, value: &str, flag: &str) {
        self.sets.push((key.to_owned(), value.to_owned(), flag.to_owned()));
    }
}

/// Which file is in force, and why none is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileState {
    /// This file was read.
    Read(PathBuf),
    /// None at the root.
    Absent(PathBuf),
    /// `--no-config`.
    Skipped,
}

impl fmt::Display for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileState::Read(path) => write!(f, "{}", path.display()),
            FileState::Absent(path) => write!(f, "none ({} does not exist; built-in defaults)", path.display()),
            FileState::Skipped => f.write_str("none (--no-config)"),
        }
    }
}

/// The effective configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Config {
    pub file: FileState,
    pub settings: Vec<Entry>,
    pub lsp_servers: Vec<CustomServer>,
    pub debug_adapters: Vec<CustomAdapter>,
    pub approval_rules: Vec<RuleEntry>,
}

/// Where a text being checked came from, for error places and sources.
#[derive(Clone, Copy)]
enum Origin<'a> {
    File { path: &'a Path, text: &'a str },
    Env { var: &'a str },
    Flag { flag: &'a str },
}

impl Origin<'_> {
    fn place(&self, span: &Range<usize>) -> String {
        match self {
            Origin::File { path, text } => {
                let (line, column) = line_column(text, span.start);
                format!("{}:{line}:{column}", path.display())
            }
            Origin::Env { var } => format!("environment variable {var}"),
            Origin::Flag { flag } => format!("flag {flag}"),
        }
    }

    fn source(&self, span: &Range<usize>) -> Source {
        match self {
            Origin::File { path, text } => {
                let (line, column) = line_column(text, span.start);
                Source::File { path: path.to_path_buf(), line, column }
            }
            Origin::Env { var } => Source::Env((*var).to_owned()),
            Origin::Flag { flag } => Source::Flag((*flag).to_owned()),
        }
    }
}

/// 1-indexed line and character column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn refuse(place: &str, key: &str, expected: &str, found: &str) -> anyhow::Error {
    anyhow!("{place}: {key}: expected {expected}, found {found}")
}

fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("the string {:?}", s.as_ref()),
        DeValue::Integer(i) => format!("the integer {}", i.as_str()),
        DeValue::Float(x) => format!("the float {}", x.as_str()),
        DeValue::Boolean(b) => format!("the boolean {b}"),
        DeValue::Datetime(d) => format!("the datetime {d}"),
        DeValue::Array(_) => "an array".to_owned(),
        DeValue::Table(_) => "a table".to_owned(),
    }
}

fn integer(value: &DeValue<'_>) -> Option<i64> {
    let DeValue::Integer(i) = value else { return None };
    i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok()
}

fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Float(x) => x.as_str().replace('_', "").parse().ok(),
        _ => integer(value).map(|i| i as f64),
    }
}

/// Checks a scalar from the file (a TOML value) or from env/flags (text).
fn check(kind: Kind, value: Result<&DeValue<'_>, &str>) -> Result<Value, String> {
    let found = || match value {
        Ok(v) => describe(v),
        Err(text) => format!("{text:?}"),
    };
    let text = match value {
        Ok(DeValue::String(s)) => Some(s.as_ref()),
        Ok(_) => None,
        Err(text) => Some(text),
    };
    let checked = match kind {
        Kind::Seconds | Kind::SecondsOrNone => {
            let n = match value {
                Ok(v) => number(v),
                Err(text) => text.trim().parse::<f64>().ok(),
            };
            match n {
                Some(n) if n.is_finite() && n > 0.0 && n < 1e9 => Some(Value::Number(n)),
                Some(n) if n == 0.0 && kind == Kind::SecondsOrNone => Some(Value::Unset),
                _ => None,
            }
        }
        Kind::Count => {
            let n = match value {
                Ok(v) => integer(v),
                Err(text) => text.trim().parse::<i64>().ok(),
            };
            n.filter(|n| *n > 0).map(|n| Value::Count(n as u64))
        }
        Kind::Text | Kind::Server => text.filter(|t| !t.trim().is_empty()).map(|t| Value::Text(t.to_owned())),
        Kind::Action => text.filter(|t| action(t).is_some()).map(|t| Value::Text(t.to_owned())),
        Kind::Enclosure => text.filter(|t| ["none", "bwrap", "command"].contains(t)).map(|t| Value::Text(t.to_owned())),
        Kind::Bool => match value {
            Ok(DeValue::Boolean(b)) => Some(Value::Bool(*b)),
            Ok(_) => None,
            Err(text) => match text.trim() {
                "true" | "1" => Some(Value::Bool(true)),
                "false" | "0" => Some(Value::Bool(false)),
                _ => None,
            },
        },
        Kind::Strings | Kind::EnvList => {
            let parsed;
            let array = match value {
                Ok(v) => v,
                Err(text) => match DeValue::parse(text) {
                    Ok(v) => {
                        parsed = v;
                        parsed.get_ref()
                    }
                    Err(_) => return Err(found()),
                },
            };
            let items: Option<Vec<String>> = match array {
                DeValue::Array(items) => items
                    .iter()
                    .map(|item| match item.get_ref() {
                        DeValue::String(s) => Some(s.to_string()),
                        _ => None,
                    })
                    .collect(),
                _ => None,
            };
            let env_ok = |item: &String| item.split_once('=').is_some_and(|(name, _)| !name.is_empty());
            items.filter(|items| kind == Kind::Strings || items.iter().all(env_ok)).map(Value::List)
        }
    };
    checked.ok_or_else(found)
}

fn action(text: &str) -> Option<Action> {
    match text {
        "allow" => Some(Action::Allow),
        "ask" => Some(Action::Ask),
        "deny" => Some(Action::Deny),
        _ => None,
    }
}

/// The nearest of `known` to `word`, when near enough to be a likely typo.
fn nearest<'a, S: AsRef<str>>(word: &str, known: &'a [S]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(word, k.as_ref()), k.as_ref()))
        .min()
        .filter(|(distance, k)| *distance <= (k.len().max(word.len()) / 2).max(2))
        .map(|(_, k)| k)
}

fn unknown<S: AsRef<str>>(place: &str, key: &str, word: &str, known: &[S]) -> anyhow::Error {
    let hint = nearest(word, known).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
    let known: Vec<&str> = known.iter().map(AsRef::as_ref).collect();
    anyhow!("{place}: unknown key `{key}`: {hint}(expected one of {}; found `{word}`)", known.join(", "))
}

/// What the layers have said so far.
struct Layers {
    settings: Vec<Setting>,
    values: BTreeMap<String, (Value, Source)>,
    servers: Vec<CustomServer>,
    adapters: Vec<CustomAdapter>,
    rules: Vec<RuleEntry>,
}

impl Layers {
    /// The next component after `prefix` of every known key under it.
    fn children(&self, prefix: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for key in self.settings.iter().map(|s| s.key.as_str()).chain(LISTS) {
            let rest =
                if prefix.is_empty() { Some(key) } else { key.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) };
            if let Some(child) = rest.and_then(|r| r.split('.').next())
                && !out.iter().any(|c| c == child)
            {
                out.push(child.to_owned());
            }
        }
        out
    }

    /// `lsp.servers.LANG` for a language the built-in table lacks: taken as a
    /// setting (the language may be one a `[[lsp.server]]` entry defines, in
    /// this layer or another), and checked once the layers are merged.
    fn adopt(&mut self, key: &str) {
        if let Some(word) = key.strip_prefix("lsp.servers.")
            && !word.is_empty()
            && !word.contains('.')
            && self.kind(key).is_none()
        {
            self.settings.push(setting(
                key,
                Kind::Server,
                Value::Unset,
                "the server for this language (a language of a [[lsp.server]] entry's own)",
            ));
            self.values.insert(key.to_owned(), (Value::Unset, Source::Default));
        }
    }

    fn kind(&self, key: &str) -> Option<Kind> {
        self.settings.iter().find(|s| s.key == key).map(|s| s.kind)
    }

    /// Walks one table of the file (or of an inline value) at `prefix`.
    fn table(&mut self, origin: Origin<'_>, prefix: &str, table: &DeTable<'_>) -> anyhow::Result<()> {
        for (name, value) in table.iter() {
            let word = name.get_ref().as_ref();
            let key = if prefix.is_empty() { word.to_owned() } else { format!("{prefix}.{word}") };
            if !self.value(origin, &key, name.span(), value)? {
                let known = self.children(prefix);
                return Err(unknown(&origin.place(&name.span()), &key, word, &known));
            }
        }
        Ok(())
    }

    /// One key's value; `false` when the key is unknown (the caller words it).
    fn value(
        &mut self,
        origin: Origin<'_>,
        key: &str,
        key_span: Range<usize>,
        value: &Spanned<DeValue<'_>>,
    ) -> anyhow::Result<bool> {
        let place = origin.place(&value.span());
        self.adopt(key);
        if let Some(kind) = self.kind(key) {
            let checked =
                check(kind, Ok(value.get_ref())).map_err(|found| refuse(&place, key, kind.expected(), &found))?;
            self.values.insert(key.to_owned(), (checked, origin.source(&key_span)));
            return Ok(true);
        }
        if LISTS.contains(&key) {
            return self.list(origin, key, value).map(|()| true);
        }
        if self.children(key).is_empty() {
            return Ok(false);
        }
        match value.get_ref() {
            DeValue::Table(table) => self.table(origin, key, table).map(|()| true),
            other => Err(refuse(&place, key, &format!("a table ([{key}])"), &describe(other))),
        }
    }

    fn list(&mut self, origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<()> {
        let DeValue::Array(items) = value.get_ref() else {
            return Err(refuse(
                &origin.place(&value.span()),
                key,
                &format!("an array of tables ([[{key}]])"),
                &describe(value.get_ref()),
            ));
        };
        let mut entries = Vec::new();
        for item in items.iter() {
            let DeValue::Table(table) = item.get_ref() else {
                return Err(refuse(&origin.place(&item.span()), key, "a table", &describe(item.get_ref())));
            };
            entries.push((item.span(), table));
        }
        if key == "lsp.server" {
            let declared: Vec<NewLanguage> = entries.iter().filter_map(|(_, t)| declared_languages(t)).collect();
            self.servers =
                entries.iter().map(|(span, t)| server(origin, span, t, &declared)).collect::<anyhow::Result<_>>()?;
        } else if key == "debug.adapter" {
            self.adapters = entries.iter().map(|(span, t)| adapter(origin, span, t)).collect::<anyhow::Result<_>>()?;
        } else {
            self.rules = entries.iter().map(|(span, t)| rule(origin, span, t)).collect::<anyhow::Result<_>>()?;
        }
        Ok(())
    }

    /// A value from an env var or a flag: text for a scalar, a TOML value for a list.
    fn text(&mut self, origin: Origin<'_>, key: &str, text: &str) -> anyhow::Result<()> {
        let place = origin.place(&(0..0));
        self.adopt(key);
        if let Some(kind) = self.kind(key) {
            let checked = check(kind, Err(text)).map_err(|found| refuse(&place, key, kind.expected(), &found))?;
            self.values.insert(key.to_owned(), (checked, origin.source(&(0..0))));
            return Ok(());
        }
        if LISTS.contains(&key) {
            let value = DeValue::parse(text).map_err(|e| {
                refuse(&place, key, "a TOML array of inline tables", &format!("{text:?} ({})", e.message()))
            })?;
            return self.list(origin, key, &value);
        }
        let inside = self.children(key);
        if !inside.is_empty() {
            let expected = format!("a key inside [{key}] ({})", inside.join(", "));
            return Err(refuse(&place, key, &expected, "the section itself"));
        }
        let (prefix, word) = key.rsplit_once('.').unwrap_or(("", key));
        Err(unknown(&place, key, word, &self.children(prefix)))
    }
}

fn strings(origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<Vec<String>> {
    let bad = || refuse(&origin.place(&value.span()), key, "an array of strings", &describe(value.get_ref()));
    let DeValue::Array(items) = value.get_ref() else { return Err(bad()) };
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(refuse(&origin.place(&item.span()), key, "a string", &describe(other))),
        })
        .collect()
}

fn string(origin: Origin<'_>, key: &str, value: &Spanned<DeValue<'_>>) -> anyhow::Result<String> {
    match value.get_ref() {
        DeValue::String(s) if !s.trim().is_empty() => Ok(s.to_string()),
        other => Err(refuse(&origin.place(&value.span()), key, "a non-empty string", &describe(other))),
    }
}

/// A TOML value as JSON (initialization options and settings go to the server as JSON).
fn json(value: &DeValue<'_>) -> serde_json::Value {
    match value {
        DeValue::String(s) => serde_json::Value::String(s.to_string()),
        DeValue::Integer(_) => integer(value).map_or(serde_json::Value::Null, serde_json::Value::from),
        DeValue::Float(_) => number(value).map_or(serde_json::Value::Null, serde_json::Value::from),
        DeValue::Boolean(b) => serde_json::Value::Bool(*b),
        DeValue::Datetime(d) => serde_json::Value::String(d.to_string()),
        DeValue::Array(items) => items.iter().map(|i| json(i.get_ref())).collect(),
        DeValue::Table(table) => table
            .iter()
            .map(|(k, v)| (k.get_ref().to_string(), json(v.get_ref())))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

const SERVER_KEYS: &[&str] = &[
    "name",
    "command",
    "args",
    "languages",
    "extensions",
    "language",
    "language_id",
    "root_markers",
    "probe_args",
    "initialization_options",
    "settings",
    "env",
    "enclosed",
];

/// The built-in language whose files have this extension, if one has.
fn builtin_language_of(ext: &str) -> Option<Language> {
    Language::from_path(Path::new(&format!("x.{ext}"))).filter(|l| !l.is_custom())
}

fn builtin_ids() -> String {
    Language::ALL.iter().map(|l| l.id()).collect::<Vec<_>>().join(", ")
}

/// The language a `[[lsp.server]]` entry defines (`language` with its
/// `extensions`), looked at before the entries are read, so one entry can
/// serve a language another defines. What does not check is refused when its
/// entry is read.
fn declared_languages(table: &DeTable<'_>) -> Option<NewLanguage> {
    let text = |key: &str| match table.get(key).map(Spanned::get_ref) {
        Some(DeValue::String(s)) => Some(s.to_string()),
        _ => None,
    };
    let id = text("language")?;
    let extensions = match table.get("extensions").map(Spanned::get_ref) {
        Some(DeValue::Array(items)) => items
            .iter()
            .filter_map(|i| match i.get_ref() {
                DeValue::String(s) => Some(s.trim_start_matches('.').to_owned()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let language_id = text("language_id").unwrap_or_else(|| id.clone());
    Some(NewLanguage { id, extensions, language_id })
}

fn server(
    origin: Origin<'_>,
    span: &Range<usize>,
    table: &DeTable<'_>,
    declared: &[NewLanguage],
) -> anyhow::Result<CustomServer> {
    let mut out = CustomServer { source: origin.source(span), ..CustomServer::default() };
    // `extensions` are the new language's with `language`, else known languages': read after the loop.
    let mut extensions: Option<(Vec<String>, String)> = None;
    let mut new_language: Option<(String, String)> = None;
    let mut language_id: Option<(String, String)> = None;
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("lsp.server.{word}");
        let place = origin.place(&value.span());
        match word {
            "name" => out.name = string(origin, &key, value)?,
            "command" => out.command = Some(string(origin, &key, value)?),
            "args" => out.args = Some(strings(origin, &key, value)?),
            "root_markers" => out.root_markers = Some(strings(origin, &key, value)?),
            "probe_args" => out.probe_args = Some(strings(origin, &key, value)?),
            "enclosed" => match value.get_ref() {
                DeValue::Boolean(b) => out.enclosed = Some(*b),
                other => return Err(refuse(&place, &key, "true or false", &describe(other))),
            },
            "languages" => {
                for id in strings(origin, &key, value)? {
                    if let Some(language) = Language::from_id(&id).filter(|l| !l.is_custom()) {
                        if !out.languages.contains(&language) {
                            out.languages.push(language);
                        }
                    } else if declared.iter().any(|d| d.id == id) {
                        if !out.pending.contains(&id) {
                            out.pending.push(id);
                        }
                    } else {
                        let known: Vec<&str> = Language::ALL
                            .iter()
                            .map(|l| l.id())
                            .chain(declared.iter().map(|d| d.id.as_str()))
                            .collect();
                        let expected = format!(
                            "language ids among {} (a language of the server's own is defined with `language` and \
                             `extensions`)",
                            known.join(", ")
                        );
                        return Err(refuse(&place, &key, &expected, &format!("{id:?}")));
                    }
                }
            }
            "extensions" => {
                let list: Vec<String> =
                    strings(origin, &key, value)?.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
                extensions = Some((list, place));
            }
            "language" => new_language = Some((string(origin, &key, value)?, place)),
            "language_id" => language_id = Some((string(origin, &key, value)?, place)),
            "initialization_options" | "settings" => {
                let DeValue::Table(_) = value.get_ref() else {
                    return Err(refuse(&place, &key, "a table", &describe(value.get_ref())));
                };
                let v = Some(json(value.get_ref()));
                if word == "settings" { out.settings = v } else { out.initialization_options = v }
            }
            "env" => {
                let DeValue::Table(vars) = value.get_ref() else {
                    return Err(refuse(&place, &key, "a table of strings", &describe(value.get_ref())));
                };
                for (var, v) in vars.iter() {
                    out.env.push((var.get_ref().to_string(), string(origin, &format!("{key}.{}", var.get_ref()), v)?));
                }
            }
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, SERVER_KEYS)),
        }
    }
    let place = origin.place(span);
    match (new_language, extensions) {
        (Some((id, id_place)), extensions) => {
            if Language::from_id(&id).is_some_and(|l| !l.is_custom()) {
                let expected = format!(
                    "the name of a language of its own (not a built-in one: {}; those go in `languages`)",
                    builtin_ids()
                );
                return Err(refuse(&id_place, "lsp.server.language", &expected, &format!("{id:?}")));
            }
            let Some((extensions, ext_place)) = extensions.filter(|(e, _)| !e.is_empty()) else {
                return Err(refuse(&place, "lsp.server.extensions", &format!("the file extensions of {id}"), "none"));
            };
            for ext in &extensions {
                if let Some(owner) = builtin_language_of(ext) {
                    let expected = format!("extensions no built-in language has (.{ext} files are {owner}'s)");
                    return Err(refuse(&ext_place, "lsp.server.extensions", &expected, &format!("{ext:?}")));
                }
            }
            if let Some(other) = declared.iter().find(|d| d.id == id && d.extensions != extensions) {
                let expected = format!(
                    "the extensions another entry defines {id} with ({})",
                    other.extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(", ")
                );
                return Err(refuse(&ext_place, "lsp.server.extensions", &expected, &format!("{extensions:?}")));
            }
            let language_id = language_id.map_or_else(|| id.clone(), |(l, _)| l);
            if !out.pending.contains(&id) {
                out.pending.push(id.clone());
            }
            out.language = Some(NewLanguage { id, extensions, language_id });
        }
        (None, extensions) => {
            if let Some((_, lid_place)) = language_id {
                return Err(refuse(
                    &lid_place,
                    "lsp.server.language_id",
                    "`language_id` only beside `language` (a language the entry defines)",
                    "no `language`",
                ));
            }
            for (ext, ext_place) in extensions.iter().flat_map(|(list, place)| list.iter().map(move |e| (e, place))) {
                if let Some(language) = builtin_language_of(ext) {
                    if !out.languages.contains(&language) {
                        out.languages.push(language);
                    }
                } else if let Some(d) = declared.iter().find(|d| d.extensions.contains(ext)) {
                    if !out.pending.contains(&d.id) {
                        out.pending.push(d.id.clone());
                    }
                } else {
                    let known: Vec<&str> =
                        Language::ALL.iter().map(|l| l.id()).chain(declared.iter().map(|d| d.id.as_str())).collect();
                    let expected = format!(
                        "extensions of a known language ({}), or with `language`, of a language of the server's own",
                        known.join(", ")
                    );
                    return Err(refuse(ext_place, "lsp.server.extensions", &expected, &format!("{ext:?}")));
                }
            }
        }
    }
    if out.name.is_empty() {
        return Err(refuse(&place, "lsp.server.name", "a name for the server", "none"));
    }
    let builtin = lsp_supervisor::ServerSpec::builtin().into_iter().any(|s| s.id == out.name);
    if !builtin {
        if out.command.is_none() {
            return Err(refuse(&place, "lsp.server.command", "the program to run (a new server)", "none"));
        }
        if out.languages.is_empty() && out.pending.is_empty() {
            return Err(refuse(&place, "lsp.server.languages", "at least one language or extension", "none"));
        }
        if out.root_markers.as_ref().is_none_or(|m| m.is_empty()) {
            return Err(refuse(&place, "lsp.server.root_markers", "at least one root marker file", "none"));
        }
    }
    Ok(out)
}

const ADAPTER_KEYS: &[&str] = &[
    "name",
    "command",
    "args",
    "probe_args",
    "transport",
    "markers",
    "extensions",
    "launch",
    "attach",
    "program_field",
];

fn adapter(origin: Origin<'_>, span: &Range<usize>, table: &DeTable<'_>) -> anyhow::Result<CustomAdapter> {
    let mut spec = dap_session::AdapterSpec::default();
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("debug.adapter.{word}");
        let place = origin.place(&value.span());
        match word {
            "name" => {
                let text = string(origin, &key, value)?;
                let builtin = dap_session::AdapterId::ALL.iter().map(|id| id.name()).collect::<Vec<_>>();
                if let Some(id) = dap_session::AdapterId::parse(&text).filter(|id| id.name() != text) {
                    let expected = format!(
                        "a new adapter's name, or a built-in one's as written ({}) to change it",
                        builtin.join(", ")
                    );
                    return Err(refuse(&place, &key, &expected, &format!("{text:?} (another name of {id})")));
                }
                spec.name = text;
            }
            "command" => spec.command = Some(string(origin, &key, value)?),
            "args" => spec.args = Some(strings(origin, &key, value)?),
            "probe_args" => spec.probe_args = Some(strings(origin, &key, value)?),
            "transport" => {
                let text = string(origin, &key, value).ok();
                spec.transport = Some(match text.as_deref() {
                    Some("stdio") => dap_session::Transport::Stdio,
                    Some("tcp") => dap_session::Transport::Tcp,
                    _ => {
                        let expected = "\"stdio\" or \"tcp\" (the adapter prints the address it listens on)";
                        return Err(refuse(&place, &key, expected, &describe(value.get_ref())));
                    }
                });
            }
            "markers" => spec.markers = Some(strings(origin, &key, value)?),
            "extensions" => {
                spec.extensions =
                    strings(origin, &key, value)?.iter().map(|e| e.trim_start_matches('.').to_owned()).collect();
            }
            "launch" | "attach" => {
                let serde_json::Value::Object(fields) = json(value.get_ref()) else {
                    let expected = format!("a table of fields for the DAP `{word}` request's arguments");
                    return Err(refuse(&place, &key, &expected, &describe(value.get_ref())));
                };
                if word == "launch" { spec.launch = fields } else { spec.attach = fields }
            }
            "program_field" => spec.program_field = Some(string(origin, &key, value)?),
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, ADAPTER_KEYS)),
        }
    }
    let place = origin.place(span);
    if spec.name.is_empty() {
        return Err(refuse(&place, "debug.adapter.name", "a name for the adapter", "none"));
    }
    if spec.id().is_custom() {
        if spec.command.is_none() {
            return Err(refuse(&place, "debug.adapter.command", "the program to run (a new adapter)", "none"));
        }
        if spec.markers.as_ref().is_none_or(|m| m.is_empty()) {
            return Err(refuse(&place, "debug.adapter.markers", "at least one root marker file", "none"));
        }
    }
    Ok(CustomAdapter { spec, source: origin.source(span) })
}

const RULE_KEYS: &[&str] = &["tier", "tool", "path", "action"];

fn rule(origin: Origin<'_>, span: &Range<usize>, table: &DeTable<'_>) -> anyhow::Result<RuleEntry> {
    let mut scope: Option<(String, agent_tools::Scope)> = None;
    let mut act: Option<(String, Action)> = None;
    for (name, value) in table.iter() {
        let word = name.get_ref().as_ref();
        let key = format!("approval.rule.{word}");
        let place = origin.place(&value.span());
        let text = string(origin, &key, value)?;
        let this = match word {
            "tier" => {
                let tier: Tier =
                    text.parse().map_err(|_| refuse(&place, &key, "read, write or exec", &format!("{text:?}")))?;
                agent_tools::Scope::Tier(tier)
            }
            "tool" => agent_tools::Scope::Tool(text.clone()),
            "path" => agent_tools::Scope::Path(PathBuf::from(&text)),
            "action" => {
                let a =
                    action(&text).ok_or_else(|| refuse(&place, &key, Kind::Action.expected(), &format!("{text:?}")))?;
                act = Some((text, a));
                continue;
            }
            _ => return Err(unknown(&origin.place(&name.span()), &key, word, RULE_KEYS)),
        };
        if let Some((other, _)) = &scope {
            return Err(refuse(&place, &key, "one of tier, tool or path per rule", &format!("{other} and {word}")));
        }
        scope = Some((format!("{word} {text}"), this));
    }
    let place = origin.place(span);
    let (scope_text, scope) = scope.ok_or_else(|| refuse(&place, "approval.rule", "a tier, tool or path", "none"))?;
    let (action_text, action) =
        act.ok_or_else(|| refuse(&place, "approval.rule.action", "allow, ask or deny", "none"))?;
    Ok(RuleEntry { scope: scope_text, action: action_text, rule: Rule { scope, action }, source: origin.source(span) })
}

/// The environment variable of a key: `eval.timeout_s` → `AGENT_TOOLS_EVAL_TIMEOUT_S`.
pub fn env_var(key: &str) -> String {
    format!("AGENT_TOOLS_{}", key.replace('.', "_").to_uppercase())
}

impl Config {
    /// Reads the file (`--config`, else `<root>/agent-tools.toml` unless
    /// `--no-config`), then the environment, then the flags, and checks the lot.
    pub fn load(root: &Path, flags: &Flags) -> anyhow::Result<Config> {
        let settings = settings();
        let values = settings.iter().map(|s| (s.key.clone(), (s.default.clone(), Source::Default))).collect();
        let mut layers = Layers { settings, values, servers: Vec::new(), adapters: Vec::new(), rules: Vec::new() };

        let path = match &flags.file {
            Some(path) => Some(path.clone()),
            None if flags.no_config => None,
            None => Some(root.join(FILE_NAME)),
        };
        let file = match path {
            None => FileState::Skipped,
            Some(path) if flags.file.is_none() && !path.exists() => FileState::Absent(path),
            Some(path) => {
                let bytes = std::fs::read(&path)
                    .map_err(|e| anyhow!("cannot read the configuration file {}: {e}", path.display()))?;
                let text = String::from_utf8(bytes).map_err(|e| {
                    let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                    let (line, column) = line_column(&String::from_utf8_lossy(valid), valid.len());
                    let byte = e.as_bytes()[valid.len()];
                    anyhow!(
                        "{}:{line}:{column}: not UTF-8 (the byte 0x{byte:02X}); TOML files are UTF-8",
                        path.display()
                    )
                })?;
                let origin = Origin::File { path: &path, text: &text };
                let table = DeTable::parse(&text).map_err(|e| {
                    let place = e.span().map_or_else(|| path.display().to_string(), |s| origin.place(&s));
                    anyhow!("{place}: not valid TOML: {}", e.message())
                })?;
                layers.table(origin, "", table.get_ref())?;
                FileState::Read(path)
            }
        };

        // The lists first: a language an `[[lsp.server]]` entry defines has its `lsp.servers.LANG` too.
        let env = |layers: &mut Layers, key: &str| -> anyhow::Result<()> {
            let var = env_var(key);
            match std::env::var(&var) {
                Ok(text) => layers.text(Origin::Env { var: &var }, key, &text),
                Err(std::env::VarError::NotPresent) => Ok(()),
                Err(std::env::VarError::NotUnicode(_)) => bail!("environment variable {var}: {key}: not UTF-8"),
            }
        };
        for key in LISTS {
            env(&mut layers, key)?;
        }
        let new_languages: Vec<String> =
            layers.servers.iter().filter_map(|s| s.language.as_ref()).map(|l| l.id.clone()).collect();
        for id in new_languages {
            layers.adopt(&format!("lsp.servers.{id}"));
        }
        let keys: Vec<String> = layers.settings.iter().map(|s| s.key.clone()).chain(LISTS.map(String::from)).collect();
        for key in keys.iter().filter(|k| !LISTS.contains(&k.as_str())) {
            env(&mut layers, key)?;
        }
        // A variable one typo away from a setting is most likely meant as
        // it: said on stderr, not refused (other AGENT_TOOLS_* variables,
        // such as AGENT_TOOLS_LOG, are not settings).
        let vars: Vec<String> = keys.iter().map(|k| env_var(k)).collect();
        for (var, _) in std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v))) {
            if var.starts_with("AGENT_TOOLS_")
                && !vars.contains(&var)
                && let Some(near) = vars
                    .iter()
                    .find(|known| strsim::damerau_levenshtein(&var, known) <= 2)
                    .filter(|_| var != "AGENT_TOOLS_LOG")
            {
                crate::eprint(&format!("agent-tools: ignoring {var}, not a setting; did you mean {near}?"));
            }
        }
        for (key, text, flag) in &flags.sets {
            layers.text(Origin::Flag { flag }, key, text)?;
        }
        // An interpreter given as a relative path is the root's (`.venv/bin/python`);
        // a bare name stays a name.
        for key in PATH_KEYS {
            if let Some((Value::Text(text), _)) = layers.values.get_mut(key)
                && text.contains('/')
                && Path::new(text.as_str()).is_relative()
            {
                *text = root.join(&*text).display().to_string();
            }
        }
        for key in PATH_LIST_KEYS {
            if let Some((Value::List(items), _)) = layers.values.get_mut(key) {
                for item in items.iter_mut().filter(|item| Path::new(item.as_str()).is_relative()) {
                    *item = root.join(&*item).display().to_string();
                }
            }
        }

        // The languages the entries define, process-wide (routing is by a
        // file's extension everywhere), then the entries that serve them.
        for server in &layers.servers {
            if let Some(new) = &server.language {
                Language::define(&new.id, &new.extensions, Some(&new.language_id))
                    .map_err(|e| anyhow!("{}: lsp.server.language: {e}", server.source))?;
            }
        }
        for server in &mut layers.servers {
            for id in std::mem::take(&mut server.pending) {
                if let Some(language) = Language::from_id(&id)
                    && !server.languages.contains(&language)
                {
                    server.languages.push(language);
                }
            }
        }

        let config = Config {
            file,
            settings: layers
                .settings
                .iter()
                .map(|s| {
                    let (value, source) = layers.values.remove(&s.key).unwrap_or((s.default.clone(), Source::Default));
                    Entry { key: s.key.clone(), value, source, env: env_var(&s.key), doc: s.doc }
                })
                .collect(),
            lsp_servers: layers.servers,
            debug_adapters: layers.adapters,
            approval_rules: layers.rules,
        };
        config.check_servers()?;
        config.check_enclosure()?;
        Ok(config)
    }

    /// Every `lsp.servers.LANG` names a server (built-in or custom) for LANG.
    fn check_servers(&self) -> anyhow::Result<()> {
        let specs = crate::wiring::server_specs(self);
        for entry in self.settings.iter().filter(|e| e.key.starts_with("lsp.servers.")) {
            let Value::Text(server) = &entry.value else { continue };
            let place = match &entry.source {
                Source::Flag(flag) if flag == "--lsp" => "--lsp".to_owned(),
                other => other.place(),
            };
            let id = entry.key.trim_start_matches("lsp.servers.");
            let Some(language) = Language::from_id(id) else {
                let known: Vec<&str> = Language::all().iter().map(|l| l.id()).collect();
                let hint = nearest(id, &known).map(|k| format!("did you mean `{k}`? ")).unwrap_or_default();
                bail!(
                    "{place}: {}: {hint}unknown language {id:?} (known: {}; a [[lsp.server]] entry defines a new one \
                     with `language` and `extensions`)",
                    entry.key,
                    known.join(", ")
                );
            };
            let serving: Vec<&str> = specs.iter().filter(|s| s.languages.contains(&language)).map(|s| s.id).collect();
            if !serving.contains(&server.as_str()) {
                bail!("{place}: no server {server:?} for {language}; known: {}", serving.join(", "));
            }
        }
        Ok(())
    }

    /// `enclosure.mode = "command"` needs a prefix.
    fn check_enclosure(&self) -> anyhow::Result<()> {
        let Some(mode) = self.settings.iter().find(|e| e.key == "enclosure.mode") else { return Ok(()) };
        if self.text("enclosure.mode") == Some("command") && self.list("enclosure.prefix").is_empty() {
            bail!(
                "{}: enclosure.mode: \"command\" needs enclosure.prefix, the argv that enters the enclosure \
                 (e.g. [\"docker\", \"exec\", \"-i\", \"CONTAINER\"])",
                mode.source.place()
            );
        }
        Ok(())
    }

    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Value::Bool(true))
    }

    pub fn list(&self, key: &str) -> &[String] {
        match self.get(key) {
            Value::List(items) => items,
            _ => &[],
        }
    }

    fn get(&self, key: &str) -> &Value {
        self.settings.iter().find(|e| e.key == key).map_or(&Value::Unset, |e| &e.value)
    }

    /// A `Seconds` setting (validated positive; a missing one is a bug caught by the tests).
    pub fn duration(&self, key: &str) -> Option<Duration> {
        match self.get(key) {
            Value::Number(n) => Some(Duration::from_secs_f64(*n)),
            _ => None,
        }
    }

    pub fn count(&self, key: &str) -> Option<usize> {
        match self.get(key) {
            Value::Count(n) => usize::try_from(*n).ok(),
            _ => None,
        }
    }

    pub fn text(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn action(&self, key: &str) -> Option<Action> {
        self.text(key).and_then(action)
    }

    /// `agent-tools config`: every value and where it came from.
    pub fn render(&self) -> String {
        use fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "configuration file: {}", self.file);
        let width = self.settings.iter().map(|e| e.key.len() + e.value.to_string().len()).max().unwrap_or(0) + 4;
        for e in &self.settings {
            let assignment = format!("{} = {}", e.key, e.value);
            let _ = writeln!(out, "{assignment:<width$}  # {}", e.source);
        }
        for s in &self.lsp_servers {
            let command = s.command.as_deref().unwrap_or("(built-in command)");
            let langs: Vec<&str> = s.languages.iter().map(|l| l.id()).collect();
            let _ = writeln!(
                out,
                "[[lsp.server]] {} = {command} {}  # {}",
                s.name,
                s.args.clone().unwrap_or_default().join(" "),
                s.source
            );
            if !langs.is_empty() {
                let _ = writeln!(out, "    languages: {}", langs.join(", "));
            }
            if let Some(new) = &s.language {
                let extensions: Vec<String> = new.extensions.iter().map(|e| format!(".{e}")).collect();
                let _ = writeln!(
                    out,
                    "    language {} (its own): {}, languageId {}",
                    new.id,
                    extensions.join(" "),
                    new.language_id
                );
            }
        }
        for a in &self.debug_adapters {
            let spec = &a.spec;
            let command = spec.command.as_deref().unwrap_or("(built-in command)");
            let args = spec.args.clone().unwrap_or_default().join(" ");
            let _ = writeln!(out, "[[debug.adapter]] {} = {command} {args}  # {}", spec.name, a.source);
            let mut facts = Vec::new();
            if let Some(transport) = spec.transport {
                facts.push(format!(
                    "transport {}",
                    if transport == dap_session::Transport::Tcp { "tcp" } else { "stdio" }
                ));
            }
            if let Some(markers) = &spec.markers {
                facts.push(format!("markers {}", markers.join(", ")));
            }
            if !spec.extensions.is_empty() {
                let extensions: Vec<String> = spec.extensions.iter().map(|e| format!(".{e}")).collect();
                facts.push(format!("programs {}", extensions.join(" ")));
            }
            if let Some(field) = &spec.program_field {
                facts.push(format!("program in `{field}`"));
            }
            for (request, fields) in [("launch", &spec.launch), ("attach", &spec.attach)] {
                if !fields.is_empty() {
                    facts.push(format!("{request} {}", serde_json::Value::Object(fields.clone())));
                }
            }
            if !facts.is_empty() {
                let _ = writeln!(out, "    {}", facts.join("; "));
            }
        }
        for r in &self.approval_rules {
            let _ = writeln!(out, "[[approval.rule]] {} = {}  # {}", r.scope, r.action, r.source);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn positions_are_one_indexed_lines_and_character_columns() {
        assert_eq!(line_column("a = 1\nbé = x", 10), (2, 4));
        assert_eq!(line_column("x", 0), (1, 1));
    }

    #[test]
    fn the_nearest_key_is_suggested_only_when_near() {
        assert_eq!(nearest("timeout", &["timeout_s", "python", "node"]), Some("timeout_s"));
        assert_eq!(nearest("pyhton", &["timeout_s", "python", "node"]), Some("python"));
        assert_eq!(nearest("colour", &["timeout_s", "python", "node"]), None);
    }

    #[test]
    fn every_default_has_its_kind() {
        for s in settings() {
            let ok = match (&s.default, s.kind) {
                (Value::Unset, Kind::Text | Kind::Server | Kind::Action | Kind::SecondsOrNone) => true,
                (Value::Number(_), Kind::Seconds | Kind::SecondsOrNone) | (Value::Count(_), Kind::Count) => true,
                (Value::Text(t), Kind::Action) => action(t).is_some(),
                (Value::Text(t), Kind::Enclosure) => t == "none",
                (Value::Bool(_), Kind::Bool) | (Value::List(_), Kind::Strings | Kind::EnvList) => true,
                _ => false,
            };
            assert!(ok, "{}", s.key);
        }
    }
}
