"""The classroom notebooks (examples/notebooks) run from top to bottom, so they never rot."""

from pathlib import Path

import nbclient  # the examples extra installs nbclient, nbformat and ipykernel
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "examples" / "notebooks").glob("*.ipynb"))


def test_there_are_three_notebooks_committed_without_outputs():
    assert [p.stem for p in NOTEBOOKS] == ["01_four_leaf_cancellation", "02_decomposition_on_your_tree",
                                           "03_huc_boost_vs_uc_boost"]
    for path in NOTEBOOKS:
        book = nbformat.read(path, as_version=4)
        code = [c for c in book.cells if c.cell_type == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, with the cell, on any failure
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any(o.output_type == "display_data" and "image/png" in o.data for o in outputs)  # the figure
