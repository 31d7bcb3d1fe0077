"""`eval` in a real Python kernel: state kept between cells, progress while a cell runs,
and a cancelled cell interrupted with the kernel's state kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tools import Progress, Run
from conftest import running

SPIN = "import os, time\nopen('started', 'w').write(str(os.getpid()))\ntime.sleep(120)"


def test_a_cell_keeps_the_state_of_the_ones_before(tmp_path: Path) -> None:
    with Run(tmp_path, cap="exec") as run:
        first = run.call_sync("eval", {"code": "x = 41", "description": "set x"})
        assert not first.is_error and first.structured["fresh_kernel"], first.text
        second = run.call_sync("eval", {"code": "x + 1", "description": "read x"})
    assert (second.is_error, second.text) == (False, "42\n")
    assert second.structured["execution_count"] == 2 and not second.structured["fresh_kernel"]
    assert second.structured["outputs"] == [{"output_type": "execute_result", "data": {"text/plain": "42"}}]


def test_a_long_cell_reports_progress_on_the_loop(tmp_path: Path) -> None:
    reports: list[Progress] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        seen_on: set[object] = set()

        def on_progress(p: Progress) -> None:
            seen_on.add(asyncio.get_running_loop())
            reports.append(p)

        async with Run(tmp_path, cap="exec") as run:
            code = "import time\nprint('warming up', flush=True)\ntime.sleep(3.5)"
            r = await run.call("eval", {"code": code, "description": "print, then sleep"}, on_progress=on_progress)
            assert not r.is_error, r.text
        assert seen_on == {loop}

    asyncio.run(main())
    assert reports, "no progress from a 3.5 s cell"
    assert all(isinstance(p, Progress) for p in reports)
    assert any("running; last output: warming up" in p.message for p in reports), reports


def test_cancelling_the_task_interrupts_the_cell_and_keeps_the_state(tmp_path: Path) -> None:
    async def main() -> None:
        async with Run(tmp_path, cap="exec") as run:
            await run.call("eval", {"code": "x = 41", "description": "set x"})
            task = asyncio.create_task(run.call("eval", {"code": SPIN, "description": "sleep until cancelled"}))
            started = tmp_path / "started"
            for _ in range(1200):
                if started.exists() and started.read_text():
                    break
                await asyncio.sleep(0.05)
            kernel = int(started.read_text())
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            after = await run.call("eval", {"code": "import os\n(x + 1, os.getpid())", "description": "read x"})
            assert not after.is_error, after.text
            assert after.text.startswith(
                "[the previous cell was cancelled and interrupted; the kernel's state is kept]"
            ), after.text
            assert f"(42, {kernel})" in after.text
            assert running(kernel)
        assert not running(kernel)

    asyncio.run(main())
