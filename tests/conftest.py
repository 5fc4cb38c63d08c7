"""Shared helpers for the delay tests: spec histories, cached runs of the declared systems, an
editable Trace and one-property verdicts. Exposed as the session fixture `kit`."""
from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from replcheck.features import load_features
from replcheck.io import load_history
from replcheck.properties.core import PROPERTIES, Proof, TraceView, Verdict
from replcheck.spec import ROOT
from replcheck.systems import ModelSystem, get

load_features()  # every feature's properties: a mutant may be killed by any of them
US = 1_000_000
REPO = Path(__file__).resolve().parent.parent  # the checkout: tests/ mirrors its layers
# A guard against a hung child process, never a time bound: `verify` took over 900 s in a fully
# loaded run (load average 12-17 on 2 cores). CI's own limit is 90 minutes.
HANG_GUARD_S = 3600
HISTORIES = Path(str(ROOT.joinpath("histories")))


def model_system(rule: str, mutants=(), expected=(), variables=None) -> ModelSystem:
    """A model system made for one test: a delay rule, registered mutants, what it may violate."""
    from replcheck.model.mutants import lookup
    from replcheck.model.sim import Config
    from replcheck.spec.contract import Declarations

    return ModelSystem(f"test:{rule}", "model", Config(rule, lookup(mutants), dict(variables or {})),
                       Declarations({r: "declared by the test" for r in expected}))


def unshrunk_phases() -> tuple:
    """A state machine search's phases without shrinking, for a test that reads which requirement a
    search failed on and not its steps: it stops at its first failure (shrinking was most of its CPU)."""
    from hypothesis import Phase

    from replcheck.properties.machines.base import SEARCH_PHASES

    return tuple(p for p in SEARCH_PHASES if p != Phase.shrink)


_RUN_PROOF = Proof.run


@functools.cache
def proved(proof: Proof):
    """A z3 proof's result, run once per worker process: its outcome depends on the proof alone (z3
    stops at a deterministic resource limit), and the ack-counting proof alone takes 10-25 CPU-s."""
    return _RUN_PROOF(proof)


