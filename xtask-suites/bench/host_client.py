"""The client side of `cargo xtask bench host`: opens N runs and asks each for one
`lsp definition` through the official MCP Python SDK, then holds them open until stdin
closes, so the caller can measure the servers' memory meanwhile.

usage: host_client.py stdio BINARY LANG_SERVER FILE LINE SYMBOL ROOT...
       host_client.py http BASE TOKEN FILE LINE SYMBOL ROOT...
       host_client.py forward BINARY BASE FILE LINE SYMBOL ROOT...   (the host's token in AGENT_TOOLS_HOST_TOKEN)
       host_client.py churn BASE TOKEN FILE LINE SYMBOL ROOT COUNT WARMUP
       host_client.py load BASE TOKEN FILE LINE SYMBOL ROOT RUNS SECONDS

stdio: one `agent-tools serve --root ROOT` process per root (separate processes, as MCP
clients start them). http: one run per root, opened on the host at BASE with its admin
API. forward: one `agent-tools serve --host BASE` process per root, started in the root. Either way the first run answers alone, then the others at once. Prints one JSON
line: {"first_ms": [...], "errors": [...]}; each run's first answer in ms.

churn: COUNT runs one after another, each opened (admin API), asked once, and closed
(`DELETE /runs/{id}`); prints {"warm": true} after WARMUP runs and waits for a line on
stdin (the caller measures), then {"runs": COUNT, "errors": N, "first_error": …, "ms": …}
at the end and waits again.

load: RUNS runs opened at once, each calling `ast_grep` (the pattern `$X.$Y($$$A)` in FILE)
and `lsp hover` (FILE, LINE, SYMBOL) in turn for SECONDS; prints {"calls": {tool: [ms, …]},
"errors": N, "first_error": …}.
"""

import contextlib
import json
import os
import sys
import time

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

MODE = sys.argv[1]
A, B, FILE, LINE, SYMBOL = sys.argv[2:7]
ROOTS = sys.argv[7:]
DEFINITION = {"action": "definition", "file": FILE, "line": int(LINE), "symbol": SYMBOL}


def text(result):
    return "\n".join(b.text for b in result.content if b.type == "text")


async def ask(client, times, errors):
    start = time.monotonic()
    result = await client.call_tool("lsp", DEFINITION)
    times.append(round((time.monotonic() - start) * 1000))
    if result.is_error or "definition" not in text(result):
        errors.append(text(result)[:300])


async def churn(base, token, root, count, warmup):
    errors, first_error = 0, None
    host = {"Authorization": f"Bearer {token}"}
    start = time.monotonic()
    async with httpx2.AsyncClient(timeout=60) as http:
        for i in range(count):
            if i == warmup:
                print(json.dumps({"warm": True}), flush=True)
                await anyio.to_thread.run_sync(sys.stdin.readline)
                start = time.monotonic()
            try:
                run = (await http.post(f"{base}/runs", json={"root": root}, headers=host)).json()
                headers = {"Authorization": f"Bearer {run['token']}"}
                transport = streamable_http_client(run["url"], http_client=create_mcp_http_client(headers=headers))
                async with Client(transport, mode="auto") as client:
                    result = await client.call_tool("lsp", DEFINITION)
                    if result.is_error or "definition" not in text(result):
                        raise RuntimeError(text(result)[:300])
                closed = await http.delete(f"{base}/runs/{run['id']}", headers=host)
                if closed.status_code != 204:
                    raise RuntimeError(f"DELETE answered {closed.status_code}")
            except Exception as e:  # noqa: BLE001 - every failure is counted and the first shown
                errors += 1
                first_error = first_error or repr(e)[:300]
    ms = round((time.monotonic() - start) * 1000)
    print(json.dumps({"runs": count, "errors": errors, "first_error": first_error, "ms": ms}), flush=True)
    await anyio.to_thread.run_sync(sys.stdin.read)


async def load(base, token, root, runs, seconds):
    times = {"ast_grep": [], "lsp hover": []}
    errors, first_error = 0, None
    language = "rust" if FILE.endswith(".rs") else "python"
    search = {"pattern": "$X.$Y($$$A)", "language": language, "path": FILE, "max_results": 20}
    hover = {"action": "hover", "file": FILE, "line": int(LINE), "symbol": SYMBOL}
    async with contextlib.AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
        clients = []
        for _ in range(runs):
            run = (await http.post(f"{base}/runs", json={"root": root}, headers={"Authorization": f"Bearer {token}"})).json()
            headers = {"Authorization": f"Bearer {run['token']}"}
            transport = streamable_http_client(run["url"], http_client=create_mcp_http_client(headers=headers))
            clients.append(await stack.enter_async_context(Client(transport, mode="legacy")))
        # Every run's first hover, so the server is warm and every run has joined it.
        for client in clients:
            await client.call_tool("lsp", hover)
        end = time.monotonic() + seconds

        async def work(client):
            nonlocal errors, first_error
            while time.monotonic() < end:
                for name, tool, args in (("ast_grep", "ast_grep", search), ("lsp hover", "lsp", hover)):
                    start = time.monotonic()
                    try:
                        result = await client.call_tool(tool, args)
                        if result.is_error:
                            raise RuntimeError(text(result)[:300])
                    except Exception as e:  # noqa: BLE001 - every failure is counted and the first shown
                        errors += 1
                        first_error = first_error or repr(e)[:300]
                        continue
                    times[name].append(round((time.monotonic() - start) * 1000, 2))

        async with anyio.create_task_group() as group:
            for client in clients:
                group.start_soon(work, client)
    print(json.dumps({"calls": times, "errors": errors, "first_error": first_error}), flush=True)


async def main():
    if MODE == "load":
        return await load(A, B, ROOTS[0], int(ROOTS[1]), float(ROOTS[2]))
    if MODE == "churn":
        return await churn(A, B, ROOTS[0], int(ROOTS[1]), int(ROOTS[2]))
    times, errors = [], []
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        if MODE == "stdio":
            binary, server = A, B
            for root in ROOTS:
                params = StdioServerParameters(command=binary, args=["serve", "--root", root, "--lsp", server],
                                               env={"AGENT_TOOLS_LOG": "warn", "PATH": __import__("os").environ["PATH"]},
                                               cwd=root)
                clients.append(await stack.enter_async_context(Client(params, mode="legacy")))
        elif MODE == "forward":
            binary, base = A, B
            env = {key: os.environ[key] for key in ("PATH", "AGENT_TOOLS_HOST_TOKEN")}
            for root in ROOTS:
                params = StdioServerParameters(command=binary, args=["serve", "--host", base],
                                               env={"AGENT_TOOLS_LOG": "warn", **env}, cwd=root)
                clients.append(await stack.enter_async_context(Client(params, mode="legacy")))
        else:
            base, token = A, B
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=60))
            for root in ROOTS:
                run = (await http.post(f"{base}/runs", json={"root": root},
                                       headers={"Authorization": f"Bearer {token}"})).json()
                headers = {"Authorization": f"Bearer {run['token']}"}
                transport = streamable_http_client(run["url"], http_client=create_mcp_http_client(headers=headers))
                clients.append(await stack.enter_async_context(Client(transport, mode="legacy")))
        await ask(clients[0], times, errors)
        async with anyio.create_task_group() as group:
            for client in clients[1:]:
                group.start_soon(ask, client, times, errors)
        print(json.dumps({"first_ms": times, "errors": errors}), flush=True)
        # Held open until the caller has measured.
        await anyio.to_thread.run_sync(sys.stdin.read)


anyio.run(main)
