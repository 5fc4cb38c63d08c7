"""Hypothesis state machine for MariaDB GTID domains.

A primary M with replicas B and R, gtid_strict_mode on all or none: commits in two domains, local
writes on replicas, STOP/START SLAVE, FLUSH LOGS and a failover to B, after which R connects to B
by its GTID position. Every DOMAIN.* property holds after every step.
"""
from __future__ import annotations

from replcheck.model.steps.domains import FAMILY

from ..core import machine
from .base import family_machine, requirements_of


@machine(*requirements_of(*FAMILY.features))
class DomainsMachine(family_machine(FAMILY)):
    """Commits in two domains, local writes on replicas, STOP/START SLAVE, FLUSH LOGS, a failover;
    every GTID-domain property holds after every step."""
