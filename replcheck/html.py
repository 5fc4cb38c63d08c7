"""The compliance report as one self-contained HTML5 page (`render_html`).

A release manager reads it offline, perhaps from a CI artifact, so the page carries everything
itself: inline CSS, inline SVG drawn here (no plotting library, no fonts, no network) and one
small inline script that only adds a filter; without it the page is complete.

Sections: for the release, its tiles (each requirement once: passed, violated new and known,
inconclusive, not exercised; the findings) and what they sum up (replcheck/release.py, the one
count of them); the other numbers and inputs; the verdict matrix (requirements grouped by feature x
sources, one coloured, linked cell each); every requirement with its evidence and, per source,
the verdict, counts and witnesses with the command that reproduces each; the findings; the
figures (delay: due against applied time; semi-sync: master status and waiting sessions).

Every string of the report may come from a trace or a user's file, so every one goes through
`html.escape` (text and attributes alike) and none is ever written into the script or the style.
Class names come from fixed tables, never from the report.
"""
from __future__ import annotations

import html
import math
from urllib.parse import quote

from replcheck import io, release

__all__ = ["render_html"]

# status category -> (label, glyph): the glyph keeps the matrix readable in grey print and for
# colour-blind readers; the colours are in CSS below.
CATEGORIES = {
    "violated": ("violated", "\u2717"),
    "expected": ("expected violation", "!"),
    "inconclusive": ("inconclusive", "?"),
    "pass": ("pass", "\u2713"),
    "not_exercised": ("not exercised", "\u00b7"),
    "nodata": ("no data", ""),
}
RANK = {c: i for i, c in enumerate(CATEGORIES)}  # a requirement's overall status: its first category in this order
KIND_ABBR = {"history": "hist", "state-machine": "sm", "conformance": "conf", "campaign": "camp", "tlc": "TLC"}
PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#000000", "#f0e442"]
MAX_PANELS = 6  # semi-sync small multiples; the rest are named, not drawn

CSS = """
:root{--pass:#2e9d4f;--violated:#d62728;--expected:#f0a202;--inconclusive:#8e44ad;--not_exercised:#c9ced6;--nodata:#fff;--line:#d0d4da;--muted:#5b6470}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2329;margin:0;padding:0 1.5rem 3rem;max-width:1400px}
h1{margin:1rem 0 .3rem}h2{margin-top:2.2rem;border-bottom:2px solid var(--line);padding-bottom:.2rem}
code,pre{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:#f4f5f7;border:1px solid var(--line);padding:.4rem .6rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
nav a{margin-right:1rem}.muted{color:var(--muted)}
.tiles{display:flex;flex-wrap:wrap;gap:.6rem;margin:.8rem 0}
.tile{border:1px solid var(--line);border-radius:6px;padding:.4rem .8rem;min-width:8rem}
.tile b{display:block;font-size:1.6rem}.tile.bad{border-color:var(--violated);background:#fdecec}
.tile.warn{border-color:var(--expected);background:#fff6e0}
.legend{display:flex;flex-wrap:wrap;gap:1rem;margin:.4rem 0;align-items:center}
.sw{display:inline-block;width:1.1em;height:1.1em;border:1px solid #888;vertical-align:-.2em;margin-right:.3em;text-align:center;font-size:11px;line-height:1.05em}
.s-pass{background:var(--pass);color:#fff}.s-violated{background:var(--violated);color:#fff}
.s-expected{background:var(--expected);color:#000}.s-inconclusive{background:var(--inconclusive);color:#fff}.s-not_exercised{background:var(--not_exercised);color:#333}
.s-nodata{background:var(--nodata);color:#999}
.scroll{overflow:auto;max-height:90vh;border:1px solid var(--line)}
table.matrix{border-collapse:collapse;font-size:12px}
table.matrix th,table.matrix td{border:1px solid #fff;padding:0}
table.matrix thead th{position:sticky;top:0;background:#fff;z-index:2;vertical-align:bottom}
table.matrix thead tr.kinds th{font-weight:normal;color:var(--muted);border-bottom:1px solid var(--line);height:1.4rem}
table.matrix thead tr+tr th{top:1.4rem}
th.src{height:11rem;width:20px}
th.src div{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap;max-height:10.5rem;overflow:hidden;text-overflow:ellipsis;font-weight:normal;margin:0 auto}
table.matrix th.rq{position:sticky;left:0;background:#fff;text-align:left;padding:0 .5rem 0 .2rem;white-space:nowrap;font-weight:normal;z-index:1}
table.matrix tr.grp th{position:sticky;left:0;text-align:left;background:#eef0f3;padding:.15rem .3rem;font-weight:600}
td.cell{width:20px;height:18px;text-align:center}
td.cell a{display:block;width:100%;height:18px;line-height:18px;text-decoration:none;color:inherit}
td.cell a:hover{outline:2px solid #1d2329}
section.req{border:1px solid var(--line);border-left:6px solid var(--not_exercised);border-radius:4px;padding:.2rem 1rem .6rem;margin:1rem 0}
section.req.r-violated{border-left-color:var(--violated)}section.req.r-inconclusive{border-left-color:var(--inconclusive)}section.req.r-expected{border-left-color:var(--expected)}
section.req.r-pass{border-left-color:var(--pass)}section.req:target{box-shadow:0 0 0 3px #7aa7ff}
section.req h3{margin:.6rem 0 .2rem;font-family:ui-monospace,Menlo,Consolas,monospace}
.badge{display:inline-block;border-radius:3px;padding:0 .4em;font-size:12px;border:1px solid #999;margin-left:.4em;font-family:system-ui,sans-serif;font-weight:normal}
blockquote{margin:.4rem 0;padding:.2rem .8rem;border-left:3px solid var(--line);background:#fafbfc}
table.v{border-collapse:collapse;width:100%;margin-top:.4rem}
table.v th,table.v td{border-top:1px solid var(--line);padding:.25rem .4rem;text-align:left;vertical-align:top}
table.v td:first-child{white-space:nowrap}
ul.w{margin:.2rem 0;padding-left:1.1rem}ul.w li{margin-bottom:.4rem}
table.findings{border-collapse:collapse}table.findings td,table.findings th{border:1px solid var(--line);padding:.25rem .5rem;vertical-align:top;text-align:left}
svg.fig{max-width:100%;height:auto;font:11px system-ui,sans-serif;background:#fff}
svg .grid{stroke:#e5e7eb}svg .axis{stroke:#444}svg .pt{stroke:#fff;stroke-width:.8;fill-opacity:.85}
svg .pt.early{stroke:#d62728;stroke-width:2.5}svg .pt.off{stroke:#333;stroke-dasharray:2 2;stroke-width:1.5}svg .diag{stroke:#888;stroke-dasharray:4 3}
.panels{display:flex;flex-wrap:wrap;gap:1rem}
.gate-pass b{color:var(--pass)}.gate-fail b{color:var(--violated)}td.why{max-width:60rem}
#rc-filter{margin:.6rem 0;display:flex;gap:1rem;align-items:center}
[hidden]{display:none!important}
"""

