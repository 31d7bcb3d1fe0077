"""`ask`: ask_user's Question answered, skipped, timed out, unfit then fit, raising, and missing;
the approval gate's Approval allowing, denying, remembering, and with nobody to ask."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_tools import ALLOW_SESSION, Answer, Approval, AnswerLike, Question, Run

CARD = {
    "question": "Which database?",
    "context": "the tests need one",
    "options": [{"label": "sqlite", "description": "a file"}, {"label": "postgres"}],
}


def ask_user(root: Path, ask: object, card: dict[str, object] = CARD) -> tuple[object, list[Question]]:
    asked: list[Question] = []

    async def main() -> object:
        async def host(q: Question | Approval) -> AnswerLike:
            assert isinstance(q, Question)
            asked.append(q)
            answer = ask(q) if callable(ask) else ask
            if isinstance(answer, BaseException):
                raise answer
            return answer  # type: ignore[return-value]

        async with Run(root, cap="read") as run:
            return await run.call("ask_user", card, ask=host)

    return asyncio.run(main()), asked


def test_answered_with_a_label(tmp_path: Path) -> None:
    r, asked = ask_user(tmp_path, "postgres")
    assert (r.is_error, r.structured) == (False, {"outcome": "answered", "labels": ["postgres"], "text": None})
    assert r.text == "the user answered: 2. postgres"
    [q] = asked
    assert (q.question, q.context, q.labels, q.allow_free_text, q.multi_select) == (
        "Which database?", "the tests need one", ["sqlite", "postgres"], False, False
    )
    assert q.options[0].description == "a file" and q.retry_reason is None


def test_answered_with_text_and_several_labels(tmp_path: Path) -> None:
    card = {**CARD, "allow_free_text": True, "multi_select": True}
    r, _ = ask_user(tmp_path, Answer(labels=["sqlite", "postgres"], text="both, in turn"), card)
    assert r.structured == {"outcome": "answered", "labels": ["sqlite", "postgres"], "text": "both, in turn"}


def test_skipped(tmp_path: Path) -> None:
    r, _ = ask_user(tmp_path, None)
    assert (r.is_error, r.structured) == (False, {"outcome": "skipped"})
    assert r.text.startswith("the user skipped the question")


def test_timed_out(tmp_path: Path) -> None:
    r, _ = ask_user(tmp_path, TimeoutError())
    assert (r.is_error, r.structured) == (True, {"outcome": "timed_out"})


def test_an_answer_that_does_not_fit_is_asked_again_with_the_reason(tmp_path: Path) -> None:
    answers = iter(["mysql", "sqlite"])
    r, asked = ask_user(tmp_path, lambda q: next(answers))
    assert r.structured == {"outcome": "answered", "labels": ["sqlite"], "text": None}
    assert [q.retry_reason for q in asked] == [
        None, "this question does not accept a typed answer; choose one of the options"
    ]


def test_answers_that_never_fit_are_an_error_not_a_skip(tmp_path: Path) -> None:
    r, asked = ask_user(tmp_path, ["sqlite", "postgres"])
    assert len(asked) == 3
    assert r.is_error and not r.refused
    assert "did not fit the question, 3 times (last: only one option may be chosen, 2 were)" in r.text


def test_an_exception_in_ask_raises_from_the_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the host broke"):
        ask_user(tmp_path, ValueError("the host broke"))


def test_a_plain_function_answers_too(tmp_path: Path) -> None:
    with Run(tmp_path, cap="read") as run:
        r = run.call_sync("ask_user", CARD, ask=lambda q: "sqlite")
    assert r.structured == {"outcome": "answered", "labels": ["sqlite"], "text": None}


def test_without_ask_nobody_is_attached(tmp_path: Path) -> None:
    with Run(tmp_path, cap="read") as run:
        r = run.call_sync("ask_user", CARD)
    assert (r.is_error, r.structured) == (True, {"outcome": "unavailable"})
    assert r.text.startswith(
        "no human is attached to answer questions (this Python call has no `ask` callable); nothing was asked"
    )


def test_the_gate_asks_an_approval_and_its_answer_decides(tmp_path: Path) -> None:
    cards: list[Approval] = []

    def decide(answer: AnswerLike):  # type: ignore[no-untyped-def]
        def ask(card: Question | Approval) -> AnswerLike:
            assert isinstance(card, Approval)
            cards.append(card)
            return answer

        return ask

    with Run(tmp_path, cap="write", approval=True) as run:
        denied = run.call_sync("write", {"path": "a.txt", "content": "no\n"}, ask=decide(False))
        allowed = run.call_sync("write", {"path": "a.txt", "content": "yes\n"}, ask=decide(True))
        nobody = run.call_sync("write", {"path": "a.txt", "content": "nobody\n"})
        # Read tier is allowed by the default policy, without asking.
        read = run.call_sync("ast_grep", {"pattern": "yes", "language": "python"}, ask=decide(False))
        session = run.call_sync("edit", {"path": "a.txt", "old_string": "yes", "new_string": "ok"}, ask=decide(ALLOW_SESSION))
        again = run.call_sync("edit", {"path": "a.txt", "old_string": "ok", "new_string": "fine"})
    assert denied.refused and denied.text.startswith("refused: write did not run, because the user denied it")
    assert not allowed.is_error, allowed.text
    assert nobody.refused and "no human is attached to give it" in nobody.text
    assert not read.is_error and not session.is_error and not again.is_error, (read.text, session.text, again.text)
    assert (tmp_path / "a.txt").read_text() == "fine\n"
    assert [(c.tool, c.tier, c.question) for c in cards] == [
        ("write", "write", "Allow write (write tier) to run?"),
        ("write", "write", "Allow write (write tier) to run?"),
        ("edit", "write", "Allow edit (write tier) to run?"),
    ]
    assert [o.label for o in cards[0].options] == ["allow once", "allow for this session", "deny"]
    assert cards[0].context is not None and "a.txt" in cards[0].context


def test_a_cells_tool_call_is_asked_through_the_calls_ask(tmp_path: Path) -> None:
    cards: list[Approval] = []

    def ask(card: Question | Approval) -> AnswerLike:
        assert isinstance(card, Approval)
        cards.append(card)
        return True

    cell = "r = tool('write', {'path': 'from_cell.txt', 'content': 'hi\\n'})\nprint(r['path'], r['created'])"
    with Run(tmp_path, cap="exec", approval=True) as run:
        r = run.call_sync("eval", {"language": "python", "code": cell, "description": "write from a cell"}, ask=ask)
    assert not r.is_error, r.text
    assert "from_cell.txt True" in r.text
    assert (tmp_path / "from_cell.txt").read_text() == "hi\n"
    assert [(c.tool, c.question) for c in cards] == [
        ("eval", "Allow eval (exec tier) to run?"),
        ("write", "Allow write (write tier) to run?"),
    ]
