"""Type stubs of ``agent_tools._native``, the Rust extension (``crates/agent-tools-py/src``).

Not a public API: ``agent_tools`` wraps it. ``tests/python/test_stubs.py`` checks that
every name here is in the module and that each function's parameters match its
``__text_signature__``.
"""

import os
from collections.abc import Awaitable, Callable
from typing import Any, final

VERSION: str
ALLOW_ONCE: str
ALLOW_SESSION: str
DENY: str

class Error(Exception): ...
class ConfigError(Error): ...
class ClosedError(Error): ...
class HostError(Error): ...

def cli_main(argv: list[str]) -> int: ...
def settle(timeout_s: float) -> bool: ...

@final
class Reply:
    def answer(self, reply: dict[str, Any]) -> None: ...
    def fail(self, error: BaseException) -> None: ...

@final
class NativeHost:
    def __new__(
        cls,
        lsp_idle_s: float = 600.0,
        lsp_memory_mb: int | None = None,
        tree_store: str | os.PathLike[str] | None = None,
        tree_store_mb: int = 1024,
    ) -> NativeHost: ...
    def servers(self) -> list[tuple[str, str, int | None, int]]: ...

@final
class NativeRun:
    def __new__(
        cls,
        root: str,
        cap: str,
        config: str | None = None,
        no_config: bool = False,
        sets: list[str] = ...,
        approval: bool = False,
        host: NativeHost | None = None,
    ) -> NativeRun: ...
    @property
    def cap(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def specs(self, cap: str) -> list[dict[str, Any]]: ...
    def call(
        self,
        cap: str,
        name: str,
        args: object,
        progress: Callable[[str, float | None, float | None], None] | None = None,
        ask: Callable[[str, dict[str, Any], str | None, Reply], Callable[[], object]] | None = None,
    ) -> Awaitable[dict[str, Any]]: ...
    def close(self) -> Awaitable[None]: ...
    def close_blocking(self) -> None: ...
