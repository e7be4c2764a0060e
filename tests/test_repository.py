"""The repository's habits: one version, a licence, a citation, every cited section present, and
no history told in the tree."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from huc_ref import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_written_once_and_agreed_on():
    """The package, the citation and the changelog agree: a release is the changelog's latest
    dated version; a development version (``0.3.0.dev0``) is ahead of every release in it.  The
    ``Unreleased`` section, where there is one, comes first."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "huc_ref.__version__"}' in pyproject
    assert re.search(r"^version: (\S+)$", (ROOT / "CITATION.cff").read_text(), re.M).group(1) == __version__
    headings = re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    releases = [m.group(1) for h in headings if (m := re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d", h))]
    assert headings and all(h == "[Unreleased]" or re.fullmatch(r"\[[\d.]+\] - [\d-]+", h) for h in headings), headings
    def key(v):
        return [int(x) for x in v.split(".")]
    assert releases and releases == sorted(releases, key=key, reverse=True), releases
    assert "[Unreleased]" not in headings[1:], headings
    if ".dev" in __version__:
        assert key(__version__.split(".dev")[0]) > key(releases[0]), (__version__, releases[0])
    else:
        assert __version__ == releases[0], (__version__, releases[0])


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


#: A public function without a doctest, and why (its example is a test elsewhere).
NO_DOCTEST = {"huc_ref.vectors.write_vector_files": "regenerating audits all 240 generated cases exactly (about a "
                                                    "minute): tests/test_vectors.py regenerates them byte for byte"}
#: What names a place in the paper (a section, equation, algorithm, definition, theorem) or in
#: docs/specification.md; the README's "Conventions" and STYLE ask every public docstring for one.
PAPER_PLACE = re.compile(r"Sec\. \d|App\. [A-K]|\b[A-K]\.\d|eq\. \(?\d|Eq\. \(?\d|Algorithm \d|Def\. \d|Thm \d|"
                         r"Theorem \d|Lemma [A-K\d]|Prop(\.|osition)? \d|Table \d|specification(\.md`?)? §\d")


def _public_api():
    """``(qualified name, kind, docstring, object)`` of every function, class, method and property
    that a module of huc_ref lists in ``__all__`` and defines (docstrings as ``help`` shows them,
    inherited where a method overrides a documented one; kind is ``"class"``, ``"function"``,
    ``"method"`` or ``"property"``)."""
    import importlib
    import inspect
    import pkgutil

    import huc_ref
    modules = ["huc_ref"] + [m.name for m in pkgutil.walk_packages(huc_ref.__path__, "huc_ref.")
                             if not m.name.endswith("__main__")]
    for name in modules:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            obj = getattr(obj, "py_func", obj)  # a compiled kernel (numba's dispatcher): the function it compiles
            if not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != name:
                continue
            yield f"{name}.{attr}", "class" if inspect.isclass(obj) else "function", inspect.getdoc(obj) or "", obj
            if not inspect.isclass(obj):
                continue
            for member, value in vars(obj).items():
                target = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
                if member.startswith("_") or not inspect.isfunction(target):
                    continue
                doc = inspect.getdoc(value if isinstance(value, property) else getattr(obj, member)) or ""
                yield (f"{name}.{attr}.{member}", "property" if isinstance(value, property) else "method", doc,
                       value if isinstance(value, property) else getattr(obj, member))


def test_every_public_function_names_its_place_in_the_paper_and_has_a_doctest():
    """The standard every public function meets: a docstring naming the paper's equation or
    section (or the specification's) and a doctest; classes name their place too."""
    missing = []
    for qualname, kind, doc, _ in _public_api():
        if not PAPER_PLACE.search(doc):
            missing.append(f"{qualname}: names no section of the paper or docs/specification.md")
        if kind != "class" and ">>>" not in doc and qualname not in NO_DOCTEST:
            missing.append(f"{qualname}: no doctest")
    assert not missing, "\n".join(missing)
    assert sum(1 for _ in _public_api()) > 300  # (the walk reaches every module)


#: The modules whose docstrings are still written as prose and are being given their numpydoc
#: sections; each leaves this set when it has them.  Every other module of huc_ref is held to
#: :func:`_numpydoc_gaps`.
NUMPYDOC_PENDING: set[str] = set()


def _sections(doc: str) -> tuple[dict, list]:
    """A numpydoc docstring's sections, ``{title: [entry names]}`` (the names of ``Parameters``'
    entries, each of a combined entry ``a, b`` apart; other sections' entries as their first
    lines), and what its parser complained of.  numpydoc's own parser where it is installed
    (its warnings count: an unknown or misspelt section), else the layout it reads: a title
    line underlined with dashes, entries at the section's indentation."""
    try:
        import warnings

        from numpydoc.docscrape import NumpyDocString
    except ImportError:
        sections, title, complaints = {}, None, []
        lines = doc.splitlines()
        for i, line in enumerate(lines):
            if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and line.strip():
                title = line.strip()
                sections[title] = []
            elif title and line and not line[0].isspace() and not re.fullmatch(r"-{3,}", line.strip()):
                sections[title].append(line.split(" : ")[0].strip())
        return sections, complaints
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            parsed = NumpyDocString(doc)
        except Exception as error:  # numpydoc's ParseError: a repeated section, a bad layout
            return {}, [str(error).splitlines()[0]]
    sections = {}
    for title in ("Parameters", "Other Parameters", "Returns", "Yields", "Raises", "Warns", "Attributes"):
        if parsed[title]:
            sections[title] = [p.name for p in parsed[title]] if title != "Raises" else [p.type for p in parsed[title]]
    for title in ("Examples", "Notes", "See Also", "References"):
        if parsed[title]:
            sections[title] = parsed[title]
    return sections, [str(w.message).splitlines()[0] for w in caught]


def _returns_something(function) -> tuple[bool, bool]:
    """``(returns a value, yields)`` of a function, read from its source as numpydoc's validator
    reads it: a ``return`` with a value other than None, or a ``yield``, outside nested functions."""
    import ast
    import inspect
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    except (OSError, TypeError):
        return False, False
    found = {"return": False, "yield": False}

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Return) and child.value is not None \
                    and not (isinstance(child.value, ast.Constant) and child.value.value is None):
                found["return"] = True
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                found["yield"] = True
            walk(child)
    walk(tree)
    return found["return"], found["yield"]


def _numpydoc_gaps(qualname: str, kind: str, doc: str, obj) -> list:
    """What the docstring of one public name lacks of the numpydoc standard: a ``Parameters``
    section naming every argument of its signature (a class: its constructor's; ``self`` and
    ``cls`` aside; ``*data`` may be written so), ``Returns`` where a function returns a value,
    ``Yields`` where it yields, and ``Examples``.  A property is documented as the value it is
    (numpydoc's convention): it needs ``Examples`` only."""
    import inspect
    sections, complaints = _sections(doc)
    gaps = [f"{qualname}: {c}" for c in complaints]
    if "Examples" not in sections and qualname not in NO_DOCTEST:
        gaps.append(f"{qualname}: no Examples section")
    if kind == "property":
        return gaps
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a built-in constructor (an exception's, a warning's): no arguments of its own
        signature = None
    arguments = [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")] if signature else []
    documented = {name.strip().lstrip("*") for entry in sections.get("Parameters", ()) for name in entry.split(",")}
    if arguments and "Parameters" not in sections:
        gaps.append(f"{qualname}: no Parameters section (it takes {', '.join(arguments)})")
    elif arguments:
        undocumented = [a for a in arguments if a not in documented]
        if undocumented:
            gaps.append(f"{qualname}: Parameters does not name {', '.join(undocumented)}")
    if kind != "class":
        returns, yields = _returns_something(obj)
        if returns and "Returns" not in sections:
            gaps.append(f"{qualname}: no Returns section (it returns a value)")
        if yields and "Yields" not in sections:
            gaps.append(f"{qualname}: no Yields section (it is a generator)")
    return gaps


def test_every_public_name_has_its_numpydoc_sections():
    """The API reference's standard (docs/reference/api): every public function, class and method
    of huc_ref documents its arguments, its value and an example in numpydoc's sections, which
    the reference renders as tables; the modules of :data:`NUMPYDOC_PENDING` aside."""
    import importlib
    gaps, complete = [], set(NUMPYDOC_PENDING)
    for qualname, kind, doc, obj in _public_api():
        module = qualname.rsplit(".", 2 if kind in ("method", "property") else 1)[0]
        found = _numpydoc_gaps(qualname, kind, doc, obj)
        if module in NUMPYDOC_PENDING:
            if found:
                complete.discard(module)
            continue
        gaps += found
    assert not gaps, f"{len(gaps)} gaps:\n" + "\n".join(gaps)
    for name in NUMPYDOC_PENDING:
        importlib.import_module(name)  # (a renamed module leaves the set)
    assert not complete, f"NUMPYDOC_PENDING lists modules that have every section now; remove them: {sorted(complete)}"


@pytest.mark.parametrize("doc, gap", [
    ("The sum (Sec. 2.1).\n\n>>> f(1)\n1\n", "no Parameters section (it takes x)"),
    ("The sum (Sec. 2.1).\n\nParameters\n----------\nx : int\n    A number.\n\nExamples\n--------\n>>> f(1)\n1\n",
     "no Returns section (it returns a value)"),
    ("The sum (Sec. 2.1).\n\nParameters\n----------\ny : int\n    A number.\n\nReturns\n-------\nint\n"
     "    It.\n\nExamples\n--------\n>>> f(1)\n1\n", "Parameters does not name x"),
    ("The sum (Sec. 2.1).\n\nParameters\n----------\nx : int\n    A number.\n\nReturns\n-------\nint\n"
     "    It.\n\n>>> f(1)\n1\n", "no Examples section"),
])
def test_the_numpydoc_checker_finds_each_gap(doc, gap):
    """The checker names a missing section, an undocumented argument and a missing Examples
    (a doctest outside the section does not count)."""
    def f(x):
        return x
    f.__doc__ = doc
    assert f"f: {gap}" in _numpydoc_gaps("f", "function", doc, f)


def test_the_numpydoc_rule_holds_every_complete_module(monkeypatch):
    """Pins that a module outside :data:`NUMPYDOC_PENDING` is held to the rule: a public method
    whose docstring loses its sections fails the check, naming it; and that a module listed as
    pending once it has every section is named for removal, so the set only shrinks."""
    from huc_ref.results import AuditResult
    monkeypatch.setattr(AuditResult.row, "__doc__", "The candidate row of (c, u, v) (Def. 3.2).")
    with pytest.raises(AssertionError, match=r"huc_ref\.results\.AuditResult\.row: no Parameters section"):
        test_every_public_name_has_its_numpydoc_sections()
    monkeypatch.undo()
    monkeypatch.setitem(globals(), "NUMPYDOC_PENDING", {"huc_ref.fast.workers"})
    with pytest.raises(AssertionError, match=r"remove them: \['huc_ref\.fast\.workers'\]"):
        test_every_public_name_has_its_numpydoc_sections()


#: What ``import huc_ref`` and the float64 audit of arrays leave unloaded: the symbolic bounds'
#: sympy (3.0 s of a 4.85 s import on a cold disk), the certified engine's mpmath, python-flint
#: and gmpy2, and the optional extras (figures, schemas, parquet, scaling, kernels).
LAZY = ("sympy", "mpmath", "flint", "gmpy2", "matplotlib", "jsonschema", "pyarrow", "scipy", "numba", "sklearn")


def _loaded_after(code: str) -> list:
    """The modules of :data:`LAZY` in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return [m for m in LAZY if m in json.loads(out.stdout.splitlines()[-1])]


def test_import_and_the_fast_audit_of_arrays_load_no_optional_package():
    """Pins that neither ``import huc_ref`` nor the float64 audit of arrays loads sympy (which
    huc_ref.bounds imported at its top), mpmath (huc_ref.boost's) or an optional extra; a bound
    loads sympy and mpmath when it is asked for (checked last: the probe sees them)."""
    assert _loaded_after("import huc_ref") == []
    arrays = ("import numpy as np\nfrom huc_ref import LabelTree, TopK, fast\n"
              "t = LabelTree.from_children('r', {'r': ['a', 'b', 'c']})\n"
              "P = np.random.default_rng(0).dirichlet(np.ones(3), 40)\n"
              "assert fast.audit(np.arange(40) % 3, P, t, {'u': TopK(t, 1)}).huc.sup > 0")
    assert _loaded_after(arrays) == []
    bound = "from huc_ref.bounds import theorem_3_4_deviation\nstr(theorem_3_4_deviation(100, 3, '1/20'))"
    assert {"sympy", "mpmath"} <= set(_loaded_after(bound))


#: What narrates the project's history instead of saying what the code does.  Each pattern is
#: written in two pieces so that this file does not match itself.
HISTORY = {
    "a work period": re.compile(r"\bsess" r"ions?\b", re.I),
    "a past version": re.compile(r"\b(?:before|since|until|prior to)\s+(?:(?:commit|revision|version)\s+|v)?"
                                 r"(?:(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}|\d+\.\d+\.\d+)\b", re.I),
    "the old behaviour": re.compile(r"\b(?:the old" r" code|former" r"ly|used to (?:be|raise|print|return|name|"
                                    r"report|take|give))\b", re.I),
    "an issue number": re.compile(r"\biss" r"ue\s+#?\d+\b", re.I),
    "a dated measurement": re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b"),
}
#: Where each kind is allowed: the changelog names versions and dates them, the citation has a
#: date, and the files scripts write are dated measurements by design: the benchmark results
#: (docs/results, ``bench/results.py``) and the reproduction kit's page (docs/reproductions.md).
HISTORY_ALLOWED = {
    "a past version": {"CHANGELOG.md"},
    "a dated measurement": {"CHANGELOG.md", "CITATION.cff", "docs/reproductions.md"},
}


def _tracked_text_files():
    """Every file git tracks in this checkout that reads as UTF-8 text, with its text."""
    import subprocess
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        try:
            yield name, path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue


def test_the_tree_says_what_is_not_how_it_came_to_be():
    """Comments, docstrings, docs and tests say what the code does and why: the history lives in
    git and in the changelog's release notes, dated measurements in docs/results.  A test may
    name the failure it guards against ("one HUCError, not a TypeError traceback"), not when or
    in which version the code failed so."""
    found = []
    for name, text in _tracked_text_files():
        for kind, pattern in HISTORY.items():
            if name in HISTORY_ALLOWED.get(kind, ()) or (kind == "a dated measurement"
                                                         and name.startswith("docs/results/")):
                continue
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{name}:{line}: {kind}: {text.splitlines()[line - 1].strip()[:120]}")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text, kind", [
    ("# (before se" "ssion 26 the array path ignored --plot)", "a work period"),
    ("a step (bef" "ore 3f2a9c1 it was refused)", "a past version"),
    ("until 0." "1.0 the checker read it", "a past version"),
    ("what us" "ed to be written", "the old behaviour"),
    ("(iss" "ue #19, item 5)", "an issue number"),
    ("one run on 2026-" "12-05", "a dated measurement"),
])
def test_the_history_rules_catch_each_kind(text, kind):
    """Each rule finds the narration it is for, and only that one."""
    assert [k for k, pattern in HISTORY.items() if pattern.search(text)] == [kind]


@pytest.mark.parametrize("text", [
    "the atoms used to fit the model", "the subtraction before the exponential", "before 2**53 rows",
    "since 1e-300 is below float64's normal range", "issue a warning", "the decade 2026 to 2036",
    "one HUCError, not a ZeroDivisionError traceback",
])
def test_the_history_rules_leave_ordinary_prose_alone(text):
    assert not [k for k, pattern in HISTORY.items() if pattern.search(text)]


def test_the_readme_is_short_and_its_quick_start_is_what_ci_runs():
    """README.md is for users: at most 200 lines, no measurement named by its machine, and its
    Quick start's second command is the line .ci/run runs under "README Quick start, second
    command", so the command a newcomer copies is the one CI proves; its links to its own
    sections land."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, len(readme.splitlines())
    assert not re.search(r"\b(?:Zen \d|Xeon|EPYC|Ryzen|Intel|AMD)\b", readme)
    quick = re.search(r"^## Quick start\n\n```sh\n(.+?)\n```", readme, re.M | re.S).group(1).splitlines()
    assert quick[0] == "python -m pip install -e . && huc verify", quick
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(ci) if "README Quick start, second command" in line)
    assert quick[1] == ci[marker + 1], (quick[1], ci[marker + 1])
    # the "Find it fast" links land on headings (GitHub's anchors: lower case, punctuation dropped)
    anchors = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
               for h in re.findall(r"^#+ (.+)$", readme, re.M)}
    links = re.findall(r"\]\(#([^)]+)\)", readme)
    assert len(links) >= 4 and set(links) <= anchors, set(links) - anchors


def test_the_spec_example_of_the_docs_is_read_and_fits_its_schema():
    """The example spec.json of docs/reference/formats.md is what ``huc audit --tree`` reads: the
    reader accepts it, the published schema accepts it, and its ``columns`` (a classifier's
    ``classes_`` 0..9) put the hierarchy's labels where ``predict_proba`` has them."""
    jsonschema = pytest.importorskip("jsonschema")
    from huc_ref.formats import read_spec, schema_dir
    page = (ROOT / "docs" / "reference" / "formats.md").read_text(encoding="utf-8")
    section = page.split("## The spec of the array commands", 1)[1]
    spec = json.loads(re.search(r"```json\n(.+?)```", section, re.S).group(1))
    jsonschema.validate(spec, json.loads((schema_dir() / "huc-spec.schema.json").read_text(encoding="utf-8")))
    tree, utilities, columns = read_spec(spec)
    assert list(utilities) == ["top1@1", "top1@2", "right digit"]
    assert columns == [str(k) for k in range(10)]
    assert [columns[i] for i in tree.column_order(columns)] == list(tree.labels)


#: The sizes a reader can hold: a function's parameters (``self`` and ``cls`` not counted) and a
#: class's lines.
MAX_PARAMETERS, MAX_CLASS_LINES = 12, 500
#: What exceeds them in ``huc_ref``, each with the reason it stays so (``path:qualified name``).
OVERSIZED_ALLOWED = {
    "huc_ref/calibration.py:HUCBoost": "the scikit-learn estimator of K.1's boosting: fit, predict, the "
    "hyper-parameters' checks and their numpydoc reference, each method short",
    "huc_ref/calibration.py:HUCBoost.__init__": "scikit-learn's estimator convention: every hyper-parameter is "
    "a keyword of the constructor, which get_params and set_params read",
    "huc_ref/fast/boost.py:boost_sample": "a public entry point: the sample's arrays and subgroups beside the "
    "keyword-only options of huc_ref.boost (method, epsilon, step, select, max_updates, max_passes, progress)",
    "huc_ref/engines.py:audit_arrays": "fast.audit's arrays and keywords, which users call it with, plus the "
    "arithmetic, the smoothing and the exact audit's max_digits (and engine, deprecated), all keyword-only",
    "huc_ref/fast/scale.py:audit": "the Dask twin of fast.audit, which users call with the same keywords, "
    "plus the three of the scheduler (shuffle, range_rows, progress), all keyword-only",
    "huc_ref/fast/scale.py:audit_partitions": "fast.scale.audit on partitions already read (a Parquet "
    "dataset's row groups): the same keyword-only options, and the spill folder",
    "huc_ref/fast/intervals.py:Rows": "Algorithm 2 on float64 columns: one state (the sort, the tie blocks, "
    "the near ties) read by numpy's scan and by the compiled one; splitting it is a change of its own",
    "huc_ref/fast/intervals.py:Rows.__init__": "the columns of Algorithm 2 and the optional things a caller "
    "has already made (blocks, lanes, labels), all keywords after the columns; see Rows",
    "huc_ref/fast/intervals.py:Rows._every_subgroup": "the buffers of numpy's scan of one stretch, passed "
    "down so that a scan of thousands of stretches allocates none; see Rows",
    "huc_ref/tree.py:LabelTree": "the public tree (A.2): its constructors, label order and reading, "
    "each method short; the methods are the API users call",
}


def _oversized(source: str, path: str) -> dict:
    """``{path:qualified name: what exceeds}`` for the functions of ``source`` with more than
    :data:`MAX_PARAMETERS` parameters and its classes over :data:`MAX_CLASS_LINES` lines."""
    import ast

    found = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{path}:{prefix}{child.name}"
                if isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > MAX_CLASS_LINES:
                        found[name] = f"{lines} lines"
                else:
                    a = child.args
                    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
                    count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
                    count -= bool(names) and names[0] in ("self", "cls") and bool(prefix)
                    if count > MAX_PARAMETERS:
                        found[name] = f"{count} parameters"
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_no_function_takes_more_than_12_parameters_and_no_class_runs_over_500_lines():
    """Pins the sizes a reader can follow in ``huc_ref``: every function (methods, nested ones) at
    most 12 parameters and every class at most 500 lines, except the allowed ones, each with its
    reason; an allowed entry that no longer exceeds is taken off the list (the test says so)."""
    found = {}
    for path in sorted((ROOT / "huc_ref").rglob("*.py")):
        found.update(_oversized(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()))
    new = {name: what for name, what in found.items() if name not in OVERSIZED_ALLOWED}
    stale = sorted(set(OVERSIZED_ALLOWED) - set(found))
    assert not new, f"over the limits (shorten, or add to OVERSIZED_ALLOWED with a reason): {new}"
    assert not stale, f"within the limits now: take off OVERSIZED_ALLOWED: {stale}"
    assert all(len(reason) > 40 for reason in OVERSIZED_ALLOWED.values())


def test_the_size_check_counts_parameters_and_lines():
    """The check finds a 13-parameter function, a method's 13 (``self`` not counted), a nested
    function's, and a class of 501 lines; 12 parameters and 500 lines pass."""
    params = ", ".join(f"a{k}" for k in range(13))
    source = (f"def f({params}): pass\n"
              f"def g({params[:-5]}): pass\n"
              f"class C:\n    def m(self, {params}): pass\n    def n(self, {params[:-5]}): pass\n"
              f"def outer():\n    def inner(*a, {params[:-5]}, **k): pass\n"
              "class Long:\n" + "    x = 1\n" * 500 + "class Fits:\n" + "    x = 1\n" * 499)
    assert _oversized(source, "m.py") == {"m.py:f": "13 parameters", "m.py:C.m": "13 parameters",
                                          "m.py:outer.inner": "14 parameters", "m.py:Long": "501 lines"}


def test_doctests_that_need_an_absent_extra_are_skipped_not_failed():
    """Pins the plain CI leg (no pyarrow, no dask): a docstring whose examples import an optional
    extra that is missing is skipped, naming it (the Parquet readers' examples of formats.py), the
    others still run, and the Dask module's doctests are not collected; in a fresh interpreter
    where pyarrow, dask and distributed cannot be imported."""
    probe = ("import sys; sys.modules.update(dict.fromkeys(['pyarrow', 'dask', 'distributed'])); import pytest; "
             "sys.exit(pytest.main(sys.argv[1:]))")

    def pytest_run(*args):
        return subprocess.run([sys.executable, "-c", probe, "-p", "no:xdist", *args],
                              capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    out = pytest_run("-v", "-rs", "huc_ref/formats.py")
    assert out.returncode == 0, out.stdout[-3000:]
    for name in ("_parquet_columns", "parquet_dataset"):
        assert f"huc_ref.formats.{name} SKIPPED" in out.stdout, out.stdout[-3000:]
    assert "SKIPPED [2] huc_ref/formats.py: the example needs pyarrow (not installed)" in out.stdout
    assert "huc_ref.formats.is_dataset PASSED" in out.stdout
    listed = pytest_run("--collect-only", "-q", "huc_ref/fast")
    assert listed.returncode == 0 and "huc_ref.fast.audit.audit" in listed.stdout, listed.stdout[-3000:]
    assert "huc_ref/fast/scale.py" not in listed.stdout