@contextlib.contextmanager
def proofs_once():
    """`verify`'s z3 proofs through `proved`, for a test whose verify is about something else (its
    report's form, its findings): the proofs' own tests and the gate's verify run them too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Proof, "run", proved)
        yield


_TLC_RUNS: dict = {}


@contextlib.contextmanager
def tlc_once():
    """`tlc.run`'s results kept per worker process, for runs of the same modules and configuration:
    TLC's result depends on them alone (one worker, a fixed seed and fingerprint, breadth-first), and
    several test modules run the manifest's small checks (each its own JVM). A run that dumps its
    states, or of modules edited on purpose (another folder, other text), is a run of its own."""
    from replcheck import tlc

    run = tlc.run

    def once(module: Path, config_text: str, dump: Path | None = None):
        if dump is not None:
            return run(module, config_text, dump)
        specs = tuple(sorted((f.name, f.read_text()) for f in Path(module).parent.glob("*.tla")))
        key = (str(module), specs, config_text)
        if key not in _TLC_RUNS:
            _TLC_RUNS[key] = run(module, config_text)
        return copy.deepcopy(_TLC_RUNS[key])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tlc, "run", once)
        yield


@functools.cache
def _history(name: str) -> dict:
    return load_history(HISTORIES / f"{name}.jsonl")


@functools.cache
def _run(system: str, name: str) -> tuple[dict, list[dict]]:
    return get(system).run(_history(name))


class Trace:
    """A header and observations (plain dicts, model output order) that a test may edit.

    Edits keep the list in time order, as a real trace file is; `line(o)` is the line the
    observation would have in a trace file (line 1 is the header).
    """

    def __init__(self, header: dict, obs: list[dict]):
        self.header, self.obs = header, obs

    def all(self, kind: str, **match) -> list[dict]:
        return [o for o in self.obs if o["kind"] == kind and all(o.get(k) == v for k, v in match.items())]

    def first(self, kind: str, **match) -> dict:
        found = self.all(kind, **match)
        assert found, f"no {kind} observation with {match}"
        return found[0]

    def index(self, o: dict) -> int:
        return next(i for i, x in enumerate(self.obs) if x is o)

    def next_of(self, kind: str, after: dict, **match) -> dict:
        """The first observation of kind (and match) logged after `after`."""
        at = self.index(after)
        return next(o for o in self.all(kind, **match) if self.index(o) > at)

    def line(self, o: dict) -> int:
        return self.index(o) + 2

    def retime(self, o: dict, t: int) -> dict:
        """Move an observation to time t (and its begin, for an apply), keeping time order."""
        self.obs.pop(self.index(o))
        o["t"] = t
        if "begin" in o:
            o["begin"] = t
            if o.get("read") is not None and o["read"] > t:
                o["read"] = t
        at = max((i + 1 for i, x in enumerate(self.obs) if x["t"] <= t), default=0)
        self.obs.insert(at, o)
        return o

    def drop(self, o: dict) -> None:
        self.obs.pop(self.index(o))

    def insert_before(self, anchor: dict, o: dict) -> dict:
        self.obs.insert(self.index(anchor), o)
        return o

    def view(self) -> TraceView:
        return TraceView(self.header, self.obs)


class Kit:
    US = US
    HISTORIES = HISTORIES

    @staticmethod
    def history(name: str) -> dict:
        return copy.deepcopy(_history(name))

    @staticmethod
    def run(system: str, history: str | dict) -> Trace:
        """A fresh, editable trace of a spec history (by name; runs cached) or of a History dict."""
        if isinstance(history, str):
            header, obs = _run(system, history)
        else:
            header, obs = get(system).run(history)
        return Trace(copy.deepcopy(header), copy.deepcopy(obs))

    @staticmethod
    def prop(requirement: str):
        [p] = [p for p in PROPERTIES if p.requirement == requirement]
        return p

    @staticmethod
    def verdict(requirement: str, trace: Trace) -> Verdict:
        return Kit.prop(requirement).run(trace.view())

    @staticmethod
    def make_history(nodes, channels, ops, **header) -> dict:
        """A small History dict: nodes as ids or dicts, channels as (source, replica, delay) or dicts."""
        nodes = [n if isinstance(n, dict) else {"id": n} for n in nodes]
        channels = [c if isinstance(c, dict) else {"source": c[0], "replica": c[1], "delay": c[2]} for c in channels]
        head = {"schema": "replcheck.history/1", "name": header.pop("name", "test"),
                "topology": {"nodes": nodes, "channels": channels}, **header}
        return {"header": head, "ops": ops}


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()


def assert_witness(verdict, tr, target: dict | None, expect: str) -> None:
    """The verdict is a violation, with a witness saying `expect` at the target observation's line."""
    from replcheck.properties.core import VIOLATED

    assert verdict.status == VIOLATED, verdict
    want_line = None if target is None else tr.line(target)
    assert any(expect in w.message and (want_line is None or want_line in w.lines) for w in verdict.witnesses), (
        f"no witness with {expect!r} at line {want_line}: {verdict.witnesses}")


def assert_state_caught(kit, tr, node: str, t: int, shown: str, expect: str) -> None:
    """WL344.STATE.WAITING passes on tr, and catches node's sample at t (showing the delay's state)
    edited to show `shown` instead, with a witness saying `expect`."""
    from replcheck.model.delay import STATE_WAITING
    from replcheck.properties.core import PASS

    assert kit.verdict("WL344.STATE.WAITING", tr).status == PASS
    s = tr.first("status", node=node, t=t)
    assert s["Slave_SQL_Running_State"] == STATE_WAITING
    s.update(Slave_SQL_Running_State=shown, processlist_state=shown, SQL_Remaining_Delay=None)
    assert_witness(kit.verdict("WL344.STATE.WAITING", tr), tr, s, expect)


@pytest.fixture
def tla_copy(tmp_path, monkeypatch) -> Path:
    """spec/tla/ copied to a temporary directory that a test may edit, replcheck.tlc pointed at it."""
    import shutil

    from replcheck import tlc

    copy = tmp_path / "tla"
    shutil.copytree(tlc.TLA, copy)
    monkeypatch.setattr(tlc, "TLA", copy)
    monkeypatch.setattr(tlc, "MANIFEST", copy / "manifest.toml")
    tlc.manifest.cache_clear()
    yield copy
    tlc.manifest.cache_clear()


