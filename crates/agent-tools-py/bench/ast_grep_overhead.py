"""How much one `ast_grep` call costs from Python against the same call through the command.

Run with setup's venv, after `maturin develop` (setup does it): `.tools/venv/bin/python
crates/agent-tools-py/bench/ast_grep_overhead.py [--rounds N]`. In a root holding one small
Rust file it times, as medians over N rounds:
- `import agent_tools` in a fresh interpreter (its own process each round, minus a bare `python -c pass`);
- `run.call_sync("ast_grep", ...)` on an open run (in process; a fresh event loop per call, as scripts use it);
- `await run.call("ast_grep", ...)` on an open run inside one event loop;
- `agent-tools call ast_grep ...`, the console script of the same venv, a process per call (how a program without
  the module calls the tools one at a time).
It prints the figures and the ratio of the command to each in-process form.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ARGS = {"pattern": "$X.unwrap()", "language": "rust"}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    from agent_tools import Run  # noqa: PLC0415

    root = Path(tempfile.mkdtemp())
    (root / "main.rs").write_text('fn main() {\n    let n: u8 = "4".parse().unwrap();\n}\n')

    def timed(argv: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(argv, cwd=root, check=True, capture_output=True)
        return time.perf_counter() - started

    bare = [timed([sys.executable, "-c", "pass"]) for _ in range(rounds)]
    imported = [timed([sys.executable, "-c", "import agent_tools"]) for _ in range(rounds)]
    import_ms = median_ms(imported) - median_ms(bare)

    command = str(Path(sys.executable).parent / "agent-tools")
    cli = [timed([command, "call", "ast_grep", '{"pattern": "$X.unwrap()", "language": "rust"}']) for _ in range(rounds)]

    with Run(root, cap="read") as run:
        assert run.call_sync("ast_grep", ARGS).structured["total"] == 1
        sync: list[float] = []
        for _ in range(rounds):
            started = time.perf_counter()
            run.call_sync("ast_grep", ARGS)
            sync.append(time.perf_counter() - started)

        async def awaited() -> list[float]:
            samples: list[float] = []
            for _ in range(rounds):
                started = time.perf_counter()
                await run.call("ast_grep", ARGS)
                samples.append(time.perf_counter() - started)
            return samples

        in_loop = asyncio.run(awaited())

    print(f"rounds: {rounds}; root: one Rust file, 1 match")
    print(f"import agent_tools:            {import_ms:8.2f} ms (fresh interpreter, less a bare one)")
    print(f"await run.call(ast_grep):      {median_ms(in_loop):8.3f} ms")
    print(f"run.call_sync(ast_grep):       {median_ms(sync):8.3f} ms")
    print(f"agent-tools call ast_grep:     {median_ms(cli):8.2f} ms (a process per call)")
    print(f"command / await run.call:      {median_ms(cli) / median_ms(in_loop):8.1f}x")
    print(f"command / run.call_sync:       {median_ms(cli) / median_ms(sync):8.1f}x")


if __name__ == "__main__":
    main()
