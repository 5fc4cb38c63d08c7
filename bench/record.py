"""A benchmark's results file: bench/results/<name>-<UTC stamp>.json, with the date, the machine,
its CPUs, Python and the load average beside the figures, so that docs/gen.py can show each figure
with what it was measured on (a figure on a loaded machine is a fraction of a quiet one's)."""
from __future__ import annotations

import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def write(name: str, figures: dict) -> Path:
    now = datetime.now(timezone.utc)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{name}-{now:%Y%m%dT%H%M%S}.json"
    out.write_text(json.dumps({"date": now.isoformat(timespec="seconds"), "machine": platform.node(), "cpus": os.cpu_count(),
                               "python": platform.python_version(), "load_average": os.getloadavg(), **figures}, indent=1))
    return out
