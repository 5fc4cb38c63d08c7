"""The systems replcheck can run a History on: the models of spec/systems.toml, a mutant for
every entry of the mutant registry (model/mutants.py), and the real servers of the harness
(server:mariadb-X.Y: the build found here, named by the version it says it is, and declaring what
its flavour model model:mariadb-X.Y declares, MariaDB's own behaviour with its reasons).

Every one implements the System protocol (replcheck.spec.contract): a name, a kind, what it
declares, and `run(history) -> Trace`.
"""
from __future__ import annotations

import gc
import os
import hashlib
import re
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from replcheck.harness.binaries import BASEDIR_ENV
from replcheck.io import InputError, SpecError, dumps_history
from replcheck.model import mutants as M
from replcheck.model.delay import WL344, WL7318
from replcheck.model import mechanics as X
from replcheck.model.sim import Config, Simulator, simulate
from replcheck.spec.contract import Declarations, Trace
from replcheck.spec import ROOT as SPEC

if TYPE_CHECKING:
    from replcheck.harness.system import MariaDB

MODEL_KEYS = {"name", "kind", "seed", "rule", "mechanics", "description", "mutants", "variables", "defaults",
              "expected_violations", "holds", "histories"}


@contextmanager
def cycles_uncollected() -> Iterator[None]:
    """No cyclic garbage collection while a Trace is built or judged: the work allocates a few
    objects per event and frees none, and every full collection walks all of them (measured by
    bench/scale.py: 10^5 ops simulate in half the time). What few cycles are made are collected after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@dataclass(frozen=True)
class ModelSystem:
    """A reference model, or a mutant of one: the simulator under one Config."""

    name: str
    kind: str  # model or mutant
    config: Config
    declares: Declarations
    description: str = ""
    seed: str = ""  # a flavour model: the seed model whose rule, settings and declarations it starts from
    histories: tuple[str, ...] = ()  # a flavour model: the embedded Histories (name globs) verify runs it on

    def own_declarations(self, seed: "ModelSystem | None") -> dict[str, str]:
        """What this model declares beyond its seed model (a flavour's departures): the seed's own
        are shown on the seed."""
        inherited = seed.declares.expected_violations if seed else {}
        return {r: why for r, why in self.declares.expected_violations.items() if inherited.get(r) != why}

    def run(self, history: dict, digest: str | None = None) -> Trace:
        """`digest`: the History's history_digest, when the caller has it (a campaign's, made once
        for all its systems) rather than serialising the History again."""
        with cycles_uncollected():
            header, obs = simulate(history, self.config, self.name)
        header["history_digest"] = history_digest(history) if digest is None else digest
        return Trace(header, obs)

    def follow(self) -> "SimulatedRun":
        """A run that extends itself as a History grows (replcheck.spec.contract.Extensible)."""
        return SimulatedRun(self)


class SimulatedRun:
    """A model's run following a growing History: one Simulator, extended with the ops each call
    adds and forked to finish (model/sim/kernel.py: a fork's Trace is the prefix's run from
    scratch). Only the header's end may move, and only later: it samples further."""

    def __init__(self, system: ModelSystem):
        self.system = system
        self.sim: Simulator | None = None

    def trace(self, history: dict) -> Trace:
        if not self._extends(history):
            self.sim = Simulator({**history, "ops": []}, self.system.config, self.system.name)
        sim = self.sim
        sim.history["header"] = history["header"]
        with cycles_uncollected():
            sim.extend(history["ops"][len(sim.history["ops"]):])
            sim.advance()
            header, obs = sim.fork().finish()
        header["history_digest"] = history_digest(history)
        return Trace(header, obs)

    def _extends(self, history: dict) -> bool:
        """The History is the one run so far with ops added at its end, none before the last run."""
        if self.sim is None:
            return False
        was, now = self.sim.history, history
        done, ops = was["ops"], now["ops"]
        if len(ops) < len(done) or any(a is not b for a, b in zip(done, ops)):
            return False
        if done and any(op["at"] < done[-1]["at"] for op in ops[len(done):]):
            return False
        end_was, end_now = was["header"].get("end_us", 0), now["header"].get("end_us", 0)
        return end_now >= end_was and {**was["header"], "end_us": 0} == {**now["header"], "end_us": 0}


