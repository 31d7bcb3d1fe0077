"""Opens two runs on one checkout on a running `agent-tools serve --http` host (admin API), asks
each for a definition with the official MCP Python SDK, reads each run's `lsp status`, closes
the first run, and asks the second again; prints one JSON line per step. The Rust test
`http_mcp.rs` asserts the values.

usage: http_shared.py BASE TOKEN ROOT   (BASE: http://127.0.0.1:PORT)
"""

import json
import sys

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BASE, TOKEN, ROOT = sys.argv[1:4]
HOST = {"Authorization": f"Bearer {TOKEN}"}
DEFINITION = {"action": "definition", "file": "app.py", "line": 5, "symbol": "greet"}


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


def text(result):
    return "\n".join(b.text for b in result.content if b.type == "text")


def client(run, mode):
    headers = {"Authorization": f"Bearer {run['token']}"}
    return Client(streamable_http_client(run["url"], http_client=create_mcp_http_client(headers=headers)), mode=mode)


async def main():
    async with httpx2.AsyncClient() as http:
        first = (await http.post(f"{BASE}/runs", json={"root": ROOT}, headers=HOST)).json()
        second = (await http.post(f"{BASE}/runs", json={"root": ROOT}, headers=HOST)).json()
        async with client(first, "legacy") as a, client(second, "auto") as b:
            for name, run in (("first", a), ("second", b)):
                result = await run.call_tool("lsp", DEFINITION)
                report(f"{name} definition", text=text(result), is_error=result.is_error)
            for name, run in (("first", a), ("second", b)):
                report(f"{name} status", text=text(await run.call_tool("lsp", {"action": "status"})))
        closed = await http.delete(f"{BASE}/runs/{first['id']}", headers=HOST)
        async with client(second, "auto") as b:
            result = await b.call_tool("lsp", DEFINITION)
            report("second after the first closed", closed=closed.status_code, text=text(result),
                   is_error=result.is_error, status=text(await b.call_tool("lsp", {"action": "status"})))


anyio.run(main)
