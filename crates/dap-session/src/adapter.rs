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

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

/// One of the known adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum AdapterId {
    Dart,
    Debugpy,
    Lldb,
    Delve,
}

impl AdapterId {
    /// Every adapter, in the order `adapters` lists them.
    pub const ALL: [AdapterId; 4] = [AdapterId::Dart, AdapterId::Debugpy, AdapterId::Lldb, AdapterId::Delve];

    /// The id as users write it.
    pub fn name(self) -> &'static str {
        match self {
            AdapterId::Dart => "dart",
            AdapterId::Debugpy => "debugpy",
            AdapterId::Lldb => "lldb",
            AdapterId::Delve => "delve",
        }
    }

    /// Files whose presence at the root says the checkout is this adapter's kind of project.
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            AdapterId::Dart => &["pubspec.yaml"],
            AdapterId::Debugpy => &["pyproject.toml", "setup.py", "requirements.txt"],
            AdapterId::Lldb => &["Cargo.toml", "CMakeLists.txt"],
            AdapterId::Delve => &["go.mod"],
        }
    }

    /// The command as documented (the resolved binary may be a versioned name).
    pub fn documented_command(self) -> &'static str {
        match self {
            AdapterId::Dart => "dart debug_adapter",
            AdapterId::Debugpy => "python -m debugpy.adapter",
            AdapterId::Lldb => "lldb-dap",
            AdapterId::Delve => "dlv dap",
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
}

impl std::fmt::Display for AdapterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the client reaches the adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// DAP on the adapter's stdin/stdout.
    Stdio,
    /// The adapter listens on a TCP port it prints (`dlv dap --listen 127.0.0.1:0`).
    Tcp,
}

/// A resolved adapter command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdapterCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub transport: Transport,
}

/// Whether one adapter is usable at a root, and why not.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AdapterReport {
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

/// Where detection looks.
#[derive(Debug, Clone, Default)]
pub struct Detection {
    /// The directories searched for binaries, as a `PATH` value; `None` = this process's `PATH`.
    pub search_path: Option<OsString>,
    /// A Python with debugpy to run the adapter on when the project's venv
    /// has none (tried before `python3` on the search path). The program
    /// still runs on the project's interpreter ([`program_python`]).
    pub python: Option<PathBuf>,
    /// How long a probe may take before the binary counts as not running.
    pub probe_timeout: Duration,
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
/// project's `.venv` or `venv`, else `python3` on the search path.
pub fn program_python(root: &Path, detection: &Detection) -> Option<(PathBuf, String)> {
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
fn adapter_pythons(root: &Path, detection: &Detection) -> Vec<(PathBuf, String)> {
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
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
    candidates
}

/// Runs `program args` and says whether it exited 0 within the timeout.
async fn probe(program: &Path, args: &[&str], timeout: Duration) -> Result<(), String> {
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let shown = format!("`{} {}`", program.display(), args.join(" "));
    let child = command.spawn().map_err(|e| format!("{shown} does not run: {e}"))?;
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Err(_) => Err(format!("{shown} did not finish within {} ms", timeout.as_millis())),
        Ok(Err(e)) => Err(format!("{shown} failed: {e}")),
        Ok(Ok(output)) if output.status.success() => Ok(()),
        Ok(Ok(output)) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            Err(format!(
                "{shown} exited with {}{}",
                output.status,
                if last.is_empty() { String::new() } else { format!(": {last}") }
            ))
        }
    }
}

