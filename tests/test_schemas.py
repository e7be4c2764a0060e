"""The published JSON Schemas of huc-case/1 and huc-result/1 against the reader that implements them."""

import copy
import json

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from huc_ref import HUCError, read_case
from huc_ref.fast import audit_distribution
from huc_ref.formats import boost_schema, case_schema, model_schema, result_schema, schema_dir, spec_schema
from huc_ref.vectors import load_vectors
from tests.test_robustness import _paths

VECTORS = load_vectors()
CASE = jsonschema.Draft202012Validator(case_schema())
RESULT = {a: jsonschema.Draft202012Validator(result_schema(a)) for a in ("exact", "float64")}
#: invalid inputs whose rule is one of shape, which a JSON Schema states (the others: sums, trees, sizes)
SHAPE_KINDS = {"format", "missing_field", "unknown_field", "type", "unknown_kind", "not_exact"}


def test_published_files_are_the_builders_output():
    for name, doc in [("huc-case-1.schema.json", case_schema()), ("huc-result-1.schema.json", result_schema()),
                      ("huc-result-1-fast.schema.json", result_schema("float64")),
                      ("huc-boost-1.schema.json", boost_schema()), ("huc-model-1.schema.json", model_schema()),
                      ("huc-spec.schema.json", spec_schema())]:
        assert json.loads((schema_dir() / name).read_text()) == doc


@pytest.mark.parametrize("vid", [v["id"] for v in VECTORS if "case" in v])
def test_every_valid_vector_and_both_engines_answers_fit_the_schemas(vid):
    v = next(x for x in VECTORS if x["id"] == vid)
    assert not list(CASE.iter_errors(v["case"]))
    assert not list(RESULT["exact"].iter_errors(v["expected"]))
    case = read_case(v["case"])
    fast = audit_distribution(case.distribution, case.utilities).to_json(case.id)
    assert not list(RESULT["float64"].iter_errors(fast))


@pytest.mark.parametrize("vid", [v["id"] for v in VECTORS if "input" in v and v["error"]["kind"] in SHAPE_KINDS
                                 and "while other atoms" not in v["error"]["message"]])  # all-or-none: not a shape
def test_the_schema_rejects_the_invalid_shapes(vid):
    v = next(x for x in VECTORS if x["id"] == vid)
    assert list(CASE.iter_errors(v["input"])), vid


_BASE = next(v for v in VECTORS if v["id"] == "edge-family-decision")["case"]
_VALUES = [None, True, 0, 1, -1, "1/2", "x", [], {}, ["1/2"], {"kind": "table"}, 1.5, "0.25"]


PATHS = [p for p in _paths(_BASE) if p]


@settings(max_examples=300)
@given(st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from(_VALUES + ["delete", "extra"])), max_size=3))
def test_whatever_the_reader_accepts_the_schema_accepts(changes):
    doc = copy.deepcopy(_BASE)
    for path, value in changes:
        target = doc
        try:
            for key in path[:-1]:
                target = target[key]
            if value == "delete":
                del target[path[-1]]
            elif value == "extra" and isinstance(target, dict):
                target["zz_extra"] = 1
            else:
                target[path[-1]] = copy.deepcopy(value)  # never the shared object itself (a cycle)
        except (KeyError, IndexError, TypeError):
            continue
    doc = json.loads(json.dumps(doc).replace("1.5", '"1.5"'))  # JSON numbers reach the reader as decimal text
    try:
        read_case(doc)
    except HUCError:
        return
    assert not list(CASE.iter_errors(doc)), doc


@pytest.mark.parametrize("engine", ["exact", "fast"])
@pytest.mark.parametrize("method, step", [("huc", "adaptive"), ("uc", "adaptive"), ("huc", "1/20")])
def test_both_backends_boosting_documents_fit_the_huc_boost_schema(engine, method, step):
    """One writer (BoostResult.to_json) for both backends; the published schema holds both."""
    from huc_ref import FiniteDistribution, LabelTree, Table, boost
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    d = FiniteDistribution(t, [{"p": ["1/4"] * 4, "eta": ["1/4", 0, "3/8", "3/8"]}])
    doc = boost(d, {"u": Table(t, [-1, 1, 1, 1])}, engine=engine, method=method, step=step, epsilon="1/10").to_json()
    validator = jsonschema.Draft202012Validator(boost_schema())
    assert not list(validator.iter_errors(json.loads(json.dumps(doc))))
    bad = dict(doc, stopped="sometimes")
    assert list(validator.iter_errors(bad))


@pytest.mark.parametrize("initial", [None, "temperature"])
def test_saved_models_fit_the_huc_model_schema(initial):
    import numpy as np

    from huc_ref import LabelTree, Table, TopK
    from huc_ref.calibration import HUCBoost, TemperatureScaling
    t = LabelTree.from_children("v0", {"v0": ["vL", "vR"], "vL": ["y1", "y2"], "vR": ["y3", "y4"]})
    us = {"u": Table(t, [-1, 1, 1, 1]), "top1": TopK(t, 1)}
    model = HUCBoost(t, us, epsilon="1/100", initial=TemperatureScaling() if initial else None)
    doc = model.fit(np.full((8, 4), 0.25), [0, 0, 2, 2, 2, 3, 3, 3]).to_json()
    validator = jsonschema.Draft202012Validator(model_schema())
    assert not list(validator.iter_errors(json.loads(json.dumps(doc))))
    assert list(validator.iter_errors(dict(doc, rules=[{"subgroup": "all"}])))