# Progressive enhancement only: reveals the filter controls and hides matrix rows and requirement
# sections (both carry data-req) that do not match. It reads nothing but data-* attributes.
SCRIPT = """
(function () {
  var form = document.getElementById("rc-filter");
  if (!form) { return; }
  var text = form.querySelector("input"), which = form.querySelector("select");
  function apply() {
    var q = text.value.toLowerCase(), c = which.value;
    document.querySelectorAll("[data-req]").forEach(function (el) {
      var ok = (!q || el.getAttribute("data-search").indexOf(q) >= 0) &&
               (!c || (" " + el.getAttribute("data-cats") + " ").indexOf(" " + c + " ") >= 0);
      el.hidden = !ok;
    });
  }
  text.addEventListener("input", apply);
  which.addEventListener("change", apply);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  form.hidden = false;
})();
"""


def e(x: object) -> str:
    """Escape any value for text and (double- or single-quoted) attributes."""
    return html.escape("" if x is None else io.markup(str(x)), quote=True)


def href(rid: object) -> str:
    # Percent-encode the fragment so odd ids (spaces, '#') still link; browsers decode it to match.
    return "#" + e(quote(str(rid), safe="._-~:"))


def category(v: dict | None) -> str:
    if not isinstance(v, dict):
        return "nodata"
    if v.get("status") == "violated":
        return "expected" if v.get("expected") else "violated"
    return v.get("status") if v.get("status") in ("pass", "inconclusive", "not_exercised") else "nodata"


def _counts(v: dict) -> str:
    counts = v.get("counts") or {}
    shown = ", ".join(f"{n} {k}" for k, n in counts.items()) if isinstance(counts, dict) else str(counts)
    searched = [f"{t.get('check')}: {_thousands(t.get('distinct_states'))} distinct states, depth {t.get('depth')}"
                for t in _list(v.get("tlc")) if isinstance(t, dict)]  # what TLC searched, per check
    return "; ".join([shown, *searched]) if searched else shown


def _thousands(n: object) -> str:
    return f"{n:,}" if isinstance(n, int) else str(n)


def _list(x: object) -> list:
    return x if isinstance(x, list) else []


def _verdicts(r: dict) -> dict:
    return r["verdicts"] if isinstance(r.get("verdicts"), dict) else {}


# -- page -----------------------------------------------------------------------------------------
def render_html(report: dict) -> str:
    """The report document (schema replcheck.report/1) as one HTML5 page."""
    reqs = [r for r in _list(report.get("requirements")) if isinstance(r, dict)]
    sources = [str(s) for s in _list(report.get("sources"))]
    if not sources:  # older or hand-made documents: the columns are whatever has verdicts
        sources = sorted({s for r in reqs for s in _verdicts(r)})
    title = report.get("title") or "replcheck compliance report"
    rel = report.get("release") if isinstance(report.get("release"), dict) else release.summary({**report, "requirements": reqs, "sources": sources})
    body = [_header(report, title, _release(rel)), _matrix(reqs, sources), _requirements(reqs, sources),
            _expectations(_list(report.get("expectations")), sources), _findings(_list(report.get("findings"))),
            _attempts(_list(report.get("attempts"))), _figures(report.get("figures"))]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + f"\n<script>{SCRIPT}</script>\n</body>\n</html>\n")


