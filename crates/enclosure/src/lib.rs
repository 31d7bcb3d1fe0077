//! Where the project's code runs: the one enclosure seam every subsystem that
//! starts a process of the project's code goes through (kernels, debug
//! adapters and debuggees, background workers, project checkers, language
//! servers).
//!
//! An [`Enclosure`] turns a [`std::process::Command`] into the command that
//! runs it enclosed ([`Enclosure::enclose`]):
//! - [`Mode::Host`]: unchanged, on the host with the user's rights;
//! - [`Mode::Bwrap`]: in a bubblewrap sandbox made here: the host's
//!   filesystem read-only, the run's root writable (read-only when the
//!   surface's cap is `read`), a private `/tmp`, the real home hidden under a
//!   scratch one (only toolchain directories such as `~/.pyenv`, `~/.rustup`,
//!   `~/.cargo/bin` and the tools the command runs bound back, read-only, and
//!   the well-known secret places masked inside whatever is bound: [`Plan`]),
//!   no network unless asked, a PID
//!   namespace of its own, no capabilities, `--die-with-parent`, and an
//!   environment cleared down to an allow-list;
//! - [`Mode::Command`]: through a prefix the host gives (`docker exec -i C`,
//!   `kubectl exec -i POD --`), the working directory and the command's own
//!   variables passed as `env -C DIR K=V …` after the prefix, since such
//!   prefixes forward neither.
//!
//! It fails closed: when bubblewrap is missing or does not work here (probed
//! once per binary by running `true` in the same sandbox), [`Enclosure::enclose`]
//! is [`Error::Unavailable`] and nothing runs unenclosed. The caller adds its
//! own plumbing (stdio, process group, extra file descriptors) to the command
//! returned; inherited file descriptors pass through bubblewrap unchanged, so
//! a kernel's frame pipes on fds 3 and 4 keep working without a socket.
//!
//! It never boots a container or a pod: `command` only runs commands in one
//! that exists. It knows nothing of tools, tiers or which subsystem calls it.
#![warn(missing_docs)]

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

pub mod capture;
#[cfg(feature = "test-engine")]
pub mod engine;
mod inside;
mod plan;

pub use inside::LOOKUP_TIMEOUT;
pub use plan::{BIN_COMPANIONS, Bind, HOME_KEEP, Mask, Plan, Reason, SECRETS};

/// Why a command could not be enclosed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The enclosure cannot run here; nothing was started.
    #[error("the {mode} enclosure is not available here, so nothing was run: {reason}")]
    Unavailable {
        /// The mode's configuration name, as [`Mode::name`] gives it (`bwrap`).
        mode: &'static str,
        /// Why, from the probe: the binary is not installed, or it ran and
        /// failed, with its exit status and stderr.
        reason: String,
    },
    /// A path the enclosure binds does not exist.
    #[error("the enclosure's {what} `{}` does not exist", path.display())]
    MissingPath {
        /// Which path it is: `root`, `read-only path` or `writable path`.
        what: &'static str,
        /// The path as [`Enclosure`] holds it, before canonicalizing.
        path: PathBuf,
    },
    /// `command` mode without a prefix.
    #[error("the command enclosure needs a prefix (for example `docker exec -i CONTAINER`)")]
    EmptyPrefix,
    /// A lookup through the prefix ([`Enclosure::locate`]) did not run or did not finish.
    #[error("could not look for {looked_for} through `{prefix}`: {why}")]
    Lookup {
        /// What was looked for: the candidate programs joined by `, `, or
        /// `the processes of VARIABLE=VALUE` for [`Enclosure::end_inside`].
        looked_for: String,
        /// The prefix, its words joined by spaces.
        prefix: String,
        /// Why: the prefix could not be run, failed, did not answer in time, or
        /// printed something unreadable.
        why: String,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How the project's code is enclosed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mode {
    /// On the host, as the user (`none` in the configuration).
    #[default]
    Host,
    /// In a bubblewrap sandbox made by [`Enclosure::enclose`].
    Bwrap,
    /// Through the host's own enclosure: this argv is put before every
    /// command (`["docker", "exec", "-i", "CONTAINER"]`).
    Command {
        /// The argv put before every command, program first; it must not be
        /// empty ([`Error::EmptyPrefix`]).
        prefix: Vec<String>,
    },
}

