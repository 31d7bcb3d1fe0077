//! The debug adapters this crate knows, and whether each is usable in a
//! checkout: detection is an intersection of a root marker **and** a binary
//! that resolves **and** runs (a probe such as `--version` exits 0).
//!
//! | id      | command                          | transport | root markers                                  |
//! |---------|----------------------------------|-----------|-----------------------------------------------|
//! | dart    | `dart debug_adapter`             | stdio     | pubspec.yaml                                  |
//! | debugpy | `python -m debugpy.adapter`      | stdio     | pyproject.toml, setup.py, requirements.txt    |
//! | lldb    | `lldb-dap` (or versioned names)  | stdio     | Cargo.toml, CMakeLists.txt                    |
//! | delve   | `dlv dap --listen 127.0.0.1:0`   | TCP       | go.mod                                        |
//!
//! debugpy has two interpreters. The *program* runs on the project's own
//! (`.venv/bin/python`, then `venv/bin/python`, then `python3` on the search
//! path), passed as the launch's `python`: a PATH python is a different
//! environment, and debugging in the wrong one fails in ways that read as
//! broken code. The *adapter* (`python -m debugpy.adapter`) runs on the first
//! Python that has a working debugpy: the project's venv, then the configured
//! one ([`Detection::python`]), then `python3` on the search path; so a
//! project venv made without debugpy still debugs, as it does in editors.
//!
//! A host adds adapters of its own, or changes a built-in one's fields, with
//! [`AdapterSpec`]s in [`Detection::adapters`]: a spec named like a built-in
//! changes the fields it gives; any other is a [`AdapterId::Custom`] adapter,
//! detected the same way (its markers, its command resolved and probed).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

/// One of the known adapters: a built-in one, or one the host configured ([`AdapterSpec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AdapterId {
    /// `dart debug_adapter`, for Dart and Flutter projects.
    Dart,
    /// debugpy's adapter (`python -m debugpy.adapter`), for Python.
    Debugpy,
    /// `lldb-dap` (or a versioned name, or `lldb-vscode`), for native binaries: Rust, C, C++.
    Lldb,
    /// `dlv dap`, for Go, reached over TCP.
    Delve,
    /// An adapter of the host's own, described by the [`AdapterSpec`] of its name.
    Custom(CustomAdapter),
}

/// A configured adapter's handle: its name, interned (leaked once per name and
/// process), so [`AdapterId`] stays `Copy`. Made by [`AdapterSpec::id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CustomAdapter(&'static str);

/// Every configured adapter's name seen in this process.
static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

fn intern(name: &str) -> &'static str {
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = names.iter().find(|n| **n == name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(leaked);
    leaked
}

impl AdapterId {
    /// Every built-in adapter, in the order `adapters` lists them ([`Detection::ids`] adds the configured ones).
    pub const ALL: [AdapterId; 4] = [AdapterId::Dart, AdapterId::Debugpy, AdapterId::Lldb, AdapterId::Delve];

    /// The id as users write it.
    pub fn name(self) -> &'static str {
        match self {
            AdapterId::Dart => "dart",
            AdapterId::Debugpy => "debugpy",
            AdapterId::Lldb => "lldb",
            AdapterId::Delve => "delve",
            AdapterId::Custom(CustomAdapter(name)) => name,
        }
    }

    /// The built-in root markers: files whose presence at the root says the
    /// checkout is this adapter's kind of project (none for a configured
    /// adapter: [`Detection::markers`] has the effective ones).
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            AdapterId::Dart => &["pubspec.yaml"],
            AdapterId::Debugpy => &["pyproject.toml", "setup.py", "requirements.txt"],
            AdapterId::Lldb => &["Cargo.toml", "CMakeLists.txt"],
            AdapterId::Delve => &["go.mod"],
            AdapterId::Custom(_) => &[],
        }
    }

    /// The command as documented (the resolved binary may be a versioned name); empty for a configured adapter.
    pub fn documented_command(self) -> &'static str {
        match self {
            AdapterId::Dart => "dart debug_adapter",
            AdapterId::Debugpy => "python -m debugpy.adapter",
            AdapterId::Lldb => "lldb-dap",
            AdapterId::Delve => "dlv dap",
            AdapterId::Custom(_) => "",
        }
    }

    /// Parses `dart`, `debugpy`, `lldb` (also `lldb-dap`), `delve` (also `dlv`).
    pub fn parse(name: &str) -> Option<AdapterId> {
        match name {
            "dart" => Some(AdapterId::Dart),
            "debugpy" | "python" => Some(AdapterId::Debugpy),
            "lldb" | "lldb-dap" | "lldb-vscode" => Some(AdapterId::Lldb),
            "delve" | "dlv" | "go" => Some(AdapterId::Delve),
            _ => None,
        }
    }

    /// Whether the host configured it ([`AdapterId::Custom`]).
    pub fn is_custom(self) -> bool {
        matches!(self, AdapterId::Custom(_))
    }
}

