//! Kernels inside an enclosure, with the real bubblewrap: what a cell cannot
//! reach (outside the root, the home's secrets, the network), and what still
//! works as on the host (state, the project venv's pandas and matplotlib,
//! the `tool()` bridge over fds 3 and 4, interrupts). Then a command prefix.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::*;
use enclosure::Enclosure;
use kernel::{CellStatus, Kernels, Language};

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

fn enclosed(root: &Path, enclosure: Enclosure) -> Kernels {
    Kernels::with_spawner(config(root), Arc::new(enclosure))
}

/// A canary outside the root, where the sandbox sees the host read-only.
fn canary(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel-enclosure-canaries");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "untouched").unwrap();
    path
}

#[tokio::test]
async fn a_cell_in_bwrap_cannot_write_outside_read_secrets_or_connect() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "SECRET KEY").unwrap();
    let canary = canary("cell");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let kernels = enclosed(root.path(), Enclosure { home: Some(home.path().into()), ..Enclosure::bwrap(root.path()) });

    let first = py(&kernels, "secret_count = 0\nprint('up')").await;
    assert_eq!(first.enclosure, "bwrap (no network, root writable)");
    assert!(first.fresh_kernel);
    assert!(
        first.text().starts_with("[a new python kernel, in bwrap (no network, root writable)]\nup"),
        "{}",
        first.text()
    );

    let code = escape_cell(&canary, home.path(), port);
    let result = py(&kernels, &code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    // The canary is read-only where the host shows through, absent under the private /tmp.
    let canary_error = if canary.starts_with("/tmp") { "FileNotFoundError" } else { "OSError" };
    assert_eq!(
        stream(&result, "stdout").trim(),
        format!("{canary_error} FileNotFoundError FileNotFoundError ConnectionRefusedError ok"),
        "{}",
        result.text()
    );
    assert!(!result.fresh_kernel && !result.text().contains("in bwrap"), "{}", result.text());
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
    assert_eq!(std::fs::read_to_string(root.path().join("inside.txt")).unwrap(), "ok");
    assert!(listener.accept().is_err(), "no connection reached the listener");
    // State persisted across the cells.
    let last = py(&kernels, "secret_count + 41 + 1").await;
    assert_eq!(result_text(&last).as_deref(), Some("42"));
}

#[tokio::test]
async fn pandas_matplotlib_and_the_bridge_work_in_bwrap() {
    if !bwrap_ready() || !require_modules(&["pandas", "matplotlib"]) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let kernels = enclosed(root.path(), Enclosure::bwrap(root.path()));
    let table = py(&kernels, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})").await;
    assert_eq!(table.status, CellStatus::Ok, "{}", table.text());
    let text = result_text(&table).unwrap();
    assert!(text.contains("a  b") && text.contains("1  2  4"), "{text}");
    let figure = py(&kernels, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()").await;
    assert_eq!(figure.status, CellStatus::Ok, "{}", figure.text());
    assert_eq!(figure.images().len(), 1, "{}", figure.text());
    assert_eq!(&figure.images()[0].mime, "image/png");
    let bridged_cell =
        kernels.execute(bridged(Language::Python, "print(tool('read', {'path': 'a.txt'})['text'])")).await;
    let bridged_cell = bridged_cell.unwrap();
    assert_eq!(stream(&bridged_cell, "stdout").trim(), "contents", "{}", bridged_cell.text());
}

#[tokio::test]
async fn an_interrupted_cell_in_bwrap_keeps_its_state() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let kernels = Kernels::with_spawner(quick_timeouts(config(root.path())), Arc::new(Enclosure::bwrap(root.path())));
    py(&kernels, "kept = 'still here'").await;
    let looping = py(&kernels, "while True:\n    pass").await;
    assert!(looping.text().contains("KeyboardInterrupt"), "{}", looping.text());
    assert!(!looping.state_lost, "{}", looping.text());
    let after = py(&kernels, "kept").await;
    assert_eq!(result_text(&after).as_deref(), Some("'still here'"), "{}", after.text());
}

#[tokio::test]
async fn a_javascript_kernel_runs_in_bwrap() {
    if !bwrap_ready() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let canary = canary("js");
    let kernels = enclosed(root.path(), Enclosure::bwrap(root.path()));
    let code = format!(
        "const fs = require('fs'); let r; try {{ fs.writeFileSync({:?}, 'x'); r = 'written' }} catch (e) {{ r = e.code }} r",
        canary.display().to_string()
    );
    let result = js(&kernels, &code).await;
    // Read-only where the host shows through; absent under the private /tmp.
    let code = if canary.starts_with("/tmp") { "'ENOENT'" } else { "'EROFS'" };
    assert_eq!(result_text(&result).as_deref(), Some(code), "{}", result.text());
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
}

