"""The ``agent-tools`` console script: the Rust command itself, run in this process.

It is ``agent_tools_cli::command::main``, the function the Rust binary's ``main`` calls,
so the flags, exit statuses and output are the binary's. SIGINT gets its default action
back first, as a Rust binary has it (``call`` then handles Ctrl-C itself, exit 130).
"""

# pyright: reportPrivateUsage=false
# (the package's own extension module)

from __future__ import annotations

import signal
import sys

from . import _native


def main() -> None:
    """Runs ``agent-tools`` with ``sys.argv`` and exits with its status."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_native.cli_main(sys.argv))


if __name__ == "__main__":
    main()
