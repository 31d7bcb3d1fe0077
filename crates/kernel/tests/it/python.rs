//! The Python kernel against the real interpreter: state, echo, display,
//! pandas and matplotlib output, IPython idioms, await, stdin and unicode.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use kernel::{CellStatus, Language};

#[tokio::test]
async fn state_persists_across_cells() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let first = py(&kernels, "x = 20\ndef double(v):\n    return v * 2").await;
    assert_eq!(first.status, CellStatus::Ok, "{}", first.text());
    assert!(first.fresh_kernel);
    let second = py(&kernels, "double(x) + 2").await;
    assert_eq!(result_text(&second).as_deref(), Some("42"));
    assert!(!second.fresh_kernel);
    assert_eq!(second.execution_count, 2);
}

#[tokio::test]
async fn last_expression_echo_and_semicolon() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    for (code, expected) in [
        ("1 + 1", Some("2")),
        ("1 + 1;", None),
        ("1 + 1;  # a comment", None),
        ("'a;'", Some("'a;'")),
        ("x = 5", None),
        ("None", None),
        ("print('p')\n[1, 2]", Some("[1, 2]")),
        ("for i in range(2):\n    i", None),
    ] {
        let result = py(&kernels, code).await;
        assert_eq!(result_text(&result).as_deref(), expected, "cell {code:?}: {}", result.text());
    }
}

#[tokio::test]
async fn display_several_values_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result = py(&kernels, "print('before')\ndisplay(1, 'two')\nprint('between')\ndisplay([3])\n'last'").await;
    let order: Vec<String> = result
        .outputs
        .iter()
        .map(|output| match output {
            kernel::Output::Stream { text, .. } => format!("stream:{}", text.trim()),
            kernel::Output::Display { data } => format!("display:{}", data["text/plain"]),
            kernel::Output::Result { data } => format!("result:{}", data["text/plain"]),
            kernel::Output::Error { ename, .. } => format!("error:{ename}"),
        })
        .collect();
    assert_eq!(
        order,
        ["stream:before", "display:1", "display:'two'", "stream:between", "display:[3]", "result:'last'"]
    );
}

#[tokio::test]
async fn error_traceback_points_into_cell() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result = py(&kernels, "def f():\n    return 1 / 0\n\nf()").await;
    assert_eq!(result.status, CellStatus::Error);
    assert_eq!(error_name(&result).as_deref(), Some("ZeroDivisionError"));
    let text = result.text();
    assert!(text.contains("<cell 1>\", line 4"), "{text}");
    assert!(text.contains("return 1 / 0"), "{text}");
    assert!(!text.contains("<kernel>"), "driver frames leak: {text}");
    let syntax = py(&kernels, "x = (").await;
    assert_eq!(error_name(&syntax).as_deref(), Some("SyntaxError"));
    let alive = py(&kernels, "'still here'").await;
    assert_eq!(result_text(&alive).as_deref(), Some("'still here'"));
}

