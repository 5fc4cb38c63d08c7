"""What every component of the simulator shares: the kernel it runs in and its parts.

A component is one mechanism of a server with the rules that drive it (the source's binlog
writes, the receiver, the applier, ...). It reads the clock and queues and emits through the
kernel, and calls the other components through their public methods only, by the names the
kernel gives them (`self.receiver`, `self.applier`, ...).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .kernel import Simulator


class Component:
    def __init__(self, sim: "Simulator"):
        self.sim = sim
        self.mutants, self.mech, self.rule, self.nodes = sim.mutants, sim.mech, sim.rule, sim.nodes
        self.emit, self.at = sim.emit, sim.at

    def wire(self, parts: dict[str, "Component"]) -> None:
        """The other components, each by its name."""
        for name, part in parts.items():
            if part is not self:
                setattr(self, name, part)
