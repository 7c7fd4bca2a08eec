"""``predictors.sticky``: a new run keeps the model's form unless a new one fits clearly better."""

from __future__ import annotations

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.model.features import Term
from nimo.planner.design import parse_design
from nimo.planner.learner import Learner
from nimo.predictors import PredictorOptions, fit_predictor
from nimo.records import Sample
from nimo.space import Attribute, ResourceSpace

CPU = (0.25, 0.5, 0.75, 1.0)
MEM = (1.0, 2.0, 4.0, 8.0)
SPACE = ResourceSpace((Attribute("cpu", CPU), Attribute("mem", MEM)))


def learner(sticky: float) -> Learner:
    out = Learner(SPACE, "direct", (0.5, 2.0),
                  PredictorOptions(final_fit="numpy", sticky=sticky))
    out.active["f_T"] = ["cpu", "mem"]
    return out


def add(lrn: Learner, cpu: float, mem: float, T: float) -> None:
    lrn.add(Sample(assignment={"cpu": cpu, "mem": mem}, T=T))
    lrn.refit()


def labels(lrn: Learner) -> list[str]:
    f = lrn.fitted["f_T"]
    return [f.response, *(t.label for t in f.terms)]


def test_a_given_structure_is_fitted_not_selected() -> None:
    X = np.array([[c, m] for c in CPU for m in MEM])
    y = 10.0 / X[:, 0] + 3.0 * X[:, 1]
    form = ("identity", (Term.main("cpu", "reciprocal"),))
    fit = fit_predictor("T", X, y, ("cpu", "mem"), ["cpu", "mem"], (0.5, 2.0), 20.0,
                        {"cpu": CPU, "mem": MEM}, PredictorOptions(final_fit="numpy"),
                        structure=form)
    assert [t.label for t in fit.terms] == [Term.main("cpu", "reciprocal").label]
    assert fit.info.get("kept") is True
    z = 0.5 / X[:, 0]  # the reciprocal on the normalised scale (reference 0.5)
    A = np.column_stack([np.ones(len(y)), z])
    expected, *_ = np.linalg.lstsq(A, y / 20.0, rcond=None)
    assert np.allclose(fit.params, expected)


def grow(sticky: float) -> tuple[Learner, list[str]]:
    """Eight runs of T = 10/cpu, then a ninth that the form explains (tiny noise)."""
    lrn = learner(sticky)
    runs = [(c, m) for c in CPU for m in (1.0, 8.0)]
    for c, m in runs:
        add(lrn, c, m, 10.0 / c * (1.0 + 0.004 * np.sin(7 * c + m)))
    before = labels(lrn)
    add(lrn, 0.5, 4.0, 20.0 * 1.003)
    return lrn, before


def test_a_run_the_form_explains_keeps_the_form() -> None:
    lrn, before = grow(0.5)
    assert labels(lrn) == before
    assert lrn.fitted["f_T"].n_train == 9 and lrn.fitted["f_T"].info.get("kept") is True
    fresh, fresh_before = grow(0.0)  # selecting afresh, the same run swaps the form
    assert labels(fresh) != fresh_before


def test_a_run_the_form_cannot_explain_brings_a_new_one() -> None:
    lrn = learner(0.1)
    for i, c in enumerate(CPU * 2):  # memory never varies: the form has no memory term
        add(lrn, c, 1.0, (10.0 / c + 4.0) * (1.0 + 0.003 * (-1) ** i))
    assert "mem" not in " ".join(labels(lrn))
    for c, m in [(0.25, 8.0), (0.75, 4.0), (1.0, 8.0), (0.5, 2.0), (0.5, 8.0)]:
        add(lrn, c, m, 10.0 / c + 4.0 * m)
    assert "mem" in " ".join(labels(lrn))  # a new form came in (and then stayed)
    predicted = lrn.model().predict_many(np.array([[1.0, 2.0], [0.25, 4.0]]))
    assert np.allclose(predicted, [18.0, 56.0], rtol=0.05)


def test_without_sticky_every_refit_selects_afresh() -> None:
    lrn, _ = grow(0.0)
    assert lrn.fitted["f_T"].info.get("kept") is None


@pytest.mark.parametrize("value", [-0.1, 1.0, "x"])
def test_sticky_outside_its_range_is_a_config_error(value: object) -> None:
    with pytest.raises(ConfigError, match="sticky"):
        PredictorOptions.from_dict({"sticky": value})


def test_sticky_is_echoed_only_when_set() -> None:
    assert "sticky" not in PredictorOptions().to_dict()
    assert PredictorOptions.from_dict({"sticky": 0.1}).to_dict()["sticky"] == 0.1


@pytest.mark.parametrize("predictors, key", [({"sticky": 2}, "predictors.sticky"),
                                             ({"min_improvement": 5}, "predictors.min_improvement"),
                                             ({"bogus": 1}, "predictors: unknown key")])
def test_a_bad_predictors_option_names_the_design_file(predictors: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=f"^d.yaml: {key}"):
        parse_design({"strategy": "random", "predictors": predictors}, where="d.yaml: ")