def _line_of(text: str, needle: str) -> int | None:
    """The first line of spec/systems.toml that mentions `needle` (tomllib keeps no positions)."""
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n
    return None


def load(text: str, where: str = "spec/systems.toml") -> dict[str, ModelSystem]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(where, None, "", f"not valid TOML: {e}") from None
    out: dict[str, ModelSystem] = {}
    for i, s in enumerate(data.get("system", [])):
        name = s.get("name", "")
        def bad(key: str, problem: str, needle: str = "") -> InputError:
            return InputError(where, _line_of(text, needle or f'"{name}"'), f"system[{i}].{key}", problem)
        if not re.fullmatch(r"model:[a-z0-9][a-z0-9.-]*", name or ""):
            raise bad("name", f"{name!r} is not a model name (model:...); mutants come from the registry, model/mutants.py")
        if name in out:
            raise bad("name", f"{name!r} declared twice")
        if s.get("kind", "model") != "model" or set(s) - MODEL_KEYS:
            raise bad(sorted(set(s) - MODEL_KEYS)[0] if set(s) - MODEL_KEYS else "kind",
                      f"unknown key or kind; a system here has {', '.join(sorted(MODEL_KEYS))}")
        if "seed" in s:  # a flavour model: its seed model's entry, then its own settings on top
            seed = out.get(s["seed"])
            if seed is None or seed.seed:
                raise bad("seed", f"{s['seed']!r} is not a seed model declared above (a model without `seed`)", s["seed"])
            if "rule" in s:
                raise bad("rule", "a flavour model takes its seed model's rule")
            s = {**s, "rule": seed.config.rule, "mutants": [m.name for m in seed.config.mutants] + list(s.get("mutants", [])),
                 "variables": {**seed.config.variables, **s.get("variables", {})},
                 "defaults": {**seed.config.defaults, **s.get("defaults", {})},
                 "mechanics": {**seed.config.mechanics.as_dict(), **s.get("mechanics", {})},
                 "expected_violations": {**seed.declares.expected_violations, **s.get("expected_violations", {})}}
            for r in s.get("holds", {}):
                if r not in s["expected_violations"]:
                    raise bad("holds", f"{r!r} is not declared violated by its seed model", r)
                del s["expected_violations"][r]
        elif "holds" in s or "histories" in s:
            raise bad("holds" if "holds" in s else "histories", "only a flavour model (with `seed`) has this key")
        if s.get("rule") not in (WL344, WL7318):
            raise bad("rule", f"{s.get('rule')!r} is not a delay rule ({WL344} or {WL7318})")
        for key, value in s.get("mechanics", {}).items():
            if why := X.problem(key, value):
                raise bad(f"mechanics.{key}", why, key)
        try:
            mutants = M.lookup(s.get("mutants", ()))
        except KeyError as e:
            raise bad("mutants", f"unknown mutant {e.args[0]!r}; known: {', '.join(sorted(M.REGISTRY))}", e.args[0]) from None
        out[name] = ModelSystem(name, "model", Config(s["rule"], mutants, s.get("variables", {}), s.get("defaults", {}),
                                                      X.Mechanics(**s.get("mechanics", {}))),
                                Declarations(dict(s.get("expected_violations", {}))), s.get("description", ""),
                                s.get("seed", ""), tuple(s.get("histories", ())))
    for m in M.REGISTRY.values():
        base = out.get(m.base)
        if base is None:
            raise InputError(where, None, "system", f"mutant {m.name!r} (model/mutants.py) changes {m.base!r}, which is not declared here")
        # A mutant differs from its base only by its mutation: the base's settings, and the
        # base's declarations (what the seed predicts), plus the bug and what must catch it.
        out[f"mutant:{m.name}"] = ModelSystem(
            f"mutant:{m.name}", "mutant", replace(base.config, mutants=base.config.mutants | {m}),
            Declarations(base.declares.expected_violations, m.bug, m.kills, m.base), m.what)
    return out


@lru_cache(maxsize=None)
def systems() -> dict[str, ModelSystem]:
    try:
        return load(SPEC.joinpath("systems.toml").read_text(encoding="utf-8"))
    except InputError as e:
        raise SpecError(str(e)) from None


