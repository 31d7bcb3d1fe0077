"""Two runs, `a` and `b`, of one `agent-tools serve --http --vibe` host, driven with the official
MCP Python SDK (2026-07-28, the SDK's default mode): what run a holds (a launched debug session
stopped at a breakpoint, a running worker, a question waiting for its answer in an input-required
round) is tried from run b, then used in run a. Prints one JSON line per step; the Rust test
`http_mcp.rs` asserts the values.

usage: http_isolation.py URL_A URL_B TOKEN
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL_A, URL_B, TOKEN = sys.argv[1:4]
QUESTION = {"question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]}
BLUE = {"question": {"action": "accept", "content": {"choice": "blue"}}}


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


def text(result):
    return "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")


async def nobody(context, params):
    # The questions below are answered in their rounds; a client that elicits gets rounds.
    return types.ElicitResult(action="cancel")


def connect(url):
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}))
    return Client(transport, mode="auto", elicitation_callback=nobody)


async def call(client, tool, args):
    result = await client.call_tool(tool, args)
    return {"text": text(result), "is_error": result.is_error, "structured": result.structured_content}


async def main():
    async with connect(URL_A) as a, connect(URL_B) as b:
        # A launched debug session, stopped at a breakpoint in run a.
        await call(a, "debug", {"op": "breakpoints", "file": "dbg.py", "lines": [2]})
        report("a launches", **await call(a, "debug", {"op": "launch", "program": "dbg.py"}))
        report("b status", **await call(b, "debug", {"op": "status"}))
        report("b continue", **await call(b, "debug", {"op": "continue"}))
        report("b terminate", **await call(b, "debug", {"op": "terminate"}))
        report("a status", **await call(a, "debug", {"op": "status"}))
        report("a continue", **await call(a, "debug", {"op": "continue"}))

        # A running worker of run a.
        report("a spawns", **await call(a, "vibe_spawn", {"brief": "wait", "label": "sleeper"}))
        report("b list", **await call(b, "vibe_list", {}))
        report("b kill", **await call(b, "vibe_kill", {"worker_id": "w1"}))
        report("b wait", **await call(b, "vibe_wait", {"worker_id": "w1", "timeout_seconds": 1}))
        report("a list", **await call(a, "vibe_list", {}))

        # A question of run a waiting in an input-required round; its requestState tried in run b.
        first = await a.session.call_tool("ask_user", QUESTION, allow_input_required=True)
        report("a asks", result_type=first.result_type, keys=sorted(first.input_requests or {}))
        crossed = await b.session.call_tool("ask_user", QUESTION, input_responses=BLUE,
                                            request_state=first.request_state, allow_input_required=True)
        report("b answers a's question", text=text(crossed), is_error=crossed.is_error)
        answered = await a.session.call_tool("ask_user", QUESTION, input_responses=BLUE,
                                             request_state=first.request_state, allow_input_required=True)
        report("a answers", text=text(answered), is_error=answered.is_error)


anyio.run(main)
