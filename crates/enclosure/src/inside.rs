//! What is done inside a prefix's container, whose filesystem, `PATH` and
//! processes are its own: finding a program where it will run
//! ([`Enclosure::locate`]), and ending the processes a command left there
//! ([`Enclosure::end_inside`]).

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::{Enclosure, Error, Mode, Parts, Result, command_of};

/// How long a lookup through a prefix may take: a paused or gone container
/// must not hang the call that needs the program.
pub const LOOKUP_TIMEOUT: Duration = Duration::from_secs(15);

/// Prints the first candidate that is an executable file (a path) or a command on the `PATH`
/// (a name), and exits 3 when there is none; any other status is the prefix's own failure.
const LOOKUP: &str = r#"for c do
  case $c in
    */*) if [ -f "$c" ] && [ -x "$c" ]; then printf '%s\n' "$c"; exit 0; fi ;;
    *) p=$(command -v "$c") && case $p in /*) printf '%s\n' "$p"; exit 0 ;; esac ;;
  esac
done
exit 3"#;

/// The status [`LOOKUP`] ends with when no candidate is there.
const NONE_THERE: i32 = 3;

/// Kills every other process whose environment holds `$1` (a `NAME=VALUE`), then prints how
/// many still do after 200 ms (a zombie's environment reads empty).
const END: &str = r#"carriers() {
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = "$$" ] && continue
    if tr '\0' '\n' < "$d/environ" 2>/dev/null | grep -qxF -- "$1"; then echo "${d#/proc/}"; fi
  done
}
for p in $(carriers "$1"); do kill -KILL "$p" 2>/dev/null; done
sleep 0.2
carriers "$1" | wc -l"#;

type Key = (Vec<String>, PathBuf, Vec<String>);

impl Enclosure {
    /// The first of `candidates` that is there to run, where the enclosure runs it: a candidate
    /// with a `/` is a path (a relative one from the root), any other a name looked up on the
    /// `PATH`. Through a prefix ([`Enclosure::looks_inside`]) the lookup runs inside, with `sh`,
    /// once per process for what it finds; otherwise on the host, with this process's `PATH`.
    /// `Ok(None)` when no candidate is there.
    ///
    /// # Errors
    /// [`Error::Lookup`] when the prefix fails (the container is gone, its engine refuses) or
    /// does not answer within [`LOOKUP_TIMEOUT`]; [`Error::EmptyPrefix`].
    pub fn locate(&self, candidates: &[&str]) -> Result<Option<PathBuf>> {
        let Mode::Command { prefix } = &self.mode else {
            return Ok(candidates.iter().find_map(|candidate| on_host(candidate, &self.root)));
        };
        if prefix.is_empty() {
            return Err(Error::EmptyPrefix);
        }
        static FOUND: OnceLock<Mutex<HashMap<Key, PathBuf>>> = OnceLock::new();
        let key: Key =
            (prefix.clone(), self.root.clone(), candidates.iter().map(|candidate| (*candidate).to_owned()).collect());
        let found = FOUND.get_or_init(Mutex::default);
        if let Some(path) = found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
            return Ok(Some(path.clone()));
        }
        let located = self.look_inside(prefix, candidates)?;
        if let Some(path) = &located {
            found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, path.clone());
        }
        Ok(located)
    }

    fn look_inside(&self, prefix: &[String], candidates: &[&str]) -> Result<Option<PathBuf>> {
        let failed = |why: String| Error::Lookup { looked_for: candidates.join(", "), prefix: prefix.join(" "), why };
        let (status, stdout) = self.run_inside(prefix, LOOKUP, candidates).map_err(failed)?;
        match status {
            0 => {
                let found = Path::new(stdout.trim_end_matches('\n'));
                Ok(Some(if found.is_absolute() { found.to_path_buf() } else { self.root.join(found) }))
            }
            _ => Ok(None),
        }
    }

    /// Kills (SIGKILL) every process inside whose environment holds `variable=value`, through
    /// the prefix, and returns how many still carry it after 200 ms. A prefix's client
    /// (`podman exec`, `kubectl exec`) forwards no signal: killing it on the host leaves what it
    /// started running inside, where only a command run inside reaches it. `Ok(0)` without a
    /// prefix, where the host's own process table has them.
    ///
    /// # Errors
    /// [`Error::Lookup`] when the prefix fails or does not answer within [`LOOKUP_TIMEOUT`].
    pub fn end_inside(&self, variable: &str, value: &str) -> Result<usize> {
        let Mode::Command { prefix } = &self.mode else { return Ok(0) };
        if prefix.is_empty() {
            return Err(Error::EmptyPrefix);
        }
        let wanted = format!("{variable}={value}");
        let failed = |why: String| Error::Lookup {
            looked_for: format!("the processes of {wanted}"),
            prefix: prefix.join(" "),
            why,
        };
        let (_, stdout) = self.run_inside(prefix, END, &[&wanted]).map_err(failed)?;
        stdout.trim().parse().map_err(|_| failed(format!("it printed {:?}, not a count", stdout.trim())))
    }

    /// Runs `sh -c SCRIPT sh ARGS…` through the prefix at the root: its exit status (0, or
    /// [`NONE_THERE`]) and what it printed, or why it failed.
    fn run_inside(&self, prefix: &[String], script: &str, args: &[&str]) -> Result<(i32, String), String> {
        let mut inside = Command::new("sh");
        inside.args(["-c", script, "sh"]).args(args).current_dir(&self.root);
        let mut child = command_of(&self.prefixed_argv(prefix, &Parts::of(&inside)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot run `{}`: {error}", prefix[0]))?;
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() < LOOKUP_TIMEOUT => std::thread::sleep(Duration::from_millis(10)),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("no answer within {} s", LOOKUP_TIMEOUT.as_secs()));
                }
                Err(error) => return Err(error.to_string()),
            }
        };
        let mut stdout = String::new();
        let mut stderr = String::new();
        if let Some(mut out) = child.stdout.take() {
            let _ = out.read_to_string(&mut stdout);
        }
        if let Some(mut err) = child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        match status.code() {
            Some(code @ (0 | NONE_THERE)) => Ok((code, stdout)),
            _ => {
                let last = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
                Err(if last.is_empty() { format!("it exited with {status}") } else { format!("{status}: {last}") })
            }
        }
    }
}

/// `candidate` on the host: a path (from `root` when relative) that is an executable file, or a
/// name on this process's `PATH`.
fn on_host(candidate: &str, root: &Path) -> Option<PathBuf> {
    let executable = |path: &Path| {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if candidate.contains('/') {
        let path = root.join(candidate);
        return executable(&path).then_some(path);
    }
    let path_var = std::env::var_os("PATH")?;
    std::env::split_paths(&path_var).map(|dir| dir.join(candidate)).find(|path| executable(path))
}
