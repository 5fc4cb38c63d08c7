"""The manifest of the servers' suites (spec/suites/manifest.toml, replcheck/manifest.py): every
entry is well formed, it and the scenario files of spec/histories/suites/ are in step, and a broken
entry is replcheck's own fault (SpecError), never bad input."""
from __future__ import annotations

import pytest

from replcheck import io, manifest, suites

ENTRIES = manifest.load()


def test_the_manifest_and_the_scenario_files_are_in_step():
    assert manifest.out_of_step(ENTRIES, suites.histories()) == []
    assert {s for e in ENTRIES for s in e.scenarios} == {p.stem for p in suites.histories()}


def test_every_status_is_used_and_every_unencoded_test_says_why():
    assert {e.status for e in ENTRIES} == set(manifest.STATUSES)
    assert {e.basis for e in ENTRIES} == {"read"}, "an entry classified from its name only"
    assert all(e.why for e in ENTRIES if e.status != "encoded")
    assert all(e.flavour in manifest.repos() for e in ENTRIES)


def test_a_scenario_left_out_of_the_manifest_or_named_but_missing_is_out_of_step(tmp_path):
    histories = suites.histories()
    [entry] = [e for e in ENTRIES if e.scenarios == ("mdb-rpl_incident",)]
    assert manifest.out_of_step(tuple(e for e in ENTRIES if e is not entry), histories) == [
        "mdb-rpl_incident.jsonl: no manifest entry names it (mariadb-10 mysql-test/suite/rpl/t/rpl_incident.test)"]
    missing = [p for p in histories if p.stem != "mdb-rpl_incident"]
    assert manifest.out_of_step(ENTRIES, missing) == [
        "mysql-test/suite/rpl/t/rpl_incident.test (mariadb-10): names mdb-rpl_incident, which is no scenario file"]
    # a scenario whose header names another test than its entry does
    moved = tmp_path / "mdb-rpl_incident.jsonl"
    text = next(p for p in histories if p.stem == "mdb-rpl_incident").read_text()
    moved.write_text(text.replace("rpl/t/rpl_incident.test", "rpl/t/rpl_incident2.test", 1))
    assert manifest.out_of_step(ENTRIES, missing + [moved]) == [
        "mdb-rpl_incident: its header says ('mariadb-10', 'mysql-test/suite/rpl/t/rpl_incident2.test'), "
        "its manifest entry ('mariadb-10', 'mysql-test/suite/rpl/t/rpl_incident.test')"]


def test_counts_per_suite_and_per_feature():
    by_suite = manifest.counts(ENTRIES, "suite")
    assert sum(sum(c.values()) for c in by_suite.values()) == len(ENTRIES)
    assert by_suite["mariadb-10 rpl"]["encoded"] >= 3 and by_suite["google-5.0 rpl"]["partly"] >= 1
    by_feature = manifest.counts(ENTRIES, "feature")
    assert sum(sum(c.values()) for c in by_feature.values()) == sum(len(e.features) for e in ENTRIES)


GOOD = {"flavour": "mariadb-10", "test": "mysql-test/suite/rpl/t/rpl_x.test", "features": ["delay"],
        "status": "not_expressible", "basis": "read", "why": "a mechanism"}


@pytest.fixture
def manifest_of(monkeypatch):
    """Makes the manifest these entries; the real one is read again afterwards."""
    def use(*entries):
        data = {"repos": {"mariadb-10": "MariaDB/server"}, "test": list(entries)}
        monkeypatch.setattr(manifest, "_data", lambda: data)
        manifest.load.cache_clear()
        manifest.repos.cache_clear()
    yield use
    manifest.load.cache_clear()
    manifest.repos.cache_clear()


@pytest.mark.parametrize("change,problem", [
    ({"status": "done"}, "status is one of"),
    ({"flavour": "mysql-9"}, "flavour 'mysql-9'"),
    ({"test": "suite/rpl/t/x.test"}, "test is a mysql-test path"),
    ({"features": ["speed"]}, "features are a non-empty list"),
    ({"why": ""}, "why says"),
    ({"scenarios": ["mdb-x"]}, "an entry names its scenarios exactly when"),
    ({"status": "encoded"}, "an entry names its scenarios exactly when"),
    ({"status": "partly", "scenarios": ["mdb-x"], "basis": "name"}, "an encoded test was read"),
    ({"basis": "guess"}, "basis is one of"),
    ({"extra": 1}, "needs flavour"),
])
def test_a_bad_entry_is_a_spec_error_naming_the_entry_and_field(manifest_of, change, problem):
    manifest_of({**GOOD, **change})
    with pytest.raises(io.SpecError, match=rf"spec/suites/manifest.toml: test\[0\] \(.*\): {problem}"):
        manifest.load()


def test_a_good_entry_loads_and_a_test_listed_twice_is_a_spec_error(manifest_of):
    manifest_of(GOOD)
    [e] = manifest.load()
    assert (e.suite, e.status, e.scenarios) == ("rpl", "not_expressible", ())
    manifest_of(GOOD, GOOD)
    with pytest.raises(io.SpecError, match="listed twice for mariadb-10"):
        manifest.load()


def test_a_suite_without_a_t_folder_is_named_by_its_folder(manifest_of):
    manifest_of({**GOOD, "test": "mysql-test/suite/multi_source/simple.test"})
    assert manifest.load()[0].suite == "multi_source"
