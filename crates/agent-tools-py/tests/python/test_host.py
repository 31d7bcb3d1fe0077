"""Runs that share a Host share its language servers: one pyright for two runs on one checkout,
kept for the next run after both close, then stopped after the host's idle time."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from agent_tools import Host, Run
from conftest import require, running, wait_for

HOVER = {"action": "hover", "file": "geometry/report.py", "line": 15, "symbol": "total_area"}


def test_two_runs_on_one_checkout_share_one_pyright(python_project: Path) -> None:
    require("pyright-langserver (npm pyright)", shutil.which("pyright-langserver"))
    host = Host(lsp_idle_s=1.0)

    async def main() -> int:
        async with Run(python_project, cap="read", host=host) as a, Run(python_project, cap="read", host=host) as b:
            for run in (a, b):
                r = await run.call("lsp", HOVER)
                assert not r.is_error, r.text
                assert "def total_area(circles: list[Circle]) -> float" in r.text
            [server] = host.servers()
            assert (server.server, server.root, server.runs) == ("pyright", str(python_project), 2)
            status = await b.call("lsp", {"action": "status"})
            [seen] = status.structured["running"]
            assert (seen["pid"], seen["shared_with"]) == (server.pid, 1)
            assert server.pid is not None
            return server.pid

    pid = asyncio.run(main())
    # Both runs closed: kept for the idle time, then stopped.
    assert running(pid)
    [server] = host.servers()
    assert server.runs == 0
    wait_for(lambda: not running(pid), "the idle pyright stopped", seconds=15)
    assert host.servers() == []


def test_a_run_without_a_host_has_its_own_servers(python_project: Path) -> None:
    require("pyright-langserver (npm pyright)", shutil.which("pyright-langserver"))
    host = Host()

    async def main() -> None:
        async with Run(python_project, cap="read", host=host) as shared, Run(python_project, cap="read") as own:
            pids = []
            for run in (shared, own):
                assert not (await run.call("lsp", HOVER)).is_error
                [seen] = (await run.call("lsp", {"action": "status"})).structured["running"]
                pids.append(seen["pid"])
            assert pids[0] != pids[1]
            assert [s.pid for s in host.servers()] == [pids[0]]

    asyncio.run(main())
