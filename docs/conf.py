"""Sphinx configuration of the huc-ref documentation.

Build it (no ``make``) from the repository's root::

    python -m pip install -e '.[docs]'
    python -m sphinx -b html -W --keep-going -n docs docs/_build/html

``-W`` turns every warning into an error and ``-n`` (nitpicky) makes every cross-reference
that does not resolve a warning, so a renamed function breaks the build, not a link.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT))  # the checkout's huc_ref and proofs_check, installed or not

import huc_ref  # noqa: E402

project = "huc-ref"
author = "The huc-ref developers"
copyright = "The huc-ref developers"  # noqa: A001 - Sphinx's name
release = huc_ref.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinxarg.ext",
    "myst_nb",  # Markdown pages (myst-parser) and the notebooks
    "hucdocs",  # docs/_ext/hucdocs.py: the pages made at build time (claims, benchmarks, schemas)
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
    "reproductions.md",  # the reproduction kit's page: included by reproducing.md
    "generated/*.md",  # pieces included by the pages, not pages themselves
    "results/*/*.md",  # a benchmark's tables, included by its page (docs/scale.md)
]

# --- cross-references: every one must resolve ---
# With nitpicky on, a reference to a name that exists nowhere is an error.  docs/_ext/hucdocs.py
# resolves the rest: a re-exported name (huc_ref.audit) links to where it is defined; a name that
# exists but is not public (a private helper, a module constant outside __all__, a fitted
# estimator's attribute) is shown as code, without a link, and listed in
# _build/html/undocumented-references.txt.  There is no ignore list.
nitpicky = True
default_role = "py:obj"
# No intersphinx: the build reads nothing from the network.  Names of Python's and numpy's own
# types in the docstrings are written as literals (``Fraction``), not as cross-references.

# The docstrings write the sizes of the paper's families as the paper does, |U| and |C|;
# reStructuredText would read those as substitutions, so they are defined as themselves.
rst_prolog = """
.. |U| replace:: \\|U\\|
.. |C| replace:: \\|C\\|
"""

# --- the API from the docstrings ---
autosummary_generate = False  # the module pages are written by docs/_ext/hucdocs.py
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the docstrings say the types in the paper's words
numpydoc_show_class_members = False  # autodoc lists the members; numpydoc's tables would list them twice
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# --- Markdown and notebooks ---
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath", "amsmath", "attrs_inline"]
myst_heading_anchors = 3
# The notebooks are committed without outputs (tests/test_notebooks.py keeps them so); the build
# executes them, so the outputs shown are the ones the current code gives.  jupyter-cache keeps
# each notebook's outputs until its text changes.
nb_execution_mode = "cache"
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_merge_streams = True

# Smart quotes, but "--" stays two hyphens: the pages are full of command-line options.
smartquotes_action = "qe"

# --- the page ---
html_theme = "pydata_sphinx_theme"
html_title = f"huc-ref {release}"
html_theme_options = {
    "navigation_depth": 3,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
html_show_sourcelink = False
