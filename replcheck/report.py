"""Reports and gates, from results files (what `replcheck verify` and the pytest plugin write).

One document, `replcheck.report/1` (spec/schemas/report.schema.json), holds every requirement
with its seed text, its evidence and, per source, the verdict with its witnesses and the command
that reproduces each; it is written as HTML (self-contained), JSON, JUnit XML and Markdown.
A gate file pins the verdict of every requirement for every source; checking it lists each
difference, whichever way it goes.
"""
from __future__ import annotations

import html
import json
import shlex
from collections import Counter
from pathlib import Path
from xml.sax import saxutils

from replcheck import catalogue, coverage, io
from replcheck.properties import core, expect
from replcheck.results import Finding, read_findings

# A cell shows the worst of its rows: one inconclusive run outranks the passes of others, so a
# scenario that stopped testing what it claims is seen, not averaged away.
ORDER = {core.VIOLATED: 0, core.INCONCLUSIVE: 1, core.PASS: 2, core.NOT_EXERCISED: 3}
JUDGED = (core.PASS, core.VIOLATED)

# Evidence kinds of the headline, by source: a property on a model's trace (embedded Histories or
# a campaign), a z3 proof, a Hypothesis state machine on a model, TLC, a real server. A mutant's
# verdicts are evidence about the checks, not the requirement, and count for none.
EVIDENCE_KINDS = ("model", "proof", "machine", "tlc", "server")


def evidence_kind(source: str) -> str | None:
    kind, _, system = source.partition(":")
    if kind == "z3":
        return "proof"
    if kind == "conformance":
        return "server"
    owner = system.split(":", 1)[0]
    if kind == "tlc":  # a configuration of a TLA+ module; a mutant's is about the check
        return "tlc" if owner != "mutant" else None
    if kind in ("history", "campaign", "state-machine") and owner == "model":
        return "machine" if kind == "state-machine" else "model"
    return None


def honest_counts(requirements: list[dict], sources: list[str]) -> dict:
    """Per evidence kind, the requirements some source of that kind judged (pass or violated);
    per real server, its requirements judged, inconclusive and not exercised (no verdict at all
    counts as not exercised, so the three add up to the catalogue)."""
    evidence = {k: 0 for k in EVIDENCE_KINDS}
    for r in requirements:
        for k in {evidence_kind(s) for s, v in r["verdicts"].items() if v["status"] in JUDGED} - {None}:
            evidence[k] += 1
    servers = {}
    for src in (s for s in sources if evidence_kind(s) == "server"):
        statuses = [r["verdicts"].get(src, {}).get("status", core.NOT_EXERCISED) for r in requirements]
        servers[src] = {"judged": sum(st in JUDGED for st in statuses),
                        "inconclusive": statuses.count(core.INCONCLUSIVE),
                        "not_exercised": statuses.count(core.NOT_EXERCISED)}
    return {"evidence": evidence, "servers": servers}


def headline(report: dict) -> str:
    """The numbers that matter, in words: what each kind of evidence covers, and per real server
    what it judged, what its runs left inconclusive and what they never exercised."""
    s, c = report["summary"], report["counts"]
    ev = c["evidence"]
    parts = [f"{s['requirements']} requirements; with evidence from a property on a model {ev['model']}, a proof "
             f"{ev['proof']}, a state machine {ev['machine']}, TLC {ev['tlc']}, a real server {ev['server']}"]
    parts += [f"{src.split(':', 1)[1]}: {n['judged']} judged, {n['inconclusive']} inconclusive, "
              f"{n['not_exercised']} not exercised" for src, n in c["servers"].items()]
    return "; ".join(parts)


def load_results(paths: list[str | Path]) -> list[dict]:
    out = []
    for p in paths:
        if io.is_dir(p):  # a campaign directory: its summary is a results file
            p = Path(p) / "summary.json"
        data = io.parse_json(io.read_text(p), p)
        if not isinstance(data, dict) or data.get("schema") != "replcheck.results/1":
            raise io.InputError(p, None, "schema", "not a replcheck results file (schema 'replcheck.results/1' with rows)")
        io.validate_document("results", data, p)
        read_findings(data, p)  # a finding that cannot exist (a misspelt kind) is bad input
        data["_path"] = str(p)
        out.append(data)
    return out