impl std::fmt::Display for AdapterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for AdapterId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// An adapter the host describes (a configuration's `[[debug.adapter]]`), or,
/// named like a built-in one (`dart`, `debugpy`, `lldb`, `delve`), a change
/// to it: the fields given replace the built-in's, the others stay.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AdapterSpec {
    /// Its id, as `adapters`, `status` and a launch name it.
    pub name: String,
    /// The program: a name looked up on the search path, or a path (relative
    /// ones from the root). A built-in's replaces its candidates (for debugpy, the Python).
    pub command: Option<String>,
    /// Its arguments (a built-in's default when `None`; none for a new adapter).
    pub args: Option<Vec<String>>,
    /// The probe that shows the program runs (exit 0): a built-in's default
    /// when `None`, `--version` for a new adapter.
    pub probe_args: Option<Vec<String>>,
    /// How it is reached: stdio (a new adapter's default), or TCP at the
    /// address it prints (`args` must make it listen, as `--listen 127.0.0.1:0`).
    pub transport: Option<Transport>,
    /// Root markers (a new adapter needs at least one).
    pub markers: Option<Vec<String>>,
    /// Extensions (without the dot) of the programs it debugs: a launch that
    /// names no adapter picks it for them, before the built-in inference.
    pub extensions: Vec<String>,
    /// Fields set in the DAP `launch` request's arguments, over ours (top-level
    /// fields; one given here replaces ours, nested values included).
    pub launch: Map<String, Value>,
    /// Fields set in the DAP `attach` request's arguments, likewise.
    pub attach: Map<String, Value>,
    /// The `launch` argument that carries the program's path; default `program`.
    pub program_field: Option<String>,
}

impl AdapterSpec {
    /// The adapter it describes: the built-in of its name, else a configured one.
    pub fn id(&self) -> AdapterId {
        AdapterId::ALL
            .into_iter()
            .find(|id| id.name() == self.name)
            .unwrap_or_else(|| AdapterId::Custom(CustomAdapter(intern(&self.name))))
    }
}

/// How the client reaches the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// DAP on the adapter's stdin/stdout.
    Stdio,
    /// The adapter listens on a TCP port it prints (`dlv dap --listen 127.0.0.1:0`).
    Tcp,
}

/// A resolved adapter command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterCommand {
    /// The executable, as resolved and probed.
    pub program: PathBuf,
    /// Its arguments (`-m debugpy.adapter`, `dap --listen 127.0.0.1:0`).
    pub args: Vec<String>,
    /// How the client talks to it.
    pub transport: Transport,
}

/// Whether one adapter is usable at a root, and why not.
#[derive(Debug, Clone, Serialize)]
pub struct AdapterReport {
    /// The adapter reported on.
    pub id: AdapterId,
    /// The root marker found, if any.
    pub marker: Option<String>,
    /// The command that would run, when the binary resolved and its probe ran.
    pub command: Option<AdapterCommand>,
    /// One sentence: what was found, or which half is missing.
    pub detail: String,
}

impl AdapterReport {
    /// Marker found and binary runs.
    pub fn usable(&self) -> bool {
        self.marker.is_some() && self.command.is_some()
    }
}

