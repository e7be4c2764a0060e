"""Collection of the doctests in huc_ref: the examples that need an optional extra are left out
where that extra is not installed (the plain CI leg installs none of them): a module that needs
one throughout (:data:`collect_ignore`), and any docstring whose examples import one
(:func:`pytest_collection_modifyitems`)."""

import ast
import importlib.util

import pytest

#: The optional extras' modules a docstring's examples may import (pyproject.toml's extras).
OPTIONAL = ("pyarrow", "dask", "distributed", "matplotlib", "sklearn", "scipy", "numba", "gmpy2", "flint",
            "jsonschema")


def installed(name: str) -> bool:
    """Whether module ``name`` can be imported (a module set to None in sys.modules cannot)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def missing_extras(sources) -> list:
    """The modules of :data:`OPTIONAL` that the example ``sources`` import and that are not installed."""
    needed = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                needed.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                needed.add(node.module.split(".")[0])
    return sorted(name for name in needed & set(OPTIONAL) if not installed(name))


#: Modules whose doctests need the ``scale`` extra (dask) throughout.
collect_ignore = [] if installed("dask") else ["huc_ref/fast/scale.py"]


def pytest_collection_modifyitems(config, items):
    """A doctest whose examples import an optional extra that is not installed is skipped, naming it."""
    for item in items:
        test = getattr(item, "dtest", None)
        if test is None:
            continue
        missing = missing_extras(example.source for example in test.examples)
        if missing:
            item.add_marker(pytest.mark.skip(reason=f"the example needs {', '.join(missing)} (not installed)"))