SERVER = re.compile(r"server:mariadb-(\d+\.\d+)")


def server_name(version: str) -> str:
    """The registry's name of a MariaDB build of this version ('10.11.19-MariaDB-...': server:mariadb-10.11)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return f"server:mariadb-{m.group(1)}.{m.group(2)}" if m else f"server:mariadb-{version}"


def flavour_of(server: str) -> ModelSystem | None:
    """The flavour model of a server name (server:mariadb-10.11: model:mariadb-10.11), if there is one."""
    m = SERVER.fullmatch(server)
    return systems().get(f"model:mariadb-{m.group(1)}") if m else None


def is_server(name: str) -> bool:
    return bool(SERVER.fullmatch(name))


def server_at(basedir: str | None = None) -> MariaDB:
    """The registry's System of the MariaDB build in `basedir` (None: $REPLCHECK_MARIADB_BASEDIR's,
    else the one on PATH): named by the version it says it is, cross-checked against that
    version's flavour model and declaring what it declares."""
    return _server_at(basedir if basedir is not None else os.environ.get(BASEDIR_ENV) or None)


@lru_cache(maxsize=None)
def _server_at(basedir: str | None) -> MariaDB:
    from replcheck.harness.binaries import find_server
    from replcheck.harness.system import MariaDB

    build = find_server(basedir)  # none here: ServerNotFound, the environment's (exit 3)
    here = server_name(build.version)
    flavour = flavour_of(here)
    return MariaDB(scale=None, basedir=build.basedir, name=here, flavour=flavour.name if flavour else "",
                   declares=Declarations(dict(flavour.declares.expected_violations)) if flavour else Declarations({}))


def _server(name: str, option: str) -> MariaDB:
    from replcheck.harness.binaries import find_server

    server = server_at()
    if name != server.name:
        build = find_server(server.basedir)
        raise InputError("", None, option, f"{name!r}: the MariaDB build here ({build.mariadbd}) is {build.version}, "
                         f"which is {server.name!r}")
    return server


def get(name: str, option: str = "system") -> ModelSystem | MariaDB:
    """The system `name`; an unknown one is an InputError naming the option that gave it. A server
    (server:mariadb-X.Y) is the build $REPLCHECK_MARIADB_BASEDIR names, else the one on PATH, and
    must be of that version."""
    if is_server(name):
        return _server(name, option)
    try:
        return systems()[name]
    except KeyError:
        raise InputError("", None, option, f"unknown system {name!r}; known: {', '.join(systems())}, "
                         "server:mariadb-X.Y") from None


def same_runs(a, b) -> bool:
    """Whether two systems' runs of any History are the same Trace but for the system's name: two
    model systems of one Config (the simulator is a function of the History and its Config alone;
    model:groupid and model:wl344 differ by name)."""
    return isinstance(a, ModelSystem) and isinstance(b, ModelSystem) and a.config == b.config


def run(system, history: dict, digest: str) -> Trace:
    """The system's Trace of the History whose history_digest is `digest`: a model's is stamped with
    it rather than serialising the History again; a real server's Trace carries none."""
    return system.run(history, digest) if isinstance(system, ModelSystem) else Trace(*system.run(history))


def traces_to_compare(history: dict, a: str, b: str, known: dict[str, Trace] | None = None) -> tuple[Trace, Trace]:
    """a's and b's Traces of the History, to cross-check: a real server's against the other's of the
    History as it ran on the server (MariaDB.as_run: its times scaled, its ops as late as they
    started), two models' of the History itself. `known`: Traces already made of `history`."""
    def trace(name: str, h: dict) -> Trace:
        return known[name] if known and h is history and name in known else Trace(*get(name).run(h))
    for server, other in ((a, b), (b, a)):
        if is_server(server) and not is_server(other):
            mine = trace(server, history)
            theirs = trace(other, get(server).as_run(history, mine))
            return (mine, theirs) if server == a else (theirs, mine)
    return trace(a, history), trace(b, history)


def history_digest(history: dict) -> str:
    return "sha256:" + hashlib.sha256(dumps_history(history).encode()).hexdigest()[:16]
