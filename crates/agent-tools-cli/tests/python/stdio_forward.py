"""Starts two `agent-tools serve --host BASE` stdio servers on one checkout, as an MCP client
that only starts stdio servers would, and drives them at once with the official MCP Python
SDK's `Client`, one in each connection mode: search, a definition from the host's shared
language server, `lsp status`, a question answered through the client, a cell's progress, and
the kernel's pid. Prints one JSON line per case; the Rust test `http_mcp.rs` asserts the values.

usage: stdio_forward.py AGENT_TOOLS BASE TOKEN ROOT
"""

import json
import os
import sys

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

BINARY, BASE, TOKEN, ROOT = sys.argv[1:5]
QUESTION = {"question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]}
DEFINITION = {"action": "definition", "file": "app.py", "line": 5, "symbol": "greet"}


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


def text(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")


def server():
    return StdioServerParameters(
        command=BINARY,
        # The README's snippet: the run's root is the client's working directory.
        args=["serve", "--host", BASE],
        env={"AGENT_TOOLS_HOST_TOKEN": TOKEN, "AGENT_TOOLS_LOG": "warn", "PATH": os.environ["PATH"]},
        cwd=ROOT,
    )


async def answer(context, params):
    return types.ElicitResult(action="accept", content={"choice": "blue"})


async def main():
    async with Client(server(), mode="auto", elicitation_callback=answer) as a, \
            Client(server(), mode="legacy", elicitation_callback=answer) as b:
        for name, client in (("auto", a), ("legacy", b)):
            tools = await client.list_tools()
            report(f"{name} tools", names=[t.name for t in tools.tools])
            result = await client.call_tool("ast_grep", {"pattern": "greet($X)", "language": "python"})
            report(f"{name} search", text=text(result), is_error=result.is_error)
            result = await client.call_tool("lsp", DEFINITION)
            report(f"{name} definition", text=text(result), is_error=result.is_error)
            result = await client.call_tool("ask_user", QUESTION)
            report(f"{name} ask", text=text(result), is_error=result.is_error)
            seen = []

            async def progress(value, total, message):
                seen.append(value)

            code = "import os, time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(1)\nos.getpid()"
            result = await client.call_tool("eval", {"code": code, "description": "count"}, progress_callback=progress)
            report(f"{name} eval", text=text(result), is_error=result.is_error, notifications=len(seen))
        for name, client in (("auto", a), ("legacy", b)):
            result = await client.call_tool("lsp", {"action": "status"})
            report(f"{name} status", text=text(result))


anyio.run(main)
