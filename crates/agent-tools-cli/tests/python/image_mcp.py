"""Drives the agent-tools image's server over MCP streamable HTTP with the official MCP Python SDK:
`ast_grep`, `lsp definition` (pyright), an `eval` cell and a debug session (debugpy), all on the
project in the container's workspace volume. Prints one JSON line per case; the Rust test
`deploy.rs` asserts the values.

usage: image_mcp.py URL TOKEN
"""

import json
import sys

import anyio
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, TOKEN = sys.argv[1:3]


def report(case, result):
    text = "\n".join(b.text for b in result.content if b.type == "text")
    print(json.dumps({"case": case, "text": text, "is_error": bool(result.is_error)}), flush=True)


async def main():
    headers = {"Authorization": f"Bearer {TOKEN}"}
    client = Client(streamable_http_client(URL, http_client=create_mcp_http_client(headers=headers)), mode="auto")
    async with client as run:
        report("ast_grep", await run.call_tool("ast_grep", {"pattern": "greet($X)", "language": "python"}))
        report("lsp definition", await run.call_tool(
            "lsp", {"action": "definition", "file": "app.py", "line": 4, "symbol": "greet"}))
        code = "import os, sys\nprint(sys.executable, os.getcwd(), os.getuid())\n6 * 7"
        report("eval", await run.call_tool("eval", {"language": "python", "code": code, "description": "where"}))
        report("debug breakpoints", await run.call_tool("debug", {"op": "breakpoints", "file": "lib.py", "lines": [3]}))
        report("debug launch", await run.call_tool("debug", {"op": "launch", "program": "app.py"}))
        report("debug evaluate", await run.call_tool("debug", {"op": "evaluate", "expression": "message"}))
        report("debug continue", await run.call_tool("debug", {"op": "continue"}))
        report("debug output", await run.call_tool("debug", {"op": "output"}))


anyio.run(main)
