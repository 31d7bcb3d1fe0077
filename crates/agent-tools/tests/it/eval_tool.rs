//! The `eval` tool through a surface, with the real interpreters: arguments,
//! state, images in the result, and the in-cell tool bridge going through the
//! surface's gate.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use agent_tools::{AstmatchWiring, KernelWiring, Registry, Surface, Tier, Workspace};
use kernel::{KernelConfig, Kernels};
use serde_json::json;

fn surface(root: &Path, cap: Tier) -> Surface {
    surface_in(root, cap, Arc::new(kernel::HostSpawner))
}

fn surface_in(root: &Path, cap: Tier, spawner: Arc<dyn kernel::Spawner>) -> Surface {
    let mut config = KernelConfig::new(root);
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/venv/bin/python");
    if venv.exists() {
        config.python = Some(venv);
    }
    let workspace = Workspace::new(root).unwrap();
    let registry = Registry::builder()
        .with_astmatch(AstmatchWiring::new(workspace))
        .with_kernels(KernelWiring::new(Arc::new(Kernels::with_spawner(config, spawner))))
        .build()
        .unwrap();
    Arc::new(registry).surface(cap)
}

#[tokio::test]
async fn eval_is_exec_tier_and_not_parallel_safe() {
    let dir = tempfile::tempdir().unwrap();
    let read = surface(dir.path(), Tier::Read);
    assert!(read.list().iter().all(|spec| spec.name != "eval"));
    let refused = read.call("eval", json!({ "code": "1", "description": "add one and one" })).await.unwrap();
    assert!(refused.is_error && refused.text.contains("exec tier"), "{}", refused.text);
    let exec = surface(dir.path(), Tier::Exec);
    assert_eq!(exec.registry().parallel_safe("eval"), Some(false));
}

#[tokio::test]
async fn description_is_required_and_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    let exec = surface(dir.path(), Tier::Exec);
    let missing = exec.call("eval", json!({ "code": "1" })).await.unwrap();
    assert!(missing.is_error && missing.text.contains("description"), "{}", missing.text);
    let empty = exec.call("eval", json!({ "code": "1", "description": "  " })).await.unwrap();
    assert!(empty.is_error && empty.text.contains("description is required"), "{}", empty.text);
    let unknown = exec.call("eval", json!({ "code": "1", "description": "x", "lang": "js" })).await.unwrap();
    assert!(unknown.is_error, "{}", unknown.text);
}

#[tokio::test]
async fn cells_keep_state_per_language_and_reset() {
    let dir = tempfile::tempdir().unwrap();
    let exec = surface(dir.path(), Tier::Exec);
    let call = |code: &str, language: &str, reset: bool| {
        exec.call(
            "eval",
            json!({ "code": code, "description": "run a small test cell here", "language": language, "reset": reset }),
        )
    };
    call("x = 20", "python", false).await.unwrap();
    let python = call("x * 2 + 2", "python", false).await.unwrap();
    assert_eq!(python.text.trim(), "42");
    assert_eq!(python.structured.as_ref().unwrap()["outputs"][0]["output_type"], "execute_result");
    let js = call("typeof x", "javascript", false).await.unwrap();
    assert_eq!(js.text.trim(), "'undefined'");
    let reset = call("'x' in globals()", "python", true).await.unwrap();
    assert_eq!(reset.text.trim(), "False");
    let failed = call("1/0", "python", false).await.unwrap();
    assert!(failed.is_error && failed.text.contains("ZeroDivisionError"), "{}", failed.text);
}

#[tokio::test]
async fn in_cell_tool_calls_go_through_the_surface() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return print(1)\n").unwrap();
    let exec = surface(dir.path(), Tier::Exec);
    let code = "r = tool('ast_grep', {'pattern': 'print($A)', 'language': 'python'})\nprint(type(r).__name__)\ntry:\n    tool('no_such_tool', {})\nexcept ToolError as e:\n    print('refused:', e)\ntry:\n    tool('eval', {'code': '1', 'description': 'nested'})\nexcept ToolError as e:\n    print('refused:', e)";
    let result =
        exec.call("eval", json!({ "code": code, "description": "call tools from inside a cell" })).await.unwrap();
    assert!(!result.is_error, "{}", result.text);
    assert!(result.text.contains("refused: unknown tool 'no_such_tool'"), "{}", result.text);
    assert!(result.text.contains("refused: eval cannot be called from inside a cell"), "{}", result.text);
}

