//! Detection: a server is usable for a file only when a root marker exists
//! between the file and the workspace root **and** the server's binary
//! resolves **and runs**. A PATH entry that is only a proxy (rustup's
//! `rust-analyzer` shim before the component is installed) fails the probe,
//! so it does not count.
//!
//! The root a server runs for is chosen the way the language's toolchain
//! draws a project ([`RootRule`]), so one server serves a whole Cargo
//! workspace, `go.work`, compilation database or solution-style tsconfig,
//! not one per member:
//!
//! | rule | root |
//! |---|---|
//! | [`RootRule::CargoWorkspace`] | the `Cargo.toml` with `[workspace]` above the package whose `members` list or glob it (minus `exclude`); a package with `[workspace]` of its own, or one the workspace does not list, is its own root |
//! | [`RootRule::GoWork`] | the nearest `go.work` whose `use` lists the module; else the nearest `go.mod` |
//! | [`RootRule::CompileDatabase`] | the outermost directory with a `compile_commands.json` (or `build/compile_commands.json`) that lists the file (for a header: any file in the header's directory tree); else the nearest marker |
//! | [`RootRule::TsconfigReferences`] | the outermost `tsconfig.json` whose `references` reach the nearest project's; else the nearest `tsconfig.json`/`jsconfig.json`/`package.json` |
//! | [`RootRule::PythonProject`] | the nearest project file (`pyproject.toml`, `setup.py`, `setup.cfg`, `pyrightconfig.json`, `Pipfile`); a `requirements.txt` only where there is none; its `.venv` comes first on the server's `PATH` |
//! | [`RootRule::Nearest`] | the nearest directory with a marker |
//!
//! Nothing above the workspace root is looked at. The choice is plain file
//! reading; the compilation databases read are cached by size and
//! modification time ([`clear_caches`] forgets them, and every probe result).

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use serde::Deserialize;

use crate::spec::{RootRule, ServerSpec};

/// How long a binary's probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// Python project files, which make a root before a `requirements.txt` does.
const PYTHON_PROJECT_FILES: &[&str] = &["pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json", "Pipfile"];

/// A binary that resolved and ran.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Binary {
    /// Where it was found on the search path (the project's own directories first).
    pub path: PathBuf,
    /// The first line the probe printed (usually the version).
    pub version: String,
}

/// The root a server runs for, and why that directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RootChoice {
    /// The root directory.
    pub dir: PathBuf,
    /// Why, with paths relative to the workspace root: "Cargo workspace of
    /// crates/x", "outermost compile_commands.json that lists it", "nearest go.mod".
    pub why: String,
}

/// The directory a server for `start` (a file or a directory) runs in, chosen
/// by the spec's [`RootRule`] between `start` and `workspace` (inclusive).
pub fn choose_root(spec: &ServerSpec, workspace: &Path, start: &Path) -> Option<RootChoice> {
    let dirs = ancestors(workspace, start);
    let file = (!start.is_dir()).then_some(start);
    let rel = |d: &Path| relative(workspace, d);
    match spec.root_rule {
        RootRule::Nearest => nearest(&dirs, &spec.root_markers, workspace),
        RootRule::CargoWorkspace => cargo_root(&dirs, workspace),
        RootRule::GoWork => go_root(&dirs, workspace),
        RootRule::CompileDatabase => {
            // Outermost first: a nested CMakeLists.txt does not split the project.
            for dir in dirs.iter().rev() {
                for db in ["compile_commands.json", "build/compile_commands.json"] {
                    let path = dir.join(db);
                    if path.is_file() && file.is_none_or(|f| compile_database_covers(&path, f)) {
                        let what = if file.is_some() { "that lists it" } else { "at or above it" };
                        return Some(RootChoice { dir: dir.clone(), why: format!("outermost {db} {what}") });
                    }
                }
            }
            nearest(&dirs, &spec.root_markers, workspace).map(|mut c| {
                if file.is_some() {
                    c.why.push_str(" (no compile_commands.json lists it)");
                }
                c
            })
        }
        RootRule::TsconfigReferences => {
            let near = nearest(&dirs, &spec.root_markers, workspace)?;
            let outer = dirs
                .iter()
                .filter(|d| d.as_path() != near.dir && near.dir.starts_with(d))
                .rfind(|d| tsconfig_reaches(&d.join("tsconfig.json"), &near.dir));
            Some(match outer {
                Some(d) => RootChoice {
                    dir: d.clone(),
                    why: format!("tsconfig.json at {} references {}", rel(d), rel(&near.dir)),
                },
                None => near,
            })
        }
        RootRule::PythonProject => {
            let mut choice = nearest(&dirs, PYTHON_PROJECT_FILES, workspace)
                .or_else(|| nearest(&dirs, &spec.root_markers, workspace))?;
            if let Some(venv) = [".venv", "venv"].iter().find(|v| choice.dir.join(v).join("bin").is_dir()) {
                choice.why.push_str(&format!(", with {venv} beside it"));
            }
            Some(choice)
        }
    }
}

