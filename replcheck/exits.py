"""How a run stops on a signal: SIGTERM and SIGINT raise while a command runs (so that the finally
blocks that remove staging directories and stop servers run), and the exit code says which came."""
from __future__ import annotations

import contextlib
import signal
import sys
import threading


# 0 all pass, 1 a violation or finding, 2 bad input or usage, 3 replcheck itself failed (an
# internal error or the environment: never read as a verdict)
EXIT_OK, EXIT_VIOLATION, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class UsageError(Exception):
    """A command line that cannot be carried out as given: exit 2, one line."""


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt for SIGINT: the finally blocks that remove staging
    directories and stop servers run on either."""


stopped_by: list[int] = []  # the signal that stopped this run, if one did


def _raise(signum, frame):
    stopped_by.append(signum)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def check() -> None:
    """Raise a stop signal again whose exception was lost. Python runs a handler between any two
    steps; one that raised inside a callback (an import lock's weakref callback, an at-fork
    handler) is printed as "Exception ignored" and dropped, and the stopped run went on to its end."""
    if stopped_by:
        raise Terminated() if stopped_by[0] == signal.SIGTERM else KeyboardInterrupt()


@contextlib.contextmanager
def on_signals():
    """SIGTERM and SIGINT raise while a command runs, and are remembered: an extension that was
    running when one came (jsonschema-rs, pyarrow) may hand the exception back as another, which is
    still the signal. The handlers are the caller's again afterwards (main also runs in-process)."""
    stopped_by.clear()
    mine = threading.current_thread() is threading.main_thread()
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)} if mine else {}
    for sig, default in ((signal.SIGTERM, signal.SIG_DFL), (signal.SIGINT, signal.default_int_handler)):
        if mine and before[sig] == default:
            signal.signal(sig, _raise)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def stopped() -> int:
    terminated = stopped_by[:1] == [signal.SIGTERM]
    stopped_by.clear()  # told: a later run in this process starts unstopped
    print(f"replcheck: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
    return 143 if terminated else 130
