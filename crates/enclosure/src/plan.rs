//! What a bwrap sandbox shows from outside the root: the [`Plan`] of binds
//! over the read-only host, the scratch home and the private `/tmp`, and the
//! secret places masked inside them.
//!
//! The rules, in the order the mounts are made (a later mount hides an
//! earlier one):
//! 1. the host's `/` read-only, a private `/tmp`, the real home replaced by
//!    an empty scratch one;
//! 2. the toolchain directories of [`HOME_KEEP`] bound back read-only;
//! 3. a tool the command runs from under `/tmp` or the home (the program, or
//!    a directory on its `PATH`) read-only: that directory itself, never its
//!    parent by rule; for `P/bin` also `P/lib`, `P/lib64`, `P/libexec` and
//!    `P/pyvenv.cfg` ([`BIN_COMPANIONS`]: a venv's packages, node's
//!    `lib/node_modules`); for `node_modules/.bin` the `node_modules` the links
//!    point into; and the same again for where a link in such a directory
//!    leads (pipx's `~/.local/bin/ruff` → `…/pipx/venvs/ruff/bin/ruff`);
//! 4. `ro_paths`, the root, `rw_paths`;
//! 5. the secret places of [`SECRETS`] under the home, and `.env`/`.env.*`
//!    files above the root or at the top of a bound directory, when any of
//!    the above would show them: a directory is masked by an empty read-only
//!    tmpfs, a file by `/dev/null`. Only `ro_paths`/`rw_paths` naming such a
//!    place itself (or a path inside it) shows it.
//!
//! Nothing here starts a process; it reads the file system (links,
//! existence, the entries of a tool directory) to decide.

use std::path::{Path, PathBuf};

/// Directories under the real home that hold toolchains rather than secrets,
/// bound back read-only over the scratch home when they exist (the project's
/// interpreter is often `~/.pyenv/versions/…`, cargo `~/.cargo/bin/cargo`).
pub const HOME_KEEP: &[&str] = &[
    ".pyenv",
    ".rustup",
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".local/bin",
    ".local/lib",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    "go",
];

/// The well-known secret places under the home, which stay hidden even when a
/// bind would show a directory above them. A trailing `*` matches any rest of
/// the file name (`.cargo/credentials*`: `credentials` and `credentials.toml`).
pub const SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".cargo/credentials*",
    ".cargo/config*",
    ".local/share/keyrings",
    ".password-store",
];

/// What a `P/bin` directory's prefix `P` lends a program run from it: a
/// venv's `lib/pythonX.Y/site-packages` and `pyvenv.cfg`, node's
/// `lib/node_modules`, a prefix's `libexec` helpers.
pub const BIN_COMPANIONS: &[&str] = &["lib", "lib64", "libexec", "pyvenv.cfg"];

/// How many entries of a tool directory are looked at for links that lead
/// elsewhere (a `~/.local/bin` of pipx links); the rest are not followed.
const LINKS_LOOKED_AT: usize = 4096;

/// Why a path from outside the root is visible in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A toolchain directory of [`HOME_KEEP`].
    Toolchain,
    /// The program, a directory on its `PATH`, or what one of those needs.
    Tool,
    /// `enclosure.ro_paths`.
    ReadOnlyPath,
    /// `enclosure.rw_paths`.
    WritablePath,
}

impl Reason {
    /// The status line's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Reason::Toolchain => "toolchain",
            Reason::Tool => "tool on PATH",
            Reason::ReadOnlyPath => "ro_paths",
            Reason::WritablePath => "rw_paths",
        }
    }
}

/// A path bound into the sandbox at the same place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// Canonical (no symlink on it).
    pub path: PathBuf,
    /// Whether it is bound writable (`--bind`) rather than read-only (`--ro-bind`).
    pub writable: bool,
    /// Why it is visible.
    pub reason: Reason,
}

/// A secret place some bind would show, masked: an empty read-only directory
/// or an empty file in its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    /// The secret place, canonical when it could be resolved.
    pub path: PathBuf,
    /// Whether it is a directory (masked by an empty read-only directory)
    /// rather than a file (masked by an empty file).
    pub directory: bool,
}

