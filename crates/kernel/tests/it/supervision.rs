//! Supervision with real processes: the tool bridge, inactivity timeouts
//! (interrupt, then kill), crashes, and `%pip` with module eviction.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use kernel::{CellStatus, Kernels, Language, TimeoutAction};

#[tokio::test]
async fn tool_bridge_succeeds_under_cap_and_is_refused_over_cap() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let ok = kernels
        .execute(bridged(Language::Python, "r = tool('read', {'path': 'a.txt'})\nr['text'], r['args']"))
        .await
        .unwrap();
    assert_eq!(result_text(&ok).as_deref(), Some("('contents', {'path': 'a.txt'})"), "{}", ok.text());
    let refused = kernels
        .execute(bridged(
            Language::Python,
            "try:\n    tool('shell', {'cmd': 'ls'})\nexcept ToolError as e:\n    print('refused:', e)\n'after'",
        ))
        .await
        .unwrap();
    assert!(
        streams(&refused).contains("refused: tool `shell` is exec tier, above this surface's cap (read)"),
        "{}",
        refused.text()
    );
    assert_eq!(result_text(&refused).as_deref(), Some("'after'"));
    let uncaught = kernels.execute(bridged(Language::Python, "tool('shell')")).await.unwrap();
    assert_eq!(error_name(&uncaught).as_deref(), Some("ToolError"));

    let js_ok = kernels
        .execute(bridged(Language::JavaScript, "const r = await tool('read', {path: 'b'}); r.args.path"))
        .await
        .unwrap();
    assert_eq!(result_text(&js_ok).as_deref(), Some("'b'"), "{}", js_ok.text());
    let js_refused = kernels.execute(bridged(Language::JavaScript, "await tool('shell', {})")).await.unwrap();
    assert_eq!(error_name(&js_refused).as_deref(), Some("ToolError"));
    assert!(js_refused.text().contains("above this surface's cap"), "{}", js_refused.text());

    let unwired = py(&kernels, "tool('read', {})").await;
    assert!(unwired.text().contains("no bridge is wired"), "{}", unwired.text());
}

#[tokio::test]
async fn an_outstanding_tool_call_suspends_the_inactivity_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = Kernels::new(quick_timeouts(config(dir.path())));
    // The bridged call takes twice the inactivity budget.
    let result = kernels.execute(bridged(Language::Python, "tool('slow')")).await.unwrap();
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert_eq!(result_text(&result).as_deref(), Some("'slept'"));
}

#[tokio::test]
async fn infinite_loop_is_interrupted_and_state_kept() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = Kernels::new(quick_timeouts(config(dir.path())));
    py(&kernels, "kept = 41").await;
    let looped = py(&kernels, "print('started')\nwhile True:\n    pass").await;
    assert!(
        matches!(looped.status, CellStatus::TimedOut { action: TimeoutAction::Interrupted, .. }),
        "{:?}",
        looped.status
    );
    assert!(!looped.state_lost);
    assert!(streams(&looped).contains("started"), "partial output kept");
    let text = looped.text();
    assert!(text.contains("KeyboardInterrupt") && text.contains("interrupted"), "{text}");
    let after = py(&kernels, "kept + 1").await;
    assert_eq!(result_text(&after).as_deref(), Some("42"));

    js(&kernels, "let keptJs = 7").await;
    let js_loop = js(&kernels, "console.log('spinning'); while (true) {}").await;
    assert!(
        matches!(js_loop.status, CellStatus::TimedOut { action: TimeoutAction::Interrupted, .. }),
        "{:?}",
        js_loop.status
    );
    assert!(streams(&js_loop).contains("spinning"));
    let js_after = js(&kernels, "keptJs * 6").await;
    assert_eq!(result_text(&js_after).as_deref(), Some("42"));
}

#[tokio::test]
async fn loop_that_swallows_the_interrupt_is_killed_and_state_lost() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = Kernels::new(quick_timeouts(config(dir.path())));
    py(&kernels, "kept = 1").await;
    let code = "import time\nprint('stubborn')\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass";
    let killed = py(&kernels, code).await;
    assert!(matches!(killed.status, CellStatus::TimedOut { action: TimeoutAction::Killed, .. }), "{:?}", killed.status);
    assert!(killed.state_lost);
    assert!(streams(&killed).contains("stubborn"));
    assert!(killed.text().contains("state was lost"), "{}", killed.text());
    let next = py(&kernels, "'kept' in globals()").await;
    assert!(next.fresh_kernel && next.previous_lost);
    assert_eq!(result_text(&next).as_deref(), Some("False"));
}

