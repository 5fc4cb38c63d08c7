"""A small campaign on a seed that rotates with each commit: the three models (MariaDB's mechanics and the seeds') against their own
seeds, every property and every cross-check, as bench/campaign_rotating.py does at scale.

The seed comes from the commit under test, so a run is reproducible (the same commit, the same
seed) while successive commits cover new Histories; a failure names the seed, the History and
the command that replays it.
"""
from __future__ import annotations

import subprocess

from conftest import REPO

from replcheck import campaign

MODELS = ("model:mariadb-10.11", "model:wl7318", "model:groupid")
HISTORIES = 60
FALLBACK_SEED = 9_001  # outside a git checkout (an unpacked source tree)


def rotating_seed() -> int:
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return FALLBACK_SEED
    return 10_000 + int(sha[:8], 16) % 1_000_000


def test_the_models_hold_their_seeds_on_this_commits_seed():
    seed = rotating_seed()
    findings = [r for i in range(HISTORIES) for r in campaign.run_history(seed, i, MODELS) if r[campaign.FINDING]]
    assert not findings, "\n".join(f"seed {r[1]} history {r[0]}: {r[4]} {r[6]}: {r[11][:200]}  ({r[12]})"
                                   for r in findings[:10])