impl Mode {
    /// The configuration's name: `none`, `bwrap` or `command`.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Host => "none",
            Mode::Bwrap => "bwrap",
            Mode::Command { .. } => "command",
        }
    }
}

/// Variables a bwrap sandbox keeps from the host's environment; every other
/// one is cleared. `HOME` is set to the scratch home.
pub const ENV_ALLOW: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "USER",
    "LOGNAME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOROOT",
    "GOPATH",
    "GOTOOLCHAIN",
    "JAVA_HOME",
];

/// One run's enclosure: the mode and what the sandbox lets through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enclosure {
    /// How commands are enclosed: on the host, in bwrap, or through a prefix.
    pub mode: Mode,
    /// The run's root: bound writable (read-only unless `root_writable`).
    pub root: PathBuf,
    /// Whether the root is writable inside (false when the surface's cap is `read`).
    pub root_writable: bool,
    /// Whether the sandbox keeps the host's network (bwrap only; default no).
    pub network: bool,
    /// Extra paths bound read-only (bwrap), e.g. a cache a server reads.
    pub ro_paths: Vec<PathBuf>,
    /// Extra paths bound writable (bwrap), e.g. a server's cache directory.
    pub rw_paths: Vec<PathBuf>,
    /// Extra variables set inside (every mode but `Host`, where the host's
    /// environment is inherited as is).
    pub env: Vec<(String, String)>,
    /// The home hidden under the scratch one (bwrap); `$HOME` by default.
    pub home: Option<PathBuf>,
    /// The bubblewrap binary (a name on `PATH`, or a path); `bwrap` by default.
    pub bwrap: PathBuf,
}

impl Enclosure {
    /// No enclosure: commands run on the host unchanged.
    pub fn host(root: impl Into<PathBuf>) -> Enclosure {
        Enclosure::with_mode(Mode::Host, root)
    }

    /// A bubblewrap sandbox around `root`, with the defaults: root writable,
    /// no network, no extra paths, `$HOME` hidden.
    pub fn bwrap(root: impl Into<PathBuf>) -> Enclosure {
        Enclosure::with_mode(Mode::Bwrap, root)
    }

    /// Commands run through `prefix`.
    pub fn command(root: impl Into<PathBuf>, prefix: Vec<String>) -> Enclosure {
        Enclosure::with_mode(Mode::Command { prefix }, root)
    }

