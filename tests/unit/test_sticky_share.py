"""``predictors.sticky_share``: whether an occupancy keeps its form after a new run is judged
by the error each form makes in T (each sample's error relative to its total occupancy), not
by the occupancy's own relative error; the selection itself is unchanged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from nimo.errors import ConfigError
from nimo.metrics import fit_error_pct
from nimo.model import FittedPredictor
from nimo.model.features import Term
from nimo.planner.sticky import Form, by_share, kept_or_fresh
from nimo.predictors import PredictorOptions, fit_predictor

BW = (10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
OPTS = PredictorOptions(final_fit="numpy")


def data() -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[b] for b in BW])
    y = 2.0 / X[:, 0] + 0.0005 * (1 + 0.1 * np.sin(X[:, 0]))  # o_n: tiny at fast links
    return X, y


def fitted(form: Form, n: int | None = None) -> FittedPredictor:
    X, y = data()
    k = n or len(y)
    return fit_predictor("o_n", X[:k], y[:k], ("bw",), ("bw",), (100.0,), 0.02, {"bw": BW},
                         OPTS, structure=form)


RECIPROCAL: Form = ("identity", (Term.main("bw", "reciprocal"),))
LOG: Form = ("log", (Term.main("bw", "log"),))


def test_without_a_scale_there_is_no_share_judge() -> None:
    X, y = data()
    assert by_share(X, y, None) is None


def test_the_share_judge_is_the_loo_error_relative_to_the_scale() -> None:
    X, y = data()
    scale = y + 1.0
    fit = fitted(LOG)
    judge = by_share(X, y, scale)
    assert judge is not None
    expected = fit_error_pct(y, fit.loo_predictions(X, y), scale)
    share = judge(fit)
    assert share == pytest.approx(expected)
    assert share is not None and fit.loo_mape is not None
    assert share < fit.loo_mape  # where o_n is a tiny part of T, its error counts less


@pytest.mark.parametrize(("old", "new", "kept"), [(10.0, 8.0, True), (10.0, 7.0, False)])
def test_the_judge_given_decides_the_keep(old: float, new: float, kept: bool) -> None:
    X, y = data()
    previous, fresh = fitted(RECIPROCAL, n=len(y) - 1), fitted(LOG)
    errors = {"identity": old, "log": new}
    out = kept_or_fresh(fresh, previous, 0.25, y, ["bw"], lambda form: fitted(form),
                        lambda f: errors[f.response])
    assert (out.response == "identity") is kept  # 8 does not cut 10 by a quarter; 7 does
    assert out.n_train == len(y)


def test_a_judge_without_a_figure_takes_the_fresh_form() -> None:
    X, y = data()
    previous, fresh = fitted(RECIPROCAL, n=len(y) - 1), fitted(LOG)
    out = kept_or_fresh(fresh, previous, 0.25, y, ["bw"], lambda form: fitted(form),
                        lambda f: None)
    assert out is fresh


def test_the_option_needs_sticky_and_is_echoed_only_when_set() -> None:
    assert PredictorOptions.from_dict({"sticky": 0.25, "sticky_share": True}).sticky_share
    assert "sticky_share" not in PredictorOptions().to_dict()
    assert PredictorOptions(sticky=0.25, sticky_share=True).to_dict()["sticky_share"] is True
    with pytest.raises(ConfigError, match="sticky_share needs predictors.sticky"):
        PredictorOptions.from_dict({"sticky_share": True})
    with pytest.raises(ConfigError, match="sticky_share must be true or false"):
        PredictorOptions.from_dict({"sticky": 0.25, "sticky_share": 1})


def test_a_learner_judges_occupancies_by_share_and_d_by_its_own_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from nimo.planner import learner as learner_module
    from nimo.planner.learner import Learner
    from nimo.records import Sample
    from nimo.space import Attribute, ResourceSpace

    judges: dict[str, object] = {}
    real = learner_module.kept_or_fresh

    def spy(fresh: FittedPredictor, *args: Any) -> FittedPredictor:
        judges[fresh.target] = args[-1]
        return real(fresh, *args)

    monkeypatch.setattr(learner_module, "kept_or_fresh", spy)
    space = ResourceSpace((Attribute("bw", BW),))
    lrn = Learner(space, "occupancy", (100.0,),
                  PredictorOptions(final_fit="numpy", sticky=0.25, sticky_share=True))
    for p in lrn.predictor_names:
        lrn.active[p] = ["bw"]
    for bw in BW:
        o = {"o_a": 1.0, "o_n": 2.0 / bw, "o_d": 0.1, "D": 50.0}
        T = o["D"] * (o["o_a"] + o["o_n"] + o["o_d"])
        lrn.add(Sample(assignment={"bw": bw}, T=T, o_a=o["o_a"], o_n=o["o_n"], o_d=o["o_d"],
                       D=o["D"]))
    lrn.refit()
    assert callable(judges["o_n"]) and callable(judges["o_a"]) and callable(judges["o_d"])
    assert judges["D"] is None
    judge = judges["o_n"]
    assert callable(judge)
    fit = lrn.fitted["f_n"]
    total = np.array([1.1 + 2.0 / bw for bw in BW])
    y = lrn.y("f_n")
    assert judge(fit) == pytest.approx(fit_error_pct(y, fit.loo_predictions(lrn.X, y), total))
