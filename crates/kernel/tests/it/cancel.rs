//! Cancellation with real processes: dropping a running cell's future
//! interrupts the cell (then kills the kernel if the interrupt is ignored),
//! frees the kernel for the next cell, and that cell says what happened.
//! The inactivity budget stays at its 5-minute default here, so only the
//! cancellation can have stopped the cells.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use kernel::{Cell, CellStatus, Kernels, Language, StreamName, TimeoutAction};
use tokio::sync::Notify;

/// Runs `code` until it prints `cue`, then drops its future.
async fn cancel_after(kernels: &Kernels, language: Language, code: &str, cue: &'static str) {
    let seen = Arc::new(Notify::new());
    let observer = {
        let seen = seen.clone();
        Arc::new(move |_: StreamName, text: &str| {
            if text.contains(cue) {
                seen.notify_one();
            }
        })
    };
    let cell = Cell { observer: Some(observer), ..Cell::new(language, code) };
    tokio::select! {
        result = kernels.execute(cell) => panic!("the cell ended by itself: {:?}", result.map(|r| r.text())),
        () = seen.notified() => {}
    }
}

fn grace(mut config: kernel::KernelConfig) -> kernel::KernelConfig {
    config.interrupt_grace = Duration::from_millis(1500);
    config
}

#[tokio::test]
async fn a_cancelled_loop_is_interrupted_and_the_next_cell_keeps_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = Kernels::new(grace(config(dir.path())));
    py(&kernels, "kept = 41").await;
    cancel_after(&kernels, Language::Python, "print('spinning', flush=True)\nwhile True:\n    pass", "spinning").await;
    let after = py(&kernels, "kept + 1").await;
    assert_eq!(result_text(&after).as_deref(), Some("42"), "{}", after.text());
    assert_eq!(after.previous_cancelled, Some(TimeoutAction::Interrupted));
    assert!(after.text().contains("previous cell was cancelled and interrupted"), "{}", after.text());
    // Said once: the cell after that has nothing to report.
    let again = py(&kernels, "kept").await;
    assert_eq!(again.previous_cancelled, None);

    js(&kernels, "let keptJs = 7").await;
    cancel_after(&kernels, Language::JavaScript, "console.log('spinning'); while (true) {}", "spinning").await;
    let js_after = js(&kernels, "keptJs * 6").await;
    assert_eq!(result_text(&js_after).as_deref(), Some("42"), "{}", js_after.text());
    assert_eq!(js_after.previous_cancelled, Some(TimeoutAction::Interrupted));
}

#[tokio::test]
async fn a_cancelled_cell_that_swallows_the_interrupt_is_killed_and_the_next_is_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = Kernels::new(grace(config(dir.path())));
    py(&kernels, "kept = 1").await;
    // Ignored before the cue is printed, so the interrupt cannot land first.
    let code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('stubborn', flush=True)\nwhile True:\n    time.sleep(0.05)";
    cancel_after(&kernels, Language::Python, code, "stubborn").await;
    let next = py(&kernels, "'kept' in globals()").await;
    assert_eq!(result_text(&next).as_deref(), Some("False"));
    assert!(next.fresh_kernel && next.previous_lost);
    assert_eq!(next.previous_cancelled, Some(TimeoutAction::Killed));
    let text = next.text();
    assert!(text.contains("cancelled and ignored the interrupt") && text.contains("state was lost"), "{text}");
    assert!(!text.contains("the previous one had died"), "said once: {text}");
    assert_eq!(next.status, CellStatus::Ok);
}

#[tokio::test]
async fn the_observer_sees_stream_text_as_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let seen: Arc<std::sync::Mutex<String>> = Arc::default();
    let observer = {
        let seen = seen.clone();
        Arc::new(move |_: StreamName, text: &str| seen.lock().unwrap().push_str(text))
    };
    let code = "import os, sys\nprint('one')\nsys.stderr.write('two\\n')\nos.system('echo three')";
    let cell = Cell { observer: Some(observer), ..Cell::new(Language::Python, code) };
    let result = kernels.execute(cell).await.unwrap();
    let seen = seen.lock().unwrap().clone();
    for line in ["one", "two", "three"] {
        assert!(seen.contains(line), "{line} not seen in {seen:?}; {}", result.text());
    }
}
