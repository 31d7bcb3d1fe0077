//! Debugging in real containers: podman under runc and under runsc (gVisor),
//! through `podman exec -i NAME` as the `command` enclosure. debugpy and its
//! Python are the image's own (`/opt/enclosed/bin/python3`, which the host
//! does not have), found inside; a launch stops at a breakpoint and shows
//! variables; an attach reaches a debug server listening inside the
//! container's network through a relay over the prefix's stdio.
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::path::Path;
use std::time::Duration;

use dap_session::{AdapterId, AttachSpec, DebugConfig, DebugSupervisor, LaunchSpec, Limits, Resume, RunOutcome};
use enclosure::engine::{self, Container, INSIDE_BIN, Runtime};

use crate::common::project;

const CONV: &str = "c";

/// The configuration a host gives for a prefix's container: commands through it, adapters found in it.
fn config(container: &Container) -> DebugConfig {
    let mut config = DebugConfig {
        limits: Limits {
            request_timeout: Duration::from_secs(20),
            start_timeout: Duration::from_secs(60),
            run_timeout: Duration::from_secs(30),
            ..Limits::default()
        },
        enclosure: Some(container.enclosure()),
        ..DebugConfig::default()
    };
    config.detection.inside = Some(container.enclosure());
    config
}

async fn launch_in(runtime: Runtime) {
    let root = project("python");
    let Some(container) = Container::for_test(runtime, root.path()) else { return };
    let debug = DebugSupervisor::new(config(&container));
    let reports = debug.adapters(&container.root).await;
    let debugpy = reports.iter().find(|r| r.id == AdapterId::Debugpy).unwrap();
    assert!(debugpy.usable(), "{}", debugpy.detail);
    assert_eq!(debugpy.command.as_ref().unwrap().program, Path::new(INSIDE_BIN).join("python3"), "{}", debugpy.detail);
    assert!(debugpy.detail.contains("python3 on PATH inside"), "{}", debugpy.detail);

    let source = container.root.join("main.py");
    debug.set_breakpoints(CONV, &source, &[9]).await.unwrap();
    let started = debug.launch(CONV, LaunchSpec::new(container.root.clone(), source.clone())).await.unwrap();
    match &started.outcome {
        RunOutcome::Stopped(stop) => assert_eq!(stop.location.as_ref().unwrap().line, 9, "{stop:?}"),
        other => panic!("expected the breakpoint, got {other:?}"),
    }
    let frame = debug.stack(CONV, None).await.unwrap().items[0].id;
    let scopes = debug.scopes(CONV, frame).await.unwrap();
    let locals = debug.variables(CONV, scopes[0].reference).await.unwrap().items;
    let shown: Vec<(String, String)> = locals.iter().map(|v| (v.name.clone(), v.value.clone())).collect();
    assert!(shown.contains(&("count".into(), "41".into())), "{shown:?}");
    assert!(shown.contains(&("items".into(), "[1, 2, 3]".into())), "{shown:?}");
    assert_eq!(debug.evaluate(CONV, "count + 1", None).await.unwrap().value, "42");
    let executable = debug.evaluate(CONV, "__import__('sys').executable", None).await.unwrap();
    assert_eq!(executable.value, format!("'{INSIDE_BIN}/python3'"));
    let end = debug.resume(CONV, Resume::Continue, None).await.unwrap();
    assert!(matches!(end, RunOutcome::Exited { .. }), "{end:?}");
    let output = debug.output(CONV).await.unwrap();
    assert!(output.text.contains("hello debugger 42 3"), "{}", output.text);
    let _ = debug.terminate(CONV).await;
    let left = container.processes();
    assert!(left.iter().all(|p| !p.contains("debugpy")), "the adapter stayed in the container: {left:?}");
}

/// Whether something listens on 127.0.0.1:`port` in the container (read from its
/// `/proc/net/tcp`: a connection would be taken by debugpy as its one client).
fn listening_inside(container: &Container, port: u16) -> bool {
    let out = container.exec(&["cat", "/proc/net/tcp"]);
    let wanted = format!("0100007F:{port:04X}");
    String::from_utf8_lossy(&out.stdout).lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&wanted.as_str()) && fields.get(3) == Some(&"0A")
    })
}

async fn attach_in(runtime: Runtime) {
    let root = project("python");
    let Some(container) = Container::for_test(runtime, root.path()) else { return };
    let script = container.root.join("attach_target.py");
    let port = 5678;
    let listen = format!("127.0.0.1:{port}");
    let started = engine::podman(&["exec", "-d", &container.name, "python3", "-m", "debugpy", "--listen", &listen])
        .arg(&script)
        .status()
        .unwrap();
    assert!(started.success());
    let mut waited = 0;
    while !listening_inside(&container, port) && waited < 200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert!(listening_inside(&container, port), "debugpy --listen did not open {listen} inside");
    // The host's own port is another network: nothing of the container's is there.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err(), "the container's port answered on the host");
    let debug = DebugSupervisor::new(config(&container));
    debug.set_breakpoints(CONV, &script, &[5]).await.unwrap();
    let attached = debug.attach(CONV, AttachSpec::port(&container.root, port)).await.unwrap();
    let stop = match attached.outcome {
        RunOutcome::StillRunning { .. } => {
            let mut stopped = None;
            for _ in 0..200 {
                if let Some(dap_session::Phase::Stopped(stop)) = debug.status(CONV).await.session.map(|s| s.phase) {
                    stopped = Some(stop);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            stopped.expect("the breakpoint in the loop was not hit within 20 s of the attach")
        }
        RunOutcome::Stopped(stop) => stop,
        other => panic!("expected the breakpoint, got {other:?}"),
    };
    assert_eq!(stop.location.as_ref().unwrap().line, 5, "{stop:?}");
    assert_eq!(debug.evaluate(CONV, "ticks >= 1", None).await.unwrap().value, "True");
    let terminated = debug.terminate(CONV).await.unwrap();
    assert!(!terminated.debuggee_ended);
    // The relay ended with the session; the program attached to goes on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left = container.processes();
    assert!(left.iter().any(|p| p.contains("attach_target.py")), "the attached program ended: {left:?}");
    assert!(left.iter().all(|p| !p.contains("socket")), "the relay stayed: {left:?}");
}

#[tokio::test]
async fn debugpy_launches_in_a_runc_container_on_its_own_python() {
    launch_in(Runtime::Runc).await;
}

#[tokio::test]
async fn debugpy_launches_in_a_gvisor_container_on_its_own_python() {
    launch_in(Runtime::Runsc).await;
}

#[tokio::test]
async fn debugpy_attaches_inside_a_runc_container_through_a_relay() {
    attach_in(Runtime::Runc).await;
}

#[tokio::test]
async fn debugpy_attaches_inside_a_gvisor_container_through_a_relay() {
    attach_in(Runtime::Runsc).await;
}