#[tokio::test]
async fn dataframe_is_a_table_and_html() {
    if !require_modules(&["pandas"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result =
        py(&kernels, "import pandas as pd\ndf = pd.DataFrame({'name': ['a', 'b'], 'value': [1, 2]})\ndf").await;
    let text = result_text(&result).unwrap_or_default();
    assert!(text.contains("name") && text.contains("value"), "{}", result.text());
    assert!(text.lines().count() >= 3, "{text}");
    let html = result.outputs.iter().find_map(|output| match output {
        kernel::Output::Result { data } => data.get("text/html").cloned(),
        _ => None,
    });
    assert!(html.unwrap_or_default().contains("<table"), "no html table");
    let shown = py(&kernels, "display(df.head(1))").await;
    assert!(displays(&shown)[0].contains_key("text/html"));
}

#[tokio::test]
async fn matplotlib_figures_come_back_as_png() {
    if !require_modules(&["matplotlib"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    // A figure left open at the end of the cell.
    let open =
        py(&kernels, "import matplotlib.pyplot as plt\nplt.figure(figsize=(4, 3))\nplt.plot([1, 2, 3], [1, 4, 9]);")
            .await;
    assert_eq!(open.status, CellStatus::Ok, "{}", open.text());
    let images = open.images();
    assert_eq!(images.len(), 1, "{}", open.text());
    assert!(images[0].data.starts_with(b"\x89PNG\r\n\x1a\n"));
    let (width, height) = images[0].size.unwrap_or((0, 0));
    assert!(width > 100 && height > 100, "{width}x{height}");
    // It was closed: the next cell shows nothing.
    let after = py(&kernels, "len(plt.get_fignums())").await;
    assert_eq!(result_text(&after).as_deref(), Some("0"));
    assert!(after.images().is_empty());
    // plt.show() shows inline, in order with prints, and does not block.
    let shown = py(&kernels, "print('one')\nplt.plot([1, 2])\nplt.show()\nprint('two')\nplt.plot([2, 1])").await;
    assert_eq!(shown.images().len(), 2, "{}", shown.text());
    let text = shown.text();
    assert!(text.find("one").unwrap_or(usize::MAX) < text.find("image").unwrap_or(0), "{text}");
    let backend = py(&kernels, "import matplotlib; matplotlib.get_backend()").await;
    assert!(result_text(&backend).unwrap_or_default().contains("_kernel_inline"), "{}", backend.text());
}

#[tokio::test]
async fn unicode_under_c_locale() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(dir.path());
    config.env = vec![("LC_ALL".into(), "C".into()), ("LANG".into(), "C".into())];
    let kernels = kernel::Kernels::new(config);
    let result = py(&kernels, "s = 'héllo wörld 🎉 日本'\nprint(s)\nimport os\nos.system('echo ünï 🐍')\ns").await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    let out = streams(&result);
    assert!(out.contains("héllo wörld 🎉 日本"), "{out}");
    assert!(out.contains("ünï 🐍"), "{out}");
    assert_eq!(result_text(&result).as_deref(), Some("'héllo wörld 🎉 日本'"));
    let node = js(&kernels, "const s = 'héllo 🎉'; console.log(s); s").await;
    assert!(streams(&node).contains("héllo 🎉"));
    assert_eq!(result_text(&node).as_deref(), Some("'héllo 🎉'"));
}

#[tokio::test]
async fn input_fails_fast_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result = py(&kernels, "name = input('name? ')").await;
    assert_eq!(result.status, CellStatus::Error);
    assert!(result.text().contains("input() is not available: the kernel has no stdin"), "{}", result.text());
    let stdin = py(&kernels, "import sys\nsys.stdin.read()").await;
    assert_eq!(result_text(&stdin).as_deref(), Some("''"));
    let prompt = js(&kernels, "prompt('name?')").await;
    assert!(prompt.text().contains("prompt() is not available"), "{}", prompt.text());
}

#[tokio::test]
async fn child_processes_writing_to_stdout_do_not_corrupt_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let code = "import os, subprocess, sys\nprint('a')\nos.system('echo from-system; echo to-stderr >&2')\nsubprocess.run(['echo', '{\"t\": \"done\", \"id\": 1}'])\nos.write(1, b'raw fd write\\n')\nprint('b')\n7";
    let result = py(&kernels, code).await;
    assert_eq!(result.status, CellStatus::Ok, "{}", result.text());
    let out = streams(&result);
    for expected in ["a\n", "from-system", "to-stderr", "{\"t\": \"done\", \"id\": 1}", "raw fd write", "b\n"] {
        assert!(out.contains(expected), "missing {expected:?} in {out:?}");
    }
    assert!(out.find("from-system") < out.find("raw fd write") && out.find("raw fd write") < out.find("b\n"), "{out}");
    assert_eq!(result_text(&result).as_deref(), Some("7"));
    let js_result = js(&kernels, "require('child_process').spawnSync('sh', ['-c', 'echo inherited; echo oops >&2'], {stdio: 'inherit'}); require('fs').writeSync(1, 'direct\\n'); 8").await;
    let out = streams(&js_result);
    assert!(out.contains("inherited") && out.contains("oops") && out.contains("direct"), "{out:?}");
    assert_eq!(result_text(&js_result).as_deref(), Some("8"));
}

#[tokio::test]
async fn top_level_await_and_asyncio_run() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let awaited =
        py(&kernels, "import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    return 3\nv = await f()\nv * 2")
            .await;
    assert_eq!(result_text(&awaited).as_deref(), Some("6"), "{}", awaited.text());
    let sync = py(&kernels, "asyncio.run(f())").await;
    assert_eq!(result_text(&sync).as_deref(), Some("3"), "{}", sync.text());
    let last = py(&kernels, "await f()").await;
    assert_eq!(result_text(&last).as_deref(), Some("3"), "{}", last.text());
}

