"""A campaign on a real server whose run a statement not answered cut short (seed 11's History 52,
kept in corpus/server): the History's rows are a finding and expected differences, so the campaign
goes on with the next History instead of failing."""
from __future__ import annotations

import dataclasses

from replcheck import campaign, io, systems
from replcheck.harness.system import MariaDB
from replcheck.spec.contract import Trace
from conftest import REPO

SERVER, MODEL = "server:mariadb-10.11", "model:mariadb-10.11"
KEPT = REPO / "corpus" / "server" / "stop-all-hung-on-another-connections-delay.trace.jsonl"
KIND, SYSTEM, REQUIREMENT, VERDICT, EXPECTED = (campaign.COLUMN[c] for c in ("kind", "system", "requirement", "verdict", "expected"))


@dataclasses.dataclass
class _Kept(MariaDB):
    """The server as it ran the History: its kept Trace, no server started."""

    def run(self, history: dict) -> Trace:
        header, obs = io.load_trace(KEPT)
        return Trace(header, [{k: v for k, v in o.items() if k != "_line"} for o in obs])


def test_a_run_cut_short_gives_its_finding_and_expected_differences(monkeypatch):
    real = systems.get(SERVER)
    kept = _Kept(**{f.name: getattr(real, f.name) for f in dataclasses.fields(real)})
    get = systems.get
    monkeypatch.setattr(systems, "get", lambda name, *a: kept if name == SERVER else get(name, *a))
    rows = campaign.run_history(11, 52, (SERVER, MODEL), target=SERVER)
    findings = [r for r in rows if r[campaign.FINDING]]
    assert [(r[KIND], r[SYSTEM], r[REQUIREMENT]) for r in findings] == [("violation", SERVER, "MULTISOURCE.INDEPENDENT")]
    differences = [r for r in rows if r[KIND] == "difference"]
    assert differences and all(r[VERDICT] == "expected" for r in differences)
    assert any("server.statement-did-not-return" in r[EXPECTED] for r in differences)
