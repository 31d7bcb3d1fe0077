"""What the agent_tools tests share: the repository's fixtures, copied into a fresh root
per test, and the rule for a missing tool (a failure under CI=true, else a skip)."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
FIXTURES = REPO / "fixtures"

RUST_MAIN = 'fn main() {\n    let n: u8 = "4".parse().unwrap();\n}\n'


def require(what: str, present: object) -> None:
    """Fails under CI=true, else skips, when `what` (a tool setup installs) is missing."""
    if present:
        return
    message = f"{what} is missing: run `cargo xtask setup`"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true)")
    pytest.skip(message)


@pytest.fixture
def rust_root(tmp_path: Path) -> Path:
    """A root holding one Rust file with one `.unwrap()` call, on line 2 at column 17."""
    (tmp_path / "main.rs").write_text(RUST_MAIN)
    return tmp_path


@pytest.fixture
def python_project(tmp_path: Path) -> Path:
    """A copy of fixtures/lsp/python, the Python project whose servers' answers FACTS.md records."""
    root = tmp_path / "python"
    shutil.copytree(FIXTURES / "lsp" / "python", root)
    return root


def wait_for(check: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    """Polls `check` until it holds; fails naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {seconds} s")
        time.sleep(0.05)


def running(pid: int) -> bool:
    """Whether process `pid` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat.rsplit(")", 1)[1].split()[0] == "Z"
