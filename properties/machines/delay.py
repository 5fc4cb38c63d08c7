"""Hypothesis state machine for delayed replication.

It grows a History one operation at a time (commits, time passing, STOP/START SLAVE, CHANGE
MASTER, RESET SLAVE, crashes, clock steps, log rotation) on a topology drawn at the start
(single replica, chain or fan-out, with clock offsets), runs the model on it, and checks every
delay property on the resulting Trace after each step. A violation shrinks to a short list of
steps, which Hypothesis prints.
"""
from __future__ import annotations

from replcheck.model.steps.delay import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class DelayMachine(family_machine(FAMILY)):
    """Commits, waits, STOP/START SLAVE, CHANGE MASTER, RESET SLAVE, crashes and clock steps on
    a pair, a chain or a fan-out; every delay property holds after every step."""
