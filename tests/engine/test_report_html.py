"""The HTML report (replcheck.html): structure, escaping and figures on hand-built report
documents, then the page in a real headless Chromium (DOM, console, screenshot)."""
from __future__ import annotations

import re
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replcheck.html import render_html

EVIL = "<script>alert(1)</script> \"&'"
EVIL_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &quot;&amp;&#x27;"
SOURCES = ["history:model:wl344", "history:model:wl7318", "history:mutant:stop-applies-waited-event",
           "z3:z3", "state-machine:model:wl7318"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def make_report(n: int = 6, sources: list[str] | None = None, figures: dict | None = None, **over) -> dict:
    """A report document with n requirements over two features; requirement i on source j has a
    verdict cycling through pass, violated, expected violation, not exercised and no data."""
    sources = list(SOURCES if sources is None else sources)
    reqs = []
    for i in range(n):
        verdicts = {}
        for j, s in enumerate(sources):
            kind = (i + j) % 5
            if kind == 4:
                continue  # no data
            status = ["pass", "violated", "violated", "not_exercised"][kind]
            witnesses = [{"message": f"B began trx g{i} at 1000 but it was due at 2000 ({s})", "history": "d1-stop-start-ddl",
                          "lines": [57, 60], "reproduce": f"replcheck simulate spec/histories/d1-stop-start-ddl.jsonl --system {s}"}]
            verdicts[s] = {"status": status, "expected": "violated" if kind == 2 else None,
                           "counts": {status: 3, "pass": 1}, "witnesses": witnesses if status == "violated" else []}
        reqs.append({"id": f"WL{344 if i % 2 else 1720}.REQ.R{i}", "feature": "delay" if i % 2 else "semisync",
                     "seed": "WL#344", "section": "Semantics", "kind": "safety", "text": f"requirement text {i}",
                     "evidence": [{"type": "property", "name": f"delay.prop_{i}", "doc": "a property"}], "verdicts": verdicts})
    report = {"schema": "replcheck.report/1", "title": "replcheck compliance report", "inputs": ["out/results.json"],
              "sources": sources, "requirements": reqs, "findings": [],
              "summary": {"requirements": n, "with_evidence": n, "violated": 1, "expected_violations": 1, "findings": 0,
                          "sources": len(sources)},
              "figures": figures if figures is not None else {"delay": delay_points(7), "semisync": semisync_samples(2, 5)}}
    report.update(over)
    return report


def delay_points(n: int, early: int = 0) -> list[dict]:
    return [{"history": "chain-per-hop", "system": f"model:wl{344 if i % 2 else 7318}", "node": "C", "trx": f"g{i}",
             "due_us": (i + 5) * 1_000_000, "applied_us": (i + 5) * 1_000_000 - (500_000 if i < early else 0), "delay_s": 5}
            for i in range(n)]


def semisync_samples(panels: int, per: int) -> list[dict]:
    return [{"history": f"ss-h{p}", "system": "model:after-sync", "node": "A", "t_us": t * 1_000_000,
             "status": "ON" if t % 3 else "OFF", "wait_sessions": t % 2, "yes_tx": t, "no_tx": 0}
            for p in range(panels) for t in range(per)]


class Page(HTMLParser):
    """What the tests look at: ids, matrix cells, script tags, figure circles; and tag balance."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.cells: list[tuple[str, str]] = []  # (requirement of the row, class of the cell)
        self.scripts = 0
        self.points: dict[str, int] = {}  # figure id -> circles of class pt
        self.stack: list[str] = []
        self.row = self.figure = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "tr":
            self.row = a.get("data-req")
        if tag == "td" and "cell" in a.get("class", "").split():
            self.cells.append((self.row, a["class"]))
        if tag == "figure" and a.get("id"):
            self.figure = a["id"]
        if tag == "circle" and "pt" in a.get("class", "").split():
            self.points[self.figure] = self.points.get(self.figure, 0) + 1
        self.scripts += tag == "script"
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <line .../> in SVG: opened and closed
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()


def page(report: dict) -> tuple[str, Page]:
    text = render_html(report)
    parsed = Page(text)
    assert not parsed.stack, f"unclosed tags {parsed.stack}"
    return text, parsed


# -- structure --------------------------------------------------------------------------------------
def test_every_requirement_has_its_anchor_and_appears():
    report = make_report(8)
    text, p = page(report)
    assert text.startswith("<!DOCTYPE html>")
    for r in report["requirements"]:
        assert r["id"] in p.ids
        assert f'href="#{r["id"]}"' in text
        assert r["text"] in text and r["evidence"][0]["name"] in text
    assert len(p.ids) == len(set(p.ids)), "duplicate ids"
    for section in ("rc-matrix", "rc-requirements", "rc-findings", "rc-figures"):
        assert section in p.ids
    assert f'data-tile="sources"><b>{len(SOURCES)}</b>' in text and 'data-tile="violated"' not in text
    for tile in ("requirements", "passed", "violated_new", "violated_known", "inconclusive", "not_exercised", "findings"):
        assert f'data-tile="{tile}"' in text  # the release section's, each requirement once
    assert "out/results.json" in text and "No findings." in text


def test_matrix_has_one_cell_per_requirement_and_source():
    report = make_report(7)
    _, p = page(report)
    assert len(p.cells) == 7 * len(SOURCES)
    big = make_report(75, [f"history:mutant:m{i}" for i in range(25)], figures={})
    assert len(page(big)[1].cells) == 75 * 25


def test_expected_violation_is_marked_apart_from_violation():
    report = make_report(1)  # requirement 0: source j has kind j: pass, violated, expected, not exercised, no data
    _, p = page(report)
    classes = [c.split()[1] for _, c in p.cells]
    assert classes == ["s-pass", "s-violated", "s-expected", "s-not_exercised", "s-nodata"]
    text = render_html(report)
    assert text.count("expected violation") >= 2  # legend and the requirement's verdict table


def test_witnesses_and_reproduce_commands_are_shown():
    report = make_report(3)
    text = render_html(report)
    for r in report["requirements"]:
        for v in r["verdicts"].values():
            for w in v["witnesses"]:
                assert w["message"] in text
                assert f"<pre><code>{w['reproduce']}</code></pre>" in text
    assert "trace lines 57, 60" in text


def test_a_check_of_several_requirements_is_described_once_and_linked_from_each():
    report = make_report(4)
    machine = {"type": "state-machine", "name": "DelayMachine", "doc": "Delayed replication's steps"}
    for r in report["requirements"]:
        r["evidence"].append(dict(machine))
    page = render_html(report)
    assert page.count("Delayed replication&#x27;s steps") == 1
    assert page.count('<li id="ev-state-machine-DelayMachine">') == 1
    assert page.count('<a href="#ev-state-machine-DelayMachine">described above</a>') == 4
    assert page.count("a property") == 4  # one requirement's own check keeps its text where it is


def test_everything_is_escaped():
    report = make_report(2, sources=["history:model:" + EVIL, "z3:z3"],
                         figures={"delay": [dict(p, history=EVIL, system=EVIL) for p in delay_points(3)],
                                  "semisync": [dict(p, history=EVIL, status=EVIL) for p in semisync_samples(1, 3)]})
    req = report["requirements"][0]
    req.update(feature=EVIL, seed=EVIL, section=EVIL, kind=EVIL, text=EVIL, evidence=[{"type": EVIL, "name": EVIL, "doc": EVIL}])
    req["verdicts"]["history:model:" + EVIL] = {"status": "violated", "expected": None, "counts": {EVIL: 1}, "witnesses": [
        {"message": EVIL, "history": EVIL, "lines": [EVIL], "reproduce": EVIL}]}
    report.update(title=EVIL, inputs=[EVIL], summary={EVIL: EVIL},
                  findings=[{"kind": EVIL, "system": EVIL, "history": EVIL, "requirement": EVIL, "witness": EVIL}])
    report["requirements"][1]["id"] = 'X"><img src=x onerror=alert(1)>'
    text, p = page(report)
    assert EVIL not in text and "<script>alert" not in text and "<img" not in text
    assert EVIL_ESCAPED in text
    assert p.scripts == 1  # only the page's own filter script
    assert 'X"><img src=x onerror=alert(1)>' in p.ids  # the id survives, as an attribute value
    assert "alert" not in text.split("<script>")[1].split("</script>")[0]


def test_findings_are_listed_with_links():
    finding = {"kind": "model violates its seed", "system": "model:wl344", "history": "x",
               "requirement": "WL1720.REQ.R0", "witness": "A committed before the ack"}
    text, _ = page(make_report(2, findings=[finding]))
    assert "No findings." not in text and "Findings (1)" in text
    assert 'href="#WL1720.REQ.R0"' in text and "A committed before the ack" in text


# -- figures ------------------------------------------------------------------------------------------
def test_delay_figure_has_one_point_per_transaction_and_rings_early_ones():
    report = make_report(2, figures={"delay": delay_points(9, early=2) + [{"history": "h", "due_us": None}]})
    text, p = page(report)
    assert p.points == {"rc-fig-delay": 9}  # the point without an apply time is left out
    assert text.count('class="pt early"') == 2
    assert "<b>2</b> applied before their due time" in text
    assert "due time (s)" in text and "applied at (s)" in text and 'class="diag"' in text


def test_delay_outlier_is_clamped_not_squashing_the_scale():
    pts = delay_points(5) + [dict(delay_points(1)[0], trx="past", due_us=-9_995_000_000, applied_us=35_000_000)]
    text, p = page(make_report(1, figures={"delay": pts}))
    assert p.points == {"rc-fig-delay": 6}
    assert "1 with a due time off the scale" in text and "-10000" not in text


def test_semisync_small_multiples_are_capped():
    _, p = page(make_report(1, figures={"semisync": semisync_samples(3, 5)}))
    assert p.points == {"rc-fig-semisync": 15}
    text, p = page(make_report(1, figures={"semisync": semisync_samples(9, 4)}))
    assert p.points == {"rc-fig-semisync": 6 * 4}
    assert text.count('<figure class="panel">') == 6 and "not drawn" in text
    assert "wait sessions" in text and "time (s)" in text and "status ON" in text


@pytest.mark.parametrize("figures", [None, {}, {"delay": [], "semisync": []}, {"other": [1, 2]}])
def test_report_without_figures_still_renders(figures):
    report = make_report(3)
    report.pop("figures")
    if figures is not None:
        report["figures"] = figures
    text, p = page(report)
    assert "No figures in this report." in text and "<svg" not in text
    assert len(p.cells) == 3 * len(SOURCES)


def test_minimal_document_renders():
    text, p = page({"schema": "replcheck.report/1", "requirements": [{"id": "R1", "verdicts": {"z3:z3": {"status": "pass"}}}]})
    assert "R1" in p.ids and len(p.cells) == 1 and "No findings." in text


# -- the page in a real browser -----------------------------------------------------------------------
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000"]
# With --enable-logging=stderr Chromium writes each console message of the page, whatever its
# level (log, warn, error, uncaught exception), as
#   [pid:tid:date/time.us:INFO:CONSOLE:12] "message", source: file:///.../page.html (12)
# (older versions: "INFO:CONSOLE(12)"). The level is not in the line, so any console message from
# the page counts: the report logs nothing on its own.
CONSOLE = re.compile(r':CONSOLE[:(]\d+\)?\] "(?P<msg>.*?)", source: (?P<src>\S*)')


def chromium(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={tmp / 'profile'}", *extra, url],
                          capture_output=True, text=True, timeout=60, cwd=tmp)


def console_messages(stderr: str, url: str) -> list[str]:
    return [m["msg"] for m in CONSOLE.finditer(stderr) if m["src"].startswith(url)]


@pytest.fixture(scope="module")
def browser_dir():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (ci/setup installs Debian's chromium)")
    with tempfile.TemporaryDirectory(prefix="replcheck-html-") as d:
        yield Path(d)


def test_console_error_detection_catches_errors(browser_dir):
    # The negative control: without it a broken detector would pass every page.
    bad = browser_dir / "bad.html"
    bad.write_text("<!DOCTYPE html><title>t</title><p>x</p><script>console.error('deliberate console error');</script>"
                   "<script>undefinedFunction();</script>", encoding="utf-8")
    run = chromium(browser_dir, bad.as_uri(), "--dump-dom")
    messages = console_messages(run.stderr, bad.as_uri())
    assert "deliberate console error" in messages, run.stderr[-3000:]
    assert any("undefinedFunction is not defined" in m for m in messages), messages


def test_report_loads_in_chromium_without_console_errors(browser_dir):
    report = make_report(75, [f"history:mutant:m{i}" for i in range(20)] + SOURCES,
                         figures={"delay": delay_points(40, early=3), "semisync": semisync_samples(8, 12)})
    report["requirements"][0]["verdicts"]["z3:z3"]["witnesses"] = [
        {"message": EVIL, "history": EVIL, "lines": [1], "reproduce": EVIL}]
    path = browser_dir / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    run = chromium(browser_dir, path.as_uri(), "--dump-dom")
    assert run.returncode == 0, run.stderr[-3000:]
    dom = run.stdout
    for r in report["requirements"]:
        assert f'id="{r["id"]}"' in dom
    assert '<form id="rc-filter">' in dom  # the script ran to its end: it unhides the filter
    # The browser's serialisation escapes only <, > and & in text: the witness is text, not markup.
    assert "<svg" in dom and "&lt;script&gt;alert(1)&lt;/script&gt; \"&amp;'" in dom and "<script>alert" not in dom
    assert console_messages(run.stderr, path.as_uri()) == []

    shot = browser_dir / "report.png"
    run = chromium(browser_dir, path.as_uri(), "--window-size=1400,2000", f"--screenshot={shot}")
    assert run.returncode == 0, run.stderr[-3000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000
    assert int.from_bytes(png[16:20], "big") == 1400 and int.from_bytes(png[20:24], "big") == 2000


def test_filter_script_hides_what_does_not_match(browser_dir):
    # Drive the page's filter as a reader would (type, then choose a category) and read the DOM.
    driver = """<script>
      var f = document.getElementById("rc-filter"), q = f.querySelector("input"), c = f.querySelector("select");
      q.value = "r1"; q.dispatchEvent(new Event("input"));
      document.body.setAttribute("data-after-text", document.querySelectorAll("tr[data-req]:not([hidden])").length);
      q.value = ""; q.dispatchEvent(new Event("input"));
      c.value = "expected"; c.dispatchEvent(new Event("change"));
      document.body.setAttribute("data-after-cat", document.querySelectorAll("section[data-req]:not([hidden])").length);
    </script>"""
    report = make_report(12, sources=SOURCES[:2], figures={})
    path = browser_dir / "filter.html"
    path.write_text(render_html(report).replace("</body>", driver + "</body>"), encoding="utf-8")
    run = chromium(browser_dir, path.as_uri(), "--dump-dom")
    assert console_messages(run.stderr, path.as_uri()) == []
    ids = [r["id"].lower() for r in report["requirements"]]
    expected = [r for r in report["requirements"] if any(v["expected"] for v in r["verdicts"].values())]
    assert f'data-after-text="{sum("r1" in i for i in ids)}"' in run.stdout  # R1, R10, R11
    assert f'data-after-cat="{len(expected)}"' in run.stdout and 0 < len(expected) < 12


# -- the release summary on a real conformance result -----------------------------------------------
# A recorded `replcheck conform --server mariadb` of three scenarios on MariaDB 10.11 (flt-semisync-unsent,
# clock-reply-late, d1-normal-setup; rows not exercised left out): known violations, declared by the
# reference model or pinned with a reason in ci/mariadb.toml, and passes.
CONFORM_RESULT = Path(__file__).parent / "results" / "conform-mariadb-10.11.json"
REPO = Path(__file__).resolve().parents[2]


def test_release_summary_on_a_real_conform_result_in_chromium(browser_dir):
    import json

    from replcheck import catalogue, cli, release

    out = browser_dir / "conform-report"
    given = browser_dir / "inputs" / "results.json"  # an absolute path the page must not show
    given.parent.mkdir()
    given.write_text(CONFORM_RESULT.read_text())
    assert cli.main(["report", str(given), "--gate", str(REPO / "ci" / "mariadb.toml"), "--out", str(out)]) == 1
    rows = json.loads(CONFORM_RESULT.read_text())["rows"]
    passed = {r["requirement"] for r in rows if r["status"] == "pass"} - {r["requirement"] for r in rows if r["status"] == "violated"}
    passed = {r for r in passed if not r.startswith("EXPECT ")}
    run = chromium(browser_dir, (out / "report.html").as_uri(), "--dump-dom")
    assert run.returncode == 0 and console_messages(run.stderr, (out / "report.html").as_uri()) == []
    dom = run.stdout
    top = dom[dom.index('id="rc-release"'):dom.index('id="rc-matrix"')]  # the release summary comes first
    server_row = re.search(r'<tr data-kind="server">(.*?)</tr>', top).group(1)
    assert f'<td class="n-passed">{len(passed)}</td>' in server_row and '<td class="n-violated_new">0</td>' in server_row
    assert '<td class="n-violated_known">3</td>' in server_row
    assert "Gate mariadb.toml: failed" in top  # the gate pins the whole quick suite, three scenarios ran
    assert "0 new violations, 3 known" in top and "3 findings (one per requirement and scenario)" in top
    # the tiles tell the section's story: its counts, each requirement once, and no other count of violations
    tiles = dict(re.findall(r'data-tile="(\w+)"><b>(\d+)</b>', dom))
    assert {k: tiles[k] for k in release.COLUMNS} == dict(re.findall(r'<td class="n-(\w+)">(\d+)</td>', server_row))
    assert (tiles["violated_new"], tiles["violated_known"], tiles["findings"]) == ("0", "3", "3")
    assert int(tiles["requirements"]) == sum(int(tiles[k]) for k in release.COLUMNS) == len(catalogue.load())
    assert not {"violated", "expected_violations"} & set(tiles)  # the verdicts per source: 3 unexpected, 2 expected
    known = top[top.index("Known violations"):]
    assert "FILTER.SEMISYNC.UNSENT" in known and "MDEV-38486" in known  # declared by model:mariadb-10.11
    assert "WL344.CLOCK.COMPENSATE" in known and "get_master_version_and_clock" in known  # declared by it too
    assert str(browser_dir) not in dom and "inputs/results.json" in dom  # no path of the machine it ran on