/// Resolves and probes the adapter's binary; `Err` says what is missing.
pub async fn resolve(id: AdapterId, root: &Path, detection: &Detection) -> Result<AdapterCommand, String> {
    let search = detection.search_path.as_ref();
    let timeout = if detection.probe_timeout.is_zero() { Duration::from_secs(10) } else { detection.probe_timeout };
    match id {
        AdapterId::Debugpy => {
            let candidates = adapter_pythons(root, detection);
            if candidates.is_empty() {
                return Err(
                    "no python: no .venv/bin/python or venv/bin/python in the project and no python3 on PATH".into()
                );
            }
            let mut failures = Vec::new();
            for (python, source) in candidates {
                match probe(&python, &["-c", "import debugpy"], timeout).await {
                    Ok(()) => {
                        return Ok(AdapterCommand {
                            program: python,
                            args: vec!["-m".into(), "debugpy.adapter".into()],
                            transport: Transport::Stdio,
                        });
                    }
                    Err(e) => failures.push(format!("{} ({source}): {e}", python.display())),
                }
            }
            Err(format!(
                "no Python here has a working debugpy (pip install debugpy into the project's venv, or set debug.python): {}",
                failures.join("; ")
            ))
        }
        AdapterId::Lldb => {
            let mut candidates: Vec<PathBuf> = Vec::new();
            candidates.extend(find_in_path("lldb-dap", search));
            candidates.extend(find_versioned("lldb-dap-", search));
            candidates.extend(find_in_path("lldb-vscode", search));
            candidates.extend(find_versioned("lldb-vscode-", search));
            if candidates.is_empty() {
                return Err(
                    "no lldb-dap, lldb-dap-N, lldb-vscode or lldb-vscode-N on PATH (apt install lldb-19)".into()
                );
            }
            let mut failures = Vec::new();
            for program in candidates {
                match probe(&program, &["--help"], timeout).await {
                    Ok(()) => return Ok(AdapterCommand { program, args: Vec::new(), transport: Transport::Stdio }),
                    Err(e) => failures.push(e),
                }
            }
            Err(failures.join("; "))
        }
        AdapterId::Delve => {
            let program = find_in_path("dlv", search).ok_or("no dlv on PATH (apt install delve)")?;
            probe(&program, &["version"], timeout).await?;
            Ok(AdapterCommand {
                program,
                args: vec!["dap".into(), "--listen".into(), "127.0.0.1:0".into()],
                transport: Transport::Tcp,
            })
        }
        AdapterId::Dart => {
            let program = find_in_path("dart", search).ok_or("no dart on PATH (the Dart SDK is not installed here)")?;
            probe(&program, &["--version"], timeout).await?;
            Ok(AdapterCommand { program, args: vec!["debug_adapter".into()], transport: Transport::Stdio })
        }
    }
}

/// The first root marker of `id` present at `root`.
pub fn find_marker(id: AdapterId, root: &Path) -> Option<String> {
    id.markers().iter().find(|m| root.join(m).exists()).map(|m| (*m).to_owned())
}

/// Detects one adapter at `root`.
pub async fn detect(id: AdapterId, root: &Path, detection: &Detection) -> AdapterReport {
    let marker = find_marker(id, root);
    let binary = resolve(id, root, detection).await;
    let runs = |command: &AdapterCommand| match id {
        AdapterId::Debugpy => {
            let program = match program_python(root, detection) {
                Some((python, source)) => format!("{} ({source})", python.display()),
                None => "no python".to_owned(),
            };
            format!("debugpy's adapter runs on {}, the program on {program}", command.program.display())
        }
        _ => format!("{} runs", command.program.display()),
    };
    let detail = match (&marker, &binary) {
        (Some(marker), Ok(command)) => format!("usable: {marker} at the root, {}", runs(command)),
        (None, Ok(command)) => {
            format!("not usable: no root marker ({} at the root); {}", id.markers().join(", "), runs(command))
        }
        (Some(marker), Err(why)) => format!("not usable: {marker} at the root, but {why}"),
        (None, Err(why)) => format!("not usable: no root marker ({}) and {why}", id.markers().join(", ")),
    };
    AdapterReport { id, marker, command: binary.ok(), detail }
}

/// Detects every adapter at `root`.
pub async fn detect_all(root: &Path, detection: &Detection) -> Vec<AdapterReport> {
    let mut reports = Vec::new();
    for id in AdapterId::ALL {
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
        return Some(if find_marker(AdapterId::Delve, root).is_some() { AdapterId::Delve } else { AdapterId::Lldb });
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