/// The chosen root's directory ([`choose_root`]).
pub fn find_root(spec: &ServerSpec, workspace: &Path, start: &Path) -> Option<PathBuf> {
    choose_root(spec, workspace, start).map(|c| c.dir)
}

/// The directories from `start` (itself when it is one, else its parent) up
/// to `workspace` inclusive, innermost first; empty when `start` is outside it.
fn ancestors(workspace: &Path, start: &Path) -> Vec<PathBuf> {
    let first = if start.is_dir() { Some(start) } else { start.parent() };
    let mut out = Vec::new();
    let mut dir = first;
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        out.push(d.to_path_buf());
        if d == workspace {
            break;
        }
        dir = d.parent();
    }
    out
}

/// `dir` relative to the workspace, `.` for the workspace itself.
fn relative(workspace: &Path, dir: &Path) -> String {
    match dir.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

fn nearest(dirs: &[PathBuf], markers: &[&str], workspace: &Path) -> Option<RootChoice> {
    dirs.iter().find_map(|d| {
        let marker = markers.iter().find(|m| d.join(m).exists())?;
        let at = if d == workspace { String::new() } else { format!(" ({})", relative(workspace, d)) };
        Some(RootChoice { dir: d.clone(), why: format!("nearest {marker}{at}") })
    })
}

/// `path` with `.` and `..` resolved lexically.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

// --- Cargo -----------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
struct Manifest {
    workspace: Option<WorkspaceSection>,
    package: Option<PackageSection>,
}

#[derive(Debug, Default, Deserialize)]
struct WorkspaceSection {
    #[serde(default)]
    members: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct PackageSection {
    /// `package.workspace`: the path to the workspace root, when it is not the nearest above.
    workspace: Option<String>,
}

fn manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    toml::from_str(&text).ok()
}

/// Cargo's workspace discovery ("The Cargo Book", Workspaces): the first
/// `[workspace]` above the package is its workspace if it lists the package.
fn cargo_root(dirs: &[PathBuf], workspace: &Path) -> Option<RootChoice> {
    let at = dirs.iter().position(|d| d.join("Cargo.toml").is_file())?;
    let package = &dirs[at];
    let rel = |d: &Path| relative(workspace, d);
    let own = manifest(package).unwrap_or_default();
    if own.workspace.is_some() {
        let why = if own.package.is_some() {
            format!("Cargo workspace at {} (the package's own)", rel(package))
        } else {
            format!("Cargo workspace at {}", rel(package))
        };
        return Some(RootChoice { dir: package.clone(), why });
    }
    if let Some(explicit) = own.package.as_ref().and_then(|p| p.workspace.as_deref()) {
        let dir = normalize(&package.join(explicit));
        if dir.starts_with(workspace) && dir.join("Cargo.toml").is_file() {
            let why = format!("Cargo workspace of {} (its package.workspace)", rel(package));
            return Some(RootChoice { dir, why });
        }
    }
    for dir in &dirs[at + 1..] {
        let Some(section) = manifest(dir).and_then(|m| m.workspace) else { continue };
        let member = package.strip_prefix(dir).unwrap_or(package);
        let excluded = section.exclude.iter().any(|e| member.starts_with(normalize(Path::new(e))));
        let listed = section.members.iter().any(|m| glob_matches(m, member));
        if listed && !excluded {
            return Some(RootChoice { dir: dir.clone(), why: format!("Cargo workspace of {}", rel(package)) });
        }
        let verdict = if excluded { "excludes" } else { "does not list" };
        let why = format!("Cargo.toml of {}, which the workspace at {} {verdict}", rel(package), rel(dir));
        return Some(RootChoice { dir: package.clone(), why });
    }
    Some(RootChoice { dir: package.clone(), why: format!("Cargo.toml of {} (no workspace above it)", rel(package)) })
}

/// A Cargo `members` glob (`crates/*`, `tools/**`, `a/b?`) against a relative path, component by component.
fn glob_matches(pattern: &str, path: &Path) -> bool {
    let pattern = normalize(Path::new(pattern.trim_end_matches('/')));
    let pattern: Vec<String> = pattern.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let path: Vec<String> = path.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    fn components(p: &[String], s: &[String]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((first, rest)) if first == "**" => (0..=s.len()).any(|i| components(rest, &s[i..])),
            Some((first, rest)) => s
                .split_first()
                .is_some_and(|(head, tail)| component(first.as_bytes(), head.as_bytes()) && components(rest, tail)),
        }
    }
    fn component(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| component(rest, &s[i..])),
            Some((b'?', rest)) => !s.is_empty() && component(rest, &s[1..]),
            Some((c, rest)) => s.first() == Some(c) && component(rest, &s[1..]),
        }
    }
    components(&pattern, &path)
}

