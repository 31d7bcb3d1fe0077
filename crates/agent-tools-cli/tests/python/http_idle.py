"""Opens a run on a running `agent-tools serve --http` host whose `host.run_idle_s` is short,
runs a cell longer than that idle time (the run is busy, not idle), then leaves the run idle
and reads its endpoint again; prints one JSON line per step. The Rust test `http_mcp.rs`
asserts the values.

usage: http_idle.py BASE TOKEN ROOT IDLE_S
"""

import json
import sys

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BASE, TOKEN, ROOT, IDLE = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
HOST = {"Authorization": f"Bearer {TOKEN}"}


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


async def main():
    async with httpx2.AsyncClient() as http:
        run = (await http.post(f"{BASE}/runs", json={"root": ROOT}, headers=HOST)).json()
        headers = {"Authorization": f"Bearer {run['token']}"}
        transport = streamable_http_client(run["url"], http_client=create_mcp_http_client(headers=headers))
        async with Client(transport, mode="auto") as client:
            code = f"import time, os\ntime.sleep({IDLE * 2.5})\nos.getpid()"
            result = await client.call_tool("eval", {"language": "python", "code": code, "description": "outlast the idle time"})
            report("long cell", text="\n".join(b.text for b in result.content if b.type == "text"), is_error=result.is_error)
        await anyio.sleep(IDLE * 3)
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        after = await http.post(run["url"], json=body, headers={**accept, **headers})
        closed = await http.delete(f"{BASE}/runs/{run['id']}", headers=HOST)
        report("after the idle time", status=after.status_code, text=after.text, delete=closed.status_code)


anyio.run(main)
