"""Hypothesis state machine for semi-synchronous replication, with delayed replicas.

A primary A with semi-sync enabled and two replicas (one of them possibly delayed): commits,
reads by other sessions, replicas stopping and starting their IO threads, lost acks, settings
changed on the fly, a shutdown, and a crash of A followed by failover to the most advanced
replica. Every semi-sync and every delay property holds after every step, unless the system
under test is declared to violate it (AFTER_COMMIT and WL#6355).
"""
from __future__ import annotations

from replcheck.model.steps.semisync import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class SemiSyncMachine(family_machine(FAMILY)):
    """Commits, reads, IO threads stopping, lost acks, SET GLOBAL, shutdown, crash and failover
    around a semi-sync primary; every semi-sync and delay property holds after every step."""