# The tiles under "All verdicts": only the document summary's numbers the release section does not
# count. Verdicts and findings are the release section's tiles, counted once (replcheck/release.py):
# the summary's own per-source counts of them would tell a second story.
OTHER_TILES = ("sources", "expectations", "expectations_violated", "expectations_differ")
TONE = {"violated_new": "bad", "inconclusive": "bad", "findings": "bad", "expectations_violated": "bad",
        "violated_known": "warn", "expectations_differ": "warn"}


def _tiles(numbers: list[tuple[str, object]]) -> str:
    return '<div class="tiles">' + "".join(
        f'<div class="tile {TONE.get(k, "") if v else ""}" data-tile="{e(k)}"><b>{e(v)}</b>{e(k.replace("_", " "))}</div>'
        for k, v in numbers) + "</div>"


def _header(report: dict, title: str, release_html: str) -> str:
    summary = report.get("summary") if isinstance(report.get("summary"), dict) else {}
    tiles = _tiles([(k, summary[k]) for k in OTHER_TILES if k in summary])
    inputs = "".join(f"<li><code>{e(_shown(p))}</code></li>" for p in _list(report.get("inputs"))) or "<li>none recorded</li>"
    return (f'<header><h1>{e(title)}</h1><p class="muted">schema <code>{e(report.get("schema"))}</code></p>{release_html}'
            f'<h2>All verdicts</h2>{tiles}{_counts_table(report.get("counts"))}<details><summary>Inputs</summary><ul>{inputs}</ul></details>'
            '<nav><a href="#rc-matrix">Verdict matrix</a><a href="#rc-requirements">Requirements</a>'
            '<a href="#rc-expectations">Expectations</a><a href="#rc-findings">Findings</a>'
            '<a href="#rc-figures">Figures</a></nav></header>')


def _shown(path: object) -> str:
    """An input as the reader needs it: its folder and name, never where it sat on the machine."""
    parts = [p for p in str(path).replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts[-2:]) if str(path).startswith(("/", "~")) or ":" in str(path)[:3] else str(path)


def _release(rel: dict) -> str:
    """For the release: per kind of evidence the requirements passed, violated (new, known),
    inconclusive and not exercised; the gate's verdict; the new violations and, for each known
    one, why (the declaration or the gate's pin)."""
    head = "".join(f"<th>{e(c.replace('_', ' '))}</th>" for c in release.COLUMNS)
    rows = "".join(f'<tr data-kind="{e(k)}"><td>{e(v["label"])}</td>'
                   + "".join(f'<td class="n-{e(c)}">{e(v.get(c, 0))}</td>' for c in release.COLUMNS) + "</tr>"
                   for k, v in rel.get("kinds", {}).items())
    gate = rel.get("gate")
    if gate is None:
        verdict = '<p id="rc-gate" class="muted">Gate: not run (give <code>--gate GATE</code>, or run <code>replcheck gate</code>).</p>'
    else:
        diffs = "".join(f"<li>{e(d)}</li>" for d in gate["differences"][:50])
        more = f"<li>{len(gate['differences']) - 50} more</li>" if len(gate["differences"]) > 50 else ""
        outcome = ("pass", "passed") if gate["passed"] else ("fail", f"failed, {len(gate['differences'])} differences")
        verdict = (f'<p id="rc-gate" class="gate-{outcome[0]}"><b>Gate {e(gate["name"])}: {e(outcome[1])}</b></p>'
                   + (f"<details><summary>Differences</summary><ul>{diffs}{more}</ul></details>" if diffs else ""))

    def item(x: dict) -> str:
        why = x["why"] or ("pinned violated by the gate" if x["pinned"] else "")
        how = ", ".join(w for w, on in (("declared", x["declared"]), ("pinned", x["pinned"])) if on)
        return (f'<tr><td><a href="{href(x["requirement"])}">{e(x["requirement"])}</a></td><td><code>{e(x["source"])}</code></td>'
                f'<td>{e(", ".join(x["scenarios"]))}</td><td>{e(how)}</td><td class="why">{e(why)}</td></tr>')
    new = [x for x in rel.get("violations", []) if not x["known"]]
    known = [x for x in rel.get("violations", []) if x["known"]]
    table = '<table class="findings {}"><thead><tr><th>requirement</th><th>source</th><th>scenarios</th><th>known as</th><th>why</th></tr></thead><tbody>{}</tbody></table>'
    f = rel.get("findings", {})
    every = rel.get("all")  # each requirement once, on every kind of evidence
    tiles = _tiles([("requirements", rel.get("requirements", 0)), *((c, every.get(c, 0)) for c in release.COLUMNS),
                    ("findings", f.get("distinct", 0))]) if isinstance(every, dict) else ""
    return (f'<section id="rc-release"><h2>For the release</h2>{tiles}'
            f'<table class="findings" id="rc-kinds"><thead><tr><th>evidence</th>{head}</tr></thead><tbody>{rows}</tbody></table>'
            f'{verdict}<p>{e(rel.get("new", 0))} new violations, {e(rel.get("known", 0))} known; '
            f'{e(f.get("distinct", 0))} findings (one per requirement and scenario), '
            f'{e(f.get("inconclusive_scenarios", 0))} scenarios that did not test their claim.</p>'
            + (f'<h3>New violations</h3>{table.format("new", "".join(map(item, new)))}' if new else "")
            + (f'<h3>Known violations, and why</h3>{table.format("known", "".join(map(item, known)))}' if known else "")
            + "</section>")