def _expected(row: dict) -> str | None:
    """A violation the spec predicts: declared for a model, or anything a mutant (a known bug
    by construction) violates; a mutant nothing kills is a finding of its own."""
    if row.get("expected"):
        return row["expected"]
    return "violated" if row["system"].startswith("mutant:") else None


def _reproduce(row: dict, result: dict) -> str:
    if row["source"] == "history" and expect.is_expectation(row["requirement"]):  # what the system showed there
        path = result.get("history_files", {}).get(row["history"], f"{row['history']}.jsonl")
        where = json.dumps({"expect": row["requirement"].removeprefix(expect.PREFIX)})[1:-1]
        return f"replcheck simulate {shlex.quote(path)} --system {shlex.quote(row['system'])} | grep -F {shlex.quote(where)}"
    if row["source"] == "history":
        path = result.get("history_files", {}).get(row["history"], f"{row['history']}.jsonl")
        return f"replcheck simulate {shlex.quote(path)} --system {shlex.quote(row['system'])} --out t.jsonl && replcheck check-trace t.jsonl"
    if row["source"] == "state-machine":
        return f"replcheck verify --systems {shlex.quote(row['system'])} --seed {result.get('seed', 0)} --examples {result.get('examples', 60)}"
    if row["source"] == "z3":
        return "replcheck verify  # runs every z3 proof"
    if row["source"] == "tlc":
        t = row["tlc"]
        mutant = f" --mutant {shlex.quote(row['system'].split(':', 1)[1])}" if row["system"].startswith("mutant:") else ""
        return f"replcheck tlc --spec {t['module']} --config {t['config'].removesuffix('.cfg')}{mutant}"
    return row.get("reproduce", "")


