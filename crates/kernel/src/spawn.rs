//! How a kernel process is started: a spawner the host provides.
//!
//! The spawner only decides *where* the interpreter runs (on the host, or in
//! an enclosure the host already runs, by wrapping the command). The kernel
//! then adds its own plumbing to the returned command: empty stdin, captured
//! stdout and stderr, the frame pipes as fds 3 and 4, and a process group of
//! its own. A spawner never boots an enclosure.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Command;

use enclosure::Enclosure;

use crate::Result;

/// The program a kernel needs run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The interpreter.
    pub program: PathBuf,
    /// Its arguments (a short bootstrap; the driver arrives over fd 3).
    pub args: Vec<OsString>,
    /// Working directory: the project root.
    pub cwd: PathBuf,
    /// Variables to set on top of the inherited environment.
    pub env: Vec<(OsString, OsString)>,
}

/// Builds the command that runs a kernel.
///
/// The returned command must pass file descriptors 3 and 4 through to the
/// interpreter unchanged (a wrapper such as `nsenter` or `bwrap` does).
pub trait Spawner: Send + Sync + fmt::Debug {
    /// The command that runs `launch`'s program with its arguments, working
    /// directory and variables, wrapped as this spawner runs things. An error
    /// (such as [`Error::Enclosure`](crate::Error::Enclosure)) means nothing was started.
    fn command(&self, launch: &Launch) -> Result<Command>;

    /// Whether the frames must travel on the process's stdin and stdout,
    /// for a wrapper that forwards nothing else (`docker exec -i`,
    /// `kubectl exec -i`). Then the kernel runs `sh -c` to move them to fds
    /// 3 and 4, with fd 1 joined to fd 2 (the Python driver captures both at
    /// the descriptor; in JavaScript a child process's stdout shows as
    /// stderr), and an interrupt also goes as a frame.
    fn frames_over_stdio(&self) -> bool {
        false
    }

    /// A short description for status output, e.g. `host`.
    fn describe(&self) -> String {
        "host".to_owned()
    }

    /// The enclosure to look for the interpreter in, when it is not the host's
    /// filesystem (a prefix's container: [`Enclosure::looks_inside`]); `None`
    /// looks on the host.
    fn inside(&self) -> Option<&Enclosure> {
        None
    }
}

/// Runs kernels directly on the host. The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostSpawner;

impl Spawner for HostSpawner {
    fn command(&self, launch: &Launch) -> Result<Command> {
        let mut command = Command::new(&launch.program);
        command.args(&launch.args).current_dir(&launch.cwd);
        for (key, value) in &launch.env {
            command.env(key, value);
        }
        Ok(command)
    }
}

/// Runs kernels inside an [`Enclosure`]: on the host, in bwrap, or through a
/// host-given prefix. bwrap passes fds 3 and 4 through, so the frame pipes and
/// the `tool()` bridge need no socket. `docker exec` and `kubectl exec`
/// forward only stdio, so through a prefix the frames travel on stdin and
/// stdout ([`Spawner::frames_over_stdio`]).
///
/// An enclosure that is not available here (bwrap missing) fails the start
/// with [`crate::Error::Enclosure`]; the kernel never falls back to the host.
impl Spawner for Enclosure {
    fn command(&self, launch: &Launch) -> Result<Command> {
        let host = HostSpawner.command(launch)?;
        Ok(self.enclose(&host)?)
    }

    fn frames_over_stdio(&self) -> bool {
        matches!(self.mode, enclosure::Mode::Command { .. })
    }

    fn describe(&self) -> String {
        Enclosure::describe(self)
    }

    fn inside(&self) -> Option<&Enclosure> {
        self.looks_inside().then_some(self)
    }
}
