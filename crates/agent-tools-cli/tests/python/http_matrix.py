"""Drives the runs of one `agent-tools serve --http` host with the official MCP Python
SDK over streamable HTTP, in one connection mode, and prints one JSON line per case:
a search, a question answered, an approval allowed, a cell's own tool() call asked
for in the eval call, progress of a long cell, a staged edit of run `a` resolved
from run `b`, and the host refusing a request without the token, with a wrong
one, and from a browser's `Origin`. The Rust test `http_mcp.rs` asserts the values.

usage: http_matrix.py MODE URL_A URL_B TOKEN
  MODE: auto (server/discover, 2026-07-28) or legacy (initialize, 2025-11-25)
"""

import json
import sys

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

MODE, URL_A, URL_B, TOKEN = sys.argv[1:5]


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


def text(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


class Human:
    """Answers each form from a script, recording the first line of what was shown."""

    def __init__(self):
        self.replies = []
        self.shown = []

    async def __call__(self, context, params):
        self.shown.append(params.message.splitlines()[0])
        action, content = self.replies.pop(0) if self.replies else ("cancel", None)
        return types.ElicitResult(action=action, content=content)


def connect(url, human):
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}))
    return Client(transport, mode=MODE, elicitation_callback=human)


async def run_a():
    human = Human()
    async with connect(URL_A, human) as client:
        result = await client.call_tool("ast_grep", {"pattern": "foo($X)", "language": "python"})
        report("search", text=text(result), is_error=result.is_error)

        human.replies = [("accept", {"choice": "blue"})]
        result = await client.call_tool("ask_user", {"question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]})
        report("ask answer", text=text(result), shown=human.shown)

        human.replies, human.shown = [("accept", {"choice": "allow once"})], []
        result = await client.call_tool("write", {"path": "allowed.txt", "content": "yes\n"})
        report("approval allowed", text=text(result), is_error=result.is_error, shown=human.shown)

        human.replies = [("accept", {"choice": "allow once"}), ("accept", {"choice": "allow once"})]
        human.shown = []
        cell = "r = tool('write', {'path': 'from_cell.txt', 'content': 'hi\\n'})\nprint(r['path'])"
        result = await client.call_tool("eval", {"language": "python", "code": cell, "description": "write from a cell"})
        report("cell tool approval", text=text(result), is_error=result.is_error, shown=human.shown)

        notes = []

        async def progress(value, total, message):
            notes.append(value)

        human.replies = [("accept", {"choice": "allow for this session"})]
        code = "import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(1)"
        result = await client.call_tool("eval", {"language": "python", "code": code, "description": "count slowly"},
                                        progress_callback=progress)
        report("eval progress", text=text(result), notifications=len(notes),
               growing=all(b > a for a, b in zip(notes, notes[1:])))

        # Allowed for the session above: no question.
        result = await client.call_tool("eval", {"language": "python", "code": "secret = 42\nsecret",
                                                 "description": "keep a value"})
        report("a's kernel", text=text(result), is_error=result.is_error)
        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("debug", {"op": "breakpoints", "file": "app.py", "lines": [1]})
        report("a's breakpoint", text=text(result), is_error=result.is_error)

        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("ast_edit", {"pattern": "foo($X)", "rewrite": "bar($X)", "language": "python"})
        edit_id = (result.structured_content or {}).get("edit_id")
        report("staged in a", text=text(result), is_error=result.is_error, edit_id=edit_id)
        return edit_id


async def run_b(edit_id):
    human = Human()
    async with connect(URL_B, human) as client:
        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("resolve", {"edit_id": edit_id, "action": "accept"})
        report("a's edit from b", text=text(result), is_error=result.is_error)
        result = await client.call_tool("ast_grep", {"pattern": "foo($X)", "language": "python"})
        report("search in b", text=text(result), is_error=result.is_error)
        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("eval", {"language": "python", "code": "'secret' in globals()",
                                                 "description": "look for run a's value"})
        report("a's kernel from b", text=text(result), is_error=result.is_error)
        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("debug", {"op": "status"})
        report("debug status in b", text=text(result), is_error=result.is_error,
               structured=result.structured_content)


async def refusals():
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient() as http:
        none = await http.post(URL_A, json=body, headers=headers)
        wrong = await http.post(URL_A, json=body, headers={**headers, "Authorization": "Bearer " + "0" * len(TOKEN)})
        origin = await http.post(URL_A, json=body,
                                 headers={**headers, "Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"})
        unknown = await http.post(URL_A.replace("/runs/a/", "/runs/nope/"), json=body,
                                  headers={**headers, "Authorization": f"Bearer {TOKEN}"})
    report("refusals", none=none.status_code, none_challenge=none.headers.get("www-authenticate"),
           wrong=wrong.status_code, wrong_challenge=wrong.headers.get("www-authenticate"),
           origin=origin.status_code, unknown=unknown.status_code)


async def main():
    edit_id = await run_a()
    await run_b(edit_id)
    await refusals()


anyio.run(main)