def build_report(results: list[dict], title: str = "replcheck compliance report") -> dict:
    cells: dict[tuple[str, str], dict] = {}
    for result in results:
        for row in result["rows"]:
            key = (row["requirement"], f"{row['source']}:{row['system']}")
            cell = cells.setdefault(key, {"status": core.NOT_EXERCISED, "expected": None, "counts": Counter(),
                                          "witnesses": {core.VIOLATED: [], core.INCONCLUSIVE: []}})
            if "tlc" in row:  # what TLC searched, per check: its state counts
                cell.setdefault("tlc", []).append({k: row["tlc"][k] for k in ("check", "distinct_states", "depth")})
            # a campaign row stands for many Histories: it brings its own counts
            for status, n in row.get("counts", {row["status"]: 1}).items():
                cell["counts"][status] += n
            if ORDER[row["status"]] < ORDER[cell["status"]]:
                cell["status"] = row["status"]
            if row["status"] == core.VIOLATED:
                cell["expected"] = cell["expected"] or _expected(row)
            if row.get("reason"):  # an expectation's documented flavour difference, whatever it showed
                cell["differs"] = row["reason"]
            kept = cell["witnesses"].get(row["status"])  # the cell shows those of its own status
            for w in row.get("witnesses", [])[:3] if kept is not None else ():
                if len(kept) < 5:
                    kept.append({"message": w["message"], "history": row.get("history", ""),
                                 "lines": w.get("lines", []), "reproduce": _reproduce(row, result),
                                 **({"trace": row["trace"]} if "trace" in row else {}),  # a conformance attempt's
                                 **({"steps": w["steps"]} if "steps" in w else {})})  # a TLC counterexample
    sources = sorted({s for _, s in cells}, key=lambda s: (s.split(":")[0] != "history", s))

    def verdicts_of(rid: str) -> dict:
        out = {}
        for s in sources:
            if (rid, s) in cells:
                c = cells[(rid, s)]
                out[s] = {**c, "counts": dict(c["counts"]), "witnesses": c["witnesses"].get(c["status"], []),
                          "expected": c["expected"] if c["status"] == core.VIOLATED else None}
        return out

    evidence = catalogue.evidence()
    requirements = [{"id": r.id, "feature": r.feature, "seed": r.seed, "section": r.section, "kind": r.kind,
                     "text": r.text, "evidence": evidence.get(r.id, []), "verdicts": verdicts_of(r.id)}
                    for r in catalogue.load()]
    findings = [Finding.from_dict(f).as_dict() for result in results for f in result.get("findings", [])]
    caught: dict[str, set] = {}  # verify's catches (replcheck.results.caught), what the models gate reads
    for result in results:
        for mutant, found in result.get("mutants", {}).items():
            caught.setdefault(mutant, set()).update(map(tuple, found))
    flat = [v for req in requirements for v in req["verdicts"].values()]
    expectations = [{"id": rid, "history": history, "text": text, "verdicts": verdicts_of(rid)}
                    for rid, (history, text) in sorted(expectation_texts(results).items())]
    judged = [v for e in expectations for v in e["verdicts"].values()]
    figures: dict[str, list] = {}
    for result in results:
        for name, points in result.get("figures", {}).items():
            figures.setdefault(name, []).extend(points)
    return {
        "schema": "replcheck.report/1",
        "title": title,
        "inputs": [r["_path"] for r in results if "_path" in r],
        "sources": sources,
        "summary": {
            "requirements": len(requirements),
            "violated": sum(1 for v in flat if v["status"] == core.VIOLATED and not v["expected"]),
            "inconclusive": sum(1 for v in flat if v["status"] == core.INCONCLUSIVE),
            "expected_violations": sum(1 for v in flat if v["expected"]),
            "findings": len(findings),
            "sources": len(sources),
            "expectations": len(expectations),
            "expectations_violated": sum(1 for v in judged if v["status"] == core.VIOLATED and not v["expected"]),
            "expectations_differ": sum(1 for v in judged if v["expected"]),
        },
        "counts": honest_counts(requirements, sources),
        "requirements": requirements,
        "expectations": expectations,
        "findings": findings,
        "caught": {m: [list(c) for c in sorted(found)] for m, found in sorted(caught.items())},
        "figures": figures,
        # each campaign's requirement coverage (replcheck/coverage.py), with the results file it came from
        "coverage": [{"input": r.get("_path", ""), **r["coverage"]} for r in results if "coverage" in r],
        # every run of every conformance scenario (replcheck/conform.py): its time scale, resolution,
        # what it left inconclusive and which verdicts were kept from it
        "attempts": [a for r in results for a in r.get("attempts", [])],
    }


def expectation_texts(results: list[dict]) -> dict[str, tuple[str, str]]:
    """Every expectation the results hold (properties/expect.py): id -> (History, what it expects)."""
    return {row["requirement"]: (row.get("history", ""), row.get("text", "")) for result in results
            for row in result["rows"] if expect.is_expectation(row["requirement"])}


def verdict_rows(report: dict) -> list[tuple[dict, str, dict]]:
    """(requirement or expectation, source, verdict) of every cell of the report: what JUnit, the
    summary and the gates go through, requirements first."""
    return [(item, src, v) for item in report["requirements"] + report.get("expectations", [])
            for src, v in item["verdicts"].items()]


def escape(text: str) -> str:
    """XML text: escaped, and no control XML 1.0 forbids (a JUnit reader would reject the file)."""
    return saxutils.escape(io.markup(text))


def quoteattr(text: str) -> str:
    return saxutils.quoteattr(io.markup(text))