#[tokio::test]
async fn cd_persists_and_shell_cd_does_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let kernels = kernels(dir.path());
    let shell_cd = py(&kernels, "!cd sub\nimport os\nos.path.basename(os.getcwd())").await;
    let root_name = dir.path().file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(result_text(&shell_cd), Some(format!("'{root_name}'")), "{}", shell_cd.text());
    let magic_cd = py(&kernels, "%cd sub").await;
    assert_eq!(magic_cd.status, CellStatus::Ok, "{}", magic_cd.text());
    let now = py(&kernels, "os.path.basename(os.getcwd())").await;
    assert_eq!(result_text(&now).as_deref(), Some("'sub'"));
    let listing = py(&kernels, "files = !ls ..\nfiles").await;
    assert_eq!(result_text(&listing).as_deref(), Some("['sub']"), "{}", listing.text());
}

#[tokio::test]
async fn bash_and_timeit_cell_magics() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let bash = py(&kernels, "%%bash\nfor i in 1 2; do echo \"line $i\"; done\necho err >&2").await;
    assert_eq!(bash.status, CellStatus::Ok, "{}", bash.text());
    // Two pipes: how stdout and stderr interleave is the system's to decide, each stream's order is not.
    assert_eq!(stream(&bash, "stdout"), "line 1\nline 2\n", "{}", bash.text());
    assert_eq!(stream(&bash, "stderr"), "err\n", "{}", bash.text());
    let timeit = py(&kernels, "%%timeit -n 5 -r 2 data = list(range(100))\nsum(data)").await;
    assert_eq!(timeit.status, CellStatus::Ok, "{}", timeit.text());
    let out = streams(&timeit);
    assert!(out.contains("per loop (mean ± std. dev. of 2 runs, 5 loops each)"), "{out:?}");
    let line = py(&kernels, "%timeit -n 3 -r 1 sum(range(10))").await;
    assert!(streams(&line).contains("1 run, 3 loops each"), "{}", line.text());
    let unknown = py(&kernels, "%nonsense").await;
    assert!(unknown.text().contains("unsupported magic %nonsense"), "{}", unknown.text());
}

#[tokio::test]
async fn reset_discards_state() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    py(&kernels, "kept = 1").await;
    let mut cell = kernel::Cell::new(Language::Python, "'kept' in globals()");
    cell.reset = true;
    let result = kernels.execute(cell).await.unwrap();
    assert!(result.fresh_kernel && !result.previous_lost);
    assert_eq!(result_text(&result).as_deref(), Some("False"));
    assert_eq!(result.execution_count, 1);
}

#[tokio::test]
async fn huge_output_is_cut_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let kernels = kernels(dir.path());
    let result = py(&kernels, "for i in range(200000):\n    print('line', i)\n'end'").await;
    assert_eq!(result.status, CellStatus::Ok);
    let cut = result.cut.expect("output should have been cut");
    assert!(cut.stream_chars > 1_000_000, "{cut:?}");
    let text = result.text();
    assert!(text.len() < 60_000, "{}", text.len());
    assert!(text.contains("characters of output cut"), "no note");
    assert!(text.contains("line 0\n") && text.contains("line 199999\n"), "head and tail kept");
    assert_eq!(result_text(&result).as_deref(), Some("'end'"));
}
