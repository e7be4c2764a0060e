"""The oracle installs: a wheel (not an editable install) in a fresh virtual environment has the
golden vectors, the checker and the demo (package data, not files next to a source checkout)."""

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args, cwd):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_a_wheel_in_a_fresh_environment_exports_checks_and_demos(tmp_path):
    # built as a user's pip builds it (setuptools from the package index, in an isolated environment),
    # from a copy, so that the build leaves nothing in this checkout
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__",
                                                                ".hypothesis"))
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp_path / "dist", source, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("huc_ref-*.whl"))
    env = tmp_path / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    run(sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--quiet", wheel, cwd=tmp_path)
    # the dependencies (numpy, sympy, mpmath) from this environment, appended after the fresh one's own
    # site-packages; a path listed in a .pth file has its own .pth files (the editable hook) ignored
    site = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=tmp_path).strip())
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = run(python, "-c", "import huc_ref; print(huc_ref.__file__)", cwd=tmp_path)
    assert where.startswith(str(site)), where  # the wheel's copy, not this checkout
    huc = env / "bin" / "huc"
    from huc_ref.vectors import load_vectors
    count = len(load_vectors())  # (the source tree's files, which the wheel must ship)
    out = run(huc, "vectors", "export", tmp_path / "cases", cwd=tmp_path)
    assert out.startswith(f"wrote {count} case files")
    run(huc, "vectors", "answer", tmp_path / "answers", cwd=tmp_path)
    out = run(huc, "vectors", "check", tmp_path / "answers", cwd=tmp_path)
    assert out.splitlines()[-1] == f"{count} passed, 0 failed"
    assert "D_top = 1/4,  D_L = -1/4,  D_R = 0" in run(huc, "demo", cwd=tmp_path)
    assert "[  ok  ] 1/1 check_appendix_d3" in run(huc, "verify", "--only", "appendix_d3", cwd=tmp_path)
    schemas = run(python, "-c", "from huc_ref.formats import schema_dir; print(sorted(p.name for p in "
                  "schema_dir().glob('*.json')))", cwd=tmp_path)
    assert "huc-case-1.schema.json" in schemas
    # every module of the source tree is in the wheel (a subpackage missing from setuptools' list is not)
    import zipfile
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py")}
    sources = {str(p.relative_to(ROOT)) for d in ("huc_ref", "proofs_check") for p in (ROOT / d).rglob("*.py")}
    assert sources <= shipped, sorted(sources - shipped)
    code = ("from huc_ref import LabelTree, TopK, fast; t = LabelTree.from_children('r', {'r': ['a', 'b']}); "
            "print(fast.audit([0], [[1.0, 0.0]], t, {'u': TopK(t, 1)}).uc.sup)")
    assert run(python, "-c", code, cwd=tmp_path).strip() in ("0.0", "0")  # the fast subpackage runs
