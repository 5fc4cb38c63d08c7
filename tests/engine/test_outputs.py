"""Output directories (replcheck/outdir.py): nothing of a user's is ever destroyed or half-written.
Every command that writes a directory (verify, conform, report, replay, campaign) refuses an --out that is not
its own kind of replcheck output or empty, before any work; a report replaces the previous one whole;
a run stopped by SIGTERM or SIGINT leaves no staging directory."""
from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replcheck import outdir
from replcheck.cli import main

from test_hardening import NORMAL, error_of, results_file

REPO = Path(__file__).resolve().parents[2]

# Each command with everything but --out valid, so that only the output can be refused.
COMMANDS = {
    "verify": lambda tmp: ["verify", "--systems", "model:wl344", "--no-tlc"],
    "conform": lambda tmp: ["conform", "--server", "mariadb", "--history", str(NORMAL)],
    "report": lambda tmp: ["report", results_file(tmp)],
    "replay": lambda tmp: ["replay", "3", "1", "--system", "model:wl344"],
    "campaign": lambda tmp: ["campaign", "--histories", "3", "--seed", "1", "--systems", "model:wl344", "--chunk", "2",
                             "--master", "local[1]"],
}


def snapshot(root: Path) -> dict[str, str]:
    """Every path under root (not following links) with its type and content's digest."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = os.lstat(p)
            if p.is_symlink():
                out[str(p.relative_to(root))] = "link:" + os.readlink(p)
            elif p.is_file():
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p.relative_to(root))] = f"mode:{st.st_mode:o}"
    return out


def unrelated(tmp_path: Path) -> Path:
    d = tmp_path / "mine"
    (d / "photos").mkdir(parents=True)
    (d / "thesis.txt").write_text("years of work")
    (d / "photos" / "a.jpg").write_bytes(b"\xff\xd8\xff")
    return d


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_directory_of_other_files_is_refused_and_left_byte_identical(tmp_path, capsys, command):
    d, argv = unrelated(tmp_path), COMMANDS[command](tmp_path)
    before = snapshot(tmp_path)
    line = error_of(capsys, *argv, "--out", str(d))
    assert "mine: an existing directory that is not replcheck's" in line or "mine: exists and is not a campaign" in line
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", ["file", "fifo", "link"])
def test_a_file_fifo_or_symbolic_link_is_refused_as_an_output_directory(tmp_path, capsys, command, kind):
    target = tmp_path / "out"
    if kind == "file":
        target.write_text("kept")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(unrelated(tmp_path))
    argv = COMMANDS[command](tmp_path)
    before = snapshot(tmp_path)
    line = error_of(capsys, *argv, "--out", str(target))
    assert {"file": "a regular file", "fifo": "not a directory", "link": "a symbolic link"}[kind] in line
    assert snapshot(tmp_path) == before


def test_the_current_directory_and_its_parents_are_refused(tmp_path, capsys, monkeypatch):
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.chdir(work)
    for out in (".", "..", str(work)):
        assert "the current directory or one holding it" in error_of(capsys, "report", results_file(tmp_path), "--out", out)


def test_another_kind_of_replcheck_output_is_refused(tmp_path, capsys):
    assert main(["replay", "3", "1", "--system", "model:wl344", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    assert "replcheck's replay output, not a report" in error_of(capsys, "report", results_file(tmp_path), "--out", str(tmp_path / "r"))


def test_a_previous_report_is_replaced_whole_and_nothing_beside_it_touched(tmp_path, capsys):
    out = tmp_path / "report"
    (tmp_path / "neighbour.txt").write_text("kept")
    assert main(["report", results_file(tmp_path), "--out", str(out), "--title", "first"]) in (0, 1)
    assert json.loads((out / outdir.MARKER).read_text())["kind"] == "report"
    (out / "stale-from-a-crashed-tool.txt").write_text("x")  # kept: report keeps what else is there
    assert main(["report", results_file(tmp_path), "--out", str(out), "--title", "second"]) in (0, 1)
    assert json.loads((out / "report.json").read_text())["title"] == "second"
    assert (out / "stale-from-a-crashed-tool.txt").exists() and (tmp_path / "neighbour.txt").read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["neighbour.txt", "report", "results.json"]


def test_an_empty_directory_is_used(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", results_file(tmp_path), "--out", str(tmp_path / "empty")]) in (0, 1)
    assert (tmp_path / "empty" / "report.html").exists()


def test_replay_adds_to_its_own_directory(tmp_path, capsys):
    out = tmp_path / "replays"
    assert main(["replay", "3", "1", "--system", "model:wl344", "--out", str(out)]) == 0
    assert main(["replay", "3", "2", "--system", "model:wl344", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir() if p.name != outdir.MARKER) == [
        "3-1.history.jsonl", "3-1.model-wl344.trace.jsonl", "3-2.history.jsonl", "3-2.model-wl344.trace.jsonl"]


def test_a_report_that_fails_half_way_leaves_the_previous_one_whole(tmp_path, capsys, monkeypatch):
    out = tmp_path / "report"
    assert main(["report", results_file(tmp_path), "--out", str(out), "--title", "first"]) in (0, 1)
    before = snapshot(out)
    from replcheck import report

    def broken(document):
        raise RuntimeError("a bug in the HTML")
    monkeypatch.setattr(report, "markdown", broken)  # after report.json, report.html and junit.xml
    assert main(["report", results_file(tmp_path), "--out", str(out), "--title", "second"]) == 3
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "results.json"]


def test_numbers_of_any_size_render(tmp_path, capsys):
    huge = 10 ** 400
    figures = {"delay": [{"system": "model:wl344", "due_us": huge, "applied_us": 1}],
               "semisync": [{"history": "h", "system": "s", "node": "A", "t_us": huge, "wait_sessions": huge}]}
    path = results_file(tmp_path, figures=figures, row_lines=[huge])
    assert main(["report", path, "--out", str(tmp_path / "r")]) in (0, 1)
    assert "Figures" in (tmp_path / "r" / "report.html").read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_verify_leaves_no_staging_directory(tmp_path, sig):
    out = tmp_path / "report"
    # a shell's background job (`ci/test &`) ignores SIGINT, and a child inherits that: give it the default
    proc = subprocess.Popen([sys.executable, "-m", "replcheck", "verify", "--systems", "model:wl344", "--no-tlc",
                             "--out", str(out)], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while not list(tmp_path.glob(".report.staging-*")):  # verify ends by itself: no clock needed
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130}[sig], err.decode()[-2000:]
    assert list(tmp_path.iterdir()) == []


# -- text a user or a History passes in, escaped for each output's format --------------------------
HOSTILE = "<script>alert(1)</script> | `code` \x1b]0;pwned\x07 \x1b[2J \x00\x85 end"


def test_a_title_and_witnesses_are_escaped_for_markdown_html_and_junit(tmp_path, capsys):
    import xml.etree.ElementTree as ET

    path = results_file(tmp_path, row_requirement="WL344.CM.SET", row_status="violated",
                        row_witnesses=[{"message": HOSTILE, "lines": [2]}])
    assert main(["report", path, "--out", str(tmp_path / "r"), "--title", HOSTILE]) == 1
    md = (tmp_path / "r" / "summary.md").read_text()
    page = (tmp_path / "r" / "report.html").read_text()
    assert "<script>alert" not in md and "<script>alert" not in page and "&lt;script&gt;" in md
    for text in (md, page, (tmp_path / "r" / "junit.xml").read_text()):
        assert not any(c in text for c in "\x1b\x07\x00\x85"), repr(text[:200])
    ET.parse(tmp_path / "r" / "junit.xml")  # well-formed: no control XML 1.0 forbids
    assert "### &lt;script&gt;alert(1)&lt;/script&gt; \\| 'code' \\x1b]0;pwned\\x07 \\x1b[2J \\x00\\x85 end\n" in md


def test_the_terminal_streams_show_controls_but_newline_and_tab(capsys):
    import io as _io

    from replcheck import io

    inner = _io.StringIO()
    io.CleanStream(inner).write("a\x1b[2J\rb\n\tc\x9b")
    assert inner.getvalue() == "a\\x1b[2J\\x0db\n\tc\\x9b"


def test_a_trace_written_to_stdout_is_json_that_passes_the_terminal_unchanged(tmp_path, capsys):
    from replcheck import io

    text = io.dumps_lines({"name": "a\x85b\x1b"}, [])
    assert json.loads(text) == {"name": "a\x85b\x1b"} and "\x85" not in text and "\x1b" not in text


def test_a_gate_name_reaches_the_gate_file_escaped(tmp_path, capsys):
    gate = tmp_path / "g.toml"
    assert main(["gate", str(gate), results_file(tmp_path), "--write", "--name", HOSTILE, "--description", HOSTILE]) == 0
    text = gate.read_text()
    assert not any(c in text for c in "\x1b\x07\x00\x85") and "\\x1b]0;pwned" in text


def test_verify_on_a_folder_of_no_history_is_bad_input(tmp_path, capsys):
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "notes.txt").write_text("not a History")
    line = error_of(capsys, "verify", "--histories", str(tmp_path / "h"), "--out", str(tmp_path / "r"))
    assert line.endswith("/h: holds no .jsonl History") and not (tmp_path / "r").exists()


def test_a_killed_runs_staging_is_removed_for_a_name_with_dashes(tmp_path, capsys):
    """The default --out, replcheck-report, has a dash: the staging folder's pid is read after the name."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / f".replcheck-report.staging-{dead.pid}-ab12").mkdir()
    (tmp_path / ".replcheck-report.staging-not-ours").mkdir()
    assert main(["report", results_file(tmp_path), "--out", str(tmp_path / "replcheck-report")]) in (0, 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".replcheck-report.staging-not-ours", "replcheck-report", "results.json"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the lost exception, as Python drops it
def test_a_stop_signal_lost_in_a_callback_is_raised_again_at_the_next_step():
    # Python drops an exception raised in a weakref callback ("Exception ignored"): a SIGTERM whose
    # handler ran there (an import lock's callback, under load) let a stopped verify run to its end.
    import weakref

    from replcheck import exits
    from replcheck.progress import Progress

    class Thing:
        pass

    with exits.on_signals():
        thing = Thing()
        ref = weakref.ref(thing, lambda _: signal.raise_signal(signal.SIGTERM))
        del thing
        assert ref() is None and exits.stopped_by == [signal.SIGTERM]
        with Progress("verify", 2) as progress, pytest.raises(exits.Terminated):
            progress.done()
    assert exits.stopped() == 143 and exits.stopped_by == []