def _counts_table(counts: object) -> str:
    """The honest numbers: requirements judged by each kind of evidence, and per real server what
    its runs judged, left inconclusive and never exercised."""
    if not isinstance(counts, dict):
        return ""
    evidence = counts.get("evidence") if isinstance(counts.get("evidence"), dict) else {}
    servers = counts.get("servers") if isinstance(counts.get("servers"), dict) else {}
    ev = "".join(f"<tr><td>{e(k)}</td><td>{e(n)}</td></tr>" for k, n in evidence.items())
    sv = "".join(f'<tr><td><code>{e(src)}</code></td><td>{e(n.get("judged"))}</td><td>{e(n.get("inconclusive"))}</td>'
                 f'<td>{e(n.get("not_exercised"))}</td></tr>' for src, n in servers.items() if isinstance(n, dict))
    return ('<div class="panels"><table class="findings"><thead><tr><th>Evidence</th><th>requirements judged</th></tr>'
            f'</thead><tbody>{ev}</tbody></table>'
            + ('<table class="findings"><thead><tr><th>Real server</th><th>judged</th><th>inconclusive</th>'
               f'<th>not exercised</th></tr></thead><tbody>{sv}</tbody></table>' if sv else "") + "</div>")


def _legend() -> str:
    return '<div class="legend">' + "".join(
        f'<span><span class="sw s-{c}">{g}</span>{label}</span>' for c, (label, g) in CATEGORIES.items()) + "</div>"


def _row_attrs(r: dict, cats: set[str]) -> str:
    search = " ".join(str(r.get(k, "")) for k in ("id", "feature", "seed", "kind", "text")).lower()
    return f'data-req="{e(r.get("id"))}" data-search="{e(search)}" data-cats="{" ".join(sorted(cats))}"'


