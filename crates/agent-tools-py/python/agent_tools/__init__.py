"""The server-bound built-in tools of an AI coding-agent run, in process.

A :class:`Run` wires the tools one checkout can use, as ``agent-tools serve``
wires them for its root (the same configuration: ``agent-tools.toml``, the
``AGENT_TOOLS_*`` variables, ``set`` values), and shows them capped at a tier
(``read < write < exec``)::

    from agent_tools import Run

    async with Run(root=".", cap="write") as run:
        specs = run.tools()   # name, description, tier, input_schema, output_schema
        r = await run.call("ast_grep", {"pattern": "$X.unwrap()", "language": "rust"})
        print(r.text, r.structured, r.is_error)

Calls run on one tokio runtime this module owns; the facade (the Rust crate
``agent-tools``) does the work, not the command line. Tool errors are results
with ``is_error`` (as a model should read them); host failures raise
:class:`Error`. Leaving the block, or the interpreter exiting, ends the run's
kernels, language servers and debug session.

docs/python.md in the repository says more.
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import os
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Union

from . import _native
from ._native import ALLOW_ONCE, ALLOW_SESSION, DENY, ClosedError, ConfigError, Error, HostError

__all__ = [
    "ALLOW_ONCE",
    "ALLOW_SESSION",
    "DENY",
    "Answer",
    "AnswerLike",
    "Approval",
    "AskCallable",
    "Choice",
    "ClosedError",
    "ConfigError",
    "Error",
    "Host",
    "HostError",
    "Image",
    "LanguageServer",
    "Progress",
    "Question",
    "Run",
    "Surface",
    "Tier",
    "ToolResult",
    "ToolSpec",
    "__version__",
]

__version__: str = _native.VERSION

Tier = Literal["read", "write", "exec"]
"""An approval tier; a surface capped at one shows the tools at or below it."""

_TIERS: tuple[Tier, ...] = ("read", "write", "exec")


@dataclass(frozen=True)
class ToolSpec:
    """What a model is shown of one tool."""

    name: str
    """The name the model calls it by, e.g. ``"ast_grep"``."""
    description: str
    """What it does, for the model (the Rust ``Input`` type's doc comment)."""
    tier: Tier
    """Its approval tier."""
    input_schema: dict[str, Any]
    """JSON Schema (draft-07, subschemas inlined) of its arguments: an object schema."""
    output_schema: dict[str, Any] | None
    """JSON Schema of :attr:`ToolResult.structured` on success, or ``None``."""
    parallel_safe: bool
    """Whether calls may overlap; the others run one at a time (``eval``, ``debug``)."""
    destructive: bool
    """Whether a call may change files or run code (MCP's ``destructiveHint``)."""


@dataclass(frozen=True)
class Image:
    """An image a tool produced (a kernel's figure)."""

    mime: str
    """Its MIME type, e.g. ``"image/png"``."""
    data_base64: str
    """Its bytes, base64-encoded."""


@dataclass(frozen=True)
class ToolResult:
    """The result of one call: text for the model, and a value for programs."""

    text: str
    """What the model reads."""
    structured: Any
    """The structured value (MCP ``structuredContent``), valid against the tool's
    ``output_schema``; ``None`` for most errors."""
    is_error: bool
    """Whether the call failed in a way the model should read."""
    refused: bool = False
    """Whether the call never reached its tool: unknown, above the cap, bad arguments, or
    denied by the approval gate (``text`` says which). Implies ``is_error``."""
    images: tuple[Image, ...] = ()
    """Images, in order."""


@dataclass(frozen=True)
class Progress:
    """A report on a running call: from about 2 s in, at least every 2 s, at most twice a second."""

    message: str
    """For a person, e.g. ``"12 s: running; last output: epoch 3"``."""
    progress: float | None = None
    """A count the tool knows (``total`` 100 for a percentage), or ``None``."""
    total: float | None = None
    """What ``progress`` counts up to, when known."""


@dataclass(frozen=True)
class Choice:
    """One option on a card."""

    label: str
    """Its name; an answer names it."""
    description: str | None = None
    """What choosing it means."""


@dataclass(frozen=True)
class Question:
    """``ask_user``'s card: a question the model asks the human."""

    question: str
    context: str | None
    """Why it is asked."""
    options: tuple[Choice, ...]
    """The choices, numbered from 1 in this order (labels distinct)."""
    allow_free_text: bool
    """Whether a typed answer is accepted."""
    multi_select: bool
    """Whether several options may be chosen."""
    retry_reason: str | None = None
    """Why the previous answer to this card did not fit (it is asked again), else ``None``."""

    @property
    def labels(self) -> list[str]:
        """The options' labels, in order."""
        return [c.label for c in self.options]


@dataclass(frozen=True)
class Approval:
    """The approval gate's permission card (``Run(approval=True)``): may this call run?

    Answer ``True`` or :data:`ALLOW_ONCE` to run it, :data:`ALLOW_SESSION` to run it and
    every later call of the tool (on the same paths) without asking, ``False`` or
    :data:`DENY` to refuse it; ``None`` dismisses the card, which refuses it too.
    """

    tool: str
    """The tool asking to run, e.g. ``"write"``."""
    tier: Tier
    """Its tier."""
    question: str
    """``"Allow write (write tier) to run?"``"""
    context: str | None
    """What the call will do: the tool's summary or its arguments, and the paths."""
    options: tuple[Choice, ...]
    """allow once, allow for this session, deny."""
    retry_reason: str | None = None
    """Why the previous answer did not fit, else ``None``."""


@dataclass(frozen=True)
class Answer:
    """An answer to a card: the chosen options' labels, typed text, or both."""

    labels: Sequence[str] = field(default_factory=tuple)
    text: str | None = None


AnswerLike = Union[Answer, str, Sequence[str], bool, None]
"""What ``ask`` may return.

- :class:`Answer`: as given.
- ``str``: an option's label when it names one, else typed text.
- a sequence of ``str``: these options' labels.
- ``bool`` (for an :class:`Approval`): ``True`` is :data:`ALLOW_ONCE`, ``False`` :data:`DENY`.
- ``None``: the human skipped the question (or dismissed the permission card).

Raising ``TimeoutError`` means nobody answered in time. The answer is checked against the
card as an MCP client's is; one that does not fit is asked again with
:attr:`Question.retry_reason` (3 times in all, then the tool says the replies did not fit).
"""

AskCallable = Callable[[Union[Question, Approval]], Union[Awaitable[AnswerLike], AnswerLike]]
"""``ask(card)``: shows a :class:`Question` or :class:`Approval` to the human, returns the answer.

It may be a coroutine function or a plain function; it runs on the event loop of the
call that asked. An exception it raises (other than ``TimeoutError``) ends the call with it.
"""

ProgressCallable = Callable[[Progress], object]


def _card(kind: str, view: dict[str, Any], retry_reason: str | None) -> Question | Approval:
    options = tuple(Choice(o["label"], o.get("description")) for o in view["options"])
    if kind == "approval":
        tier = view.get("tier")
        return Approval(
            tool=view.get("tool") or "",
            tier=tier if tier in _TIERS else "exec",
            question=view["question"],
            context=view.get("context"),
            options=options,
            retry_reason=retry_reason,
        )
    return Question(
        question=view["question"],
        context=view.get("context"),
        options=options,
        allow_free_text=bool(view["allow_free_text"]),
        multi_select=bool(view["multi_select"]),
        retry_reason=retry_reason,
    )


def _reply(card: Question | Approval, answer: object) -> dict[str, Any]:
    """The host's return value read as the native half takes it; raises TypeError for others."""
    if answer is None:
        return {"outcome": "skipped"}
    if isinstance(answer, bool):
        if not isinstance(card, Approval):
            raise TypeError("ask returned a bool for a Question; return an Answer, a label or text")
        return {"outcome": "answered", "labels": [ALLOW_ONCE if answer else DENY], "text": None}
    if isinstance(answer, Answer):
        return {"outcome": "answered", "labels": [str(label) for label in answer.labels], "text": answer.text}
    if isinstance(answer, str):
        if answer in (o.label for o in card.options):
            return {"outcome": "answered", "labels": [answer], "text": None}
        return {"outcome": "answered", "labels": [], "text": answer}
    if isinstance(answer, Sequence):
        labels: list[object] = list(answer)  # pyright: ignore[reportUnknownArgumentType]
        if all(isinstance(label, str) for label in labels):
            return {"outcome": "answered", "labels": labels, "text": None}
    kind = type(answer).__name__  # pyright: ignore[reportUnknownArgumentType]
    raise TypeError(
        f"ask returned {kind}; return an Answer, a label, labels, text, a bool (approval) or None"
    )


async def _ask_once(ask: AskCallable, card: Question | Approval) -> dict[str, Any]:
    try:
        answer = ask(card)
        if inspect.isawaitable(answer):
            answer = await answer
    except TimeoutError:
        return {"outcome": "timed_out"}
    return _reply(card, answer)


def _bridge(ask: AskCallable, loop: asyncio.AbstractEventLoop) -> Callable[..., Callable[[], object]]:
    """The native half's question bridge: runs ``ask`` on ``loop``, answers through ``reply``."""

    def bridge(kind: str, view: dict[str, Any], retry_reason: str | None, reply: _native.Reply) -> Callable[[], object]:
        card = _card(kind, view, retry_reason)
        future = asyncio.run_coroutine_threadsafe(_ask_once(ask, card), loop)

        def settled(done: Any) -> None:
            if done.cancelled():
                return
            error = done.exception()
            if error is not None:
                reply.fail(error)
            else:
                reply.answer(done.result())

        future.add_done_callback(settled)
        return future.cancel

    return bridge


def _progress(on_progress: ProgressCallable, loop: asyncio.AbstractEventLoop) -> Callable[..., None]:
    def report(message: str, progress: float | None, total: float | None) -> None:
        try:
            loop.call_soon_threadsafe(on_progress, Progress(message, progress, total))
        except RuntimeError:
            pass  # the loop is closed: nobody is there to read it

    return report


def _result(view: dict[str, Any]) -> ToolResult:
    return ToolResult(
        text=view["text"],
        structured=view["structured"],
        is_error=view["is_error"],
        refused=view["refused"],
        images=tuple(Image(i["mime"], i["data_base64"]) for i in view["images"]),
    )


def _no_running_loop(what: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"{what} blocks, and cannot run inside a running event loop; await the async form instead")


class Surface:
    """The run's tools seen through a tier cap: it lists the tools at or below the cap
    and refuses a call above it (a result with ``refused``), as in Rust."""

    def __init__(self, native: _native.NativeRun, cap: Tier, ask: AskCallable | None) -> None:
        self._native = native
        self._cap: Tier = cap
        self._ask = ask

    @property
    def cap(self) -> Tier:
        """The surface's cap."""
        return self._cap

    def tools(self) -> list[ToolSpec]:
        """The specs this surface shows, in registration order. Raises :class:`ClosedError`."""
        return [ToolSpec(**spec) for spec in self._native.specs(self._cap)]

    async def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallable | None = None,
        ask: AskCallable | None = None,
    ) -> ToolResult:
        """Calls tool ``name`` with ``args`` (JSON-like values) and returns its result.

        ``on_progress`` gets a :class:`Progress` now and then on this event loop (nothing
        for a call under 2 s). ``ask`` answers the questions the call asks (``ask_user``'s
        :class:`Question`, the gate's :class:`Approval`); without it, and without the run's,
        nobody is attached: ``ask_user`` says so, and the gate denies. Cancelling the
        awaiting task cancels the call: a cell is interrupted, a lock freed, a walk stopped,
        and a write under way finishes all or nothing.

        Raises :class:`ClosedError` (the run is closed, or closed during the call),
        :class:`HostError`, ``TypeError`` for arguments that are not JSON, and what ``ask``
        raised.
        """
        loop = asyncio.get_running_loop()
        ask = ask if ask is not None else self._ask
        view = await self._native.call(
            self._cap,
            name,
            dict(args) if args is not None else {},
            _progress(on_progress, loop) if on_progress is not None else None,
            _bridge(ask, loop) if ask is not None else None,
        )
        return _result(view)

    def call_sync(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        on_progress: ProgressCallable | None = None,
        ask: AskCallable | None = None,
    ) -> ToolResult:
        """:meth:`call`, blocking: runs it on an event loop of its own in this thread, so
        ``on_progress`` and ``ask`` run here. Ctrl-C cancels the call, then raises
        ``KeyboardInterrupt``. Raises ``RuntimeError`` inside a running event loop."""
        _no_running_loop("call_sync")
        return asyncio.run(self.call(name, args, on_progress=on_progress, ask=ask))


