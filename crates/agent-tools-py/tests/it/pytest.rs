//! The pytest suite, `tests/python`, run by setup's venv against this checkout's
//! extension: `maturin develop --skip-install` first rebuilds it into
//! `python/agent_tools/` when its sources changed (cargo does nothing when they did
//! not), where setup's editable install finds it. Pyright and the npm servers are put
//! on `PATH` as setup installs them.

use std::process::Command;

use crate::common::{maturin, node_bin_dir, require, shown, venv_bin, workspace};

#[test]
fn the_python_suite_passes() {
    let python = venv_bin("python");
    if !require("setup's venv", &python) || !require("maturin (pip)", &venv_bin("maturin")) {
        return;
    }
    let built = maturin(&["develop", "--skip-install", "--profile", "dev"]);
    assert!(built.status.success(), "maturin develop failed:\n{}", shown(&built));
    let installed = Command::new(&python).args(["-c", "import agent_tools"]).output().unwrap();
    if !installed.status.success() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "agent_tools is not installed in setup's venv: run `cargo xtask setup`\n{}",
            shown(&installed)
        );
        eprintln!("SKIPPED: agent_tools is not installed in setup's venv: run `cargo xtask setup`");
        return;
    }
    let path = format!("{}:{}", node_bin_dir().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "crates/agent-tools-py/tests/python"])
        .env("PATH", path)
        .current_dir(workspace())
        .output()
        .unwrap();
    let report = shown(&out);
    eprintln!("{report}");
    assert!(out.status.success(), "the Python suite failed:\n{report}");
}
