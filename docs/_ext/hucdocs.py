"""The pages of the huc-ref documentation that are made at build time, from the code itself, so
that none of them can drift from what it describes:

* ``generated/claims.md``: the paper's claims table, from ``huc verify --json`` (run at build
  time; its output is kept in ``docs/_build/.claims`` under a hash of the code it checked, so a
  rebuild of unchanged code reuses it);
* ``generated/benchmarks.md``: the latest results of the ``bench/`` scripts, from the files they
  write into ``docs/results`` (``bench/results.py``);
* ``reference/api/*.rst`` and ``generated/api-modules.md``: a page for every module of the two
  packages (found by walking them, so a new module appears by itself), and their list;
* ``generated/schemas.md``: every JSON Schema of the file formats, from ``huc_ref/data/schemas``;
* ``generated/errors.md``: the kinds of ``HUCError`` (``huc_ref.errors``) and the catalogue of
  malformed documents with the error each gets, from the golden vectors' ``invalid.json``;
* ``generated/notebooks/*.ipynb``: the classroom notebooks of ``examples/notebooks``, which
  myst-nb executes (they are committed without outputs);
* ``generated/reproductions.md``: the reproduction kit's page ``docs/reproductions.md``, or a
  note saying how to write it where it has not been written.

Each is written on ``builder-inited``, before Sphinx reads a page, and only where its text
changed (so an incremental build rereads only what changed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
GENERATED = DOCS / "generated"
RESULTS = DOCS / "results"
logger = logging.getLogger(__name__)


def _write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds that text already."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _cell(text) -> str:
    """Plain text as one Markdown table cell: one line, and every character Markdown would read
    as markup escaped (a claim's ``q*_{0,R}`` is text, not emphasis; ``$`` no math)."""
    return re.sub(r"([\\`*_\[\]<>|$~])", r"\\\1", " ".join(str(text).split()))


# --- the claims table --------------------------------------------------------------------------

def _code_hash() -> str:
    """A hash of everything ``huc verify`` runs: the two packages' sources and shipped data."""
    digest = hashlib.sha256()
    for folder in ("huc_ref", "proofs_check"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".json"):
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def verify_results() -> list[dict]:
    """``huc verify --json``'s results for the code in this checkout (run once per version of
    the code: about a minute on two CPUs)."""
    cache = DOCS / "_build" / ".claims" / f"{_code_hash()}.json"
    if not cache.exists():
        logger.info("hucdocs: running huc verify --json for the claims table")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        done = subprocess.run([sys.executable, "-m", "huc_ref", "verify", "--json"], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        try:
            results = json.loads(done.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"huc verify --json printed no JSON (exit {done.returncode}):\n{done.stderr}") from None
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return json.loads(cache.read_text(encoding="utf-8"))


def claims_page(results: list[dict], version: str) -> str:
    """The claims table: one row per check, in the paper's order, as ``huc verify`` ran it."""
    failed = [r["check"] for r in results if r["status"] != "ok"]
    lines = [f"{len(results)} checks, {len(results) - len(failed)} passed, {len(failed)} failed: "
             f"`huc verify --json` run on huc-ref {version} when this page was built.", "",
             "| Where | Claim | How it is checked | Check | Status |", "|---|---|---|---|---|"]
    for r in results:
        how = f"**{_cell(r['method'])}**: {_cell(r['detail'])}"
        lines.append(f"| {_cell(r['location'])} | {_cell(r['claim'])} | {how} | `{r['check']}` "
                     f"| {_cell(r['status'])} |")
    return "\n".join(lines) + "\n"


# --- benchmark results -------------------------------------------------------------------------

def _purpose(script: Path) -> str:
    """The first paragraph of a bench script's docstring (what it measures)."""
    import ast
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def benchmarks_page() -> str:
    """Every results file in ``docs/results``, grouped by script, each with how it was run."""
    files = sorted(RESULTS.glob("*.json"))
    if not files:
        return "No results have been recorded yet: run a script of `bench/` (see above).\n"
    by_script: dict[str, list[dict]] = {}
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        by_script.setdefault(record["script"], []).append(record)
    parts = []
    for script, records in sorted(by_script.items()):
        parts += [f"### `{script}`", "", _purpose(ROOT / script), ""]
        for r in sorted(records, key=lambda r: (r["quick"], r["command"])):
            mode = ("**quick mode** (small sizes: a smoke run, not the measurement the targets are judged by)"
                    if r["quick"] else "full run")
            parts += [f"`{r['command']}`: {mode}; {r['date']}, commit `{r['commit']}`, {r['seconds']:.0f} s, "
                      f"on {r['machine']}.", "", "```text", r["output"].rstrip("\n"), "```", ""]
    return "\n".join(parts)


# --- the API pages ---------------------------------------------------------------------------

#: The packages whose modules the API reference documents; a package's own page lists its
#: public names (each documented in its defining module), a module's page documents them.
PACKAGES = ("huc_ref", "proofs_check")


def api_modules() -> list[str]:
    """Every module of :data:`PACKAGES` that declares public names (``__all__``; the claims'
    registrations, ``proofs_check.checks_*``, are the claims table instead), in order of name."""
    import importlib
    import pkgutil
    names = []
    for top in PACKAGES:
        package = importlib.import_module(top)
        names.append(top)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{top}.")
                  if not m.name.rpartition(".")[2].startswith("_")
                  and hasattr(importlib.import_module(m.name), "__all__")]
    return names


def _summary(module) -> str:
    """A module docstring's first sentence as Markdown (reST's roles and literals as code)."""
    first = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split())
    abbreviation = r"(?<!\bApp)(?<!\bDef)(?<!\bProp)(?<!\bSec)(?<!\bThm)(?<!\be\.g)(?<!\bi\.e)"
    first = re.split(abbreviation + r"\.\s+(?=[A-Z])", first)[0].rstrip(".") + "." if first else ""
    first = re.sub(r":[a-z:]+:`~?([^`]+)`", r"`\1`", first).replace("``", "`")
    return first.replace("|", "\\|")