// --- Go --------------------------------------------------------------------

/// The nearest `go.work` is the Go workspace ("Go Modules Reference",
/// Workspaces); it holds the module when a `use` directive names its directory.
fn go_root(dirs: &[PathBuf], workspace: &Path) -> Option<RootChoice> {
    let module = dirs.iter().find(|d| d.join("go.mod").is_file());
    let rel = |d: &Path| relative(workspace, d);
    let mut unused = None;
    if let Some(dir) = dirs.iter().find(|d| d.join("go.work").is_file()) {
        let uses = std::fs::read_to_string(dir.join("go.work")).map(|t| go_work_uses(&t)).unwrap_or_default();
        match module {
            Some(m) if uses.iter().any(|u| normalize(&dir.join(u)) == *m) => {
                return Some(RootChoice { dir: dir.clone(), why: format!("go.work at {} uses {}", rel(dir), rel(m)) });
            }
            Some(_) => unused = Some(dir),
            None => return Some(RootChoice { dir: dir.clone(), why: format!("go.work at {}", rel(dir)) }),
        }
    }
    let m = module?;
    let why = match unused {
        Some(work) => format!("nearest go.mod ({}); the go.work at {} does not use it", rel(m), rel(work)),
        None => format!("nearest go.mod ({})", rel(m)),
    };
    Some(RootChoice { dir: m.clone(), why })
}

/// The directories of a `go.work`'s `use` directives (single and block form).
pub(crate) fn go_work_uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        let path = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("use") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
                rest.trim_start_matches('(').trim()
            } else if rest.is_empty() || !line[3..].starts_with(char::is_whitespace) {
                continue;
            } else {
                rest
            }
        } else {
            continue;
        };
        let path = path.trim().trim_matches('"').trim_matches('`');
        if !path.is_empty() {
            out.push(path.to_string());
        }
    }
    out
}

// --- C and C++ -------------------------------------------------------------

#[derive(Deserialize)]
struct CompileCommand {
    directory: String,
    file: String,
}

type DatabaseFiles = Arc<Vec<PathBuf>>;

/// Per database: its modification time and size when read, and the files it lists.
type DatabaseCache = Mutex<HashMap<PathBuf, (Option<SystemTime>, u64, DatabaseFiles)>>;

fn database_cache() -> &'static DatabaseCache {
    static CACHE: OnceLock<DatabaseCache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The files a compilation database lists, absolute and sorted; read once per size and modification time.
fn database_files(db: &Path) -> DatabaseFiles {
    let meta = std::fs::metadata(db).ok();
    let stamp = (meta.as_ref().and_then(|m| m.modified().ok()), meta.as_ref().map_or(0, std::fs::Metadata::len));
    let mut cache = database_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((modified, len, files)) = cache.get(db)
        && (*modified, *len) == stamp
    {
        return Arc::clone(files);
    }
    let base = db.parent().unwrap_or(Path::new("/"));
    let entries: Vec<CompileCommand> =
        std::fs::read(db).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
    let mut files: Vec<PathBuf> = entries
        .into_iter()
        .map(|e| normalize(&base.join(&e.directory).join(&e.file)))
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    files.sort();
    let files = Arc::new(files);
    cache.insert(db.to_path_buf(), (stamp.0, stamp.1, Arc::clone(&files)));
    files
}

fn is_header(path: &Path) -> bool {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(ext, "h" | "hh" | "hpp" | "hxx" | "h++" | "inc" | "ipp" | "tpp")
}

/// Whether the database lists `file`, or for a header, any file in the header's directory tree.
fn compile_database_covers(db: &Path, file: &Path) -> bool {
    let files = database_files(db);
    let file = normalize(file);
    if files.binary_search(&file).is_ok() {
        return true;
    }
    let Some(dir) = file.parent().filter(|_| is_header(&file)) else { return false };
    // Sorted by component, so the files under `dir` follow it directly.
    let at = files.partition_point(|f| f.as_path() < dir);
    files.get(at).is_some_and(|f| f.starts_with(dir))
}

