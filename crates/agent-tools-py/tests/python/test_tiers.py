"""Tier surfaces hide and refuse what is above their cap; host misuse raises."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent_tools
from agent_tools import ClosedError, ConfigError, Run


def test_a_read_surface_hides_and_refuses_the_write_tier(tmp_path: Path) -> None:
    with Run(tmp_path, cap="write") as run:
        read = run.surface("read")
        assert "write" not in [spec.name for spec in read.tools()]
        refused = read.call_sync("write", {"path": "a.txt", "content": "x"})
        unknown = run.call_sync("eval", {"code": "1", "description": "exec tier, not wired at write"})
    assert (refused.is_error, refused.refused) == (True, True)
    assert refused.text == "refused: write is write tier; this surface is capped at read"
    assert not (tmp_path / "a.txt").exists()
    assert unknown.refused and unknown.text.startswith("refused: eval is exec tier; this surface is capped at write")


def test_bad_arguments_are_a_refusal_the_model_reads(tmp_path: Path) -> None:
    with Run(tmp_path, cap="read") as run:
        r = run.call_sync("ast_grep", {"patern": "x"})
    assert r.refused and r.text.startswith("invalid arguments for ast_grep:"), r.text


def test_host_misuse_raises(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='cap must be "read", "write" or "exec", not "admin"'):
        Run(tmp_path, cap="admin")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="missing: No such file or directory"):
        Run(tmp_path / "missing")
    with pytest.raises(ConfigError, match="eval.timeout_secs"):
        Run(tmp_path, set={"eval.timeout_secs": 5})
    with Run(tmp_path, cap="read") as run:
        with pytest.raises(ConfigError, match="capped at read at most, not write"):
            run.surface("write")
        with pytest.raises(TypeError, match="not a JSON value"):
            run.call_sync("ast_grep", {"pattern": object()})
    with pytest.raises(ClosedError):
        run.call_sync("ast_grep", {"pattern": "x", "language": "python"})
    with pytest.raises(ClosedError):
        run.tools()
    assert issubclass(ConfigError, agent_tools.Error) and issubclass(ClosedError, agent_tools.Error)


def test_a_setting_reaches_the_run(tmp_path: Path) -> None:
    (tmp_path / "agent-tools.toml").write_text("[eval]\ntimeout_s = 1\n")
    with Run(tmp_path, cap="exec") as run:
        r = run.call_sync("eval", {"code": "import time\ntime.sleep(5)", "description": "outlast the budget"})
    assert r.is_error and "1 s" in r.text, r.text
