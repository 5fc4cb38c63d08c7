"""The documentation: the README a user reads, the generated pages kept current, the MkDocs site
built in strict mode (a broken link or anchor fails), and the version moving with the changelog."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import replcheck

REPO = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")
# the project's own history has no place in the product: "session 12", "#17", "issue 37"
HISTORY = re.compile(r"\bsessions? \d+|\bissues? #?\d+|(?<![\w#&/-])#\d{1,3}\b", re.IGNORECASE)


def load_gen():
    spec = importlib.util.spec_from_file_location("docs_gen", REPO / "docs" / "gen.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def doc_texts() -> dict[str, str]:
    files = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").rglob("*.md"))]
    return {str(f.relative_to(REPO)): f.read_text() for f in files}


def test_readme_is_short_and_its_links_resolve():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "session" not in text.lower()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith("http"):
            assert (REPO / target).exists(), f"README links to a missing {target}"


def test_readme_commands_are_the_ones_ci_runs():
    """The README's two commands: set-up and verify, and the test command .ci/run runs."""
    text = (REPO / "README.md").read_text()
    assert "    bash ci/setup && .venv/bin/replcheck verify\n" in text
    assert "    bash ci/test\n" in text
    assert "exec bash ci/test" in (REPO / ".ci" / "run").read_text()


def test_no_project_history_in_readme_or_docs():
    found = [f"{name}: {m.group(0)!r}" for name, text in doc_texts().items() for m in HISTORY.finditer(text)]
    assert not found, found


def test_the_history_pattern_catches_what_it_must_and_spares_upstream_bug_numbers():
    for bad in ("Session 11, with", "(#17 item 2)", "issue #16", "in session 13"):
        assert HISTORY.search(bad), bad
    for fine in ("Bug #84249, #84375", "BUG#52308", "WL#7318", "PR #2772", "other sessions see it", "(+ #90137, #80393)"):
        assert not HISTORY.search(fine), fine


def test_generated_pages_are_current():
    assert load_gen().main(["--check"]) == 0, "run `.venv/bin/python docs/gen.py` and commit the pages"


def test_a_stale_generated_page_is_named_and_left_alone(tmp_path, monkeypatch, capsys):
    gen = load_gen()
    monkeypatch.setattr(gen, "DOCS", tmp_path)
    assert gen.main([]) == 0  # writes every page under tmp_path
    page = tmp_path / "reference" / "mutants.md"
    page.write_text(page.read_text().replace("Mutant registry", "Mutants typed by hand"))
    assert gen.main(["--check"]) == 1
    assert capsys.readouterr().err.endswith(": docs/reference/mutants.md\n")
    assert "Mutants typed by hand" in page.read_text()  # --check writes nothing
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0


def test_the_generated_catalogue_holds_every_requirement_and_mutant():
    from replcheck import catalogue
    from replcheck.model import mutants

    reqs = (REPO / "docs" / "reference" / "requirements.md").read_text()
    assert all(f"### `{r.id}`" in reqs for r in catalogue.load())
    registry = (REPO / "docs" / "reference" / "mutants.md").read_text()
    assert all(f"| `{name}` |" in registry for name in mutants.REGISTRY)


def test_figures_show_date_machine_and_load_or_refuse_the_file(tmp_path, monkeypatch, capsys):
    gen = load_gen()
    results = tmp_path / "bench" / "results"
    results.mkdir(parents=True)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    good = {"date": "2026-01-02T03:04:05+00:00", "machine": "box", "cpus": 2, "python": "3.11", "load_average": [1.5, 2, 3],
            "shapes": [{"shape": "commits", "rows": [{"lines": 1000, "check_s": 0.25}], "exponents": {"check": {"fit": 1.02}}}]}
    (results / "check_cost-1.json").write_text(json.dumps(good))
    page = gen.figures_page()
    assert "Measured 2026-01-02T03:04:05+00:00 on `box`" in page and "load average 1.5 / 2.0 / 3.0" in page
    assert "| 1000 | 0.25 |" in page
    (results / "mutant_search-1.json").write_text(json.dumps({**good, "shapes": [], "mutants": [{"mutant": "m", "histories": 3}]}))
    assert "### mutants\n\n| mutant | histories |\n|---|---|\n| m | 3 |" in gen.figures_page()  # any list of records is a table
    (results / "check_cost-2.json").write_text(json.dumps({**good, "load_average": None}))
    with pytest.raises(gen.BadResults, match=r"bench/results/check_cost-2.json: load_average: missing"):
        gen.figures_page()


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(site)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_site_builds_in_strict_mode(tmp_path):
    out = build(REPO, tmp_path / "site")
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "site" / "features" / "filter" / "index.html").read_text()
    assert "pinned verdict" in html and "flt-semisync-unsent" in html  # the generated block is in the page


def test_a_broken_link_fails_the_build(tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(REPO / "docs", root / "docs")
    for f in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copy(REPO / f, root / f)
    page = root / "docs" / "tla.md"
    page.write_text(page.read_text() + "\nSee [the catalogue](reference/requirements.md#no-such-requirement).\n")
    out = build(root, tmp_path / "site")
    assert out.returncode != 0 and "no-such-requirement" in out.stderr


def test_the_version_is_the_newest_in_the_changelog():
    text = (REPO / "CHANGELOG.md").read_text()
    released = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)
    assert released, "no released version in CHANGELOG.md"
    assert released[0][0] == replcheck.__version__
    versions = [tuple(map(int, v.split("."))) for v, _ in released]
    assert versions == sorted(versions, reverse=True) and [d for _, d in released] == sorted((d for _, d in released), reverse=True)
    assert "## [Unreleased]" in text.split("## [" + released[0][0])[0]
