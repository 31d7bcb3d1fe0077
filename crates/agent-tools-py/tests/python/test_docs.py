"""docs/python.md's framework example runs as written: run.tools() into pydantic-ai's tool list,
a scripted model's call back through run.call, no model called."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, require


def python_blocks(section: str) -> list[str]:
    text = (REPO / "docs" / "python.md").read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks: list[str] = []
    lines = iter(body.splitlines())
    for line in lines:
        if line == "```python":
            blocks.append("\n".join(iter(lambda: next(lines), "```")))
    return blocks


def test_the_framework_example_runs(rust_root: Path) -> None:
    require("pydantic-ai-slim (pip)", importlib.util.find_spec("pydantic_ai"))
    [block] = python_blocks("Use it with an agent framework")
    script = rust_root / "example.py"
    script.write_text(block)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    out = subprocess.run([sys.executable, str(script)], cwd=rust_root, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