@dataclass(frozen=True)
class LanguageServer:
    """A language server a :class:`Host` runs: its id, its root (a project root; one per
    worktree of a process serving several), its pid, and how many open runs use it."""

    server: str
    root: str
    pid: int | None
    runs: int


class Host:
    """The language servers of many runs in one process, as ``agent-tools serve --http`` shares them.

    Runs made with ``Run(..., host=host)`` share the host's servers: runs on one checkout use
    one process per server, and runs on git worktrees of one repository one process with each
    worktree as a workspace folder (where the server takes folders added at run time). A server
    no open run uses is kept ``lsp_idle_s`` seconds for the next run, then stopped; with
    ``lsp_memory_mb``, such servers are stopped sooner, least recently used first, while the
    servers' resident memory together is over it. The last ones stop when the host and its
    runs are garbage-collected, or the interpreter exits.

    The runs' parse trees are the host's too: kept in memory for all its runs, and on disk in
    ``tree_store`` (by default ``$XDG_CACHE_HOME/agent-tools/trees``, else
    ``~/.cache/agent-tools/trees``) up to ``tree_store_mb`` MiB, where later processes find
    them; ``tree_store_mb=0`` keeps none on disk.
    """

    def __init__(
        self,
        *,
        lsp_idle_s: float = 600.0,
        lsp_memory_mb: int | None = None,
        tree_store: str | os.PathLike[str] | None = None,
        tree_store_mb: int = 1024,
    ) -> None:
        _native_hosts[self] = _native.NativeHost(lsp_idle_s, lsp_memory_mb, tree_store, tree_store_mb)

    def servers(self) -> list[LanguageServer]:
        """The language servers running now."""
        return [LanguageServer(server, root, pid, runs) for server, root, pid, runs in _native_hosts[self].servers()]


