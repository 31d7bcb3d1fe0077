"""The types say what the code does: pyright (strict) accepts a typed program using the API,
and every name and parameter of the extension's stubs is the extension's own."""

from __future__ import annotations

import ast
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import agent_tools
from agent_tools import _native
from conftest import require

HERE = Path(__file__).parent
STUBS = Path(agent_tools.__file__).parent / "_native.pyi"


def pyright() -> str:
    found = shutil.which("pyright")
    require("pyright (npm)", found)
    assert found is not None
    return found


def test_pyright_strict_accepts_the_usage_file_and_the_package() -> None:
    config = {"typeCheckingMode": "strict", "pythonVersion": "3.10", "reportMissingModuleSource": False}
    (HERE / "typing" / "pyrightconfig.json").write_text(json.dumps(config))
    try:
        out = subprocess.run(
            [pyright(), "--outputjson", "--pythonpath", sys.executable, "usage.py", str(Path(agent_tools.__file__).parent)],
            cwd=HERE / "typing",
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        os.remove(HERE / "typing" / "pyrightconfig.json")
    report = json.loads(out.stdout)
    problems = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert problems == [], "\n".join(problems)
    assert report["summary"]["filesAnalyzed"] >= 4


def stub_functions() -> dict[str, list[str]]:
    """`name` or `Class.name` → its parameter names, from the stubs."""
    tree = ast.parse(STUBS.read_text())
    found: dict[str, list[str]] = {}
    for node in tree.body:
        members = node.body if isinstance(node, ast.ClassDef) else [node]
        for member in members:
            if isinstance(member, ast.FunctionDef) and not any(
                isinstance(d, ast.Name) and d.id == "property" for d in member.decorator_list
            ):
                args = [a.arg for a in member.args.args + member.args.kwonlyargs]
                key = f"{node.name}.{member.name}" if isinstance(node, ast.ClassDef) else member.name
                found[key] = args
    return found


def test_the_stubs_name_what_the_extension_has() -> None:
    tree = ast.parse(STUBS.read_text())
    stubbed = {
        name
        for node in tree.body
        for name in (
            [node.name] if isinstance(node, (ast.ClassDef, ast.FunctionDef))
            else [t.id for t in [node.target] if isinstance(t, ast.Name)] if isinstance(node, ast.AnnAssign)
            else []
        )
    }
    public = {name for name in dir(_native) if not name.startswith("__")} - {"_native"}
    assert stubbed == public
    for key, params in stub_functions().items():
        owner, _, name = key.rpartition(".")
        # A class's constructor signature is the class's own (`__text_signature__` of its `#[new]`).
        target = getattr(_native, owner) if name == "__new__" else getattr(getattr(_native, owner), name) if owner else getattr(_native, name)
        signature = inspect.signature(target)
        actual = [p for p in signature.parameters]
        expected = [p for p in params if p not in ("self", "cls")]
        assert [p for p in actual if p not in ("self", "cls", "$self", "$cls")] == expected, key
