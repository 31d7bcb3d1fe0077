"""Opens a run on a running `agent-tools serve --http` host through its admin API, uses it
with the official MCP Python SDK, and closes it; prints one JSON line per step.
The Rust test `http_mcp.rs` asserts the values.

usage: http_admin.py BASE TOKEN ROOT   (BASE: http://127.0.0.1:PORT)
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


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


async def main():
    async with httpx2.AsyncClient() as http:
        none = await http.post(f"{BASE}/runs", json={"root": ROOT})
        bad = await http.post(f"{BASE}/runs", json={"root": ROOT + "/no-such-dir"}, headers=HOST)
        above = await http.post(f"{BASE}/runs", json={"root": ROOT, "cap": "admin"}, headers=HOST)
        report("refused opens", none=none.status_code, bad=bad.status_code, bad_error=bad.json()["error"],
               above=above.status_code, above_error=above.json()["error"])
        opened = await http.post(f"{BASE}/runs", json={"root": ROOT}, headers=HOST)
        run = opened.json()
        report("opened", status=opened.status_code, id=run["id"], url=run["url"], token_length=len(run["token"]))

        transport = streamable_http_client(
            run["url"], http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {run['token']}"}))
        async with Client(transport, mode="legacy") as client:
            cell = {"language": "python", "code": "import os\nos.getpid()", "description": "the kernel's pid"}
            result = await client.call_tool("eval", cell)
            report("kernel", text="\n".join(b.text for b in result.content if b.type == "text"), is_error=result.is_error)

        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        host_token = await http.post(run["url"], json=body, headers={**accept, **HOST})
        closed = await http.delete(f"{BASE}/runs/{run['id']}", headers=HOST)
        after = await http.post(run["url"], json=body, headers={**accept, "Authorization": f"Bearer {run['token']}"})
        again = await http.delete(f"{BASE}/runs/{run['id']}", headers=HOST)
        report("closed", host_token_on_run=host_token.status_code, closed=closed.status_code, after=after.status_code,
               again=again.status_code)


anyio.run(main)
