//! Real container engines for tests (feature `test-engine`): a container of
//! [`TEST_IMAGE`] started with podman under runc or runsc (gVisor), with a
//! run's root mounted at the same path, reached as the `command` enclosure
//! `podman exec -i NAME`. agent-tools itself never starts a container; tests
//! do, to run the enclosure through the engines users have.
//!
//! `cargo xtask setup` installs podman, runc and runsc (Debian) and builds the
//! image from Debian packages with mmdebstrap: python3 with debugpy, node and
//! tsc; python3 and node first on its `PATH` through `/opt/enclosed/bin`, a
//! directory the host lacks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::Enclosure;

/// The image setup builds (its name in `xtask/src/setup.rs` too).
pub const TEST_IMAGE: &str = "localhost/agent-tools-test:2";

/// Where the image's own interpreters are: on its `PATH`, not on the host's.
pub const INSIDE_BIN: &str = "/opt/enclosed/bin";

/// The OCI runtime a container runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// runc: Linux namespaces and cgroups.
    Runc,
    /// runsc: gVisor, a kernel of its own in user space between the container and the host.
    Runsc,
}

impl Runtime {
    /// Both runtimes, runc first, for tests that run under each.
    pub const ALL: [Runtime; 2] = [Runtime::Runc, Runtime::Runsc];

    /// The runtime's program name, `runc` or `runsc`, as podman's `--runtime` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Runc => "runc",
            Runtime::Runsc => "runsc",
        }
    }

    /// podman's flags before `run` for this runtime. The containers have no network; under
    /// runsc that is gVisor's own `network=none`, a netstack with only its loopback (runsc 2022,
    /// Debian 12's, takes any network namespace for the host's on newer kernels and refuses its
    /// default mode).
    fn global_flags(self) -> &'static [&'static str] {
        match self {
            Runtime::Runc => &["--runtime=runc"],
            Runtime::Runsc => &["--runtime=runsc", "--runtime-flag=network=none"],
        }
    }

    /// `podman run`'s flags: runc cannot raise the open-file and process limits past the
    /// ones given here, so they are set explicitly.
    fn run_flags(self) -> &'static [&'static str] {
        match self {
            Runtime::Runc => &["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"],
            Runtime::Runsc => &[],
        }
    }
}

/// Why the engine cannot run a container here, or `Ok`: podman, the runtime and the image.
pub fn available(runtime: Runtime) -> Result<(), String> {
    let runs = |program: &str, args: &[&str]| {
        Command::new(program).args(args).stdin(Stdio::null()).output().is_ok_and(|out| out.status.success())
    };
    if !runs("podman", &["--version"]) {
        return Err("podman is not installed (cargo xtask setup installs it)".into());
    }
    if !runs(runtime.name(), &["--version"]) {
        return Err(format!("{} is not installed (cargo xtask setup installs it)", runtime.name()));
    }
    if !runs("podman", &["image", "exists", TEST_IMAGE]) {
        return Err(format!("the image {TEST_IMAGE} is missing (cargo xtask setup builds it)"));
    }
    Ok(())
}

/// A running container of [`TEST_IMAGE`], removed on drop.
#[derive(Debug)]
pub struct Container {
    /// podman's name for the container, `agent-tools-test-RUNTIME-PID-N`, unique in
    /// this process; the prefix reaches it by this name.
    pub name: String,
    /// The OCI runtime it runs under.
    pub runtime: Runtime,
    /// The run's root, canonical, mounted read-write at the same path inside.
    pub root: PathBuf,
}

impl Container {
    /// A test's container: started when the engine is here, else `None` with the reason printed
    /// (the test then skips); under `CI=true` a missing engine fails the test instead.
    ///
    /// # Panics
    /// Under `CI=true` when the engine is missing, and whenever the container does not start.
    #[allow(clippy::print_stderr)]
    pub fn for_test(runtime: Runtime, root: &Path) -> Option<Container> {
        if let Err(why) = available(runtime) {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
            eprintln!("SKIPPED: {why}");
            return None;
        }
        Some(Container::start(runtime, root).unwrap_or_else(|why| panic!("{why}")))
    }

    /// Starts a container under `runtime` with `root` mounted read-write at the same path
    /// (as a devcontainer mounts its checkout), with no network.
    ///
    /// # Errors
    /// What podman said when the container did not start.
    pub fn start(runtime: Runtime, root: &Path) -> Result<Container, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let serial = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("agent-tools-test-{}-{}-{serial}", runtime.name(), std::process::id());
        let root = root.canonicalize().map_err(|error| format!("{}: {error}", root.display()))?;
        let container = Container { name, runtime, root };
        container.run()?;
        Ok(container)
    }

    /// A new container in place of this one (after `podman kill`), with the same name, so the
    /// same prefix reaches it.
    ///
    /// # Errors
    /// What podman said when the container did not start.
    pub fn start_again(&self) -> Result<(), String> {
        let _ = podman(&["rm", "-f", "-t", "0", &self.name]).output();
        self.run()
    }

    fn run(&self) -> Result<(), String> {
        let volume = format!("{0}:{0}", self.root.display());
        let mut command = Command::new("podman");
        command.args(self.runtime.global_flags()).args(["run", "-d", "--rm", "--name", &self.name, "--network=none"]);
        command.args(self.runtime.run_flags()).args(["-v", &volume, TEST_IMAGE, "sleep", "infinity"]);
        let out = command.stdin(Stdio::null()).output().map_err(|error| format!("cannot run podman: {error}"))?;
        if !out.status.success() {
            return Err(format!("podman run failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
        }
        Ok(())
    }

    /// `podman exec -i NAME`: the `command` enclosure's prefix.
    pub fn prefix(&self) -> Vec<String> {
        ["podman", "exec", "-i", &self.name].map(str::to_owned).to_vec()
    }

    /// The `command` enclosure through [`Container::prefix`], at the root.
    pub fn enclosure(&self) -> Enclosure {
        Enclosure::command(&self.root, self.prefix())
    }

    /// Runs `args` in the container and returns what it printed.
    pub fn exec(&self, args: &[&str]) -> Output {
        podman(&["exec", &self.name]).args(args).output().unwrap_or_else(|error| panic!("podman exec: {error}"))
    }

    /// The command lines of the processes running in the container, but `sleep infinity`, `ps` and
    /// what runs it.
    pub fn processes(&self) -> Vec<String> {
        let out = self.exec(&["ps", "-eo", "args="]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && *line != "sleep infinity" && !line.starts_with("ps -eo"))
            .map(str::to_owned)
            .collect()
    }

    /// `podman kill`: every process of the container ends, and the container with them.
    pub fn kill(&self) -> Output {
        podman(&["kill", &self.name]).output().unwrap_or_else(|error| panic!("podman kill: {error}"))
    }

    /// `podman pause` (`unpause`): every process of the container stops (resumes).
    pub fn pause(&self, paused: bool) -> Output {
        let verb = if paused { "pause" } else { "unpause" };
        podman(&[verb, &self.name]).output().unwrap_or_else(|error| panic!("podman {verb}: {error}"))
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman(&["unpause", &self.name]).output();
        let _ = podman(&["rm", "-f", "-t", "0", &self.name]).output();
    }
}

/// `podman ARGS` with no stdin.
pub fn podman(args: &[&str]) -> Command {
    let mut command = Command::new("podman");
    command.args(args).stdin(Stdio::null());
    command
}
