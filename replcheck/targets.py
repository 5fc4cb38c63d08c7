"""The servers a History may be generated for (`generate(..., target=...)`, `--target`): what each
can run. A target is named, not probed: the same (seed, index, target) is the same History on any
machine, whatever server it has installed; a test checks each target's list against its build.
"""
from __future__ import annotations

from dataclasses import dataclass

from replcheck.harness.ops import check_supported
from replcheck.harness.statements import RunnerError
from replcheck.harness.timescale import scale_for, scaled_history


@dataclass(frozen=True)
class Target:
    name: str
    server: str  # as its version names it
    major_minor: tuple[int, int]
    # The History schema's variables this server does not have (a start with one fails, a SET
    # GLOBAL of one is refused): read from the build's `mariadbd --verbose --help`.
    lacks: frozenset[str]
    # Node settings of another server's design it runs the topology without (MySQL's with the
    # --rpl-hierarchical patch: global group IDs; a MariaDB server has none of them)
    drops: tuple[str, ...] = ()

    def refusal(self, history: dict) -> str | None:
        """Why this server cannot run the History (the harness's refusals, a variable it lacks, a
        time it cannot make at the History's time scale); None when it can."""
        try:
            check_supported(history)
            scaled_history(history, scale_for(history))
        except RunnerError as e:
            return str(e)
        for i, n in enumerate(history["header"]["topology"]["nodes"]):
            for name in n.get("variables") or {}:
                if name in self.lacks:
                    return f"topology.nodes[{i}].variables.{name}: {self.server} has no such variable"
        for i, op in enumerate(history["ops"]):
            if op["op"] == "set_global" and op["variable"] in self.lacks:
                return f"ops[{i}]: set_global {op['variable']}: {self.server} has no such variable"
            if op["op"] == "restart" and ("variables" in op or "log_slave_updates" in op):
                # the harness starts a server with the configuration it was created with
                return f"ops[{i}]: restart with another configuration: the harness cannot yet restart {self.server} so"
        return None


TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("server:mariadb-10.11", "MariaDB 10.11", (10, 11),
           frozenset({"replica_parallel_workers", "replica_preserve_commit_order",
                      "rpl_semi_sync_master_wait_for_slave_count"}),
           ("rpl_hierarchical", "rpl_transaction_enabled")),
)}


def get(name: str) -> Target:
    """The target of that name; ValueError naming those there are."""
    if name not in TARGETS:
        raise ValueError(f"no target {name!r} (targets: {', '.join(TARGETS)})")
    return TARGETS[name]
