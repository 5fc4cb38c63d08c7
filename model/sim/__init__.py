"""Deterministic discrete-event simulation of MySQL-style replication: a small kernel (clock,
event queue, observations, sampling: kernel.py) and the components of a server that run in it,
each a file: the source's commits and binlog (source.py), the dump thread (dump.py), the receiver
or IO thread with its relay log (receiver.py), the applier or SQL thread (applier.py) with its
workers (workers.py) and relay-log.info (rli.py), the server's lifecycle (lifecycle.py),
administration statements (admin.py), status (status.py), and the hierarchical group IDs
(hierarchy.py). Their shared state is state.py.

A History (topology + timed operations, plain dicts) goes in, a Trace (header + time-ordered
observations, plain dicts) comes out. The clock is virtual (µs of true time); every node's own
clock reads true time + its offset + the history's epoch. There is no wall clock, no global
random state and no I/O: the same History gives the same Trace, byte for byte.
"""
from .kernel import Simulator, last_sample, simulate
from .state import DEFAULT_EPOCH_US, ER_SLAVE_MUST_STOP, Channel, Config, Entry, Node

__all__ = ["Simulator", "simulate", "last_sample", "Config", "Channel", "Entry", "Node", "ER_SLAVE_MUST_STOP", "DEFAULT_EPOCH_US"]