#[tokio::test]
async fn crashes_are_reported_and_the_next_call_is_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    for (language, code, exit) in [
        (Language::Python, "import ctypes\nprint('going down')\nctypes.string_at(0)", "SIGSEGV"),
        (Language::Python, "import os\nprint('exiting')\nos._exit(3)", "exit status 3"),
        (Language::JavaScript, "console.log('exiting'); process.exit(4)", "exit status 4"),
    ] {
        run(&kernels, language, "before = 1").await;
        let crashed = run(&kernels, language, code).await;
        let CellStatus::Crashed { exit: how } = &crashed.status else {
            panic!("{code:?} should crash: {:?} {}", crashed.status, crashed.text());
        };
        assert!(how.contains(exit), "{how}");
        assert!(crashed.state_lost);
        assert!(
            streams(&crashed).contains("going down") || streams(&crashed).contains("exiting"),
            "{}",
            crashed.text()
        );
        assert!(crashed.text().contains("crashed"));
        let (check, expected) = match language {
            Language::Python => ("'before' in globals()", "False"),
            Language::JavaScript => ("typeof before", "'undefined'"),
        };
        let next = run(&kernels, language, check).await;
        assert!(next.fresh_kernel && next.previous_lost, "{}", next.text());
        assert_eq!(result_text(&next).as_deref(), Some(expected), "{}", next.text());
    }
}

/// A child the cell forked that runs back into the driver (here it raises)
/// exits there: it neither ends the kernel's cell with its own error nor
/// reads the kernel's next frames.
#[tokio::test]
async fn a_forked_child_that_runs_back_into_the_driver_does_not_speak_for_the_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let code = "import os, time\npid = os.fork()\nif pid == 0:\n    raise RuntimeError('the child escaped')\n_, status = os.waitpid(pid, 0)\ntime.sleep(0.2)\nprint('parent done, child status', status >> 8)";
    let result = py(&kernels, code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    assert_eq!(stream(&result, "stdout"), "parent done, child status 1\n", "{}", result.text());
    assert!(!result.text().contains("the child escaped"), "{}", result.text());
    for _ in 0..3 {
        let next = py(&kernels, "21 * 2").await;
        assert_eq!(result_text(&next).as_deref(), Some("42"), "{}", next.text());
    }
}

#[tokio::test]
async fn shutdown_kills_kernels() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    py(&kernels, "1").await;
    js(&kernels, "1").await;
    let running = kernels.running().await;
    assert_eq!(running.len(), 2);
    kernels.shutdown().await;
    assert!(kernels.running().await.is_empty());
    for info in running {
        let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(info.pid as i32), None).is_ok();
        assert!(!alive, "pid {} still alive", info.pid);
    }
}

/// Writes a minimal wheel for `tinypkg` at `version` and returns its path.
fn build_wheel(dir: &std::path::Path, version: &str) -> std::path::PathBuf {
    let out = dir.join(format!("v{version}"));
    std::fs::create_dir_all(&out).unwrap();
    let wheel = out.join(format!("tinypkg-{version}-py3-none-any.whl"));
    let script = format!(
        r#"
import zipfile, sys
info = "tinypkg-{version}.dist-info"
files = {{
    "tinypkg/__init__.py": "VERSION = '{version}'\n",
    info + "/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: {version}\n",
    info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    info + "/top_level.txt": "tinypkg\n",
}}
files[info + "/RECORD"] = "".join(name + ",,\n" for name in files) + info + "/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as archive:
    for name, text in files.items():
        archive.writestr(name, text)
"#
    );
    let status = std::process::Command::new(test_python()).arg("-c").arg(script).arg(&wheel).status().unwrap();
    assert!(status.success());
    wheel
}

#[tokio::test]
async fn pip_install_of_a_local_package_is_importable_next_cell() {
    let dir = tempfile::tempdir().unwrap();
    // A venv of our own, so the install does not touch the project's.
    let venv = dir.path().join("venv");
    let made = std::process::Command::new(test_python()).args(["-m", "venv"]).arg(&venv).status().unwrap();
    assert!(made.success(), "could not create a venv");
    let mut config = config(dir.path());
    config.python = Some(venv.join("bin/python"));
    let kernels = Kernels::new(config);
    let missing = py(&kernels, "import tinypkg").await;
    assert_eq!(error_name(&missing).as_deref(), Some("ModuleNotFoundError"));
    let v1 = build_wheel(dir.path(), "0.1");
    let install = py(&kernels, &format!("%pip install --no-index --disable-pip-version-check {}", v1.display())).await;
    assert_eq!(install.status, CellStatus::Ok, "{}", install.text());
    let imported = py(&kernels, "import tinypkg\ntinypkg.VERSION").await;
    assert_eq!(result_text(&imported).as_deref(), Some("'0.1'"), "{}", imported.text());
    // Upgrading evicts the loaded module so the next import sees 0.2.
    let v2 = build_wheel(dir.path(), "0.2");
    let upgrade = py(&kernels, &format!("!pip install --no-index --disable-pip-version-check {}", v2.display())).await;
    assert!(upgrade.text().contains("evicted"), "{}", upgrade.text());
    let reimported = py(&kernels, "import tinypkg\ntinypkg.VERSION").await;
    assert_eq!(result_text(&reimported).as_deref(), Some("'0.2'"), "{}", reimported.text());
}