/// Which adapters exist and where detection looks.
#[derive(Debug, Clone, Default)]
pub struct Detection {
    /// Where adapters and Pythons are looked for and probed when that is not the host: a
    /// prefix's container ([`enclosure::Enclosure::looks_inside`]), whose `PATH` and files are
    /// its own. `None` looks on the host ([`Detection::search_path`]).
    pub inside: Option<enclosure::Enclosure>,
    /// The directories searched for binaries, as a `PATH` value; `None` = this process's `PATH`.
    pub search_path: Option<OsString>,
    /// A Python with debugpy to run the adapter on when the project's venv
    /// has none (tried before `python3` on the search path). The program
    /// still runs on the project's interpreter ([`program_python`]).
    pub python: Option<PathBuf>,
    /// How long a probe may take before the binary counts as not running.
    pub probe_timeout: Duration,
    /// Adapters of the host's own, and changes to built-in ones (by name).
    pub adapters: Vec<AdapterSpec>,
}

impl Detection {
    /// The spec configured for `id` (a new adapter's, or a built-in's change).
    pub fn spec(&self, id: AdapterId) -> Option<&AdapterSpec> {
        self.adapters.iter().find(|s| s.name == id.name())
    }

    /// Every adapter: the built-in ones, then the configured new ones, in order.
    pub fn ids(&self) -> Vec<AdapterId> {
        let mut ids = AdapterId::ALL.to_vec();
        for id in self.adapters.iter().map(AdapterSpec::id) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// An adapter by name: a configured one, or a built-in (with [`AdapterId::parse`]'s aliases).
    pub fn adapter(&self, name: &str) -> Option<AdapterId> {
        match self.adapters.iter().find(|s| s.name == name) {
            Some(spec) => Some(spec.id()),
            None => AdapterId::parse(name),
        }
    }

    /// The root markers of `id`: the configured ones, else the built-in ones.
    pub fn markers(&self, id: AdapterId) -> Vec<String> {
        match self.spec(id).and_then(|s| s.markers.as_ref()) {
            Some(markers) => markers.clone(),
            None => id.markers().iter().map(|m| (*m).to_owned()).collect(),
        }
    }

    /// The adapter a program calls for: a configured adapter whose
    /// `extensions` have the program's, else [`infer_from_program`].
    pub fn infer(&self, program: &Path, root: &Path) -> Option<AdapterId> {
        let ext = program.extension().and_then(|e| e.to_str());
        let configured = self.adapters.iter().find(|s| ext.is_some_and(|ext| s.extensions.iter().any(|e| e == ext)));
        match configured {
            Some(spec) => Some(spec.id()),
            None => infer_from_program(program, root),
        }
    }

    fn probe_timeout(&self) -> Duration {
        if self.probe_timeout.is_zero() { Duration::from_secs(10) } else { self.probe_timeout }
    }
}

/// A configured command as a program: a path with a `/` (from `root` when
/// relative) that must be an executable file, or a name on the search path;
/// inside the enclosure when detection looks there.
fn program(command: &str, root: &Path, detection: &Detection) -> Result<PathBuf, String> {
    if let Some(inside) = &detection.inside {
        return located(inside, &[command])?.ok_or_else(|| format!("no {command} inside {}", inside.describe()));
    }
    let search_path = detection.search_path.as_ref();
    if command.contains('/') {
        let path = root.join(command);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(format!("{} is not an executable file", path.display()))
        };
    }
    find_in_path(command, search_path).ok_or_else(|| format!("no {command} on PATH"))
}

/// The first of `candidates` there inside `inside` ([`enclosure::Enclosure::locate`]).
fn located(inside: &enclosure::Enclosure, candidates: &[&str]) -> Result<Option<PathBuf>, String> {
    inside.locate(candidates).map_err(|e| e.to_string())
}

/// `name` on the search path, or inside the enclosure when detection looks there.
fn find_named(name: &str, detection: &Detection) -> Result<Option<PathBuf>, String> {
    match &detection.inside {
        Some(inside) => located(inside, &[name]),
        None => Ok(find_in_path(name, detection.search_path.as_ref())),
    }
}