#[tokio::test]
async fn a_kernel_starts_through_a_command_prefix() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("prefix.log");
    let wrapper = root.path().join("enter.sh");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\nexport ENTERED=yes\nexec \"$@\"\n", log.display()),
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&wrapper).status().unwrap();
    let prefix = vec![wrapper.display().to_string()];
    let kernels = enclosed(root.path(), Enclosure::command(root.path(), prefix));
    let result = py(&kernels, "import os\nprint(os.environ.get('ENTERED'), os.getcwd())").await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert_eq!(stream(&result, "stdout").trim(), format!("yes {}", root.path().display()));
    assert!(result.text().starts_with(&format!("[a new python kernel, in command prefix `{}`]", wrapper.display())));
    let bridged_cell = kernels.execute(bridged(Language::Python, "print(tool('read', {})['text'])")).await.unwrap();
    assert_eq!(stream(&bridged_cell, "stdout").trim(), "contents", "{}", bridged_cell.text());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.starts_with("env --default-signal=INT -C "), "{logged}");
    assert_eq!(logged.lines().count(), 1, "one kernel, one start: {logged}");
}

#[tokio::test]
async fn a_missing_bwrap_fails_the_cell_closed() {
    let root = tempfile::tempdir().unwrap();
    let marker = root.path().join("ran");
    let enclosure = Enclosure { bwrap: "/nonexistent/bwrap".into(), ..Enclosure::bwrap(root.path()) };
    let kernels = enclosed(root.path(), enclosure);
    let code = format!("open({:?}, 'w').write('ran')", marker.display().to_string());
    let error = kernels.execute(kernel::Cell::new(Language::Python, &code)).await.unwrap_err();
    assert!(error.to_string().starts_with("the bwrap enclosure is not available here, so nothing was run"), "{error}");
    assert!(!marker.exists());
}

/// A prefix that forwards only stdin, stdout and stderr, as `docker exec -i`
/// and `kubectl exec -i` do: the command runs in a session of its own (the
/// host's SIGINT to the kernel's process group never reaches it), with every
/// other file descriptor closed, and the relay pumps the three streams.
const STDIO_RELAY: &str = r#"
import os, signal, subprocess, sys, threading
signal.signal(signal.SIGINT, signal.SIG_IGN)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, close_fds=True, start_new_session=True)
with open(os.environ["RELAY_PIDS"], "a") as log:
    log.write("%d\n" % child.pid)
def pump(source, sink, close):
    while True:
        data = os.read(source, 65536)
        if not data:
            break
        os.write(sink, data)
    if close:
        os.close(sink)
threading.Thread(target=pump, args=(0, child.stdin.fileno(), True), daemon=True).start()
threading.Thread(target=pump, args=(child.stderr.fileno(), 2, False), daemon=True).start()
pump(child.stdout.fileno(), 1, False)
sys.exit(child.wait())
"#;

fn stdio_relay(root: &Path) -> (Vec<String>, PathBuf) {
    let relay = root.join("relay.py");
    std::fs::write(&relay, STDIO_RELAY).unwrap();
    let pids = root.join("relay.pids");
    let prefix = vec![
        "env".to_owned(),
        format!("RELAY_PIDS={}", pids.display()),
        test_python().display().to_string(),
        relay.display().to_string(),
    ];
    (prefix, pids)
}