def write_api_pages() -> None:
    """One page per module under ``reference/api`` (stale ones removed) and the list of them."""
    import importlib
    folder = DOCS / "reference" / "api"
    folder.mkdir(parents=True, exist_ok=True)
    modules = api_modules()
    wanted = {f"{name}.rst" for name in modules}
    for stale in folder.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    rows = ["| module | what it holds |", "|---|---|"]
    for name in modules:
        module = importlib.import_module(name)
        title = name
        package = hasattr(module, "__path__")
        body = (f".. automodule:: {name}\n   :no-members:\n\n.. rubric:: Public names (each documented in the "
                f"module that defines it)\n\n.. public-names:: {name}\n" if package else f".. automodule:: {name}\n")
        _write(folder / f"{name}.rst", f"{title}\n{'=' * len(title)}\n\n{body}")
        rows.append(f"| {{mod}}`{name}` | {_summary(module)} |")
    _write(GENERATED / "api-modules.md", "\n".join(rows) + "\n")


# --- file formats ------------------------------------------------------------------------------

def schemas_page() -> str:
    """Each JSON Schema of ``huc_ref/data``: the file formats' and the golden vectors'."""
    parts = []
    data = ROOT / "huc_ref" / "data"
    for path in sorted(data.glob("schemas/*.schema.json")) + sorted(data.glob("vectors/*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        name = path.name.removesuffix(".schema.json")
        parts += [f"### `{name}`", "", _cell(schema.get("title", name)), ""]
        parts += ["```json", path.read_text(encoding="utf-8").rstrip("\n"), "```", ""]
    return "\n".join(parts)


# --- bad input ---------------------------------------------------------------------------------

def errors_page() -> str:
    """The error kinds (:data:`huc_ref.errors.ERROR_KINDS`, ``ARGUMENT_KINDS``) and every invalid
    golden vector with the kind, place and message this implementation gives it."""
    from huc_ref.errors import ARGUMENT_KINDS, ERROR_KINDS
    lines = ["### Error kinds", "", "| kind | what it means | where |", "|---|---|---|"]
    lines += [f"| `{kind}` | {_cell(text)} | a document or the API |" for kind, text in ERROR_KINDS.items()]
    lines += [f"| `{kind}` | {_cell(text)} | the API or the command line only |" for kind, text in ARGUMENT_KINDS.items()]
    invalid = json.loads((ROOT / "huc_ref" / "data" / "vectors" / "invalid.json").read_text(encoding="utf-8"))
    lines += ["", "### The catalogue of malformed documents", "",
              f"The {len(invalid['vectors'])} invalid golden vectors (`huc_ref/data/vectors/invalid.json`), "
              "each with the error `huc audit` and {func}`huc_ref.read_case` give it.  Another implementation "
              "must give the same `kind`; the place and message are this implementation's.", "",
              "| vector | kind | message |", "|---|---|---|"]
    for vector in invalid["vectors"]:
        error = vector["error"]
        lines.append(f"| `{vector['id'].removeprefix('invalid-')}` | `{error['kind']}` | {_cell(error['message'])} |")
    return "\n".join(lines) + "\n"


# --- notebooks and the reproduction kit --------------------------------------------------------

def copy_notebooks() -> None:
    """The classroom notebooks, copied where Sphinx reads them (its source folder is docs/)."""
    target = GENERATED / "notebooks"
    wanted = {p.name: p for p in (ROOT / "examples" / "notebooks").glob("*.ipynb")}
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.ipynb"):
        if stale.name not in wanted:
            stale.unlink()
    for name, source in wanted.items():
        copy = target / name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copyfile(source, copy)


#: The paper's experiments: title, command, the table its script commits, its figure.
REPRODUCTIONS = [
    ("J.1's toy population", "python examples/j1_toy.py", "j1_toy"),
    ("SUPPORT2 (K.3, Table 1's SUPPORT2 half, Tables 7-10)", "python -m examples.reproduce table7", "support2"),
    ("The digits pipeline (Sec. 5.2, Table 1 in shape)", "python examples/real_data.py", "real_data"),
]


def reproductions_page() -> str:
    """``docs/reproductions.md`` as the reproduction kit writes it; where it has not been
    written, each experiment's command with the table and figure its script committed to
    ``examples/figures``.  (Included from ``docs/reproducing.md``: paths are relative to docs/.)"""
    page = DOCS / "reproductions.md"
    if page.exists():
        return page.read_text(encoding="utf-8")
    figures = ROOT / "examples" / "figures"
    parts = ["# Reproductions", "", "Each of the paper's experiments is rerun by one script of `examples/`, "
             "which writes its table and figure to `examples/figures` (a quick mode runs in the test suite).", ""]
    for title, command, stem in REPRODUCTIONS:
        parts += [f"## {title}", "", f"`{command}`", ""]
        if (figures / f"{stem}.md").exists():
            parts += [(figures / f"{stem}.md").read_text(encoding="utf-8").rstrip("\n"), ""]
        if (figures / f"{stem}.png").exists():
            parts += [f"![{title}](../examples/figures/{stem}.png)", ""]
    return "\n".join(parts)


def generate(app) -> None:
    """Write every generated page (``builder-inited``)."""
    import huc_ref
    results = verify_results()
    _write(GENERATED / "claims.md", claims_page(results, huc_ref.__version__))
    failed = [r["check"] for r in results if r["status"] != "ok"]
    if failed:
        logger.warning("huc verify: %d checks failed: %s", len(failed), ", ".join(failed))
    _write(GENERATED / "benchmarks.md", benchmarks_page())
    write_api_pages()
    _write(GENERATED / "schemas.md", schemas_page())
    _write(GENERATED / "errors.md", errors_page())
    _write(GENERATED / "reproductions.md", reproductions_page())
    copy_notebooks()


# --- the API pages: each name documented once, where it is defined --------------------------

_documenting = {"module": None}


def _note_module(app, what, name, obj, options, lines) -> None:
    """Remember the module whose page autodoc is writing (its docstring comes before its members)."""
    if what == "module":
        _documenting["module"] = name


def _skip_imported(app, what, name, obj, skip, options):
    """A module lists in ``__all__`` some names it imports (``huc_ref.formats.utility_from_json``):
    each is documented where it is defined, and only linked from the others."""
    import inspect
    target = getattr(obj, "py_func", obj)
    outside = (getattr(target, "__module__", None) or "").split(".")[0] not in ("", "builtins", "huc_ref",
                                                                               "proofs_check")
    if what == "class" and callable(target) and outside:
        return True  # a method another package adds to a class (scikit-learn's set_fit_request ...)
    if not (inspect.isclass(target) or inspect.isfunction(target)):
        return None  # data (a constant, an instance) belongs to the module that names it
    home = getattr(target, "__module__", None)
    current = _documenting["module"]
    if what == "module" and current and home and home.split(".")[0] in ("huc_ref", "proofs_check") \
            and home != current:
        return True
    return None


def _lookup(name: str):
    """The object a dotted name denotes (a module, or an attribute path inside one), or raise
    LookupError.  A class's attribute counts where the class declares it without a value (a
    dataclass field, an annotation, a slot, a fitted estimator's ``name_``)."""
    import importlib
    import inspect
    module_name, rest = name, []
    while module_name:
        try:
            obj = importlib.import_module(module_name)
            break
        except ImportError:
            module_name, _, last = module_name.rpartition(".")
            rest.insert(0, last)
    else:
        raise LookupError(name)
    for part in rest:
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        declared = set()
        for klass in inspect.getmro(obj) if inspect.isclass(obj) else ():
            declared |= set(getattr(klass, "__annotations__", {})) | set(getattr(klass, "__slots__", ()))
            declared |= set(getattr(klass, "__dataclass_fields__", {}))
        if part in declared or (part.endswith("_") and inspect.isclass(obj) and "fit" in dir(obj)):
            return None  # declared, with no value to look at
        raise LookupError(name)
    return obj


def _canonical(name: str):
    """The defining module's name of a re-exported object (``huc_ref.LabelTree`` ->
    ``huc_ref.tree.LabelTree``), or None."""
    try:
        obj = _lookup(name)
    except LookupError:
        return None
    obj = getattr(obj, "py_func", obj)
    home, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if home and qualname and f"{home}.{qualname}" != name and not isinstance(obj, type(sys)):
        return f"{home}.{qualname}"
    return None


def _exists(name: str) -> bool:
    try:
        _lookup(name)
    except LookupError:
        return False
    return True


def _resolve_reexport(app, env, node, contnode):
    """A reference the Python domain did not find, resolved in this order:

    1. a re-exported name (``huc_ref.audit``, or ``HUCError`` inside ``huc_ref``): linked to the
       object where it is defined and documented;
    2. a name without its module (a summary line shown away from its module's page): linked to
       the one documented object whose full name ends with it;
    3. a name that exists but is not public (a private helper, a module constant not in
       ``__all__``, a fitted estimator's attribute, a standard library class): shown as code,
       without a link;

    and otherwise left to warn: a reference to a name that exists nowhere (a renamed function)
    fails the build."""
    if node.get("refdomain") != "py":
        return None
    from docutils import nodes
    target, module, klass = node["reftarget"].lstrip("~."), node.get("py:module"), node.get("py:class")
    domain = env.get_domain("py")
    scopes = [f"{module}.{klass}." if module and klass else None, f"{module}." if module else None, ""]
    candidates = [f"{scope}{target}" for scope in scopes if scope is not None]
    for name in candidates:
        canonical = _canonical(name)
        if canonical:
            found = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], canonical, node, contnode)
            if found is not None:
                return found
    suffix = "." + target
    matches = [full for full in domain.objects if full.endswith(suffix) and not domain.objects[full].aliased]
    if len(matches) == 1:
        return domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"], matches[0], node, contnode)
    if any(_exists(name) for name in candidates) or matches:
        _undocumented.add(f"{node['refdoc']}: {node['reftype']} {target}")
        return nodes.literal(target, target)
    return None