/// In a bwrap sandbox the bridge still works (fds 3 and 4 pass through): a
/// cell's `tool("ast_grep")` goes through the surface and finds the root's
/// code, and the fresh kernel's result says where it runs.
#[tokio::test]
async fn in_bwrap_in_cell_tool_calls_still_work() {
    if let Err(error) = enclosure::Enclosure::bwrap("/").check() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{error}");
        #[allow(clippy::print_stderr)]
        {
            eprintln!("SKIPPED: {error}");
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def f():\n    return print(1)\n").unwrap();
    let exec = surface_in(dir.path(), Tier::Exec, Arc::new(enclosure::Enclosure::bwrap(dir.path())));
    let code = "r = tool('ast_grep', {'pattern': 'print($A)', 'language': 'python'})\nprint(r['total'], r['matches'][0]['file'])";
    let result =
        exec.call("eval", json!({ "code": code, "description": "call a tool from an enclosed cell" })).await.unwrap();
    assert!(!result.is_error, "{}", result.text);
    assert_eq!(result.text, "[a new python kernel, in bwrap (no network, root writable)]\n1 a.py\n");
    assert_eq!(result.structured.as_ref().unwrap()["enclosure"], "bwrap (no network, root writable)");
}

/// Through the surface: progress carries the cell's last printed line; a
/// dropped call (cancelled) interrupts the cell, and the next call gets the
/// kernel at once, with its state and a note of what happened.
#[tokio::test]
async fn progress_shows_the_last_line_and_a_cancelled_cell_leaves_the_kernel_usable() {
    let dir = tempfile::tempdir().unwrap();
    let pacing = agent_tools::Pacing {
        first_after: std::time::Duration::from_millis(50),
        min_interval: std::time::Duration::from_millis(20),
        heartbeat: std::time::Duration::from_millis(200),
    };
    let exec = surface(dir.path(), Tier::Exec).with_pacing(pacing);
    exec.call("eval", json!({ "code": "kept = 41", "description": "set a variable" })).await.unwrap();
    let heard = Arc::new(tokio::sync::Notify::new());
    let sink = {
        let heard = heard.clone();
        agent_tools::ProgressSink::new(move |p| {
            if p.message.ends_with("running; last output: spinning 3") {
                heard.notify_one();
            }
        })
    };
    let code = "for i in range(4):\n    print('spinning', i, flush=True)\nwhile True:\n    pass";
    tokio::select! {
        result = exec.call_with_progress("eval", json!({ "code": code, "description": "spin until stopped" }), Some(sink)) => {
            panic!("the cell ended by itself: {:?}", result.map(|r| r.text))
        }
        () = heard.notified() => {}
    }
    let next = exec.call("eval", json!({ "code": "kept + 1", "description": "read the variable" })).await.unwrap();
    assert!(!next.is_error, "{}", next.text);
    assert!(next.text.starts_with("[the previous cell was cancelled and interrupted; the kernel's state is kept]\n42"));
    assert_eq!(next.structured.unwrap()["previous_cancelled"], "interrupted");
}

/// Cells' text and structured value (streams, results, rich output, an error, a reset, a
/// `tool()` call, JavaScript), as the golden transcript.
#[tokio::test]
async fn transcript() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "foo(1)\n").unwrap();
    let exec = surface(dir.path(), Tier::Exec);
    let mut transcript = crate::golden::Transcript::new(&[dir.path()]);
    let cell = |code: &str| json!({ "code": code, "description": "a cell of the transcript" });
    let calls = [
        cell("x = 41\nprint('out')\nimport sys\nprint('err', file=sys.stderr)\nx + 1"),
        cell(
            "class Bold:\n    def _repr_html_(self):\n        return '<b>bold</b>'\n    def __repr__(self):\n        return 'Bold()'\nBold()",
        ),
        cell("1 / 0"),
        cell("r = tool('ast_grep', {'pattern': 'foo($X)', 'language': 'python'})\nprint(r['structured']['total'])"),
        json!({ "code": "x", "description": "after a reset", "reset": true }),
        json!({ "code": "let k = 41; k + 1", "language": "javascript", "description": "a cell of the transcript" }),
        json!({ "code": "1", "description": "  " }),
    ];
    for args in calls {
        let result = exec.call("eval", args.clone()).await.unwrap();
        transcript.record("eval", &args, &result);
    }
    insta::assert_snapshot!(transcript.finish());
}