# Each Host's native half, for the runs wired with it (a run keeps the servers it shares alive).
_native_hosts: weakref.WeakKeyDictionary[Host, _native.NativeHost] = weakref.WeakKeyDictionary()


class Run(Surface):
    """One run: the tools a checkout can use, wired as ``agent-tools serve --root ROOT`` wires them.

    ``root`` is the directory every path argument resolves inside. ``cap`` is the run's
    tier cap (``"read"``, ``"write"`` or ``"exec"``; at ``read`` a bwrap enclosure mounts the
    root read-only). ``config`` is a configuration file; without it the root's
    ``agent-tools.toml`` is read, unless ``no_config``. ``set`` overrides settings by key
    (``{"eval.timeout_s": 60}``; ``agent-tools config`` lists them), over the environment's
    ``AGENT_TOOLS_*`` and the file. With ``approval``, write and exec calls are asked
    (``[approval]`` policy) through ``ask`` as :class:`Approval` cards, as ``serve --ask``
    asks; ``ask`` is the default for calls that give none. With ``host``, its language servers
    are the :class:`Host`'s, shared with the host's other runs; without, they are its own.

    Wiring starts no process: servers, kernels and adapters start on first use. Raises
    :class:`ConfigError` for a root that is not a directory, a bad cap, or a configuration
    that does not check.

    Use it as ``async with Run(...) as run:`` (or ``with`` for scripts with
    :meth:`call_sync`); leaving the block closes it: the calls in flight are cancelled and
    the run's processes ended. A run still open when the interpreter exits is closed then.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        cap: Tier = "write",
        config: str | os.PathLike[str] | None = None,
        *,
        no_config: bool = False,
        set: Mapping[str, object] | None = None,
        approval: bool = False,
        ask: AskCallable | None = None,
        host: Host | None = None,
    ) -> None:
        sets = [f"{key}={_setting(value)}" for key, value in (set or {}).items()]
        native = _native.NativeRun(
            os.fspath(root),
            cap,
            os.fspath(config) if config is not None else None,
            no_config,
            sets,
            approval,
            _native_hosts[host] if host is not None else None,
        )
        super().__init__(native, cap, ask)
        self._root: str = os.path.abspath(os.fspath(root))
        _open_runs.add(self)

    @property
    def root(self) -> str:
        """The run's root, absolute."""
        return self._root

    @property
    def closed(self) -> bool:
        """Whether the run is closed."""
        return self._native.closed

    def surface(self, cap: Tier) -> Surface:
        """The run capped lower: ``run.surface("read")`` lists only the read tier and refuses
        the rest. Raises :class:`ConfigError` for a cap above the run's."""
        if cap not in _TIERS:
            raise ConfigError(f'cap must be "read", "write" or "exec", not "{cap}"')
        if _TIERS.index(cap) > _TIERS.index(self._cap):
            raise ConfigError(f"a surface of this run is capped at {self._cap} at most, not {cap}")
        return Surface(self._native, cap, self._ask)

    async def close(self) -> None:
        """Cancels the calls in flight, then ends the run's kernels, language servers and
        debug session. Later calls raise :class:`ClosedError`; closing twice does nothing."""
        _open_runs.discard(self)
        await self._native.close()

    def close_sync(self) -> None:
        """:meth:`close`, blocking until the processes are ended."""
        _open_runs.discard(self)
        self._native.close_blocking()

    async def __aenter__(self) -> Run:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close_sync()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"Run(root={self._root!r}, cap={self._cap!r}, {state})"


def _setting(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_open_runs: weakref.WeakSet[Run] = weakref.WeakSet()


@atexit.register
def _close_open_runs() -> None:
    for run in list(_open_runs):
        run.close_sync()
    # A runtime thread resolving an awaitable may still hold the GIL; the interpreter must not
    # finalize under it. Each resolution is a task of the runtime until it lets go of the GIL,
    # so this waits for exactly those. Bounded: a task that lingers delays the exit 1 s at most.
    _native.settle(1.0)