/// Versioned names such as `lldb-dap-19` (highest first), on the search path or inside.
fn find_versions(prefix: &str, detection: &Detection) -> Result<Vec<PathBuf>, String> {
    match &detection.inside {
        Some(inside) => {
            let names: Vec<String> = (14..=30).rev().map(|version| format!("{prefix}{version}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            Ok(located(inside, &names)?.into_iter().collect())
        }
        None => Ok(find_versioned(prefix, detection.search_path.as_ref())),
    }
}

/// Finds an executable file named `name` in the search path.
pub fn find_in_path(name: &str, search_path: Option<&OsString>) -> Option<PathBuf> {
    let path = search_path.cloned().or_else(|| std::env::var_os("PATH"))?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Versioned names such as `lldb-dap-19`, highest version first.
fn find_versioned(prefix: &str, search_path: Option<&OsString>) -> Vec<PathBuf> {
    let Some(path) = search_path.cloned().or_else(|| std::env::var_os("PATH")) else { return Vec::new() };
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for dir in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(version) = name.strip_prefix(prefix).and_then(|v| v.parse::<u32>().ok())
                && is_executable(&entry.path())
            {
                found.push((version, entry.path()));
            }
        }
    }
    found.sort_by_key(|(version, _)| std::cmp::Reverse(*version));
    found.into_iter().map(|(_, path)| path).collect()
}

/// The interpreter a Python program runs on, and where it came from: the
/// project's `.venv` or `venv`, else `python3` on the search path (inside the
/// enclosure when detection looks there).
pub fn program_python(root: &Path, detection: &Detection) -> Option<(PathBuf, String)> {
    if let Some(inside) = &detection.inside {
        let python = located(inside, &[".venv/bin/python", "venv/bin/python", "python3"]).ok()??;
        let source = match [".venv", "venv"].into_iter().find(|venv| python.starts_with(root.join(venv))) {
            Some(venv) => format!("the project's {venv}, inside"),
            None => "python3 on PATH inside".to_owned(),
        };
        return Some((python, source));
    }
    for venv in [".venv", "venv"] {
        let python = root.join(venv).join("bin/python");
        if python.exists() {
            return Some((python, format!("the project's {venv}")));
        }
    }
    find_in_path("python3", detection.search_path.as_ref()).map(|p| (p, "python3 on PATH".to_owned()))
}

/// The Pythons debugpy's adapter may run on, in order: the project's venv,
/// the configured one, `python3` on the search path (each once).
fn adapter_pythons(root: &Path, detection: &Detection) -> Result<Vec<(PathBuf, String)>, String> {
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    if let Some(inside) = &detection.inside {
        let configured = detection.python.as_ref().map(|python| python.display().to_string());
        let mut tried = vec![
            (".venv/bin/python".to_owned(), "the project's .venv, inside"),
            ("venv/bin/python".to_owned(), "the project's venv, inside"),
        ];
        tried.extend(configured.map(|python| (python, "configured, inside")));
        tried.push(("python3".to_owned(), "python3 on PATH inside"));
        for (candidate, source) in tried {
            if let Some(python) = located(inside, &[&candidate])? {
                candidates.push((python, source.to_owned()));
            }
        }
        return Ok(candidates);
    }
    for venv in [".venv", "venv"] {
        let python = root.join(venv).join("bin/python");
        if python.exists() {
            candidates.push((python, format!("the project's {venv}")));
        }
    }
    if let Some(python) = &detection.python {
        candidates.push((python.clone(), "configured".to_owned()));
    }
    if let Some(python) = find_in_path("python3", detection.search_path.as_ref()) {
        candidates.push((python, "python3 on PATH".to_owned()));
    }
    // By path as given: a venv's python is a symlink to its base interpreter, but
    // the venv (its pyvenv.cfg and site-packages) is what decides whether debugpy imports.
    let mut seen = Vec::new();
    candidates.retain(|(python, _)| {
        let new = !seen.contains(python);
        seen.push(python.clone());
        new
    });
    Ok(candidates)
}

/// Linux's "text file busy": the executable is open for writing somewhere.
const ETXTBSY: i32 = 26;

/// Runs `program args` (inside the enclosure given) and says whether it exited 0 within the timeout.
async fn probe(
    program: &Path,
    args: &[&str],
    timeout: Duration,
    inside: Option<&enclosure::Enclosure>,
) -> Result<(), String> {
    let mut plain = std::process::Command::new(program);
    plain.args(args);
    let shown = format!("`{} {}`", program.display(), args.join(" "));
    if let Some(inside) = inside {
        plain = inside.enclose(&plain).map_err(|e| format!("{shown} cannot run: {e}"))?;
    }
    let mut command = tokio::process::Command::from(plain);
    command.stdin(std::process::Stdio::null()).kill_on_drop(true);
    // Only the last line of stderr is shown: 64 KiB of each pipe is plenty.
    let run = async {
        let mut tries = 0;
        loop {
            match enclosure::capture::output(&mut command, 64 << 10).await {
                // ETXTBSY: a file just written is still open for writing in a
                // child forked meanwhile, until that child execs; it passes.
                Err(e) if e.raw_os_error() == Some(ETXTBSY) && tries < 5 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                result => return result,
            }
        }
    };
    match tokio::time::timeout(timeout, run).await {
        Err(_) => Err(format!("{shown} did not finish within {} ms", timeout.as_millis())),
        Ok(Err(e)) => Err(format!("{shown} does not run: {e}")),
        Ok(Ok(output)) if output.status.success() => Ok(()),
        Ok(Ok(output)) => {
            let stderr = output.stderr.text();
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            Err(format!(
                "{shown} exited with {}{}",
                output.status,
                if last.is_empty() { String::new() } else { format!(": {last}") }
            ))
        }
    }
}

/// Resolves and probes the adapter's binary (with the configured spec's
/// changes, if any); `Err` says what is missing.
pub async fn resolve(id: AdapterId, root: &Path, detection: &Detection) -> Result<AdapterCommand, String> {
    let spec = detection.spec(id);
    let mut command = resolve_program(id, spec, root, detection).await?;
    if let Some(spec) = spec {
        if let Some(args) = &spec.args {
            command.args = args.clone();
        }
        if let Some(transport) = spec.transport {
            command.transport = transport;
        }
    }
    Ok(command)
}

async fn resolve_program(
    id: AdapterId,
    spec: Option<&AdapterSpec>,
    root: &Path,
    detection: &Detection,
) -> Result<AdapterCommand, String> {
    let timeout = detection.probe_timeout();
    let inside = detection.inside.as_ref();
    let configured = spec.and_then(|s| s.command.as_deref());
    let probe_args = |default: &[&str]| -> Vec<String> {
        match spec.and_then(|s| s.probe_args.clone()) {
            Some(args) => args,
            None => default.iter().map(|a| (*a).to_owned()).collect(),
        }
    };
    let probe_with = |program: PathBuf, default: &'static [&'static str]| {
        let args = probe_args(default);
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            probe(&program, &args, timeout, inside).await.map(|()| program)
        }
    };
    match id {
        AdapterId::Custom(_) => {
            let Some(spec) = spec else { return Err(format!("no adapter named {id} is configured")) };
            let command = spec.command.as_deref().ok_or("no command is configured")?;
            let program = probe_with(program(command, root, detection)?, &["--version"]).await?;
            Ok(AdapterCommand { program, args: Vec::new(), transport: Transport::Stdio })
        }
        AdapterId::Debugpy => {
            // A configured command for debugpy is the one Python tried; else the project's
            // venv, the configured Python, then python3 on the search path.
            let candidates = match configured {
                Some(command) => vec![(program(command, root, detection)?, "configured".to_owned())],
                None => adapter_pythons(root, detection)?,
            };
            if candidates.is_empty() {
                let place = detection.inside.as_ref().map_or_else(String::new, |e| format!(" inside {}", e.describe()));
                return Err(format!(
                    "no python: no .venv/bin/python or venv/bin/python in the project and no python3 on PATH{place}"
                ));
            }
            let mut failures = Vec::new();
            for (python, source) in candidates {
                let shown = python.display().to_string();
                match probe_with(python, &["-c", "import debugpy"]).await {
                    Ok(python) => {
                        return Ok(AdapterCommand {
                            program: python,
                            args: vec!["-m".into(), "debugpy.adapter".into()],
                            transport: Transport::Stdio,
                        });
                    }
                    Err(e) => failures.push(format!("{shown} ({source}): {e}")),
                }
            }
            Err(format!(
                "no Python here has a working debugpy (pip install debugpy into the project's venv, or set debug.python): {}",
                failures.join("; ")
            ))
        }
        AdapterId::Lldb => {
            let mut candidates: Vec<PathBuf> = Vec::new();
            match configured {
                Some(command) => candidates.push(program(command, root, detection)?),
                None => {
                    candidates.extend(find_named("lldb-dap", detection)?);
                    candidates.extend(find_versions("lldb-dap-", detection)?);
                    candidates.extend(find_named("lldb-vscode", detection)?);
                    candidates.extend(find_versions("lldb-vscode-", detection)?);
                }
            }
            if candidates.is_empty() {
                return Err(
                    "no lldb-dap, lldb-dap-N, lldb-vscode or lldb-vscode-N on PATH (apt install lldb-19)".into()
                );
            }
            let mut failures = Vec::new();
            for candidate in candidates {
                match probe_with(candidate, &["--help"]).await {
                    Ok(program) => {
                        return Ok(AdapterCommand { program, args: Vec::new(), transport: Transport::Stdio });
                    }
                    Err(e) => failures.push(e),
                }
            }
            Err(failures.join("; "))
        }
        AdapterId::Delve => {
            let program = match configured {
                Some(command) => program(command, root, detection)?,
                None => find_named("dlv", detection)?.ok_or("no dlv on PATH (apt install delve)")?,
            };
            let program = probe_with(program, &["version"]).await?;
            Ok(AdapterCommand {
                program,
                args: vec!["dap".into(), "--listen".into(), "127.0.0.1:0".into()],
                transport: Transport::Tcp,
            })
        }
        AdapterId::Dart => {
            let program = match configured {
                Some(command) => program(command, root, detection)?,
                None => find_named("dart", detection)?.ok_or("no dart on PATH (the Dart SDK is not installed here)")?,
            };
            let program = probe_with(program, &["--version"]).await?;
            Ok(AdapterCommand { program, args: vec!["debug_adapter".into()], transport: Transport::Stdio })
        }
    }
}

