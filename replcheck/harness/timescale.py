"""A History's times on a real server: the time scale it runs at, and the History scaled to it."""
from __future__ import annotations

import copy

from replcheck.harness.statements import RunnerError
from replcheck.spec import ops as O
from replcheck.spec.formats import US

DEFAULT_EPOCH_US = 1_700_000_000_000_000  # the models' epoch when a History names none


def scale_delay(delay: int, scale: float) -> int:
    """MASTER_DELAY in whole seconds: a nonzero delay never becomes 0."""
    return 0 if delay == 0 else min(2**31 - 1, max(1, round(delay * scale)))


# How a time of each unit (spec/ops.py) scales: a timeout or a nonzero delay never becomes 0.
# SET TIMESTAMP's seconds are a distance from the History's epoch, scaled by scaled_history and
# moved to the run's epoch by Runner._rebase_timestamps.
SCALE = {O.US: lambda v, scale: round(v * scale), O.MS: lambda v, scale: max(1, round(v * scale)), O.SECONDS: scale_delay}


# A real run's times are read by polling: on a loaded machine samples came 0.2–0.6 s apart. A
# semi-sync timeout scaled below 1.5 s could not be told from a prompt commit (WL1720.TIMEOUT.ASYNC
# is inconclusive past half of it); MariaDB counts MASTER_DELAY in whole seconds against a clock
# difference it also takes in whole seconds (sql_delay_event, get_master_version_and_clock in
# sql/slave.cc), so a delay scaled to 1 s is all truncation: kept at 2 s at least.
TIMEOUT_FLOOR_MS = 1500


DELAY_FLOOR_S = 2


SCALE_RANGE = (0.1, 1.0)  # the quick suite's time budget; no History runs slower than real time


MAX_SCALE = 10.0  # what any run may ask for (conform's retries of an inconclusive run go past SCALE_RANGE)


LOOPBACK_LATENCY_US = 10_000  # a channel latency up to this, once scaled, is loopback's own; none is made


def scale_for(history: dict) -> float:
    """The time scale a History needs: the smallest in SCALE_RANGE that keeps every semi-sync
    timeout and MASTER_DELAY it sets at its floor (or whole, if it is shorter than that), but no
    larger than its channels' latencies allow (a latency cannot be made, only dropped). A suite
    scenario's (header `suite`) is 1 (own_scale)."""
    if own_scale(history):
        return min(1.0, largest_scale(history))
    floors = {O.MS: TIMEOUT_FLOOR_MS, O.SECONDS: DELAY_FLOOR_S}
    values = [(O.SECONDS, c["delay"]) for c in history["header"]["topology"].get("channels", []) if c.get("delay")]
    values += [(O.MS, n["variables"][O.SEMI_SYNC_TIMEOUT]) for n in history["header"]["topology"]["nodes"]
               if isinstance(n.get("variables", {}).get(O.SEMI_SYNC_TIMEOUT), int)]
    values += [(unit, place[key]) for op in history["ops"] for unit in floors for place, key in O.op_times(op, unit)]
    need = max((min(v, floors[unit]) / v for unit, v in values if v > 0), default=0)
    if any(op["op"] == "disk_full" for op in history["ops"]):
        need = 1.0  # a write on a full disk is retried 60 s of the server's time later (model/sim/diskfull.py), unscaled
    most = max(SCALE_RANGE[0], min(SCALE_RANGE[1], largest_scale(history)))
    return min(most, max(SCALE_RANGE[0], need))


def own_scale(history: dict) -> bool:
    """A suite scenario runs at its own times: its expectations are a `.result` file's values, read
    at real time (a delay, a lag, which of two transactions a second apart commits first)."""
    return "suite" in history["header"]


def largest_scale(history: dict) -> float:
    """The largest time scale a History can run at: the runner's limit (10), or less where a
    channel's latency, once scaled, would be more than loopback's own (it cannot be made)."""
    latency = max((c.get("latency_us", 0) for c in history["header"]["topology"].get("channels", [])), default=0)
    return min(MAX_SCALE, LOOPBACK_LATENCY_US / latency) if latency else MAX_SCALE


def scaled_history(history: dict, scale: float, latency_allowance_us: int = LOOPBACK_LATENCY_US) -> dict:
    """The History that runs: every time multiplied by `scale`, MASTER_DELAY in whole seconds.
    Channel latencies up to `latency_allowance_us` once scaled are loopback's (dropped); larger ones refused."""
    if not (isinstance(scale, (int, float)) and 0 < scale <= MAX_SCALE):
        raise RunnerError(f"time scale {scale!r} is not a number in (0, 10]")
    h = copy.deepcopy(history)
    hdr = h["header"]
    for key in ("end_us", "sample_every_us"):
        if key in hdr:
            hdr[key] = max(1000 if key == "sample_every_us" else 0, round(hdr[key] * scale))
    for i, c in enumerate(hdr["topology"].get("channels", [])):
        if c.get("latency_us", 0) * scale > latency_allowance_us:
            raise RunnerError(f"topology.channels[{i}].latency_us: {c['latency_us']} (x {scale:g}) cannot be made on "
                              f"loopback ({c['source']}->{c['replica']})")
        c.pop("latency_us", None)
        if "delay" in c:
            c["delay"] = scale_delay(c["delay"], scale)
    for n in hdr["topology"]["nodes"]:
        if n.get("clock_offset_us"):  # a clock an hour off stays as many History seconds off: scaled too
            n["clock_offset_us"] = round(n["clock_offset_us"] * scale)
        var = n.get("variables", {})
        if O.SEMI_SYNC_TIMEOUT in var:
            var[O.SEMI_SYNC_TIMEOUT] = SCALE[O.MS](var[O.SEMI_SYNC_TIMEOUT], scale)
    epoch_s = hdr.get("epoch_us", DEFAULT_EPOCH_US) // US
    for op in h["ops"]:
        for unit, fn in SCALE.items():
            for place, key in O.op_times(op, unit):
                place[key] = fn(place[key], scale)
        for place, key in O.op_times(op, O.UNIX_S):  # a SET TIMESTAMP 30 s in the future stays 30 s (scaled) ahead
            place[key] = max(1, epoch_s + round((place[key] - epoch_s) * scale))
    hdr["description"] = (hdr.get("description", "") + f" [time scale {scale:g}]").strip()
    return h
