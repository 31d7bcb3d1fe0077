"""The run's processes end with it: leaving the block, closing it under a running call,
and the interpreter exiting with the run still open."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_tools import ClosedError, Run
from conftest import require, running, wait_for

PID = "import os\nos.getpid()"


def kernel_pid(text: str) -> int:
    return int(text.strip().splitlines()[-1])


def test_leaving_the_block_ends_the_kernel_and_the_language_server(python_project: Path) -> None:
    require("pyright-langserver (npm pyright)", shutil.which("pyright-langserver"))

    async def main() -> tuple[int, int]:
        async with Run(python_project, cap="exec") as run:
            cell = await run.call("eval", {"code": PID, "description": "the kernel's pid"})
            hover = await run.call("lsp", {"action": "hover", "file": "geometry/shapes.py", "line": 17, "symbol": "total_area"})
            assert not hover.is_error, hover.text
            status = await run.call("lsp", {"action": "status"})
            [server] = status.structured["running"]
            pids = (kernel_pid(cell.text), int(server["pid"]))
            assert all(running(pid) for pid in pids)
            return pids

    pids = asyncio.run(main())
    assert [pid for pid in pids if running(pid)] == []


def test_closing_cancels_the_call_in_flight_and_ends_its_kernel(tmp_path: Path) -> None:
    async def main() -> None:
        run = Run(tmp_path, cap="exec")
        code = "import os, time\nopen('started', 'w').write(str(os.getpid()))\ntime.sleep(120)"
        task = asyncio.create_task(run.call("eval", {"code": code, "description": "sleep"}))
        started = tmp_path / "started"
        while not (started.exists() and started.read_text()):
            await asyncio.sleep(0.05)
        await run.close()
        with pytest.raises(ClosedError, match="the run was closed while eval ran"):
            await task
        assert not running(int(started.read_text()))
        assert run.closed

    asyncio.run(main())


def test_the_interpreter_exiting_ends_an_open_runs_kernel(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from agent_tools import Run
        run = Run({str(tmp_path)!r}, cap="exec")
        print(run.call_sync("eval", {{"code": {PID!r}, "description": "pid"}}).text, flush=True)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pid = kernel_pid(out.stdout)
    wait_for(lambda: not running(pid), f"kernel {pid} to end with its interpreter", seconds=10)
