"""Hypothesis state machine for multi-source replication.

A replica with two named connections, from two sources writing their own domains or, in a
diamond, from two servers relaying the same source (gtid_ignore_duplicates): commits, STOP/START
SLAVE 'name', STOP/START ALL SLAVES, CHANGE MASTER 'name' TO MASTER_DELAY, a middle server
stopped, a crash of the replica. Every MULTISOURCE.* property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.multisource import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class MultiSourceMachine(family_machine(FAMILY)):
    """Commits on two sources or through a diamond, each connection stopped, started and delayed
    on its own, STOP/START ALL SLAVES, a crash; every multi-source property holds after every step."""