def junit(report: dict) -> str:
    """One test case per requirement and source; an unexpected violation fails, an inconclusive run
    is an error (the check could not be made), not exercised skips."""
    suites = []
    for source in report["sources"]:
        cases, failures, errors, skipped = [], 0, 0, 0
        for req in report["requirements"] + report.get("expectations", []):
            v = req["verdicts"].get(source)
            if v is None:
                continue
            classname = quoteattr(f"replcheck.{req.get('feature', 'expect')}.{source}")
            name = f"<testcase classname={classname} name={quoteattr(req['id'])}>"
            if v["status"] == core.VIOLATED and not v["expected"]:
                failures += 1
                detail = "\n".join(f"{w['message']} [{w['history']}:{w['lines']}] {w['reproduce']}" for w in v["witnesses"])
                body = f'<failure message={quoteattr(req["text"])}>{escape(detail)}</failure>'
            elif v["status"] == core.INCONCLUSIVE:
                errors += 1
                detail = "\n".join(f"{w['message']} [{w['history']}:{w['lines']}]" for w in v["witnesses"])
                body = f'<error message="inconclusive: the run did not test it">{escape(detail)}</error>'
            elif v["status"] == core.NOT_EXERCISED:
                skipped += 1
                body = '<skipped message="not exercised"/>'
            else:
                body = f"<system-out>{escape(v['status'] + (' (expected violation)' if v['expected'] else ''))}</system-out>"
            cases.append(f"    {name}{body}</testcase>")
        suites.append(f'  <testsuite name={quoteattr(source)} tests="{len(cases)}" failures="{failures}" errors="{errors}" skipped="{skipped}">\n'
                      + "\n".join(cases) + "\n  </testsuite>")
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="replcheck">\n' + "\n".join(suites) + "\n</testsuites>\n"


def _md(text: object) -> str:
    """Text from a trace or a file, safe in a CI comment: no raw HTML, no table or code breaks."""
    return html.escape(io.printable(str(text).replace("\n", " ")), quote=False).replace("|", "\\|").replace("`", "'")


def markdown(report: dict, limit: int = 20) -> str:
    """A short summary for a CI comment: the numbers, unexpected violations and inconclusive runs, findings."""
    s = report["summary"]
    lines = [f"### {_md(report['title'])}", "", f"{_md(headline(report))}.", "",
             f"{s['sources']} sources: **{s['violated']} unexpected violations**, **{s['inconclusive']} inconclusive**, "
             f"{s['expected_violations']} expected, {s['findings']} findings.", ""]
    if s.get("expectations"):
        lines += [f"{s['expectations']} expectations (suite .result files): **{s['expectations_violated']} violated**, "
                  f"{s['expectations_differ']} documented flavour differences.", ""]
    bad = [(req, src, v) for req, src, v in verdict_rows(report)
           if (v["status"] == core.VIOLATED and not v["expected"]) or v["status"] == core.INCONCLUSIVE]
    if bad:
        lines += ["| requirement | source | verdict | witness |", "|---|---|---|---|"]
        for req, src, v in bad[:limit]:
            w = v["witnesses"][0]["message"] if v["witnesses"] else ""
            lines.append(f"| {req['id']} | {_md(src)} | {v['status']} | {_md(w)} |")
        if len(bad) > limit:
            lines.append(f"| … | {len(bad) - limit} more | | |")
    for c in report.get("coverage", []):
        lines += ["", *(_md(x) for x in coverage.lines(c))]
    retried = [a["history"] for a in report.get("attempts", []) if a["attempt"] > 1]
    if retried:
        lines += ["", "Conformance scenarios run again at a larger time scale (a run with an inconclusive verdict):"]
        lines += [f"- {_md(name)}: " + "; ".join(attempt_text(a) for a in report["attempts"] if a["history"] == name)
                  for name in dict.fromkeys(retried)]
    lines += ["", "Findings:" if report["findings"] else "No findings."]
    lines += [f"- {_md(f['kind'])}: {_md(f.get('system', ''))} `{_md(f.get('requirement', ''))}`: {_md(f.get('witness', ''))}"
              + (f" (the seed: {_md(f['seed'])})" if f.get("seed") else "") for f in report["findings"]]
    return "\n".join(lines) + "\n"


def attempt_text(a: dict) -> str:
    """One run of a conformance scenario in words: its time scale and timing, what it left inconclusive."""
    why = f"inconclusive {', '.join(a['inconclusive'])}" if a["inconclusive"] else "conclusive"
    why += "".join(f" ({u})" for u in a.get("unmet", [])[:1])
    kept = len(a.get("kept", []))
    return (f"attempt {a['attempt']} at time scale {a['time_scale']:g} (resolution {a['resolution_us'] / 1e6:.2f} s, "
            f"ops slipped {a['slipped_us'] / 1e6:.2f} s): {why}; {kept} verdict{'' if kept == 1 else 's'} kept")


