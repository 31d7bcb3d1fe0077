"""Times a container's start to its first answered tool call: runs the `podman run -d` argv it is
given, then connects with the official MCP Python SDK and calls `ast_grep` until one call is
answered. Prints one JSON line: {"first_call_ms", "attempts", "text"}. Run by `cargo xtask image --bench`.

usage: first_call.py '{"podman": [ARGV…], "url": URL, "token": TOKEN}'
"""

import json
import subprocess
import sys
import time

import anyio
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ARGS = json.loads(sys.argv[1])
DEADLINE_S = 60


async def first_call():
    headers = {"Authorization": f"Bearer {ARGS['token']}"}
    client = Client(streamable_http_client(ARGS["url"], http_client=create_mcp_http_client(headers=headers)), mode="auto")
    async with client as run:
        result = await run.call_tool("ast_grep", {"pattern": "print($X)", "language": "python"})
        return "\n".join(b.text for b in result.content if b.type == "text")


async def main():
    started = time.monotonic()
    subprocess.run(ARGS["podman"], check=True, stdout=subprocess.DEVNULL)
    attempts = 0
    while True:
        attempts += 1
        try:
            text = await first_call()
            break
        except Exception as error:  # refused or reset while the server is not listening yet
            if time.monotonic() - started > DEADLINE_S:
                raise SystemExit(f"no answer after {DEADLINE_S} s: {error!r}")
            await anyio.sleep(0.02)
    elapsed = time.monotonic() - started
    print(json.dumps({"first_call_ms": round(elapsed * 1000, 1), "attempts": attempts, "text": text}), flush=True)


anyio.run(main)