# Test tiers: a test is marked by what it needs, from the fixtures it uses, so that
# `pytest -m "not (server or spark or browser or slow)"` is the fast tier (docs/ci.md).
TIER_FIXTURES = {"server": "server", "spark": "spark", "mutant_campaign": "spark", "browser_dir": "browser",
                 "results": "slow"}  # test_report's `results` runs a whole verify


# Scheduling (ci/test: `-n 2 --dist loadgroup --no-loadscope-reorder`). A module whose tests read one
# expensive result built once per worker runs on one worker, so that it is built once (with xdist's
# default scheduling the campaign module ran on both: two Spark sessions, the campaign twice).
# xdist's own loadgroup puts an xdist_group mark in a test's node id, which pytest 9 no longer lets
# it change, and its controller sees node ids only: so the groups are these modules, named here.
SHARED_MODULES = {
    "tests/engine/test_campaign.py": "one Spark session, one mutant campaign (spark, mutant_campaign)",
    "tests/engine/test_campaign_cluster.py": "one wheel and its venvs, one local[2] campaign (kit, reference)",
    "tests/engine/test_report_html.py": "one headless Chromium (browser_dir)",
}
# Tests that share a result kept per worker process, each group one unit (its node ids' prefixes):
# each z3 proof runs once (the ack-counting one 10-25 CPU-s), beside the gate's own verify; each of
# the manifest's small TLC checks once.
UNITS = {
    "z3 proofs run once (proved)": ("tests/engine/test_report.py", "tests/engine/test_cli.py::test_verify_",
                                    "tests/properties/proofs/test_proofs_semisync.py"),
    "TLC checks run once (tlc_once)": ("tests/tla/test_tlc_run.py", "tests/tla/test_counterexample_history.py",
                                       "tests/tla/test_verify_tlc.py"),
    # the 40 Histories a family and their 1,600 runs (generated) read by both slow tests
    "generated Traces once (property kinds)": ("tests/properties/test_property_kinds.py",),
}
# The longest work starts first (longest processing time first), so that no worker is left with a
# long test when the other has finished: minutes each, in this order. A test named here runs apart
# from its module's group. A name not found orders nothing; the tiers order the rest.
LONGEST = ("tests/engine/test_report.py::test_committed_models_gate_holds_on_the_default_verify",
           "tests/engine/test_campaign_cluster.py",  # a wheel, three venvs, eight campaigns (two local-cluster, two standalone)
           "tests/tla/test_trace_validation.py::test_every_embedded_history_is_accepted_on_every_model_that_runs_it",
           "tests/engine/test_fuzz.py::test_cases_through_the_real_executable",
           "tests/engine/test_campaign.py",  # a Spark session, three campaigns (one a process killed mid-run)
           # waiting work (below), the waiting worker's first
           "tests/engine/test_conform.py::test_quick_suite_meets_the_mariadb_gate",
           "tests/tla/test_counterexample_history.py::test_after_commit_counterexample_loses_a_read_transaction_on_mariadb")
TIER_ORDER = ("slow", "server", "spark", "browser", "tlc")
# xdist hands a worker its next tests while it still runs two: a long test is followed by this many
# short ones, so that the next long one goes to whichever worker is free first, not behind it.
PREFETCHED = 3


def work_unit(nodeid: str) -> str:
    """What runs on one worker in one piece: one of UNITS, a shared module (but a test of LONGEST
    in either), or a test."""
    path = nodeid.split("::")[0]
    if any(nodeid.startswith(t) for t in LONGEST if "::" in t):
        return nodeid
    unit = next((name for name, prefixes in UNITS.items() if nodeid.startswith(prefixes)), None)
    return unit or (path if path in SHARED_MODULES else nodeid)


def _rank(item) -> int:
    tiers = [i for i, tier in enumerate(TIER_ORDER) if item.get_closest_marker(tier)]
    if not tiers:
        return len(LONGEST) + len(TIER_ORDER)
    return next((i for i, prefix in enumerate(LONGEST) if item.nodeid.startswith(prefix)), len(LONGEST) + min(tiers))


