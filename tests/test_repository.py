"""The repository's habits: one version, a licence, a citation, and every cited section present."""

import re
from pathlib import Path

from huc_ref import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_once_and_agreed_on():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "huc_ref.__version__"}' in pyproject
    assert re.search(r"^version: (\S+)$", (ROOT / "CITATION.cff").read_text(), re.M).group(1) == __version__
    assert f"({__version__})" in (ROOT / "CHANGELOG.md").read_text().split("\n## ")[1].splitlines()[0]


def test_licence_and_citation():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    citation = (ROOT / "CITATION.cff").read_text()
    assert "preferred-citation:" in citation and "Hierarchical Utility Calibration for Structured" in citation


def test_every_cited_section_of_the_specification_exists():
    spec = (ROOT / "docs" / "specification.md").read_text()
    sections = {int(m) for m in re.findall(r"^## (\d+)\. ", spec, re.M)}
    cited = set()
    for path in list((ROOT / "huc_ref").glob("*.py")) + list((ROOT / "proofs_check").glob("*.py")) \
            + list((ROOT / "examples").glob("*.py")) + [ROOT / "README.md"]:
        cited |= {int(n) for n in re.findall(r"docs/specification\.md`? §(\d+)", path.read_text())}
    assert cited and cited <= sections, cited - sections
    assert "SPEC §" not in "".join(p.read_text() for p in (ROOT / "huc_ref").glob("*.py"))