/// Everything a bwrap sandbox shows from outside the root, in mount order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The real home, canonical, hidden under an empty scratch one (`None`
    /// when there is none worth hiding: no `HOME`, or `/`).
    pub home: Option<PathBuf>,
    /// Toolchain and tool binds, then `ro_paths`; each read-only.
    pub before_root: Vec<Bind>,
    /// `rw_paths`, bound after the root.
    pub after_root: Vec<Bind>,
    /// Secret places masked after every bind.
    pub masks: Vec<Mask>,
    /// `ro_paths`/`rw_paths` inside a mask, bound again over it: widened on purpose.
    pub widened: Vec<Bind>,
}

impl Plan {
    /// Every bind from outside the root, in mount order (the root itself is not one).
    pub fn binds(&self) -> impl Iterator<Item = &Bind> {
        self.before_root.iter().chain(&self.after_root).chain(&self.widened)
    }
}

/// The input of a plan: what the enclosure and the command say.
pub(crate) struct Inputs<'a> {
    pub home: Option<PathBuf>,
    /// Canonical.
    pub root: &'a Path,
    /// The program as given, and the `PATH` the command runs with.
    pub program: &'a Path,
    pub path_var: Option<std::ffi::OsString>,
    /// Canonical.
    pub ro_paths: Vec<PathBuf>,
    /// Canonical.
    pub rw_paths: Vec<PathBuf>,
}

pub(crate) fn plan(inputs: &Inputs<'_>) -> Plan {
    let mut plan = Plan { home: inputs.home.clone(), ..Plan::default() };
    let ro = |path: PathBuf, reason| Bind { path, writable: false, reason };
    if let Some(home) = &inputs.home {
        for keep in HOME_KEEP {
            if let Ok(path) = home.join(keep).canonicalize() {
                plan.before_root.push(ro(path, Reason::Toolchain));
            }
        }
    }
    let tools = ToolDirs::new(inputs, &plan.before_root);
    for path in tools.collect() {
        plan.before_root.push(ro(path, Reason::Tool));
    }
    plan.before_root.extend(inputs.ro_paths.iter().cloned().map(|path| ro(path, Reason::ReadOnlyPath)));
    plan.after_root.extend(inputs.rw_paths.iter().cloned().map(|path| Bind {
        path,
        writable: true,
        reason: Reason::WritablePath,
    }));

    let named: Vec<&PathBuf> = inputs.ro_paths.iter().chain(&inputs.rw_paths).collect();
    let visible = |path: &Path| {
        let bound = plan.binds().any(|bind| path.starts_with(&bind.path)) || path.starts_with(inputs.root);
        bound || !(hidden_area(path, inputs.home.as_deref()))
    };
    let mut masks: Vec<Mask> = Vec::new();
    for place in secret_places(inputs, &plan) {
        let Ok(meta) = std::fs::metadata(&place) else { continue };
        let place = place.canonicalize().unwrap_or(place);
        if named.iter().any(|name| **name == place)
            || !visible(&place)
            || masks.iter().any(|m| place.starts_with(&m.path))
        {
            continue;
        }
        masks.retain(|mask| !mask.path.starts_with(&place));
        masks.push(Mask { path: place, directory: meta.is_dir() });
    }
    plan.widened = plan
        .binds()
        .filter(|bind| matches!(bind.reason, Reason::ReadOnlyPath | Reason::WritablePath))
        .filter(|bind| masks.iter().any(|mask| bind.path.starts_with(&mask.path) && bind.path != mask.path))
        .cloned()
        .collect();
    plan.masks = masks;
    plan
}

/// Under `/tmp` or the hidden home (the places the sandbox replaces).
fn hidden_area(path: &Path, home: Option<&Path>) -> bool {
    path.starts_with("/tmp") || home.is_some_and(|home| path.starts_with(home))
}

