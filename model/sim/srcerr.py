"""Statements that fail on the source, as a component (the rules are model/srcerr.py's): what a
failed statement leaves in the engine and in the binlog, and the error its event carries for the
replica to expect. A feature on the core's hooks.
"""
from __future__ import annotations

from .. import mutants as M
from .. import srcerr as E
from .component import Feature
from .state import Node


class SourceErrors(Feature):
    """A client statement's error on the source."""

    def statement_error(self, node: Node, trx: str, start: int, op: dict) -> tuple[dict, int | None] | None:
        """The failed statement's answer fields and the error code its binlogged event carries;
        None once the commit is answered (nothing of it is binlogged)."""
        if not op.get("error"):
            return {}, None
        err = op["error"]
        failed = {"errno": err["errno"], "message": err.get("message", "")}
        code = E.left_behind(op.get("engine", "innodb"), bool(op.get("ddl")), err.get("after_changes", False), err["errno"])
        if code is None or M.FAILED_CHANGE_NOT_LOGGED in self.mutants:
            if code is not None:  # the bug: the change stays, the binlog never has it
                self.source.engine_commit(node, trx, None)
            self.emit("commit", node.id, trx=trx, gtid=None, start=start, **failed)
            return None
        return failed, code
