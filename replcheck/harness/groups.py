"""Server groups: several Histories run at once, each on servers of its own (the harness gives each
run its own ports and directories), since a server group mostly waits for the History's time to
pass. The results come in the items' order, whatever order the runs end in. When one run fails or
the caller stops (a signal, an error), every other group is abandoned at its runner's next step and
its servers torn down before the failure goes on up."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

from .errors import HarnessError

T = TypeVar("T")
R = TypeVar("R")

_abandon = threading.Event()  # set while the groups of a failed run tear down


class Abandoned(HarnessError):
    """This run stopped because another group's run failed, or its caller stopped."""


def wait(seconds: float) -> None:
    """A runner's sleep: ended early, with Abandoned, when its groups are being torn down."""
    if _abandon.wait(seconds) if seconds > 0 else _abandon.is_set():
        raise Abandoned("stopped: another server group's run failed, or the run was stopped")


def in_groups(fn: Callable[[T], R], items: Iterable[T], groups: int) -> Iterator[R]:
    """fn of each item, in the items' order; `groups` of them at once (1: one after the other).
    The first failure, whichever item's, abandons the others and is the one raised."""
    if groups <= 1:
        yield from map(fn, items)
        return
    failed: list[BaseException] = []

    def run(item: T) -> R:
        try:
            return fn(item)
        except BaseException as e:
            if not isinstance(e, Abandoned):
                failed.append(e)
            _abandon.set()
            raise

    # The pool's threads live until every item is done: a server dies with the thread that started it (PR_SET_PDEATHSIG).
    pool = ThreadPoolExecutor(groups, thread_name_prefix="server-group")
    try:
        yield from pool.map(run, items)
    except BaseException as e:
        _abandon.set()
        if isinstance(e, Abandoned) and failed:
            raise failed[0] from None
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _abandon.clear()
