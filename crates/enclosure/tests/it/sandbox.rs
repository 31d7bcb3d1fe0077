//! The enclosure against the real bubblewrap: what a process inside can and
//! cannot reach, and that a prefix runs every command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use enclosure::{Enclosure, Error, Mode};

/// Whether bwrap works here; fails under `CI=true` when it does not.
fn bwrap_ready() -> bool {
    match Enclosure::bwrap("/").check() {
        Ok(()) => true,
        Err(error) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{error} (cargo xtask setup installs it)");
            eprintln!("SKIPPED: {error}");
            false
        }
    }
}

/// A canary outside every temporary root: under the target directory, which
/// the sandbox sees read-only (a canary under `/tmp` would only be hidden).
fn canary(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("enclosure-canaries");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "untouched").unwrap();
    path
}

fn sh(enclosure: &Enclosure, cwd: &Path, script: &str) -> Output {
    let mut command = Command::new("sh");
    command.args(["-c", script]).current_dir(cwd);
    enclosure.enclose(&command).unwrap().output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn the_root_is_writable_and_the_rest_is_not() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let canary = canary("outside-root");
    let enclosure = Enclosure::bwrap(root.path());
    let script = format!(
        "echo inside > made.txt && echo ok; echo changed > '{}' 2>/dev/null || echo refused; touch /usr/x 2>/dev/null || echo refused",
        canary.display()
    );
    let output = sh(&enclosure, root.path(), &script);
    assert_eq!(stdout(&output), "ok\nrefused\nrefused", "{output:?}");
    assert_eq!(std::fs::read_to_string(root.path().join("made.txt")).unwrap(), "inside\n");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

#[test]
fn a_read_cap_makes_the_root_read_only() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("kept.txt"), "old").unwrap();
    let enclosure = Enclosure { root_writable: false, ..Enclosure::bwrap(root.path()) };
    assert_eq!(enclosure.describe(), "bwrap (no network, root read-only)");
    let output = sh(&enclosure, root.path(), "cat kept.txt; echo new > kept.txt 2>/dev/null || echo ' refused'");
    assert_eq!(stdout(&output), "old refused");
    assert_eq!(std::fs::read_to_string(root.path().join("kept.txt")).unwrap(), "old");
}

#[test]
fn tmp_is_private_and_the_home_is_a_scratch_one() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "SECRET KEY").unwrap();
    std::fs::create_dir_all(home.path().join(".aws")).unwrap();
    std::fs::write(home.path().join(".aws/credentials"), "SECRET AWS").unwrap();
    let beside = tempfile::NamedTempFile::new().unwrap();
    let enclosure = Enclosure { home: Some(home.path().to_path_buf()), ..Enclosure::bwrap(root.path()) };
    let script = format!(
        "cat \"$HOME/.ssh/id_ed25519\" \"$HOME/.aws/credentials\" 2>/dev/null; echo \"home=$HOME\"; ls -A \"$HOME\" | wc -l; test -e '{}' || echo tmp-private; echo x > \"$HOME/scratch\" && echo home-writable",
        beside.path().display()
    );
    let output = sh(&enclosure, root.path(), &script);
    let home_path = home.path().canonicalize().unwrap();
    assert_eq!(stdout(&output), format!("home={}\n0\ntmp-private\nhome-writable", home_path.display()), "{output:?}");
    assert!(!home.path().join("scratch").exists(), "the scratch home is not the real one");
}

#[test]
fn the_environment_is_cleared_to_the_allow_list() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut enclosure = Enclosure::bwrap(root.path());
    enclosure.env.push(("EXTRA_SETTING".into(), "from-config".into()));
    let mut command = Command::new("sh");
    command.args(["-c", "echo \"[$AWS_SECRET_ACCESS_KEY][$EXTRA_SETTING][$OWN][${PATH:+path}]\""]).env("OWN", "mine");
    // The test's own environment stands in for the host's: a secret in it must not pass.
    let mut outer = enclosure.enclose(&command).unwrap();
    outer.env("AWS_SECRET_ACCESS_KEY", "leaked");
    let output = outer.output().unwrap();
    assert_eq!(stdout(&output), "[][from-config][mine][path]", "{output:?}");
}

#[test]
fn no_network_unless_asked() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    // bash's /dev/tcp opens a real TCP connection.
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected >&3 && echo connected || echo refused");
    let closed = Enclosure::bwrap(root.path());
    let mut command = Command::new("bash");
    command.args(["-c", &script]);
    let output = closed.enclose(&command).unwrap().output().unwrap();
    assert_eq!(stdout(&output), "refused", "{output:?}");
    assert!(listener.accept().is_err(), "nothing reached the listener");

    let open = Enclosure { network: true, ..Enclosure::bwrap(root.path()) };
    assert_eq!(open.describe(), "bwrap (network, root writable)");
    let output = open.enclose(&command).unwrap().output().unwrap();
    assert_eq!(stdout(&output), "connected", "{output:?}");
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().unwrap();
    let mut got = String::new();
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "connected\n");
}

#[test]
fn an_interrupt_to_the_group_reaches_the_program_and_spares_the_sandbox() {
    if !bwrap_ready() {
        return;
    }
    use std::os::unix::process::CommandExt;
    let root = tempfile::tempdir().unwrap();
    let mut command = Command::new("bash");
    command.args(["-c", "trap 'echo interrupted; exit 7' INT; echo ready; while true; do sleep 0.05; done"]);
    let mut enclosed = Enclosure::bwrap(root.path()).enclose(&command).unwrap();
    enclosed.process_group(0).stdout(std::process::Stdio::piped());
    let mut child = enclosed.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut ready = [0u8; 6];
    out.read_exact(&mut ready).unwrap();
    let group = i32::try_from(child.id()).unwrap();
    Command::new("kill").args(["-INT", "--", &format!("-{group}")]).status().unwrap();
    let status = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert_eq!(rest.trim(), "interrupted");
    assert_eq!(status.code(), Some(7), "bwrap passed the program's own exit on");
}