/// The secret places that exist: [`SECRETS`] under the home, `.env` files
/// above the root and at the top of every directory bound from outside.
fn secret_places(inputs: &Inputs<'_>, plan: &Plan) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if let Some(home) = &inputs.home {
        for secret in SECRETS {
            match secret.strip_suffix('*') {
                None => places.push(home.join(secret)),
                Some(stem) => {
                    let stem = home.join(stem);
                    let (Some(dir), Some(start)) = (stem.parent(), stem.file_name()) else { continue };
                    let Ok(entries) = std::fs::read_dir(dir) else { continue };
                    let start = start.to_string_lossy().into_owned();
                    for entry in entries.flatten() {
                        if entry.file_name().to_string_lossy().starts_with(&start) {
                            places.push(entry.path());
                        }
                    }
                }
            }
        }
    }
    let above_root = inputs.root.ancestors().skip(1);
    let bound_dirs = plan.binds().map(|bind| bind.path.as_path()).filter(|path| path.is_dir());
    for dir in above_root.chain(bound_dirs) {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if (name == ".env" || name.starts_with(".env.")) && !entry.path().starts_with(inputs.root) {
                places.push(entry.path());
            }
        }
    }
    places
}

/// The directories, under the private `/tmp` or the hidden home, that hold
/// the program itself and the `PATH` it is given, and what they need.
struct ToolDirs<'a> {
    inputs: &'a Inputs<'a>,
    /// Already visible: toolchain binds.
    kept: Vec<PathBuf>,
    binds: Vec<PathBuf>,
    /// Directories looked at already.
    seen: Vec<PathBuf>,
}

impl<'a> ToolDirs<'a> {
    fn new(inputs: &'a Inputs<'a>, kept: &[Bind]) -> ToolDirs<'a> {
        ToolDirs {
            inputs,
            kept: kept.iter().map(|bind| bind.path.clone()).collect(),
            binds: Vec::new(),
            seen: Vec::new(),
        }
    }

    fn collect(mut self) -> Vec<PathBuf> {
        let program = self.inputs.program;
        if program.is_absolute() {
            // The program as named (a venv's `python` link) and where it leads.
            if let Some(dir) = program.parent() {
                self.directory(dir, 2);
            }
            if let Some(dir) = program.canonicalize().ok().as_deref().and_then(Path::parent) {
                self.directory(dir, 2);
            }
        }
        if let Some(path_var) = self.inputs.path_var.clone() {
            for dir in std::env::split_paths(&path_var).filter(|dir| dir.is_absolute()) {
                self.directory(&dir, 1);
            }
        }
        self.binds
    }

    /// Binds `dir` and its companions when it is hidden; then, `links` levels
    /// deep, the directories its entries' links lead to (also from a
    /// directory already visible, such as `~/.local/bin`).
    fn directory(&mut self, dir: &Path, links: u32) {
        let Ok(dir) = dir.canonicalize() else { return };
        if !hidden_area(&dir, self.inputs.home.as_deref()) || self.seen.contains(&dir) {
            return;
        }
        self.seen.push(dir.clone());
        self.add(&dir);
        let name = dir.file_name().map(|name| name.to_string_lossy().into_owned());
        let parent = dir.parent().filter(|parent| !self.is_area(parent)).map(Path::to_path_buf);
        if let (Some(name), Some(parent)) = (name.as_deref(), parent) {
            if name == "bin" {
                for companion in BIN_COMPANIONS {
                    if let Ok(path) = parent.join(companion).canonicalize() {
                        self.add(&path);
                    }
                }
            } else if name == ".bin" && parent.file_name().is_some_and(|p| p == "node_modules") {
                self.add(&parent);
            }
        }
        if links == 0 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { return };
        for entry in entries.flatten().take(LINKS_LOOKED_AT) {
            if !entry.file_type().is_ok_and(|kind| kind.is_symlink()) {
                continue;
            }
            let target = entry.path().canonicalize().ok();
            if let Some(target_dir) = target.as_deref().and_then(Path::parent) {
                self.directory(target_dir, links - 1);
            }
        }
    }

    /// `/tmp` or the home themselves, never bound whole.
    fn is_area(&self, path: &Path) -> bool {
        path == Path::new("/tmp") || self.inputs.home.as_deref().is_some_and(|home| path == home)
    }

    /// Adds `path` when it is hidden and not yet visible.
    fn add(&mut self, path: &Path) {
        let visible = path.starts_with(self.inputs.root)
            || self.kept.iter().chain(&self.binds).any(|bound| path.starts_with(bound));
        if self.is_area(path) || visible || !hidden_area(path, self.inputs.home.as_deref()) {
            return;
        }
        self.binds.retain(|bound| !bound.starts_with(path));
        self.binds.push(path.to_path_buf());
    }
}
