"""A real server's Trace of a History where it shows a finding is kept in the campaign's table and
read back by `replay --kept`: a replay on real servers runs again with the machine's timing and may
not show the finding again, so the Trace that showed it is what its triage reads."""
from __future__ import annotations

import dataclasses
import json

import pyarrow as pa

from replcheck import campaign, cli, io, outfs, systems
from replcheck.exits import EXIT_USAGE, EXIT_VIOLATION
from replcheck.generate import generate

MODEL, MUTANT = "model:wl7318", "mutant:start-timestamp"  # seed 5's History 12 shows the mutant's bug (WL7318.F2)
KIND, SYSTEM, TRACE = (campaign.COLUMN[c] for c in ("kind", "system", "trace"))


@dataclasses.dataclass(frozen=True)
class _Unrun(systems.ModelSystem):
    def run(self, history: dict):
        raise AssertionError("a new run of the History")


def _as_server(monkeypatch, cls=systems.ModelSystem) -> None:
    """The mutant stands for a real server: a System whose runs are real (kind server)."""
    real = systems.systems()
    mutant = real[MUTANT]
    server = cls(**{f.name: getattr(mutant, f.name) for f in dataclasses.fields(mutant)} | {"kind": "server"})
    monkeypatch.setattr(systems, "get", lambda name, *a: server if name == MUTANT else real[name])


def _history_rows(seed: int, index: int) -> dict[str, tuple]:
    return {r[SYSTEM]: r for r in campaign.run_history(seed, index, (MODEL, MUTANT)) if r[KIND] == "history"}


def test_the_trace_is_kept_only_of_a_real_servers_history_with_a_finding(monkeypatch):
    _as_server(monkeypatch)
    rows = _history_rows(5, 12)
    assert rows[MODEL][TRACE] is None  # a model's run is made again byte for byte: not kept
    assert rows[MUTANT][TRACE] == io.dumps_lines(*systems.get(MUTANT).run(generate(5, 12)))
    quiet = next(i for i in range(40) if not any(r[campaign.FINDING] for r in campaign.run_history(5, i, (MODEL, MUTANT))))
    assert _history_rows(5, quiet)[MUTANT][TRACE] is None  # nothing to triage: nothing kept


def _campaign_dir(tmp_path, rows: list[tuple], **plan) -> str:
    """A campaign directory as `campaign.run` leaves it: campaign.json and chunk 0's file of `rows`."""
    out = tmp_path / "c"
    where = outfs.as_out(out)
    plan = {"histories": 20, "seed": 5, "systems": [MODEL, MUTANT], "chunk": 250, "table": campaign.TABLE} | plan
    where.write_text("campaign.json", json.dumps({"schema": "replcheck.campaign/1", "plan": plan}))
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow = to_arrow_schema(campaign.schema())
    where.write_chunk(0, pa.Table.from_batches([campaign._batch(pa, arrow, rows)]).drop_columns(["chunk"]))
    return str(out)


def test_replay_kept_gives_the_kept_trace_and_its_findings(monkeypatch, tmp_path, capsys):
    _as_server(monkeypatch)
    out = _campaign_dir(tmp_path, campaign.run_history(5, 12, (MODEL, MUTANT)))
    _as_server(monkeypatch, _Unrun)  # what replay shows is the kept Trace's, not a new run's
    assert cli.main(["replay", "5", "12", "--system", MUTANT, "--kept", out, "--out", str(tmp_path / "r")]) == EXIT_VIOLATION
    assert "violated WL7318.F2:" in capsys.readouterr().out
    kept = (tmp_path / "r" / f"5-12.{MUTANT.replace(':', '-')}.trace.jsonl").read_text()
    assert kept == io.dumps_lines(*systems.systems()[MUTANT].run(generate(5, 12)))


def test_replay_kept_refuses_what_the_campaign_did_not_keep(monkeypatch, tmp_path, capsys):
    _as_server(monkeypatch)
    out = _campaign_dir(tmp_path, campaign.run_history(5, 12, (MODEL, MUTANT)))
    for args, said in ((["5", "12", "--system", MODEL], "trace: null: the campaign keeps a real server's Trace only"),
                       (["5", "13", "--system", MUTANT], "no row: chunk 0 is not done"),
                       (["6", "12", "--system", MUTANT], "holds no History 12 of seed 6"),
                       (["5", "12", "--system", MUTANT, "--families", "delay"], "history_digest: sha256:")):
        assert cli.main(["replay", *args, "--kept", out]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert said in err and len(err.strip().splitlines()) == 1, err
    old = _campaign_dir(tmp_path / "old", campaign.run_history(5, 12, (MODEL, MUTANT)), table="replcheck.campaign-table/3")
    assert cli.main(["replay", "5", "12", "--system", MUTANT, "--kept", old]) == EXIT_USAGE
    assert "a table of other columns keeps no Trace" in capsys.readouterr().err