    /// An enclosure of this mode with the defaults.
    pub fn with_mode(mode: Mode, root: impl Into<PathBuf>) -> Enclosure {
        Enclosure {
            mode,
            root: root.into(),
            root_writable: true,
            network: false,
            ro_paths: Vec::new(),
            rw_paths: Vec::new(),
            env: Vec::new(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            bwrap: PathBuf::from("bwrap"),
        }
    }

    /// Whether commands run on the host unenclosed.
    pub fn is_host(&self) -> bool {
        self.mode == Mode::Host
    }

    /// Whether the programs a command runs are looked up inside ([`Enclosure::locate`]) rather
    /// than on the host: a prefix's container has a filesystem and a `PATH` of its own, while
    /// bwrap shows the host's.
    pub fn looks_inside(&self) -> bool {
        matches!(self.mode, Mode::Command { .. })
    }

    /// What is in force, for status lines and results: `host`,
    /// `bwrap (no network, root writable)`, `command prefix \`docker exec -i app\``.
    pub fn describe(&self) -> String {
        match &self.mode {
            Mode::Host => "host".to_owned(),
            Mode::Bwrap => format!(
                "bwrap ({}, root {})",
                if self.network { "network" } else { "no network" },
                if self.root_writable { "writable" } else { "read-only" }
            ),
            Mode::Command { prefix } => format!("command prefix `{}`", prefix.join(" ")),
        }
    }

    /// Whether the enclosure can run here: `Ok` for the host and a prefix
    /// (its own failures show when a command runs), the probe's verdict for
    /// bwrap (run once per binary and cached).
    pub fn check(&self) -> Result<()> {
        match &self.mode {
            Mode::Host => Ok(()),
            Mode::Command { prefix } if prefix.is_empty() => Err(Error::EmptyPrefix),
            Mode::Command { .. } => Ok(()),
            Mode::Bwrap => probe_bwrap(&self.bwrap).map_err(|reason| Error::Unavailable { mode: "bwrap", reason }),
        }
    }

    /// The command that runs `command` inside this enclosure: its program,
    /// arguments, working directory and explicitly set variables are carried
    /// over; stdio, process group and file descriptors are the caller's to add
    /// to the result.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when bwrap cannot run here, [`Error::MissingPath`]
    /// for a root or extra path that does not exist, [`Error::EmptyPrefix`].
    pub fn enclose(&self, command: &Command) -> Result<Command> {
        let parts = Parts::of(command);
        match &self.mode {
            Mode::Host => Ok(parts.host_command()),
            Mode::Bwrap => {
                self.check()?;
                let argv = self.bwrap_argv(&parts)?;
                Ok(command_of(&argv))
            }
            Mode::Command { prefix } => {
                if prefix.is_empty() {
                    return Err(Error::EmptyPrefix);
                }
                Ok(command_of(&self.prefixed_argv(prefix, &parts)))
            }
        }
    }

    /// What a bwrap sandbox around `command` shows from outside the root:
    /// the toolchain, tool and configured binds, and the secret places masked
    /// inside them (see [`Plan`]). `status` lists it; [`Enclosure::enclose`]
    /// mounts exactly it.
    ///
    /// # Errors
    /// [`Error::MissingPath`] for a root or extra path that does not exist.
    pub fn plan(&self, command: &Command) -> Result<Plan> {
        self.plan_of(&Parts::of(command))
    }

    fn plan_of(&self, parts: &Parts) -> Result<Plan> {
        let root = existing(&self.root, "root")?;
        let ro_paths = self.ro_paths.iter().map(|path| existing(path, "read-only path")).collect::<Result<_>>()?;
        let rw_paths = self.rw_paths.iter().map(|path| existing(path, "writable path")).collect::<Result<_>>()?;
        let path_var = parts
            .env
            .iter()
            .find(|(key, _)| key == "PATH")
            .and_then(|(_, value)| value.clone())
            .or_else(|| std::env::var_os("PATH"));
        Ok(plan::plan(&plan::Inputs {
            home: self.scratch_home(),
            root: &root,
            program: Path::new(&parts.program),
            path_var,
            ro_paths,
            rw_paths,
        }))
    }

    /// The bwrap argv (from `env --ignore-signal=INT`) for `parts`.
    fn bwrap_argv(&self, parts: &Parts) -> Result<Vec<OsString>> {
        let root = existing(&self.root, "root")?;
        let plan = self.plan_of(parts)?;
        // bwrap stays the sandbox's pid 1, whose /proc/1/environ every process inside can read:
        // it starts with an empty environment, and gets its program by path.
        let mut argv: Vec<OsString> = vec!["env".into(), "-i".into()];
        argv.extend(ignore_interrupt(vec![on_path(&self.bwrap).into_os_string()]).into_iter().skip(1));
        let mut add = |items: &[&OsStr]| argv.extend(items.iter().map(|item| item.to_os_string()));
        let bind = |add: &mut dyn FnMut(&[&OsStr]), bind: &Bind| {
            let flag = if bind.writable { "--bind" } else { "--ro-bind" };
            add(&[flag.as_ref(), bind.path.as_os_str(), bind.path.as_os_str()]);
        };
        add(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
        add(&["--dev".as_ref(), "/dev".as_ref(), "--proc".as_ref(), "/proc".as_ref()]);
        add(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        match &plan.home {
            Some(home) => add(&["--tmpfs".as_ref(), home.as_os_str()]),
            None => add(&["--dir".as_ref(), "/tmp/home".as_ref()]),
        }
        for entry in &plan.before_root {
            bind(&mut add, entry);
        }
        let root_flag = if self.root_writable { "--bind" } else { "--ro-bind" };
        add(&[root_flag.as_ref(), root.as_os_str(), root.as_os_str()]);
        for entry in &plan.after_root {
            bind(&mut add, entry);
        }
        // A masked directory stays writable until what is widened inside it is mounted.
        for mask in &plan.masks {
            if mask.directory {
                add(&["--tmpfs".as_ref(), mask.path.as_os_str()]);
            } else {
                add(&["--ro-bind".as_ref(), "/dev/null".as_ref(), mask.path.as_os_str()]);
            }
        }
        for entry in &plan.widened {
            bind(&mut add, entry);
        }
        for mask in plan.masks.iter().filter(|mask| mask.directory) {
            add(&["--remount-ro".as_ref(), mask.path.as_os_str()]);
        }
        add(&["--unshare-pid".as_ref(), "--unshare-ipc".as_ref(), "--unshare-uts".as_ref()]);
        if !self.network {
            add(&["--unshare-net".as_ref()]);
        }
        add(&["--die-with-parent".as_ref(), "--cap-drop".as_ref(), "ALL".as_ref()]);
        add(&["--clearenv".as_ref()]);
        for name in ENV_ALLOW {
            if let Some(value) = std::env::var_os(name) {
                add(&["--setenv".as_ref(), name.as_ref(), value.as_os_str()]);
            }
        }
        let home_value = plan.home.map_or_else(|| OsString::from("/tmp/home"), PathBuf::into_os_string);
        add(&["--setenv".as_ref(), "HOME".as_ref(), home_value.as_os_str()]);
        for (key, value) in &self.env {
            add(&["--setenv".as_ref(), key.as_ref(), value.as_ref()]);
        }
        for (key, value) in &parts.env {
            match value {
                Some(value) => add(&["--setenv".as_ref(), key.as_os_str(), value.as_os_str()]),
                None => add(&["--unsetenv".as_ref(), key.as_os_str()]),
            }
        }
        let cwd = parts.cwd.clone().unwrap_or_else(|| root.clone());
        add(&["--chdir".as_ref(), cwd.as_os_str(), "--".as_ref()]);
        // `a/../b/bin/python` needs `a` inside; the bound directory is the resolved one. The
        // file name stays as given (a venv's `python` is a link whose target is not the venv).
        let program = Path::new(&parts.program);
        let program = match (program.is_absolute(), program.parent(), program.file_name()) {
            (true, Some(dir), Some(name)) => {
                dir.canonicalize().map_or_else(|_| program.to_path_buf(), |dir| dir.join(name))
            }
            _ => program.to_path_buf(),
        };
        add(&["env".as_ref(), "--default-signal=INT".as_ref(), program.as_os_str()]);
        argv.extend(parts.args.iter().cloned());
        Ok(argv)
    }

    /// `env --ignore-signal=INT PREFIX… env --default-signal=INT -C DIR K=V… PROGRAM ARGS…`.
    fn prefixed_argv(&self, prefix: &[String], parts: &Parts) -> Vec<OsString> {
        let mut argv = ignore_interrupt(prefix.iter().map(OsString::from).collect());
        argv.extend(["env", "--default-signal=INT"].map(OsString::from));
        let cwd = parts.cwd.clone().unwrap_or_else(|| self.root.clone());
        argv.push("-C".into());
        argv.push(cwd.into_os_string());
        for (key, value) in &self.env {
            argv.push(format!("{key}={value}").into());
        }
        for (key, value) in &parts.env {
            match value {
                Some(value) => {
                    let mut pair = key.clone();
                    pair.push("=");
                    pair.push(value);
                    argv.push(pair);
                }
                None => {
                    argv.push("-u".into());
                    argv.push(key.clone());
                }
            }
        }
        argv.push(parts.program.clone());
        argv.extend(parts.args.iter().cloned());
        argv
    }

    /// The real home to hide, when there is one worth hiding (not `/`).
    fn scratch_home(&self) -> Option<PathBuf> {
        let home = self.home.as_ref()?;
        let home = home.canonicalize().ok()?;
        (home != Path::new("/") && home.is_dir()).then_some(home)
    }
}

impl fmt::Display for Enclosure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What a command carries over into the enclosure.
struct Parts {
    program: OsString,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, Option<OsString>)>,
}

impl Parts {
    fn of(command: &Command) -> Parts {
        Parts {
            program: command.get_program().to_os_string(),
            args: command.get_args().map(OsStr::to_os_string).collect(),
            cwd: command.get_current_dir().map(Path::to_path_buf),
            env: command.get_envs().map(|(k, v)| (k.to_os_string(), v.map(OsStr::to_os_string))).collect(),
        }
    }

    fn host_command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(cwd) = &self.cwd {
            command.current_dir(cwd);
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
    }
}

/// Prefixes `argv` with `env --ignore-signal=INT`: an interrupt sent to the
/// process group (a kernel's cell interrupted) must reach the program inside,
/// which gets SIGINT back by `env --default-signal=INT`, and not end the
/// wrapper (bwrap, a prefix's client) on the way, which would take the
/// program down with it.
fn ignore_interrupt(argv: Vec<OsString>) -> Vec<OsString> {
    let mut full: Vec<OsString> = vec!["env".into(), "--ignore-signal=INT".into()];
    full.extend(argv);
    full
}

/// Where `program` is: itself when it names a path, else the first match on `PATH`
/// (itself when there is none, for the error to name).
fn on_path(program: &Path) -> PathBuf {
    if program.components().count() > 1 {
        return program.to_path_buf();
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| program.to_path_buf())
}

fn command_of(argv: &[OsString]) -> Command {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    command
}

fn existing(path: &Path, what: &'static str) -> Result<PathBuf> {
    path.canonicalize().map_err(|_| Error::MissingPath { what, path: path.to_path_buf() })
}

/// Runs `true` once per bwrap binary in a sandbox like the ones made here;
/// the verdict is kept for the process's life.
fn probe_bwrap(bwrap: &Path) -> Result<(), String> {
    static PROBES: OnceLock<Mutex<HashMap<PathBuf, Result<(), String>>>> = OnceLock::new();
    let probes = PROBES.get_or_init(Mutex::default);
    let mut probes = probes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    probes.entry(bwrap.to_path_buf()).or_insert_with(|| run_probe(bwrap)).clone()
}

fn run_probe(bwrap: &Path) -> Result<(), String> {
    let output = Command::new("env")
        .arg("--ignore-signal=INT")
        .arg(bwrap)
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"])
        .args(["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent"])
        .args(["--cap-drop", "ALL", "--clearenv", "--", "env", "--default-signal=INT", "true"])
        .stdin(Stdio::null())
        .output();
    match output {
        Err(error) => Err(format!("cannot run `env --ignore-signal=INT {}`: {error}", bwrap.display())),
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let stderr = stderr.trim();
            if stderr.contains("No such file") && stderr.contains(&*bwrap.to_string_lossy())
                || output.status.code() == Some(127)
            {
                Err(format!("`{}` is not installed (Debian: apt-get install bubblewrap): {stderr}", bwrap.display()))
            } else {
                Err(format!("`{}` does not work here ({}): {stderr}", bwrap.display(), output.status))
            }
        }
    }
}
