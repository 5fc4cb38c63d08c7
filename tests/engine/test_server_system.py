"""The real server as a System of the registry, without a server: its name read from the build's
version, its declarations its flavour model's, a campaign's plan and reproduction for it."""
from __future__ import annotations

import json

import pytest

from replcheck import campaign, cli, io, systems
from replcheck.harness.binaries import BASEDIR_ENV
from replcheck.spec import ROOT as SPEC


def _build(tmp_path, version: str):
    """A base directory whose programs are stand-ins: mariadbd says it is `version`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mariadbd", "mariadb-install-db", "mariadb", "mariadb-binlog"):
        (bin_dir / tool).write_text(f"#!/bin/sh\necho '{tool}  Ver {version} for Linux'\n")
        (bin_dir / tool).chmod(0o755)
    return tmp_path


@pytest.fixture
def build(tmp_path, monkeypatch):
    def use(version: str):
        monkeypatch.setenv(BASEDIR_ENV, str(_build(tmp_path, version)))
        return tmp_path
    systems._server_at.cache_clear()
    yield use
    systems._server_at.cache_clear()


def test_the_server_is_named_by_its_build_and_declares_what_its_flavour_model_declares(build):
    basedir = build("10.11.19-MariaDB-log")
    s = systems.get("server:mariadb-10.11")
    assert (s.name, s.kind, s.flavour, s.basedir) == ("server:mariadb-10.11", "server", "model:mariadb-10.11", str(basedir))
    flavour = systems.get("model:mariadb-10.11")
    assert s.declares.expected_violations == flavour.declares.expected_violations and s.declares.expected_violations


def test_a_build_named_by_its_directory_is_the_same_system_the_registry_names(build, tmp_path):
    (tmp_path / "other").mkdir()
    basedir = str(_build(tmp_path / "other", "11.4.2-MariaDB"))
    build("10.11.19-MariaDB")
    assert systems.server_at(basedir).name == "server:mariadb-11.4"  # conform --basedir: that build, not the environment's
    assert systems.server_at() is systems.get("server:mariadb-10.11")


def test_a_build_of_another_version_is_refused_under_this_name_and_taken_under_its_own(build):
    build("11.4.2-MariaDB")
    with pytest.raises(io.InputError, match=r"is 11\.4\.2-MariaDB, which is 'server:mariadb-11\.4'"):
        systems.get("server:mariadb-10.11")
    s = systems.get("server:mariadb-11.4")
    assert s.flavour == "" and s.declares.expected_violations == {}  # no flavour model of 11.4: everything is new


def test_a_campaign_with_a_server_draws_for_it_and_takes_one_server_only(build):
    build("10.11.19-MariaDB")
    plan = campaign.validate(3, 0, ["server:mariadb-10.11", "model:mariadb-10.11"], None, 1)
    assert plan.target == "server:mariadb-10.11"
    assert campaign.validate(3, 0, ["model:mariadb-10.11"], None, 1).target is None
    with pytest.raises(campaign.CampaignError, match="one real server per campaign"):
        campaign.validate(3, 0, ["server:mariadb-10.11", "server:mariadb-10.12"], None, 1)


def test_a_server_finding_reproduces_on_the_server_and_on_its_flavour_model():
    line = campaign.reproduce(0, 5, "server:mariadb-10.11", "WL344.P1.UNTIL", target="server:mariadb-10.11")
    server, model = line.split(" ; ")
    assert server.startswith("replcheck replay 0 5 --system server:mariadb-10.11 --target server:mariadb-10.11 && ")
    assert model.startswith("replcheck replay 0 5 --system model:mariadb-10.11 --target server:mariadb-10.11 && ")
    assert "--requirement WL344.P1.UNTIL" in model
    assert " ; " not in campaign.reproduce(0, 5, "model:mariadb-10.11", "WL344.P1.UNTIL")


@pytest.mark.parametrize("server_version, exit_code", [("10.11.19-MariaDB", 0), (None, 1)])
def test_check_trace_judges_a_server_trace_with_its_flavour_models_declarations(server_version, exit_code, tmp_path, capsys):
    # MASTER_DELAY = 1.5 taken as 1 violates WL344.CM.INVALID, which model:mariadb-10.11 declares (MariaDB's parser):
    # its Trace, told as a MariaDB 10.11 server's, violates it as declared; told as an unknown system's, as a finding
    header, obs = systems.get("model:mariadb-10.11").run(io.load_history(SPEC / "histories" / "d1-invalid-values.jsonl"))
    header = {**header, "system": "mariadb:10.11.19-MariaDB", **({"server_version": server_version} if server_version else {})}
    path = tmp_path / "t.jsonl"
    path.write_text(io.dumps_lines(header, obs))
    assert cli.main(["check-trace", str(path)]) == exit_code
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("WL344.CM.INVALID")]
    assert ("(declared)" in shown[0]) == (exit_code == 0)