/// The first root marker of `id` present at `root` (the configured markers, else the built-in ones).
pub fn find_marker(id: AdapterId, root: &Path, detection: &Detection) -> Option<String> {
    detection.markers(id).into_iter().find(|m| root.join(m).exists())
}

/// Detects one adapter at `root`.
pub async fn detect(id: AdapterId, root: &Path, detection: &Detection) -> AdapterReport {
    let marker = find_marker(id, root, detection);
    let markers = detection.markers(id).join(", ");
    let binary = resolve(id, root, detection).await;
    let runs = |command: &AdapterCommand| match id {
        AdapterId::Debugpy => {
            let program = match program_python(root, detection) {
                Some((python, source)) => format!("{} ({source})", python.display()),
                None => "no python".to_owned(),
            };
            format!(
                "debugpy's adapter runs on {}, the program on {program}; its child processes run without the debugger (a breakpoint in code a forked child runs holds that child)",
                command.program.display()
            )
        }
        _ => format!("{} runs", command.program.display()),
    };
    let detail = match (&marker, &binary) {
        (Some(marker), Ok(command)) => format!("usable: {marker} at the root, {}", runs(command)),
        (None, Ok(command)) => {
            format!("not usable: no root marker ({markers} at the root); {}", runs(command))
        }
        (Some(marker), Err(why)) => format!("not usable: {marker} at the root, but {why}"),
        (None, Err(why)) => format!("not usable: no root marker ({markers}) and {why}"),
    };
    AdapterReport { id, marker, command: binary.ok(), detail }
}