#[test]
fn a_missing_bwrap_fails_closed() {
    let root = tempfile::tempdir().unwrap();
    let enclosure = Enclosure { bwrap: PathBuf::from("/nonexistent/bwrap"), ..Enclosure::bwrap(root.path()) };
    let error = enclosure.enclose(&Command::new("true")).unwrap_err();
    assert!(matches!(error, Error::Unavailable { mode: "bwrap", .. }), "{error}");
    let text = error.to_string();
    assert!(text.starts_with("the bwrap enclosure is not available here, so nothing was run: "), "{text}");
    assert!(text.contains("/nonexistent/bwrap"), "{text}");
}

#[test]
fn a_prefix_runs_the_command_with_its_directory_and_variables() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("prefix.log");
    // A stand-in for `docker exec -i C`: it runs its argv, marking that it did.
    let wrapper = root.path().join("wrapper.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\necho \"$*\" >> '{}'\nexport MARK=through-prefix\nshift\nexec \"$@\"\n", log.display()),
    )
    .unwrap();
    Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let sub = root.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let mut enclosure = Enclosure::command(root.path(), vec![wrapper.display().to_string(), "--flag".into()]);
    enclosure.env.push(("EXTRA".into(), "x".into()));
    assert_eq!(enclosure.mode, Mode::Command { prefix: vec![wrapper.display().to_string(), "--flag".into()] });
    let mut command = Command::new("sh");
    command.args(["-c", "echo \"$MARK $OWN $EXTRA $(pwd)\""]).current_dir(&sub).env("OWN", "mine");
    let output = enclosure.enclose(&command).unwrap().output().unwrap();
    assert_eq!(stdout(&output), format!("through-prefix mine x {}", sub.display()), "{output:?}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.starts_with("--flag env --default-signal=INT -C "), "{logged}");
    assert!(Enclosure::command(root.path(), Vec::new()).enclose(&command).is_err());
}

#[test]
fn bwrap_itself_as_a_prefix_encloses() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let canary = canary("outside-prefix");
    let prefix = ["bwrap", "--ro-bind", "/", "/", "--bind"].iter().map(ToString::to_string);
    let root_text = root.path().display().to_string();
    let prefix: Vec<String> =
        prefix.chain([root_text.clone(), root_text, "--dev".into(), "/dev".into(), "--unshare-net".into()]).collect();
    let enclosure = Enclosure::command(root.path(), prefix);
    let script = format!("echo in > here.txt; echo out > '{}' 2>/dev/null || echo refused", canary.display());
    let output = sh(&enclosure, root.path(), &script);
    assert_eq!(stdout(&output), "refused", "{output:?}");
    assert_eq!(std::fs::read_to_string(root.path().join("here.txt")).unwrap(), "in\n");
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

#[test]
fn the_host_runs_the_command_unchanged() {
    let root = tempfile::tempdir().unwrap();
    let enclosure = Enclosure::host(root.path());
    assert_eq!(enclosure.describe(), "host");
    let mut command = Command::new("sh");
    command.args(["-c", "echo \"$OWN $(pwd)\""]).current_dir(root.path()).env("OWN", "mine");
    let output = enclosure.enclose(&command).unwrap().output().unwrap();
    assert_eq!(stdout(&output), format!("mine {}", root.path().display()));
}

/// A tool installed under the private /tmp (a venv, a checkout's `.tools`)
/// stays visible when it is the program or on the `PATH` given, read-only,
/// with its prefix's `lib` but not the rest of the prefix; the rest of /tmp
/// stays hidden.
#[test]
fn a_tool_under_tmp_stays_visible_and_the_rest_of_tmp_does_not() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let prefix = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    for dir in ["bin", "lib", "share"] {
        std::fs::create_dir_all(prefix.path().join(dir)).unwrap();
    }
    std::fs::write(prefix.path().join("lib/data.txt"), "from the prefix\n").unwrap();
    std::fs::write(prefix.path().join("share/other.txt"), "not needed").unwrap();
    let tool = prefix.path().join("bin/tool");
    std::fs::write(&tool, format!("#!/bin/sh\ncat '{}'\n", prefix.path().join("lib/data.txt").display())).unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&tool).status().unwrap();
    std::fs::write(other.path().join("secret.txt"), "elsewhere in /tmp").unwrap();
    let enclosure = Enclosure::bwrap(root.path());
    // As the program.
    let output = enclosure.enclose(&Command::new(&tool)).unwrap().output().unwrap();
    assert_eq!(stdout(&output), "from the prefix", "{output:?}");
    // On the PATH given; the other directory under /tmp and the prefix's share are not there,
    // and the tool's lib is read-only.
    let mut command = Command::new("sh");
    let path = format!("{}:/usr/bin:/bin", prefix.path().join("bin").display());
    let script = format!(
        "tool; cat '{}' 2>/dev/null || echo hidden; cat '{}' 2>/dev/null || echo hidden; touch '{}' 2>/dev/null || echo read-only",
        other.path().join("secret.txt").display(),
        prefix.path().join("share/other.txt").display(),
        prefix.path().join("lib/new.txt").display()
    );
    command.arg("-c").arg(script).env("PATH", path).current_dir(root.path());
    let output = enclosure.enclose(&command).unwrap().output().unwrap();
    assert_eq!(stdout(&output), "from the prefix\nhidden\nhidden\nread-only", "{output:?}");
}