def write_reports(report: dict, out: Path, gate: tuple[str, dict] | None = None) -> None:
    """The four reports; `gate` (its name and table, load_gate) is run for the release summary."""
    from replcheck import release
    from replcheck.html import render_html

    report["release"] = release.summary(report, gate)
    io.write_atomic(out / "report.json", json.dumps(report, indent=1))
    io.write_atomic(out / "report.html", render_html(report))
    io.write_atomic(out / "junit.xml", junit(report))
    io.write_atomic(out / "summary.md", markdown(report))


# -- gates ----------------------------------------------------------------------------------------
def gate_snapshot(report: dict, name: str, description: str) -> str:
    """A gate file pinning every verdict of the report, to review and commit."""
    lines = [f"# Gate {io.printable(name)}: the pinned verdict of every requirement for every source.",
             "# `replcheck gate THIS RESULTS...` exits 1 on any difference; regenerate with --write after review.",
             "", "[gate]", f"name = {json.dumps(name)}", f"description = {json.dumps(description)}"]
    for source in report["sources"]:
        lines += ["", f"[verdicts.{json.dumps(source)}]"]
        for req in report["requirements"] + report.get("expectations", []):
            v = req["verdicts"].get(source)
            if v is not None:
                lines.append(f"{json.dumps(req['id'])} = {json.dumps(v['status'])}")
    return "\n".join(lines) + "\n"


def load_gate(path: str | Path) -> dict:
    gate = io.parse_toml(io.read_text(path), path)
    derived = gate.get("gate", {}).get("derive") if isinstance(gate.get("gate"), dict) else None
    if derived is not None:
        if derived != "declarations":
            raise io.InputError(path, None, "gate.derive", f"{derived!r}: the one derivation is 'declarations'")
        for i, e in enumerate(gate.get("exception", [])):
            if not isinstance(e, dict) or set(e) != {"system", "requirement", "reason"} or not all(isinstance(v, str) for v in e.values()):
                raise io.InputError(path, None, f"exception[{i}]", "needs exactly system, requirement and reason (strings)")
        return gate
    if not isinstance(gate.get("verdicts"), dict):
        raise io.InputError(path, None, "verdicts", "a gate file needs [verdicts.\"<source>\"] tables, or [gate] derive = \"declarations\"")
    for source, pins in gate["verdicts"].items():
        # named as in the file: a source has spaces and colons (conformance:MariaDB 10.11)
        where = f"verdicts.{json.dumps(source, ensure_ascii=False)}"
        if not isinstance(pins, dict):
            raise io.InputError(path, None, where, f"{pins!r} is not a table of requirement = verdict")
        for req, status in pins.items():
            # A list pins a verdict a real server gives either way from run to run (a timing race
            # in the server itself); the gate still fails on anything outside the list.
            field = f"{where}.{json.dumps(req, ensure_ascii=False)}"
            if not all(isinstance(s, str) and s in ORDER for s in _accepted(status)) or not _accepted(status):
                raise io.InputError(path, None, field, f"unknown verdict {status!r}")
            if core.INCONCLUSIVE in _accepted(status):  # a run that did not test its claim is investigated, not accepted
                raise io.InputError(path, None, field,
                                    "inconclusive cannot be pinned: fix the scenario or its claim, then pin what it shows")
    return gate


def _accepted(status) -> list:
    return status if isinstance(status, list) else [status]


def gate_differences(gate: dict, report: dict) -> list[str]:
    if gate.get("gate", {}).get("derive") == "declarations":
        return derived_differences(report, gate.get("exception", []))
    return pinned_differences(gate, report)