/// Detects every adapter at `root`: the built-in ones, then the configured new ones.
pub async fn detect_all(root: &Path, detection: &Detection) -> Vec<AdapterReport> {
    let mut reports = Vec::new();
    for id in detection.ids() {
        reports.push(detect(id, root, detection).await);
    }
    reports
}

/// The adapter a program calls for, from its extension or contents, or `None` to leave it to the caller.
pub fn infer_from_program(program: &Path, root: &Path) -> Option<AdapterId> {
    match program.extension().and_then(|e| e.to_str()) {
        Some("py") => return Some(AdapterId::Debugpy),
        Some("go") => return Some(AdapterId::Delve),
        Some("dart") => return Some(AdapterId::Dart),
        _ => {}
    }
    if program.is_dir() && program.join("go.mod").exists() {
        return Some(AdapterId::Delve);
    }
    let mut magic = [0u8; 4];
    let is_elf = std::fs::File::open(program)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| &magic == b"\x7fELF");
    if is_elf {
        // A Go binary is an ELF file too; in a Go module, delve reads it best.
        let go_module = AdapterId::Delve.markers().iter().any(|m| root.join(m).exists());
        return Some(if go_module { AdapterId::Delve } else { AdapterId::Lldb });
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn programs_map_to_adapters() {
        let dir = tempfile::tempdir().unwrap();
        let check = |name: &str, expected: Option<AdapterId>| {
            assert_eq!(infer_from_program(&dir.path().join(name), dir.path()), expected, "{name}");
        };
        check("main.py", Some(AdapterId::Debugpy));
        check("main.go", Some(AdapterId::Delve));
        check("bin/main.dart", Some(AdapterId::Dart));
        check("notes.txt", None);
        std::fs::write(dir.path().join("a.out"), b"\x7fELF\x02\x01").unwrap();
        check("a.out", Some(AdapterId::Lldb));
        std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
        check("a.out", Some(AdapterId::Delve));
    }

    #[tokio::test]
    async fn detection_names_the_missing_half() {
        let dir = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let detection = Detection { search_path: Some(empty.path().as_os_str().to_owned()), ..Detection::default() };
        let report = detect(AdapterId::Dart, dir.path(), &detection).await;
        assert!(!report.usable());
        assert_eq!(
            report.detail,
            "not usable: no root marker (pubspec.yaml) and no dart on PATH (the Dart SDK is not installed here)"
        );
        std::fs::write(dir.path().join("pubspec.yaml"), "name: x\n").unwrap();
        let report = detect(AdapterId::Dart, dir.path(), &detection).await;
        assert_eq!(
            report.detail,
            "not usable: pubspec.yaml at the root, but no dart on PATH (the Dart SDK is not installed here)"
        );
        // A binary that resolves but does not run does not count.
        let fake = empty.path().join("dart");
        std::fs::write(&fake, "#!/bin/sh\necho 'not really dart' >&2\nexit 3\n").unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let report = detect(AdapterId::Dart, dir.path(), &detection).await;
        assert!(!report.usable());
        assert!(report.detail.contains("exited with exit status: 3: not really dart"), "{}", report.detail);
    }

    fn executable(path: &Path, script: &str) {
        std::fs::write(path, script).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[tokio::test]
    async fn a_configured_adapter_is_detected_listed_and_inferred_like_a_built_in_one() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        executable(
            &bin.path().join("toy-dap"),
            "#!/bin/sh
[ \"$1\" = --version ] && exit 0\nexit 4\n",
        );
        let toy = AdapterSpec {
            name: "toy".into(),
            command: Some("toy-dap".into()),
            args: Some(vec!["--listen".into(), "127.0.0.1:0".into()]),
            transport: Some(Transport::Tcp),
            markers: Some(vec!["toy.project".into()]),
            extensions: vec!["toy".into()],
            ..AdapterSpec::default()
        };
        let detection = Detection {
            search_path: Some(bin.path().as_os_str().to_owned()),
            adapters: vec![toy.clone()],
            ..Detection::default()
        };
        let id = toy.id();
        assert!(id.is_custom());
        assert_eq!((id.name(), id.to_string()), ("toy", "toy".to_owned()));
        assert_eq!(serde_json::to_value(id).unwrap(), "toy");
        assert_eq!(AdapterSpec { name: "toy".into(), ..AdapterSpec::default() }.id(), id, "one id per name");
        assert_eq!(detection.ids(), [AdapterId::Dart, AdapterId::Debugpy, AdapterId::Lldb, AdapterId::Delve, id]);
        assert_eq!(detection.adapter("toy"), Some(id));
        assert_eq!(detection.adapter("dlv"), Some(AdapterId::Delve));
        assert_eq!(detection.adapter("nope"), None);
        assert_eq!(detection.infer(&root.path().join("main.toy"), root.path()), Some(id));
        assert_eq!(detection.infer(&root.path().join("main.py"), root.path()), Some(AdapterId::Debugpy));

        let report = detect(id, root.path(), &detection).await;
        let program = bin.path().join("toy-dap");
        assert_eq!(
            report.detail,
            format!("not usable: no root marker (toy.project at the root); {} runs", program.display())
        );
        std::fs::write(root.path().join("toy.project"), "").unwrap();
        let report = detect(id, root.path(), &detection).await;
        assert!(report.usable(), "{}", report.detail);
        let command = report.command.unwrap();
        assert_eq!(command.program, program);
        assert_eq!(command.args, ["--listen", "127.0.0.1:0"]);
        assert_eq!(command.transport, Transport::Tcp);
        let reports = detect_all(root.path(), &detection).await;
        assert_eq!(reports.last().map(|r| r.id), Some(id));

        // A command that does not run is the missing half; a path is taken from the root.
        let broken = Detection {
            adapters: vec![AdapterSpec { command: Some("bin/toy-dap".into()), ..toy.clone() }],
            ..detection.clone()
        };
        let report = detect(id, root.path(), &broken).await;
        assert_eq!(
            report.detail,
            format!(
                "not usable: toy.project at the root, but {} is not an executable file",
                root.path().join("bin/toy-dap").display()
            )
        );
        let probe = Detection {
            adapters: vec![AdapterSpec { probe_args: Some(vec!["--help".into()]), ..toy }],
            ..detection.clone()
        };
        let report = detect(id, root.path(), &probe).await;
        assert!(report.detail.contains("--help` exited with exit status: 4"), "{}", report.detail);
    }

    #[tokio::test]
    async fn a_spec_named_like_a_built_in_adapter_changes_only_the_fields_it_gives() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        executable(
            &bin.path().join("my-dart"),
            "#!/bin/sh
exit 0
",
        );
        std::fs::write(root.path().join("app.yaml"), "").unwrap();
        let dart = AdapterSpec {
            name: "dart".into(),
            command: Some(bin.path().join("my-dart").display().to_string()),
            markers: Some(vec!["app.yaml".into()]),
            ..AdapterSpec::default()
        };
        assert_eq!(dart.id(), AdapterId::Dart);
        let detection = Detection {
            search_path: Some(empty.path().as_os_str().to_owned()),
            adapters: vec![dart.clone()],
            ..Detection::default()
        };
        assert_eq!(detection.ids(), AdapterId::ALL);
        let report = detect(AdapterId::Dart, root.path(), &detection).await;
        assert!(report.usable(), "{}", report.detail);
        let command = report.command.unwrap();
        assert_eq!(command.program, bin.path().join("my-dart"));
        assert_eq!((command.args, command.transport), (vec!["debug_adapter".to_owned()], Transport::Stdio));
        // Not configured: the built-in detection, which finds no dart here.
        let report = detect(AdapterId::Dart, root.path(), &Detection { adapters: Vec::new(), ..detection }).await;
        assert_eq!(
            report.detail,
            "not usable: no root marker (pubspec.yaml) and no dart on PATH (the Dart SDK is not installed here)"
        );
    }

    #[test]
    fn versioned_names_are_found_highest_first() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["lldb-dap-14", "lldb-dap-19", "lldb-dap-x"] {
            let path = dir.path().join(name);
            std::fs::write(&path, "").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let found = find_versioned("lldb-dap-", Some(&dir.path().as_os_str().to_owned()));
        let names: Vec<_> = found.iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
        assert_eq!(names, ["lldb-dap-19", "lldb-dap-14"]);
    }
}