#: References shown as code because their target exists but is not public (see above): the list
#: the docstrings' next revision can turn into plain literals or into links to public names.
_undocumented: set = set()


def _report_undocumented(app, exception) -> None:
    """Write the references resolved to existing but undocumented names to
    ``<outdir>/undocumented-references.txt`` and say how many there were."""
    if exception is None and _undocumented:
        Path(app.outdir, "undocumented-references.txt").write_text("\n".join(sorted(_undocumented)) + "\n")
        logger.info("hucdocs: %d references to names that exist but are not public, shown as code "
                    "(undocumented-references.txt)", len(_undocumented))


def cli_parser():
    """The command line's parser as the CLI reference renders it: ``huc_ref.cli.build_parser``
    with each help text's reStructuredText-active characters escaped (``classes_``, a name the
    terminal prints as it is, is a hyperlink reference to docutils, and ``|U|`` a substitution)."""
    import argparse

    from huc_ref.cli import build_parser

    def escape(parser):
        for action in parser._actions:
            if action.help and action.help is not argparse.SUPPRESS:
                action.help = re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", action.help).replace("|", "\\|")
            for sub in getattr(action, "choices", None) or {}:
                if isinstance(action.choices, dict) and isinstance(action.choices[sub], argparse.ArgumentParser):
                    escape(action.choices[sub])
        return parser
    return escape(build_parser())


class PublicNames(SphinxDirective):
    """``.. public-names:: package``: a summary table of the package's ``__all__``, each name
    linked to the module that defines and documents it."""

    required_arguments = 1

    def run(self):
        import importlib
        package = importlib.import_module(self.arguments[0])
        lines = ["", ".. currentmodule:: None", "", ".. autosummary::", ""]  # (full names: no module context)
        for name in package.__all__:
            canonical = _canonical(f"{package.__name__}.{name}")
            if canonical:
                lines.append(f"   ~{canonical}")
        return self.parse_text_to_nodes("\n".join(lines) + "\n")


def setup(app):
    app.add_directive("public-names", PublicNames)
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", _note_module)
    app.connect("autodoc-skip-member", _skip_imported)
    app.connect("missing-reference", _resolve_reexport)
    app.connect("build-finished", _report_undocumented)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
