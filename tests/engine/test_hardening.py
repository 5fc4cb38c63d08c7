"""Bad input of every kind is one line naming file, line and field, and exit 2: never a traceback (3)."""
from __future__ import annotations

import json

import pytest

from replcheck import campaign
from replcheck.cli import main
from conftest import REPO

NORMAL = REPO / "spec" / "histories" / "d1-normal-setup.jsonl"
DEEP = "[" * 100_000
LONG = "9" * 5000


def error_of(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replcheck: error: ") and len(lines[0]) <= 300, lines
    return lines[0]


def results_file(tmp_path, **patch) -> str:
    row = {"source": "history", "system": "model:wl344", "requirement": "WL344.R1", "status": "pass", "history": "h"}
    doc = {"schema": "replcheck.results/1", "findings": [], "rows": [row]}
    for key, value in patch.items():
        if key.startswith("row_"):
            row[key[4:]] = value
        else:
            doc[key] = value
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return str(path)


def history_with(tmp_path, line2: str) -> str:
    path = tmp_path / "h.jsonl"
    path.write_text(NORMAL.read_text().splitlines()[0] + "\n" + line2 + "\n")
    return str(path)


@pytest.mark.parametrize("command", ["simulate", "check-trace"])
def test_deeply_nested_json_lines_are_refused(tmp_path, capsys, command):
    assert "h.jsonl:2: not valid JSON: nested too deeply" in error_of(capsys, command, history_with(tmp_path, DEEP))


def test_deeply_nested_results_and_campaign_files_are_refused(tmp_path, capsys):
    (tmp_path / "results.json").write_text(DEEP)
    assert "results.json: not valid JSON: nested too deeply" in error_of(capsys, "report", str(tmp_path / "results.json"))
    (tmp_path / "campaign.json").write_text(DEEP)
    with pytest.raises(Exception, match="campaign.json: not valid JSON: nested too deeply"):
        campaign._check_out(tmp_path, campaign.Plan(1, 0, ("model:wl344",), 1))


def test_an_integer_too_long_for_int_names_its_field(tmp_path, capsys):
    line = '{"at": 0, "op": "lose_acks", "node": "A", "count": %s}' % LONG
    assert "h.jsonl:2: count: an integer of more than 4300 digits" in error_of(capsys, "simulate", history_with(tmp_path, line))
    path = tmp_path / "results.json"
    path.write_text('{"schema": "replcheck.results/1", "rows": [], "seed": %s}' % LONG)
    assert "results.json: seed: an integer of more than 4300 digits" in error_of(capsys, "report", str(path))


@pytest.mark.parametrize("content,where", [
    (f"{LONG}\n", "info:1: number_of_fields: an integer of more than 4300 digits"),
    (f"5\nrelay.000001\n{LONG}\nbin.000001\n4\n0\n", "info:3: relay_log_pos: an integer of more than 4300 digits"),
])
def test_relay_log_info_with_a_too_long_integer(tmp_path, capsys, content, where):
    (tmp_path / "info").write_text(content)
    assert where in error_of(capsys, "relay-log-info", str(tmp_path / "info"))


def test_nan_is_not_json(tmp_path, capsys):
    line = '{"at": NaN, "op": "trx", "node": "A"}'
    assert "h.jsonl:2: not valid JSON: NaN is not a JSON number" in error_of(capsys, "simulate", history_with(tmp_path, line))


@pytest.mark.parametrize("patch,field", [
    ({"rows": [1]}, "rows[0]: 1 is not of type 'object'"),
    ({"row_status": ["pass"]}, "rows[0].status"),
    ({"row_counts": []}, "rows[0].counts"),
    ({"row_counts": {"pass": "3"}}, "rows[0].counts.pass"),
    ({"row_counts": {"passed": 3}}, "rows[0].counts"),
    ({"row_witnesses": "w"}, "rows[0].witnesses"),
    ({"row_witnesses": [{"lines": [1]}]}, "rows[0].witnesses[0]: 'message' is a required property"),
    ({"row_history": 7}, "rows[0].history"),
    ({"findings": [{"kind": "x"}]}, "findings[0]: 'witness' is a required property"),
    ({"figures": []}, "figures"),
])
def test_results_of_the_wrong_types_name_the_field(tmp_path, capsys, patch, field):
    path = results_file(tmp_path, **patch)
    assert f"results.json: {field}" in error_of(capsys, "report", path, "--out", str(tmp_path / "r"))
    assert f"results.json: {field}" in error_of(capsys, "gate", str(tmp_path / "g.toml"), path)
    assert not (tmp_path / "r").exists()


def test_explain_takes_ascii_digits_only(capsys):
    assert "expected SEED INDEX" in error_of(capsys, "explain", "\u00b2", "1", "--system", "model:wl344")


@pytest.mark.parametrize("argv,message", [
    (["--seed", str(2**63)], f"--seed: {2**63} is not in 0..{2**63 - 1}"),
    (["--systems", ""], "--systems: unknown system ''"),
])
def test_campaign_refuses_what_it_cannot_record(tmp_path, capsys, argv, message):
    assert message in error_of(capsys, "campaign", "--out", str(tmp_path / "c"), *argv)
    assert not (tmp_path / "c").exists()


def test_verify_refuses_an_empty_system_list(tmp_path, capsys):
    assert "unknown system ''" in error_of(capsys, "verify", "--systems", "", "--out", str(tmp_path / "v"))
