"""What a model is shown: the specs per cap, the same as the command lists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agent_tools import Run


def test_each_cap_shows_its_tiers_and_the_specs_are_the_commands(rust_root: Path) -> None:
    with Run(rust_root, cap="exec") as run:
        names = {cap: [spec.name for spec in run.surface(cap).tools()] for cap in ("read", "write", "exec")}
        specs = run.tools()
    assert names["read"] == ["ast_grep", "lsp", "ask_user"]
    assert names["write"] == [
        "ast_grep", "ast_edit", "resolve", "lsp", "lsp_rename", "write", "edit", "apply_patch", "ask_user"
    ]
    assert sorted(set(names["exec"]) - set(names["write"])) == ["debug", "eval"]
    assert [spec.name for spec in specs] == names["exec"]
    # The console script in this venv is the command; `tools` lists the same surface.
    command = Path(sys.executable).parent / "agent-tools"
    listed = json.loads(
        subprocess.run([command, "tools", "--cap", "exec"], cwd=rust_root, capture_output=True, check=True).stdout
    )
    assert [(s.name, s.description, s.tier, s.parallel_safe, s.input_schema, s.output_schema) for s in specs] == [
        (t["name"], t["description"], t["tier"], t["parallel_safe"], t["input_schema"], t["output_schema"]) for t in listed
    ]
    # The tools that write files or run code, as MCP's destructiveHint says.
    assert [s.name for s in specs if s.destructive] == [
        "resolve", "lsp_rename", "write", "edit", "apply_patch", "debug", "eval"
    ]


def test_a_spec_has_object_schemas_and_a_description(rust_root: Path) -> None:
    with Run(rust_root, cap="read") as run:
        grep = next(spec for spec in run.tools() if spec.name == "ast_grep")
    assert grep.tier == "read" and grep.parallel_safe and not grep.destructive
    assert grep.input_schema["type"] == "object"
    assert grep.input_schema["required"] == ["pattern"]
    assert set(grep.input_schema["properties"]) == {"pattern", "path", "language", "max_results"}
    assert grep.output_schema is not None and grep.output_schema["type"] == "object"
    assert "total" in grep.output_schema["properties"]
    assert "$NAME" in grep.description