fn alive(pid: i32) -> bool {
    // A zombie has ended; only the relay could reap it.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

/// The kernel behind the relay ends once the relay is killed (its stdin ends); up to 10 s.
async fn assert_gone(pid: i32) {
    let mut waited = 0;
    while alive(pid) && waited < 200 {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        waited += 1;
    }
    assert!(!alive(pid), "the kernel {pid} behind the relay outlived its kill");
}

#[tokio::test]
async fn a_kernel_runs_through_a_prefix_that_forwards_only_stdio() {
    let root = tempfile::tempdir().unwrap();
    let (prefix, pids) = stdio_relay(root.path());
    let kernels =
        Kernels::with_spawner(quick_timeouts(config(root.path())), Arc::new(Enclosure::command(root.path(), prefix)));
    let first = py(&kernels, "import os, subprocess\nkept = 41\nprint('pid', os.getpid())").await;
    assert_eq!(first.status, CellStatus::Ok, "{}", first.text());
    let printed = stream(&first, "stdout");
    let pid: i32 = printed.trim().strip_prefix("pid ").unwrap().parse().unwrap();
    assert_eq!(std::fs::read_to_string(&pids).unwrap().trim(), pid.to_string(), "the kernel is the relay's child");
    // State, the bridge, and the streams told apart (the driver captures fds 1 and 2).
    let second = py(&kernels, "import sys\nprint(kept + 1)\nprint('warned', file=sys.stderr)\nkept += 1").await;
    assert_eq!(stream(&second, "stdout").trim(), "42", "{}", second.text());
    assert_eq!(stream(&second, "stderr").trim(), "warned", "{}", second.text());
    let child = py(&kernels, "subprocess.run(['echo', 'from a child'])").await;
    assert_eq!(stream(&child, "stdout").trim(), "from a child", "{}", child.text());
    let bridged_cell = kernels.execute(bridged(Language::Python, "print(tool('read', {})['text'])")).await.unwrap();
    assert_eq!(stream(&bridged_cell, "stdout").trim(), "contents", "{}", bridged_cell.text());
    // The host's SIGINT stops at the relay; the interrupt frame reaches the cell.
    let looping = py(&kernels, "while True:\n    pass").await;
    assert!(looping.text().contains("KeyboardInterrupt"), "{}", looping.text());
    assert!(!looping.state_lost, "{}", looping.text());
    let after = py(&kernels, "kept").await;
    assert_eq!(result_text(&after).as_deref(), Some("42"), "{}", after.text());
    // A cell that ignores interrupts is killed: the relay dies, the kernel's
    // stdin ends, and the kernel exits even mid-cell.
    let stuck =
        py(&kernels, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass").await;
    assert!(stuck.state_lost, "{}", stuck.text());
    assert_gone(pid).await;
    let fresh = py(&kernels, "print('again')").await;
    assert!(fresh.fresh_kernel, "{}", fresh.text());
    assert_eq!(stream(&fresh, "stdout").trim(), "again");
}

#[tokio::test]
async fn a_javascript_kernel_runs_through_a_prefix_that_forwards_only_stdio() {
    let root = tempfile::tempdir().unwrap();
    let (prefix, pids) = stdio_relay(root.path());
    let kernels =
        Kernels::with_spawner(quick_timeouts(config(root.path())), Arc::new(Enclosure::command(root.path(), prefix)));
    let first = js(&kernels, "let kept = 41; console.log('up'); console.error('warned')").await;
    assert_eq!(first.status, CellStatus::Ok, "{}", first.text());
    assert_eq!(stream(&first, "stdout").trim(), "up", "{}", first.text());
    assert_eq!(stream(&first, "stderr").trim(), "warned", "{}", first.text());
    let second = js(&kernels, "kept + 1").await;
    assert_eq!(result_text(&second).as_deref(), Some("42"), "{}", second.text());
    let waited = js(&kernels, "await new Promise((resolve) => setTimeout(() => resolve('late'), 50))").await;
    assert_eq!(result_text(&waited).as_deref(), Some("'late'"), "{}", waited.text());
    // A busy loop holds Node's event loop; the interrupt frame still reaches it.
    let looping = js(&kernels, "for (;;) {}").await;
    assert!(looping.text().contains("Interrupted"), "{}", looping.text());
    assert!(!looping.state_lost, "{}", looping.text());
    let after = js(&kernels, "kept").await;
    assert_eq!(result_text(&after).as_deref(), Some("41"), "{}", after.text());
    // The end of its stdin ends the kernel even mid-cell: a cell that ignores
    // the interrupt is killed (the relay), and the kernel behind it exits.
    // node was looked up through the relay first (no interpreter is configured): the kernel is the last.
    let pid: i32 = std::fs::read_to_string(&pids).unwrap().lines().last().unwrap().parse().unwrap();
    // Opening a FIFO nobody writes blocks in the system call, where SIGINT cannot break it.
    let fifo = root.path().join("never-written");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let stuck = js(&kernels, &format!("require('fs').openSync({:?}, 'r')", fifo.display().to_string())).await;
    assert!(stuck.state_lost, "{}", stuck.text());
    assert_gone(pid).await;
}