// --- TypeScript --------------------------------------------------------------

/// Whether the tsconfig's `references` reach (directly or through referenced
/// tsconfigs) the project in `target`.
fn tsconfig_reaches(tsconfig: &Path, target: &Path) -> bool {
    let mut seen = HashSet::new();
    let mut queue = vec![tsconfig.to_path_buf()];
    while let Some(config) = queue.pop() {
        if !seen.insert(config.clone()) || seen.len() > 256 {
            continue;
        }
        let Some(value) = std::fs::read_to_string(&config).ok().and_then(|t| parse_jsonc(&t)) else { continue };
        let base = config.parent().unwrap_or(Path::new("/"));
        for reference in value.get("references").and_then(serde_json::Value::as_array).into_iter().flatten() {
            let Some(path) = reference.get("path").and_then(serde_json::Value::as_str) else { continue };
            let path = normalize(&base.join(path));
            let file = if path.extension().is_some_and(|e| e == "json") { path } else { path.join("tsconfig.json") };
            if file.parent() == Some(target) {
                return true;
            }
            queue.push(file);
        }
    }
    false
}

/// JSON with comments and trailing commas (the dialect of tsconfig and
/// pyrightconfig), as a value: comments dropped first, then every comma
/// followed (past blanks) by a closing bracket.
pub(crate) fn parse_jsonc(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(&strip_jsonc(text)).ok()
}

/// JSON with comments (tsconfig, pyrightconfig) as JSON: comments and trailing commas dropped.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            _ => out.push(c),
        }
    }
    drop_trailing_commas(&out)
}

/// Commas followed (past blanks) by a closing bracket, outside strings, dropped.
fn drop_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if in_string {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b']' | b'}')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

// --- Binaries --------------------------------------------------------------

/// The directories searched for a server's binary, in order: the project's
/// (`project`, the server's root) `node_modules/.bin`, `.venv/bin` and
/// `venv/bin`, then the workspace root's, then `extra`, then `PATH` (as it is now).
pub fn project_search_path(project: &Path, workspace: &Path, extra: &[PathBuf]) -> OsString {
    let local = |root: &Path| -> Vec<PathBuf> {
        ["node_modules/.bin", ".venv/bin", "venv/bin"].iter().map(|d| root.join(d)).collect()
    };
    let mut dirs = local(project);
    if project != workspace {
        dirs.extend(local(workspace));
    }
    dirs.extend(extra.iter().cloned());
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

/// The directories searched for a binary at the workspace root ([`project_search_path`]).
pub fn search_path(workspace: &Path, extra: &[PathBuf]) -> OsString {
    project_search_path(workspace, workspace, extra)
}

/// The first of the spec's programs that resolves on `path` and whose probe succeeds;
/// otherwise why none did.
pub async fn resolve_binary(spec: &ServerSpec, workspace: &Path, path: &OsString) -> Result<Binary, String> {
    let mut why = Vec::new();
    for program in &spec.programs {
        let Ok(found) = which::which_in(program, Some(path), workspace) else { continue };
        match probe(spec, &found).await {
            Ok(version) => return Ok(Binary { path: found, version }),
            Err(e) => why.push(format!("{} is there but does not run ({e})", found.display())),
        }
    }
    if why.is_empty() { Err(format!("no {} on PATH", spec.programs.join(" or "))) } else { Err(why.join("; ")) }
}

fn probe_cache() -> &'static Mutex<HashMap<PathBuf, Result<String, String>>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Result<String, String>>>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// Forgets every probe result and compilation database read, so the next
/// detection sees binaries installed or fixed since (`reload`).
pub fn clear_caches() {
    probe_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    database_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
}

/// Runs the probe once per binary (until [`clear_caches`]).
async fn probe(spec: &ServerSpec, binary: &Path) -> Result<String, String> {
    let program = match spec.probe_sibling {
        Some(sibling) => binary.with_file_name(sibling),
        None => binary.to_path_buf(),
    };
    if let Some(cached) = probe_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&program) {
        return cached.clone();
    }
    let mut command = tokio::process::Command::new(&program);
    command.args(&spec.probe_args).stdin(Stdio::null()).kill_on_drop(true);
    // Only a first line is shown: 64 KiB of each pipe is plenty.
    let run = enclosure::capture::output(&mut command, 64 << 10);
    let result = match tokio::time::timeout(PROBE_TIMEOUT, run).await {
        Err(_) => Err(format!(
            "`{} {}` did not finish in {} s",
            program.display(),
            spec.probe_args.join(" "),
            PROBE_TIMEOUT.as_secs()
        )),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(out)) => {
            let (stdout, stderr) = (out.stdout.text(), out.stderr.text());
            let first = |t: &str| t.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
            if out.status.success() {
                Ok(if stdout.trim().is_empty() { first(&stderr) } else { first(&stdout) })
            } else {
                let said = if stderr.trim().is_empty() { first(&stdout) } else { first(&stderr) };
                Err(format!("`{} {}` failed ({}): {said}", program.display(), spec.probe_args.join(" "), out.status))
            }
        }
    };
    probe_cache().lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(program, result.clone());
    result
}