def pinned_differences(gate: dict, report: dict) -> list[str]:
    """Every pinned verdict that changed, every verdict that is not pinned, every pin with no verdict."""
    now = {(req["id"], src): v for req, src, v in verdict_rows(report)}
    diffs = []
    pinned = {(req, src): status for src, pins in gate["verdicts"].items() for req, status in pins.items()}
    for (req, src), status in sorted(pinned.items()):
        v = now.get((req, src))
        if v is None:
            diffs.append(f"{req} on {src}: pinned {status}, now no verdict")
        elif v["status"] == core.INCONCLUSIVE:
            why = "; ".join(f"{w['history']}: {w['message']}" for w in v["witnesses"][:2])
            runs = [a for a in report.get("attempts", []) if v["witnesses"] and a["history"] == v["witnesses"][0]["history"]]
            scales = ", ".join(format(a["time_scale"], "g") for a in runs)
            every = f" after {len(runs)} attempts (time scales {scales})" if len(runs) > 1 else ""
            diffs.append(f"{req} on {src}: pinned {' or '.join(_accepted(status))}, now inconclusive: a scenario's run "
                         f"did not test it{every}; investigate the run ({why})")
        elif v["status"] not in _accepted(status):
            why = f" ({v['witnesses'][0]['message']})" if v["witnesses"] else ""
            diffs.append(f"{req} on {src}: pinned {' or '.join(_accepted(status))}, now {v['status']}{why}")
    for (req, src), v in sorted(now.items()):
        if (req, src) not in pinned and src in gate["verdicts"]:
            diffs.append(f"{req} on {src}: not pinned, now {v['status']}")
    return diffs


def derived_differences(report: dict, exceptions: list[dict]) -> list[str]:
    """The models gate, derived from what every system declares (spec/systems.toml and the mutant
    registry): a model violates nothing it does not declare, and each History-declared violation
    is shown by some History; every mutant is caught (replcheck.results.caught: by one of its
    `kills` on a History where its base model holds it, as verify records); every proof has its
    claimed outcome; TLC's results are as spec/tla/manifest.toml pins them (verify's `tlc manifest`
    findings). Each model and mutant, and each small TLC check, must have verdicts, so a partial
    run cannot pass."""
    from replcheck import systems, tlc

    cells = {(req["id"], src): v for req, src, v in verdict_rows(report)}
    diffs: list[tuple[str, str, str]] = []  # (system, requirement, text)
    for name, system in systems.systems().items():
        src = f"history:{name}"
        if not any(s == src for _, s in cells):
            diffs.append((name, "*", f"{name}: no verdicts from the embedded Histories (run verify on every system)"))
            continue
        if system.kind == "mutant":
            if not report.get("caught", {}).get(name):
                diffs.append((name, "*", f"{name} ({system.declares.bug}) survives: none of {', '.join(system.declares.kills)} "
                                         f"is violated on a History where {system.declares.base} holds it"))
            continue
        declared = system.declares.expected_violations
        for r in system.own_declarations(systems.systems().get(system.seed)):  # a seed's are shown on the seed
            if cells.get((r, src), {}).get("status") != core.VIOLATED:
                diffs.append((name, r, f"{r} on {src}: declared violated ({declared[r]}), but no History shows it"))
        for (r, s), v in sorted(cells.items()):
            if s.split(":", 1)[1] != name:
                continue
            if expect.is_expectation(r):  # a documented flavour difference is violated, anything else holds
                if v["status"] == core.VIOLATED and not v["expected"]:
                    diffs.append((name, r, f"{r} on {s}: violated ({v['witnesses'][0]['message']})"))
                elif v.get("differs") and v["status"] != core.VIOLATED:
                    diffs.append((name, r, f"{r} on {s}: documented as a flavour difference ({v['differs']}), now {v['status']}"))
                continue
            if v["status"] == core.VIOLATED and r not in declared:
                why = f" ({v['witnesses'][0]['message']})" if v["witnesses"] else ""
                diffs.append((name, r, f"{r} on {s}: violated, and {name} does not declare it{why}"))
    checked = {t["check"] for (_, src), v in cells.items() if src.startswith("tlc:") for t in v.get("tlc", [])}
    for c in tlc.select(size="small"):
        if c.name not in checked:
            diffs.append((f"tlc:{c.name}", "*", f"tlc:{c.name}: no verdicts from TLC (run verify with TLC)"))
    for f in report["findings"]:
        if Finding.from_dict(f).gated:
            diffs.append((f.get("system", ""), f.get("requirement", ""), f"{f['kind']}: {f.get('system', '')} "
                                                                        f"{f.get('requirement', '')}: {f['witness']}"))
    excused = {(e["system"], e["requirement"]) for e in exceptions}
    return [text for system, req, text in diffs if (system, req) not in excused]