def _by_feature(reqs: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in reqs:
        groups.setdefault(str(r.get("feature", "")), []).append(r)
    return groups


def _matrix(reqs: list[dict], sources: list[str]) -> str:
    # First header row: runs of columns of one kind (history, z3, ...); second: rotated systems,
    # abbreviated, the full source name in the tooltip.
    runs: list[list] = []
    for s in sources:
        kind = s.split(":", 1)[0]
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    kinds = "".join(f'<th colspan="{n}" title="{e(k)}">{e(KIND_ABBR.get(k, k))}</th>' for k, n in runs)

    def label(s: str) -> str:
        short = s.split(":", 1)[1] if ":" in s else s
        return short if len(short) <= 26 else short[:25] + "\u2026"
    heads = "".join(f'<th class="src" title="{e(s)}" scope="col"><div>{e(label(s))}</div></th>' for s in sources)
    rows = []
    for feature, group in _by_feature(reqs).items():
        rows.append(f'<tr class="grp"><th colspan="{len(sources) + 1}">{e(feature or "(no feature)")}</th></tr>')
        for r in group:
            verdicts = _verdicts(r)
            cells, cats = [], set()
            for s in sources:
                v = verdicts.get(s)
                c = category(v)
                cats.add(c)
                tip = f"{r.get('id')} \u00d7 {s}: {CATEGORIES[c][0]}" + (f" ({_counts(v)})" if c != "nodata" else "")
                cells.append(f'<td class="cell s-{c}"><a href="{href(r.get("id"))}" title="{e(tip)}">{CATEGORIES[c][1]}</a></td>')
            rows.append(f'<tr {_row_attrs(r, cats)}><th class="rq" scope="row" title="{e(r.get("text"))}">'
                        f'<a href="{href(r.get("id"))}">{e(r.get("id"))}</a></th>{"".join(cells)}</tr>')
    table = (f'<div class="scroll"><table class="matrix"><thead><tr class="kinds"><th></th>{kinds}</tr>'
             f'<tr><th class="rq">requirement \\ source</th>{heads}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
    options = "".join(f'<option value="{c}">has {label}</option>' for c, (label, _) in CATEGORIES.items())
    flt = ('<form id="rc-filter" hidden><label>Filter <input type="search" placeholder="id, feature, text\u2026"></label>'
           f'<label>Show <select><option value="">all requirements</option>{options}</select></label></form>')
    return (f'<section id="rc-matrix"><h2>Verdict matrix</h2><p class="muted">{len(reqs)} requirements \u00d7 '
            f'{len(sources)} sources; a cell links to the requirement, its tooltip names the source.</p>'
            f'{_legend()}{flt}{table}</section>')


def _requirements(reqs: list[dict], sources: list[str]) -> str:
    evs: dict[tuple, list] = {}  # a check's entries by (type, name)
    for ev in (ev for r in reqs for ev in _list(r.get("evidence")) if isinstance(ev, dict) and ev.get("doc")):
        evs.setdefault((ev.get("type"), ev.get("name")), []).append(ev)
    shared = {k: v for k, v in evs.items() if len(v) > 1}  # in the order met
    out = ['<section id="rc-requirements"><h2>Requirements</h2>'] + (
        ["<h4>Checks of several requirements</h4><ul>", *(f'<li id="{e(_ev_id(evs[k][0]))}">{_evidence(evs[k][0], ())}</li>'
                                                           for k in shared), "</ul>"] if shared else [])
    for feature, group in _by_feature(reqs).items():
        out.append(f"<h2>{e(feature or '(no feature)')}</h2>")
        out.extend(_requirement(r, sources, shared) for r in group)
    return "\n".join(out) + "</section>"


def _ev_id(ev: dict) -> str:
    return f"ev-{ev.get('type')}-{ev.get('name')}"


def _evidence(ev: dict, shared) -> str:
    """One check's entry; a state machine's, shared by all, described once at the top (a seventh of the page)."""
    extra = "".join(f" <span class=\"muted\">{e(k)}={e(v)}</span>" for k, v in ev.items() if k not in ("type", "name", "doc"))
    doc = (f' \u2014 <a href="{href(_ev_id(ev))}">described above</a>' if (ev.get("type"), ev.get("name")) in shared
           else " \u2014 " + e(ev.get("doc")) if ev.get("doc") else "")
    return f'<span class="badge">{e(ev.get("type", "?"))}</span> <code>{e(ev.get("name"))}</code>{doc}{extra}'


def _requirement(r: dict, sources: list[str], shared=frozenset()) -> str:
    verdicts = _verdicts(r)
    cats = {category(verdicts.get(s)) for s in [*sources, *verdicts]} or {"nodata"}
    worst = min(cats, key=RANK.__getitem__)
    evidence = [f"<li>{_evidence(ev if isinstance(ev, dict) else {'name': ev}, shared)}</li>" for ev in _list(r.get("evidence"))]
    rows = []
    for s in [s for s in sources if s in verdicts] + [s for s in verdicts if s not in sources]:
        v = verdicts[s] if isinstance(verdicts[s], dict) else {}
        c = category(v)
        rows.append(f'<tr><td><code>{e(s)}</code></td><td><span class="sw s-{c}">{CATEGORIES[c][1]}</span>'
                    f'{CATEGORIES[c][0]}</td><td>{e(_counts(v))}</td><td>{_witnesses(_list(v.get("witnesses")))}</td></tr>')
    missing = [s for s in sources if s not in verdicts]
    return (f'<section class="req r-{worst}" id="{e(r.get("id"))}" {_row_attrs(r, cats)}>'
            f'<h3><a href="{href(r.get("id"))}">{e(r.get("id"))}</a><span class="badge">{e(r.get("kind"))}</span>'
            f'<span class="badge s-{worst}">{CATEGORIES[worst][0]}</span></h3>'
            f'<p class="muted">Seed <b>{e(r.get("seed"))}</b> \u00b7 section {e(r.get("section"))} '
            f'\u00b7 feature {e(r.get("feature"))}</p>'
            f'<blockquote>{e(r.get("text"))}</blockquote>'
            f'<h4>Evidence</h4><ul>{"".join(evidence) or "<li>none</li>"}</ul>'
            + (f'<table class="v"><thead><tr><th>Source</th><th>Verdict</th><th>Counts</th><th>Witnesses</th></tr></thead>'
               f'<tbody>{"".join(rows)}</tbody></table>' if rows else "<p>No verdict from any source.</p>")
            + (f'<p class="muted">No data from: {e(", ".join(missing))}</p>' if missing and rows else "")
            + "</section>")


def _witnesses(ws: list) -> str:
    if not ws:
        return ""
    items = []
    for w in ws:
        w = w if isinstance(w, dict) else {"message": w}
        lines = ", ".join(str(n) for n in _list(w.get("lines")))
        what = "TLC check" if w.get("steps") else "history"
        where = ((f'{what} <code>{e(w.get("history"))}</code>' if w.get("history") else "")
                 + (f', trace <code>{e(w.get("trace"))}</code>' if w.get("trace") else "")
                 + (f", trace lines {e(lines)}" if lines else ""))
        # a TLC counterexample: its steps, numbered by TLC ("N. Action: changed variables")
        steps = "".join(f"<li>{e(str(st).partition('. ')[2] or st)}</li>" for st in _list(w.get("steps")))
        items.append(f'<li><div>{e(w.get("message"))}</div><div class="muted">{where}</div>'
                     + (f'<ol class="steps">{steps}</ol>' if steps else "")
                     + (f'<pre><code>{e(w.get("reproduce"))}</code></pre>' if w.get("reproduce") else "") + "</li>")
    return f'<ul class="w">{"".join(items)}</ul>'


def _expectations(expectations: list, sources: list[str]) -> str:
    """The Histories' expectations (suite .result files): per expectation and source, its verdict,
    a documented flavour difference with its reason, the observed value of a violation."""
    if not expectations:
        return '<section id="rc-expectations"><h2>Expectations</h2><p>No expectations in this report.</p></section>'
    rows = []
    for x in (x for x in expectations if isinstance(x, dict)):
        for src, v in _verdicts(x).items():
            why = f'<div class="muted">flavour difference: {e(v.get("differs"))}</div>' if v.get("differs") else ""
            rows.append(f'<tr id="{e(x.get("id"))}"><td><code>{e(x.get("id"))}</code></td><td>{e(x.get("text"))}</td>'
                        f'<td><code>{e(src)}</code></td><td class="{e(category(v))}">{e(category(v))}{why}</td>'
                        f'<td>{_witnesses(_list(v.get("witnesses")))}</td></tr>')
    return (f'<section id="rc-expectations"><h2>Expectations ({len(expectations)})</h2><table class="findings"><thead><tr>'
            '<th>Expectation</th><th>What it expects</th><th>Source</th><th>Verdict</th><th>Observed</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _findings(findings: list) -> str:
    if not findings:
        return '<section id="rc-findings"><h2>Findings</h2><p>No findings.</p></section>'
    rows = []
    for f in findings:
        f = f if isinstance(f, dict) else {"witness": f}
        req = f.get("requirement")
        link = f'<a href="{href(req)}">{e(req)}</a>' if req else ""
        rows.append(f'<tr><td>{e(f.get("kind"))}</td><td><code>{e(f.get("system"))}</code></td><td>{e(f.get("history"))}</td>'
                    f'<td>{link}</td><td>{e(f.get("witness"))}</td></tr>')
    return (f'<section id="rc-findings"><h2>Findings ({len(findings)})</h2><table class="findings"><thead><tr>'
            '<th>Kind</th><th>System</th><th>History</th><th>Requirement</th><th>Witness</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></section>')


def _attempts(attempts: list) -> str:
    """Every run of every conformance scenario: a run with an inconclusive verdict runs again at a
    larger time scale, and each verdict is kept from one run (replcheck/conform.py)."""
    if not attempts:
        return ""
    rows = []
    for a in (a for a in attempts if isinstance(a, dict)):
        unmet = "".join(f'<div class="muted">{e(u)}</div>' for u in _list(a.get("unmet")))
        rows.append(f'<tr><td>{e(a.get("history"))}</td><td>{e(a.get("attempt"))}</td><td>{e(a.get("time_scale"))}</td>'
                    f'<td>{e(round((_num(a.get("resolution_us")) or 0) / 1e6, 3))} s</td>'
                    f'<td>{e(round((_num(a.get("slipped_us")) or 0) / 1e6, 3))} s</td>'
                    f'<td>{e(", ".join(map(str, _list(a.get("inconclusive")))))}{unmet}</td>'
                    f'<td>{e(len(_list(a.get("kept"))))}</td><td><code>{e(a.get("trace"))}</code></td>'
                    f'<td><code>{e(a.get("reproduce"))}</code></td></tr>')
    return ('<section id="rc-attempts"><h2>Conformance attempts</h2><p class="muted">A run with an inconclusive '
            'verdict runs again at a larger time scale; each verdict is one run\'s own: a violation from any, else a '
            'pass from any.</p><table class="findings"><thead><tr><th>Scenario</th><th>Attempt</th><th>Time scale</th>'
            '<th>Resolution</th><th>Ops slipped</th><th>Inconclusive</th><th>Verdicts kept</th><th>Trace</th>'
            f'<th>Reproduce</th></tr></thead><tbody>{"".join(rows)}</tbody></table></section>')


# -- figures: one Frame (scales, grid, axes) shared by both kinds ----------------------------------
def _num(x: object) -> float | None:
    try:
        f = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # an int past a float's range: not drawn
        return None
    return f if math.isfinite(f) else None


def _nice(lo: float, hi: float, n: int = 5) -> tuple[float, float, list[float]]:
    """A domain widened to round tick steps (1, 2 or 5 x 10^k) and its ticks."""
    if hi <= lo:
        lo, hi = lo - 1, hi + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-9))
    lo, hi = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    return lo, hi, [lo + i * step for i in range(round((hi - lo) / step) + 1)]


def _fmt(v: float) -> str:
    return f"{v:.6g}"


class Frame:
    """A plot area of w x h pixels with margins, linear x and y scales and labelled axes."""

    def __init__(self, w: int, h: int, xdom: tuple[float, float], ydom: tuple[float, float],
                 xlabel: str, ylabel: str, top: int = 12, yticks: int = 5):
        self.w, self.h, self.left, self.top, self.bottom, self.right = w, h, 56, top, 40, 14
        self.x0, self.x1, self.xt = _nice(*xdom)
        self.y0, self.y1, self.yt = _nice(*ydom, n=yticks)
        self.xlabel, self.ylabel = xlabel, ylabel

    def x(self, v: float) -> float:
        return round(self.left + (v - self.x0) / (self.x1 - self.x0) * (self.w - self.left - self.right), 2)

    def y(self, v: float) -> float:
        return round(self.h - self.bottom - (v - self.y0) / (self.y1 - self.y0) * (self.h - self.top - self.bottom), 2)

    def svg(self, body: str, label: str) -> str:
        xl, xr, yb, yt = self.x(self.x0), self.x(self.x1), self.y(self.y0), self.y(self.y1)
        parts = [f'<line class="grid" x1="{self.x(t)}" x2="{self.x(t)}" y1="{yt}" y2="{yb}"/>'
                 f'<text x="{self.x(t)}" y="{yb + 14}" text-anchor="middle">{_fmt(t)}</text>' for t in self.xt]
        parts += [f'<line class="grid" x1="{xl}" x2="{xr}" y1="{self.y(t)}" y2="{self.y(t)}"/>'
                  f'<text x="{xl - 5}" y="{self.y(t) + 4}" text-anchor="end">{_fmt(t)}</text>' for t in self.yt]
        parts.append(f'<path class="axis" fill="none" d="M{xl},{yt}V{yb}H{xr}"/>'
                     f'<text x="{(xl + xr) / 2}" y="{self.h - 6}" text-anchor="middle">{e(self.xlabel)}</text>'
                     f'<text transform="translate(13,{(yt + yb) / 2}) rotate(-90)" text-anchor="middle">{e(self.ylabel)}</text>')
        return (f'<svg class="fig" xmlns="http://www.w3.org/2000/svg" role="img" width="{self.w}" height="{self.h}" '
                f'viewBox="0 0 {self.w} {self.h}" aria-label="{e(label)}">{"".join(parts)}{body}</svg>')


def _colours(names: list[str]) -> dict[str, str]:
    return {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(sorted(set(names)))}


def _key(colours: dict[str, str]) -> str:
    return '<div class="legend">' + "".join(
        f'<span><span class="sw" style="background:{c}"></span>{e(n)}</span>' for n, c in colours.items()) + "</div>"


def _figures(figures: object) -> str:
    figures = figures if isinstance(figures, dict) else {}
    parts = [p for p in (_delay(_list(figures.get("delay"))), _semisync(_list(figures.get("semisync")))) if p]
    return '<section id="rc-figures"><h2>Figures</h2>' + ("".join(parts) or "<p>No figures in this report.</p>") + "</section>"


def _delay(points: list) -> str:
    """Due time against observed apply time per transaction; below y = x is applied early."""
    pts = [(p, d / 1e6, a / 1e6) for p in points if isinstance(p, dict)
           and (d := _num(p.get("due_us"))) is not None and (a := _num(p.get("applied_us"))) is not None]
    if not pts:
        return ""
    colours = _colours([str(p.get("system")) for p, _, _ in pts])
    # The scale follows the observed apply times (and the due times near them) so that one absurd
    # due time (a timestamp from the far past or future) does not squash the rest; such a point is
    # drawn clamped to the edge, dashed. Clamping only x keeps its side of the y = x line.
    applied = [a for _, _, a in pts]
    span = max(max(applied) - min(applied), 1.0)
    near = [d for _, d, _ in pts if min(applied) - span <= d <= max(applied) + span]
    lo, hi = min(0.0, *applied, *near), max(*applied, *near)
    f = Frame(620, 460, (lo, hi), (lo, hi), "due time (s)", "applied at (s)")
    top = min(f.x1, f.y1)
    body = [f'<line class="diag" x1="{f.x(f.x0)}" y1="{f.y(f.y0)}" x2="{f.x(top)}" y2="{f.y(top)}"/>'
            f'<text x="{f.x(top) - 4}" y="{f.y(top) + 12}" text-anchor="end" fill="#888">y = x</text>']
    early = off = 0
    for p, d, a in pts:
        late = a < d  # applied before its due time: a violation of the delay
        clamp = not f.x0 <= d <= f.x1
        early, off = early + late, off + clamp
        tip = (f"{p.get('system')} \u00b7 {p.get('history')} \u00b7 node {p.get('node')} \u00b7 trx {p.get('trx')}\n"
               f"due {_fmt(d)} s, applied {_fmt(a)} s, MASTER_DELAY {p.get('delay_s')} s"
               + ("\nAPPLIED EARLY" if late else "") + ("\ndue time off the scale" if clamp else ""))
        cls = "pt" + (" early" if late else "") + (" off" if clamp else "")
        body.append(f'<circle class="{cls}" cx="{f.x(min(max(d, f.x0), f.x1))}" cy="{f.y(a)}" r="{5 if late else 4}" '
                    f'fill="{colours[str(p.get("system"))]}"><title>{e(tip)}</title></circle>')
    offnote = f", {off} with a due time off the scale (drawn dashed at the edge)" if off else ""
    return (f'<figure id="rc-fig-delay"><h3>Delayed replication: due against applied time</h3>'
            f'{f.svg("".join(body), "delay: due against applied time")}'
            f'<figcaption>{len(pts)} delayed transactions, <b>{early}</b> applied before their due time '
            f'(below the dashed y = x line, ringed in red){offnote}. Colour: system.</figcaption>'
            f'{_key(colours)}</figure>')


def _pick(panels: dict[tuple, list]) -> list[tuple]:
    """The most telling panels first (status changes, then waiting sessions), and one per history
    before a second of the same history: systems often agree, and a handful must show the most."""
    def score(k: tuple) -> tuple:
        st = [str(p.get("status")) for _, p in panels[k]]
        return sum(a != b for a, b in zip(st, st[1:])), max(_num(p.get("wait_sessions")) or 0 for _, p in panels[k])
    first, again, seen = [], [], set()
    for k in sorted(panels, key=score, reverse=True):  # stable: report order among equals
        (again if k[0] in seen else first).append(k)
        seen.add(k[0])
    return first + again


def _semisync(samples: list) -> str:
    """Small multiples per history, system and node: status band (ON/OFF) over a step line of
    Rpl_semi_sync_master_wait_sessions."""
    panels: dict[tuple, list] = {}
    for p in samples:
        if isinstance(p, dict) and (t := _num(p.get("t_us"))) is not None:
            panels.setdefault((str(p.get("history")), str(p.get("system")), str(p.get("node"))), []).append((t / 1e6, p))
    if not panels:
        return ""
    for series in panels.values():
        series.sort(key=lambda tp: tp[0])
    order = _pick(panels)
    shown, rest = [(k, panels[k]) for k in order[:MAX_PANELS]], order[MAX_PANELS:]
    colours = _colours([k[1] for k, _ in shown])
    svgs = []
    for (history, system, node), series in shown:
        waits = [_num(p.get("wait_sessions")) or 0.0 for _, p in series]
        f = Frame(420, 200, (series[0][0], series[-1][0]), (0, max(1.0, *waits)),
                  "time (s)", "wait sessions", top=30, yticks=min(4, int(max(1.0, *waits))))
        band, line, dots = [], [], []
        for i, ((t, p), w) in enumerate(zip(series, waits)):
            nxt = series[i + 1][0] if i + 1 < len(series) else f.x1
            on = str(p.get("status")).upper() == "ON"
            band.append(f'<rect x="{f.x(t)}" y="8" width="{max(1.0, f.x(nxt) - f.x(t)):.2f}" height="12" '
                        f'fill="{"#2e9d4f" if on else "#d62728"}" fill-opacity="{0.85 if on else 0.6}">'
                        f'<title>{_fmt(t)} s: status {e(p.get("status"))}</title></rect>')
            line.append(f"H{f.x(t)}V{f.y(w)}" if i else f"M{f.x(t)},{f.y(w)}")
            tip = (f"{_fmt(t)} s: status {p.get('status')}, wait_sessions {p.get('wait_sessions')}, "
                   f"yes_tx {p.get('yes_tx')}, no_tx {p.get('no_tx')}")
            dots.append(f'<circle class="pt" cx="{f.x(t)}" cy="{f.y(w)}" r="3.5" fill="{colours[system]}">'
                        f'<title>{e(tip)}</title></circle>')
        line.append(f"H{f.x(f.x1)}")
        body = (f'<text x="{f.left - 5}" y="18" text-anchor="end">status</text>{"".join(band)}'
                f'<path d="{"".join(line)}" fill="none" stroke="{colours[system]}" stroke-width="2"/>{"".join(dots)}')
        svgs.append(f'<figure class="panel"><figcaption><code>{e(history)}</code> \u00b7 {e(system)} \u00b7 node {e(node)}'
                    '</figcaption>'
                    f'{f.svg(body, f"semi-sync {history} {system} {node}")}</figure>')
    more = (f'<p class="muted">The {len(shown)} most telling of {len(order)} series (status changes, then waiting sessions, '
            f'one per history first); not drawn: {e("; ".join(" / ".join(k) for k in rest))}</p>' if rest else "")
    return (f'<figure id="rc-fig-semisync"><h3>Semi-synchronous replication: Rpl_semi_sync_master_status and '
            'Rpl_semi_sync_master_wait_sessions</h3><div class="legend">'
            '<span><span class="sw" style="background:#2e9d4f"></span>status ON</span>'
            '<span><span class="sw" style="background:#d62728;opacity:.6"></span>status OFF</span></div>'
            f'<div class="panels">{"".join(svgs)}</div>{more}{_key(colours)}</figure>')