// --- Launch ------------------------------------------------------------------

/// The spec as started for `root`: for a server that keeps an index on disk
/// ([`ServerSpec::index_outside_root`], clangd), the index goes to a cache
/// directory outside the root. clangd keeps it in `.cache/clangd/index` beside
/// the compilation database it reads, so it is given the database through a
/// symlink in that cache directory (`--compile-commands-dir`); without a
/// database there is nothing to index in the background, and background
/// indexing is off.
pub fn launch_spec(spec: &ServerSpec, root: &Path) -> ServerSpec {
    let mut spec = spec.clone();
    if !spec.index_outside_root {
        return spec;
    }
    let database =
        ["compile_commands.json", "build/compile_commands.json"].iter().map(|d| root.join(d)).find(|p| p.is_file());
    let linked = database.and_then(|db| {
        let dir = index_cache_dir(root)?;
        std::fs::create_dir_all(&dir).ok()?;
        let link = dir.join("compile_commands.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&db, &link).ok()?;
        Some(dir)
    });
    match linked {
        Some(dir) => spec.args.push(format!("--compile-commands-dir={}", dir.display())),
        None => spec.args.push("--background-index=false".to_string()),
    }
    spec
}

/// Where clangd's index of `root` goes: `$XDG_CACHE_HOME/agent-tools/clangd/<root name>-<hash of its path>`
/// (or `~/.cache/…`, else the temporary directory); `None` when that would be inside the root.
/// clangd is the one server [`launch_spec`] keeps an index for, and the flag it passes is clangd's.
pub fn index_cache_dir(root: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    // FNV-1a: stable across runs and toolchains, so the index is found again.
    let hash = root
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    let name = root.file_name().and_then(|n| n.to_str()).unwrap_or("root");
    let dir = base.join("agent-tools").join("clangd").join(format!("{name}-{hash:016x}"));
    (!dir.starts_with(root)).then_some(dir)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_loses_its_comments_and_trailing_commas_only() {
        let text = "{ // c\n \"a\": \"x // not a comment\", /* b */ \"l\": [1, 2,], \"i\": [\"src\"], // last\n }";
        let value = parse_jsonc(text).unwrap_or_default();
        assert_eq!(value, serde_json::json!({ "a": "x // not a comment", "l": [1, 2], "i": ["src"] }));
    }

    #[test]
    fn cargo_member_globs_match_component_by_component() {
        let yes = [("crates/*", "crates/a"), ("crates/**", "crates/a/b"), ("./xtask", "xtask"), ("c?/x", "cr/x")];
        for (pattern, path) in yes {
            assert!(glob_matches(pattern, Path::new(path)), "{pattern} {path}");
        }
        let no = [("crates/*", "crates/a/b"), ("crates/*", "other/a"), ("xtask", "xtask2"), ("c?/x", "c/x")];
        for (pattern, path) in no {
            assert!(!glob_matches(pattern, Path::new(path)), "{pattern} {path}");
        }
    }

    #[test]
    fn go_work_use_directives_in_both_forms() {
        let text = "go 1.21\n\nuse ./cmd // the tool\nuse (\n\t./lib\n\t\"./other lib\"\n)\nuser x\n";
        assert_eq!(go_work_uses(text), ["./cmd", "./lib", "./other lib"]);
    }

    #[test]
    fn tsconfig_comments_and_trailing_commas_parse() {
        let value =
            parse_jsonc("{\n // c\n \"references\": [{ \"path\": \"./a\" /* x */, },],\n \"s\": \"//é\",\n}").unwrap();
        assert_eq!(value["references"][0]["path"], "./a");
        assert_eq!(value["s"], "//é");
    }
}
