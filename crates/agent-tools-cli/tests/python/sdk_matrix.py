"""Drives `agent-tools serve` with the official MCP Python SDK's high-level
`mcp.client.client.Client`, in one connection mode, and prints one JSON line
per case of the matrix: questions (answer, skip, decline, timeout), an
approval allowed and denied, a long `eval` with progress, a cancelled cell,
and (2026-07-28 only) a forged, altered, replayed and mismatched
`requestState`. The Rust test `sdk_client_mcp.rs` asserts the values.

usage: sdk_matrix.py AGENT_TOOLS MODE ROOT
  MODE: auto (the SDK's default: server/discover, 2026-07-28) or legacy (initialize, 2025-11-25)
"""

import json
import os
import sys

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

BINARY, MODE, ROOT = sys.argv[1], sys.argv[2], sys.argv[3]


def report(case, **values):
    print(json.dumps({"case": case, **values}), flush=True)


def text(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


class Human:
    """Answers each form from a script: (action, content) or a callable, recording what was shown."""

    def __init__(self):
        self.replies = []
        self.shown = []

    async def __call__(self, context, params):
        self.shown.append(params.message)
        reply = self.replies.pop(0) if self.replies else ("cancel", None)
        if callable(reply):
            return await reply()
        action, content = reply
        return types.ElicitResult(action=action, content=content)


def server(*extra, env=None):
    return StdioServerParameters(
        command=BINARY,
        args=["serve", "--root", ROOT, "--cap", "exec", *extra],
        env={"AGENT_TOOLS_LOG": "warn", **(env or {})},
        cwd=ROOT,
    )


QUESTION = {"question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]}


async def questions():
    human = Human()
    async with Client(server(), mode=MODE, elicitation_callback=human) as client:
        report("protocol", version=client.protocol_version)
        human.replies = [("accept", {"choice": "blue"})]
        result = await client.call_tool("ask_user", QUESTION)
        report("ask answer", text=text(result), is_error=result.is_error, shown=human.shown[-1])
        human.replies = [("cancel", None)]
        result = await client.call_tool("ask_user", QUESTION)
        report("ask skip", text=text(result), is_error=result.is_error)
        human.replies = [("decline", None)]
        result = await client.call_tool("ask_user", QUESTION)
        report("ask decline", text=text(result), is_error=result.is_error)
        # An answer that does not fit, then one that does: asked again with the reason.
        human.replies = [("accept", {"choice": "green"}), ("accept", {"choice": "red"})]
        result = await client.call_tool("ask_user", QUESTION)
        report("ask unfit then fit", text=text(result), shown=human.shown[-1].splitlines()[0])

        # A long cell with progress, then a cancelled one, then the kernel still answers.
        seen = []

        async def progress(value, total, message):
            seen.append(value)

        code = "import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(1)"
        result = await client.call_tool("eval", {"code": code, "description": "count"}, progress_callback=progress)
        report("eval progress", text=text(result), notifications=len(seen), growing=seen == sorted(set(seen)))
        await client.call_tool("eval", {"code": "kept = 41", "description": "set"})
        with anyio.move_on_after(3):
            await client.call_tool("eval", {"code": "while True:\n    pass", "description": "spin"})
        result = await client.call_tool("eval", {"code": "kept + 1", "description": "after"})
        report("eval cancelled", text=text(result))


async def timeout():
    human = Human()
    env = {"AGENT_TOOLS_ASK_TIMEOUT_S": "1"}
    async with Client(server(env=env), mode=MODE, elicitation_callback=human) as client:

        async def late():
            await anyio.sleep(2.5)
            return types.ElicitResult(action="accept", content={"choice": "red"})

        if MODE == "legacy":
            # On a handshake session the client's own time limit says so in the result's _meta.
            human.replies = [lambda: _timed_out()]
        else:
            human.replies = [late]
        result = await client.call_tool("ask_user", QUESTION)
        report("ask timeout", text=text(result), is_error=result.is_error)


async def _timed_out():
    return types.ElicitResult(action="cancel", _meta={"reason": "timeout"})


async def approvals():
    human = Human()
    async with Client(server("--ask"), mode=MODE, elicitation_callback=human) as client:
        human.replies = [("accept", {"choice": "allow once"})]
        result = await client.call_tool("write", {"path": "allowed.txt", "content": "yes\n"})
        report("approval allowed", text=text(result), is_error=result.is_error, shown=human.shown[-1].splitlines()[0],
               written=_read("allowed.txt"))
        human.replies = [("accept", {"choice": "deny"})]
        result = await client.call_tool("write", {"path": "denied.txt", "content": "no\n"})
        report("approval denied", text=text(result), is_error=result.is_error, written=_read("denied.txt"))
        # A cell's own tool() call needs its approval too: it is asked inside the eval call.
        human.replies = [("accept", {"choice": "allow once"}), ("accept", {"choice": "allow once"})]
        human.shown = []
        cell = "r = tool('write', {'path': 'from_cell.txt', 'content': 'hi\\n'})\nprint(r['path'])"
        result = await client.call_tool("eval", {"language": "python", "code": cell, "description": "write from a cell"})
        report("cell tool approval", text=text(result), is_error=result.is_error,
               shown=[message.splitlines()[0] for message in human.shown], written=_read("from_cell.txt"))
        if MODE == "legacy":
            return
        session = client.session
        args = {"path": "forged.txt", "content": "forged\n"}
        allow = {"question": {"action": "accept", "content": {"choice": "allow once"}}}
        # A state this server never gave.
        result = await session.call_tool("write", args, input_responses=allow, request_state="rs0.forged.state",
                                         allow_input_required=True)
        report("forged state", text=text(result), is_error=result.is_error, written=_read("forged.txt"))
        # A real state, altered; then for other arguments; then used twice.
        first = await session.call_tool("write", args, allow_input_required=True)
        state = first.request_state
        report("input required", result_type=first.result_type, keys=sorted(first.input_requests or {}),
               message=first.input_requests["question"].params.message.splitlines()[0])
        altered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        result = await session.call_tool("write", args, input_responses=allow, request_state=altered,
                                         allow_input_required=True)
        report("altered state", text=text(result), is_error=result.is_error, written=_read("forged.txt"))
        other = {"path": "other.txt", "content": "other\n"}
        result = await session.call_tool("write", other, input_responses=allow, request_state=state,
                                         allow_input_required=True)
        report("state for other arguments", text=text(result), is_error=result.is_error, written=_read("other.txt"))
        result = await session.call_tool("write", args, input_responses=allow, request_state=state,
                                         allow_input_required=True)
        report("state answered", text=text(result), is_error=result.is_error, written=_read("forged.txt"))
        os.remove(os.path.join(ROOT, "forged.txt"))
        result = await session.call_tool("write", args, input_responses=allow, request_state=state,
                                         allow_input_required=True)
        report("state replayed", text=text(result), is_error=result.is_error, written=_read("forged.txt"))
        # A retry with no answer: the question comes again, with the reason.
        first = await session.call_tool("write", args, allow_input_required=True)
        again = await session.call_tool("write", args, request_state=first.request_state, allow_input_required=True)
        report("retry without answer", result_type=again.result_type,
               message=again.input_requests["question"].params.message.splitlines()[0], written=_read("forged.txt"))


def _read(name):
    try:
        with open(os.path.join(ROOT, name)) as file:
            return file.read()
    except FileNotFoundError:
        return None


async def main():
    await questions()
    await timeout()
    await approvals()


anyio.run(main)
