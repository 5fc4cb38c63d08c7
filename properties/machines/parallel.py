"""Hypothesis state machine for the parallel applier.

A source A and a replica B with workers (MariaDB's or MySQL's settings, maybe delayed, maybe out of
commit order): commits whose replica costs overlap, the settings changed, threads stopped and
started, UNTIL, the skip counter, incidents, crashes of B. Every parallel, delay, lag, incident and
recovery property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.parallel import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class ParallelMachine(family_machine(FAMILY)):
    """Commits with overlapping replica costs, setting changes, stops and starts, UNTIL, skips,
    incidents and crashes of a parallel replica; every parallel property holds after every step."""
