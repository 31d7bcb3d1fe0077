//! Kernels in real containers: podman under runc and under runsc (gVisor),
//! reached as the `command` enclosure `podman exec -i NAME`, with the image's
//! own python3 and node (under `/opt/enclosed/bin`, which the host does not
//! have): found inside, state kept across cells, `tool()` from a cell, rich
//! output, an interrupt that keeps the state, and a cell that ignores it
//! killed with nothing left in the container.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use enclosure::engine::{Container, INSIDE_BIN, Runtime};
use kernel::{CellStatus, KernelConfig, Kernels, Language};

async fn kernels_in(runtime: Runtime) {
    let root = tempfile::tempdir().unwrap();
    let Some(container) = Container::for_test(runtime, root.path()) else { return };
    assert!(!Path::new(INSIDE_BIN).exists(), "the host must not have the image's toolchain");
    // No interpreter configured: the image's own, found through the prefix.
    let config = quick_timeouts(KernelConfig::new(&container.root));
    let kernels = Kernels::with_spawner(config, Arc::new(container.enclosure()));
    let (where_, reports) = kernels.status();
    assert_eq!(where_, format!("command prefix `podman exec -i {}`", container.name));
    let found: Vec<String> = reports.iter().map(|r| r.found.as_ref().unwrap().program.display().to_string()).collect();
    assert_eq!(found, [format!("{INSIDE_BIN}/python3"), format!("{INSIDE_BIN}/node")]);
    assert!(reports.iter().all(|r| r.found.as_ref().unwrap().inside.as_deref() == Some(where_.as_str())));

    let first = py(&kernels, "import os, sys\nkept = 41\nprint(sys.executable, os.path.isdir('/opt/enclosed'))").await;
    assert_eq!(first.status, CellStatus::Ok, "{}", first.text());
    assert_eq!(stream(&first, "stdout").trim(), format!("{INSIDE_BIN}/python3 True"), "{}", first.text());
    assert!(first.text().starts_with(&format!("[a new python kernel, in {where_}]")), "{}", first.text());
    // The run's root is the same path inside: a file written there is the host's.
    let wrote = py(&kernels, "open('made-inside.txt', 'w').write('hi')\nkept + 1").await;
    assert_eq!(result_text(&wrote).as_deref(), Some("42"), "{}", wrote.text());
    assert_eq!(std::fs::read_to_string(root.path().join("made-inside.txt")).unwrap(), "hi");
    let bridged_cell = kernels.execute(bridged(Language::Python, "print(tool('read', {})['text'])")).await.unwrap();
    assert_eq!(stream(&bridged_cell, "stdout").trim(), "contents", "{}", bridged_cell.text());
    let rich = py(&kernels, "class Bold:\n    def _repr_html_(self):\n        return '<b>bold</b>'\nBold()").await;
    let html = rich.outputs.iter().find_map(|output| match output {
        kernel::Output::Result { data } => data.get("text/html").cloned(),
        _ => None,
    });
    assert_eq!(html.as_deref(), Some("<b>bold</b>"), "{}", rich.text());
    // The interrupt travels as a frame through `podman exec`; the state stays.
    let looping = py(&kernels, "while True:\n    pass").await;
    assert!(looping.text().contains("KeyboardInterrupt"), "{}", looping.text());
    assert!(!looping.state_lost, "{}", looping.text());
    let after = py(&kernels, "kept").await;
    assert_eq!(result_text(&after).as_deref(), Some("41"), "{}", after.text());

    let node = js(&kernels, "let k = 41; k + 1").await;
    assert_eq!(result_text(&node).as_deref(), Some("42"), "{}", node.text());
    let node_state = js(&kernels, "k").await;
    assert_eq!(result_text(&node_state).as_deref(), Some("41"), "{}", node_state.text());

    // A cell that ignores the interrupt: its prefix client is killed, the kernel's stdin ends,
    // and the kernel inside exits; nothing of it stays in the container.
    let stuck =
        py(&kernels, "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass").await;
    assert!(stuck.state_lost, "{}", stuck.text());
    let mut left = container.processes();
    for _ in 0..100 {
        if !left.iter().any(|p| p.contains("python")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = container.processes();
    }
    assert!(!left.iter().any(|p| p.contains("python")), "the killed kernel stayed in the container: {left:?}");
    let fresh = py(&kernels, "print('again')").await;
    assert!(fresh.fresh_kernel, "{}", fresh.text());
    assert_eq!(stream(&fresh, "stdout").trim(), "again", "{}", fresh.text());
}

#[tokio::test]
async fn kernels_run_in_a_runc_container_on_its_own_interpreters() {
    kernels_in(Runtime::Runc).await;
}

#[tokio::test]
async fn kernels_run_in_a_gvisor_container_on_its_own_interpreters() {
    kernels_in(Runtime::Runsc).await;
}

/// The escape table of the bwrap tests, from a cell in a gVisor container: a file outside the
/// root, a key in a home on the host, the container's own `~/.ssh`, and a listener on the host's
/// loopback are all out of reach; the root is writable.
#[tokio::test]
async fn a_cell_in_a_gvisor_container_cannot_write_outside_read_secrets_or_connect() {
    let root = tempfile::tempdir().unwrap();
    let Some(container) = Container::for_test(Runtime::Runsc, root.path()) else { return };
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "SECRET KEY").unwrap();
    let outside = tempfile::tempdir().unwrap();
    let canary = outside.path().join("canary");
    std::fs::write(&canary, "untouched").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let kernels = Kernels::with_spawner(KernelConfig::new(&container.root), Arc::new(container.enclosure()));
    let code = escape_cell(&canary, home.path(), port);
    let result = py(&kernels, &code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert_eq!(
        stream(&result, "stdout").trim(),
        "FileNotFoundError FileNotFoundError FileNotFoundError ConnectionRefusedError ok",
        "{}",
        result.text()
    );
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "untouched");
    assert_eq!(std::fs::read_to_string(root.path().join("inside.txt")).unwrap(), "ok");
    assert!(listener.accept().is_err(), "no connection reached the listener");
}
