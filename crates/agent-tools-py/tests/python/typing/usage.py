"""A typed program using agent_tools as docs/python.md shows it; pyright checks it in strict mode
(test_stubs.py), so the annotations and the stubs say what the code does."""

from __future__ import annotations

import asyncio

import agent_tools
from agent_tools import ALLOW_ONCE, Answer, AnswerLike, Approval, Progress, Question, Run, Surface, ToolResult, ToolSpec


async def ask(card: Question | Approval) -> AnswerLike:
    if isinstance(card, Approval):
        return ALLOW_ONCE if card.tier != "exec" else False
    if card.allow_free_text:
        return Answer(labels=card.labels[:1], text="because")
    return card.labels[0] if card.labels else None


def on_progress(report: Progress) -> None:
    total: float | None = report.total
    print(report.message, report.progress, total)


async def main() -> None:
    async with Run(root=".", cap="write", config=None, set={"eval.timeout_s": 60}, approval=True, ask=ask) as run:
        specs: list[ToolSpec] = run.tools()
        names: list[str] = [spec.name for spec in specs if spec.tier == "read" and spec.output_schema is not None]
        read: Surface = run.surface("read")
        r: ToolResult = await read.call(
            "ast_grep", {"pattern": "$X.unwrap()", "language": "rust"}, on_progress=on_progress, ask=ask
        )
        text: str = r.text
        failed: bool = r.is_error or r.refused
        print(names, text, failed, r.structured, [image.mime for image in r.images], run.root, run.closed)
    try:
        with Run(".", cap="read", no_config=True) as blocking:
            blocking.call_sync("ask_user", {"question": "ok?", "allow_free_text": True}, ask=lambda card: "yes")
    except agent_tools.ConfigError as e:
        print(e)
    except (agent_tools.ClosedError, agent_tools.HostError, agent_tools.Error):
        raise


asyncio.run(main())