def pytest_collection_modifyitems(config, items):
    units: dict[str, list] = {}
    for item in items:
        for fixture, tier in TIER_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(tier)
        units.setdefault(work_unit(item.nodeid), []).append(item)
    if not getattr(config.option, "loadgroup", False):  # set on an xdist worker of --dist loadgroup
        return  # in one process, file order
    _name_waiting_units(config, units)
    # a unit is ranked by its first-ranked test; the sort is stable: file order within a rank
    ranked = sorted(units.values(), key=lambda unit: min(_rank(item) for item in unit))
    short = [u for u in ranked if min(_rank(item) for item in u) == len(LONGEST) + len(TIER_ORDER)]
    long = ranked[:len(ranked) - len(short)]
    items[:] = []
    for unit in long:
        items.extend(sorted(unit, key=_rank))
        for _ in range(min(PREFETCHED, len(short))):  # a small selection may have fewer short units
            items.extend(short.pop(0))
    for unit in short:
        items.extend(unit)


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedModules(LoadScopeScheduling):
        """xdist's scope scheduling (a unit at a time, in collection order), with work_unit's units;
        with a waiting worker, each worker's next unit is the first of its kind there is."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node) -> None:
            waiting = _waiting_units(config)
            if waiting:
                wants = node.workerinput["workerid"] == _waiter(node.workerinput["workercount"])
                unit = next((u for u in self.workqueue if (u in waiting) == wants), None)
                if unit is not None:  # else the other kind's first: no worker idles while work is left
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return SharedModules(config, log)


# Waiting work: a real server's test mostly waits on its servers (a History's real seconds at its
# time scale). With three workers or more (ci/test: three on two cores), the last takes those first
# and the others the rest, niced, so that the servers get a core as soon as they ask for one (the
# CPU a History's timing needs) while the CPU-bound tests use what the servers leave.
WAITING_TIER = "server"
CPU_WORKERS_NICE = 10
_WAITING_FILE = pytest.StashKey[str]()
_WAITING = pytest.StashKey[frozenset]()


def _waiter(workercount: int) -> str | None:
    return f"gw{workercount - 1}" if workercount >= 3 else None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """The controller sees node ids only: the first worker names the waiting units in a file."""
    config = node.config
    if config.getvalue("dist") != "loadgroup" or _waiter(node.workerinput["workercount"]) is None:
        return
    if _WAITING_FILE not in config.stash:
        fd, path = tempfile.mkstemp(prefix="replcheck-waiting-", suffix=".json")
        os.close(fd)
        config.stash[_WAITING_FILE] = path
        config.add_cleanup(lambda: os.unlink(path))
    node.workerinput["replcheck_waiting"] = config.stash[_WAITING_FILE]


def _name_waiting_units(config, units: dict[str, list]) -> None:
    """On a worker: the first writes the waiting units (every test of which needs a real server);
    every worker but the waiter lowers its own priority, once (a process cannot raise it again)."""
    given = getattr(config, "workerinput", {})
    if "replcheck_waiting" not in given:
        return
    if given["workerid"] == "gw0":
        waiting = [u for u, tests in units.items() if all(t.get_closest_marker(WAITING_TIER) for t in tests)]
        partial = f"{given['replcheck_waiting']}.{os.getpid()}"
        Path(partial).write_text(json.dumps(waiting))
        os.replace(partial, given["replcheck_waiting"])  # whole, before the controller schedules
    if given["workerid"] != _waiter(given["workercount"]):
        os.nice(CPU_WORKERS_NICE)


def _waiting_units(config) -> frozenset:
    """The waiting units, read once all workers have collected (none without a waiting worker)."""
    if _WAITING not in config.stash:
        path = config.stash.get(_WAITING_FILE, None)
        config.stash[_WAITING] = frozenset(json.loads(Path(path).read_text() or "[]") if path else ())
    return config.stash[_WAITING]


@pytest.fixture
def short_tmp():
    """A folder for real servers' files: on a tmpfs when there is one (servers start twice as fast);
    short, as a Unix socket path must fit in 108 bytes (pytest's own tmp_path under xdist is too
    deep); and, as root, one the servers' unprivileged user can pass through (mkdtemp makes 0700)."""
    d = tempfile.mkdtemp(prefix="rc-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    os.chmod(d, 0o711)
    yield d
    shutil.rmtree(d, ignore_errors=True)
