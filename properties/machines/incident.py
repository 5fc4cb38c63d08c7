"""Hypothesis state machine for incident events.

A primary A and a replica B, possibly delayed: transactional and non-transactional statements,
binlog cache overflows and write errors, incidents recorded directly or through the injector
(known and unknown codes), the seed's cluster gaps, skip counters, STOP/START SLAVE, and crashes
of the replica. Every incident and every delay property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.incident import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class IncidentMachine(family_machine(FAMILY)):
    """Statements on InnoDB and MyISAM, cache overflows, write errors, cluster gaps, incidents of
    known and unknown codes, skips, STOP/START SLAVE and replica crashes; every incident and delay
    property holds after every step."""
