"""What the harness raises: a server not found, not started, not reached, or a statement that failed."""
from __future__ import annotations


class HarnessError(Exception):
    """A server could not be found, started, stopped or reached."""


class ServerNotFound(HarnessError):
    pass


class TopologyError(HarnessError, ValueError):
    pass


class ServerStartError(HarnessError):
    """A server would not start (the machine's or the build's problem, not the History's): the
    message's first line has the server's own [ERROR] line and `log`, the kept error log."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


class NodeDown(HarnessError):
    """An operation asked of a node that is not running: the History's doing (a smaller History
    being shrunk may drop the restart an operation needed), not the machine's."""


class NoAnswer(HarnessError):
    """A statement sent and not answered within its bound (`timeout_s`): the server may be stuck (a
    hang is its behaviour, observed and reported) or only slow; the runner records it and ends the
    run there rather than fail (Ops.statement)."""

    def __init__(self, node: str, timeout_s: float, statement: str):
        self.node, self.timeout_s, self.statement = node, timeout_s, statement
        super().__init__(f"node {node}: statement did not finish within {timeout_s:g} s: {statement[:200]}")


class SqlError(HarnessError):
    """A statement failed: the MariaDB error number, SQLSTATE and message (client errors too, e.g. 2003)."""

    def __init__(self, node: str, errno: int, sqlstate: str, message: str, statement: str = ""):
        self.node, self.errno, self.sqlstate, self.message, self.statement = node, errno, sqlstate, message, statement
        super().__init__(f"node {node}: ERROR {errno} ({sqlstate}): {message}")


# ---------------------------------------------------------------------------------------------
# Binaries

