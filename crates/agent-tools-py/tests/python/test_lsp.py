"""An LSP hover, answered by a real pyright over fixtures/lsp/python (FACTS.md records the answer)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from agent_tools import Run
from conftest import require


def test_hover_with_pyright(python_project: Path) -> None:
    require("pyright-langserver (npm pyright)", shutil.which("pyright-langserver"))

    async def main() -> None:
        async with Run(python_project, cap="read") as run:
            r = await run.call("lsp", {"action": "hover", "file": "geometry/report.py", "line": 15, "symbol": "total_area"})
            assert not r.is_error, r.text
            assert "def total_area(circles: list[Circle]) -> float" in r.text
            assert "The sum of the areas of `circles`." in r.text

    asyncio.run(main())
