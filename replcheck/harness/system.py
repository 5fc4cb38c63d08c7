"""A real MariaDB server as a System (replcheck.properties.judge): the harness runs a History on
private loopback servers in real time, at `scale` real seconds per History second (None: each
History's own, timescale.scale_for)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from replcheck.spec.contract import NOTHING, Declarations, Trace

from .binaries import find_server
from .runner import Runner, check_server, scale_for, scaled_history


@dataclass
class MariaDB:
    scale: float | None = 0.1
    basedir: str | None = None
    tmpdir: str | None = None
    progress: Callable[[str], None] | None = None
    name: str = "server:mariadb"
    kind: str = "server"
    # By itself a real server declares nothing: every violation is a finding, its known divergences
    # from the seeds pinned with their reasons by its gate (ci/mariadb.toml). The registry's
    # (replcheck.systems) declares what its flavour model does: MariaDB's behaviour, each with why.
    declares: Declarations = field(default=NOTHING)
    flavour: str = ""  # the flavour model its Traces are cross-checked against

    def scale_of(self, history: dict) -> float:
        return self.scale if self.scale is not None else scale_for(history)

    def check(self, history: dict, name: str) -> None:
        """RunnerError, before any server starts, for an op a real server cannot do or a variable
        this server's build lacks."""
        Runner(history, scale=self.scale_of(history), name=name)
        check_server(history, find_server(self.basedir))

    def as_run(self, history: dict, trace: Trace | None = None) -> dict:
        """The History as it actually runs (times scaled, MASTER_DELAY in whole seconds), and as it
        ran when `trace` says ops started late (header `slipped`): what the reference model runs
        to be compared with this server's Trace."""
        h = scaled_history(history, self.scale_of(history))
        slipped = dict(trace.header.get("slipped", [])) if trace is not None else {}
        slip = 0
        for i, op in sorted(enumerate(h["ops"]), key=lambda x: (x[1]["at"], x[0])):  # the order the runner ran them
            slip = slipped.get(i, slip)
            op["at"] += slip
        if "end_us" in h["header"]:
            h["header"]["end_us"] += slip
        return h

    def run(self, history: dict) -> Trace:
        runner = Runner(history, scale=self.scale_of(history), basedir=self.basedir, tmpdir=self.tmpdir,
                        name=history["header"].get("name"), progress=self.progress)
        return Trace(*runner.run())
