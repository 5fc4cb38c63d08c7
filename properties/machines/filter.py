"""Hypothesis state machine for replication filters.

A source A, maybe a semi-sync master with binlog-do/ignore-db, and two replicas with their own
replicate_events_marked_for_skip and replicate-* rules (one maybe delayed): commits, some from a
@@skip_replication session, threads stopping and starting, the skip counter. Every filter,
semi-sync, delay and lag property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.filter import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class FilterMachine(family_machine(FAMILY)):
    """Commits (marked or not, on either table), thread stops and starts, the skip counter around
    filtering replicas; every filter property holds after every step."""
