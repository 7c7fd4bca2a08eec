"""Model families of issue 12: forms, numpy-only export, categories, incremental update,
honest choice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nimo.errors import ConfigError, ModelError
from nimo.families import AUTO_CANDIDATES, FamilyModel, choose_family, fit_family
from nimo.families.linear import LINEAR_FORMS
from nimo.families.select import folds
from nimo.predictors import PredictorOptions


def grid(seed: int = 0, noise: float = 0.0) -> tuple[list[dict], np.ndarray]:
    """Seed 004's sweep: T = (a0 + a1/P)(b0 + b1/C) over nodes P and CPU share C."""
    rng = np.random.default_rng(seed)
    rows = [{"P": p, "C": c} for p in (1, 2, 4, 8) for c in (10, 20, 30, 40, 60, 80, 100)]
    T = np.array([(2 + 30 / r["P"]) * (0.5 + 40 / r["C"]) for r in rows])
    return rows, T * (1 + noise * rng.standard_normal(T.size))


def test_product_form_recovers_seed_004_exactly():
    rows, T = grid()
    m = fit_family("product", rows, T, numeric=["P", "C"])
    new = [{"P": 16, "C": 50}, {"P": 3, "C": 15}]
    truth = np.array([(2 + 30 / 16) * (0.5 + 40 / 50), (2 + 30 / 3) * (0.5 + 40 / 15)])
    assert np.allclose(m.predict(new), truth, rtol=1e-9)


def test_scaling_form_is_non_negative_and_recovers_seed_003():
    q = np.array([1, 2, 4, 8, 16, 32], float)
    rows = [{"q": v} for v in q]
    T = 0.5 * q + 100 / q + 3 / np.sqrt(q)
    m = fit_family("scaling", rows, T, numeric=["q"])
    assert np.all(np.asarray(m.params["coef"]) >= 0)
    assert np.allclose(m.predict([{"q": 64.0}]), 0.5 * 64 + 100 / 64 + 3 / 8, rtol=1e-6)
    # data a negative coefficient would fit better still gets coefficients >= 0
    bad = fit_family("scaling", rows, 100 / q - 0.5 * q + 60, numeric=["q"])
    assert np.all(np.asarray(bad.params["coef"]) >= 0)
    ernest = fit_family("ernest", rows, 100 / q - 0.5 * q + 60, numeric=["q"])
    assert np.all(np.asarray(ernest.params["coef"]) >= 0)


@pytest.mark.parametrize("family", ["nimo", "paper", *LINEAR_FORMS, "knn", "svr", "poly",
                                    "gbr"])
def test_every_family_round_trips_through_json_and_predicts_with_numpy(family):
    rows, T = grid(noise=0.02)
    m = fit_family(family, rows, T, numeric=["P", "C"])
    again = FamilyModel.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again.to_dict()["needs"] == "numpy"
    new = [{"P": 3, "C": 50}, {"P": 8, "C": 10}]
    assert np.allclose(again.predict(new), m.predict(new), rtol=1e-12)
    fitted = m.predict(rows)
    # additive forms (scaling, ernest) cannot fit a product well; every form beats chance
    assert np.all(np.isfinite(fitted)) and np.mean(np.abs(fitted - T) / T) < 0.7


@pytest.mark.parametrize("family", ["svr", "poly", "gbr"])
def test_learned_export_matches_scikit_learn(family, monkeypatch):
    """The numpy prediction equals the fitted scikit-learn estimator's."""
    from nimo.families import learned

    captured = {}
    original = learned._export

    def spy(name, est):
        captured["est"] = est
        return original(name, est)

    monkeypatch.setattr(learned, "_export", spy)
    rows, T = grid(noise=0.02)
    m = fit_family(family, rows, T, numeric=["P", "C"])
    p = m.params
    F = (np.log(np.array([[r["P"], r["C"]] for r in rows]) / np.array(m.encoder.scale))
         - np.array(p["mu"])) / np.array(p["sd"])
    expected = np.exp(captured["est"].predict(F) + p["y0"])
    assert np.allclose(m.predict(rows), expected, rtol=1e-9)


def test_a_grid_search_over_every_core_fits_the_same_model(monkeypatch):
    """From PARALLEL_RUNS runs the folds run in worker processes: the model is the same."""
    from sklearn import model_selection

    from nimo.families import learned

    workers = []
    real = model_selection.GridSearchCV

    def spy(*args, **kwargs):
        workers.append(kwargs.get("n_jobs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(model_selection, "GridSearchCV", spy)
    rows, T = grid(noise=0.02)
    serial = fit_family("svr", rows, T, numeric=["P", "C"]).to_dict()
    monkeypatch.setattr(learned, "PARALLEL_RUNS", len(rows))
    parallel = fit_family("svr", rows, T, numeric=["P", "C"]).to_dict()
    assert workers == [None, -1]
    assert parallel["params"] == serial["params"]


def test_a_learned_familys_folds_over_every_core_give_the_same_errors(monkeypatch):
    """From PARALLEL_RUNS runs a scikit-learn family's cross-validation folds run in worker
    processes: the same held-out predictions, in the same order."""
    from nimo.families import learned
    from nimo.families.select import fold_errors

    rows, T = grid(noise=0.02)
    _, splits = folds(rows)
    serial = fold_errors("gbr", rows, T, splits, numeric=["P", "C"])
    monkeypatch.setattr(learned, "PARALLEL_RUNS", len(rows))
    calls = []
    import joblib

    real = joblib.Parallel

    def spy(*args, **kwargs):
        calls.append(kwargs.get("n_jobs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(joblib, "Parallel", spy)
    parallel = fold_errors("gbr", rows, T, splits, numeric=["P", "C"])
    assert calls == [-1]
    assert parallel[0] == serial[0] and np.array_equal(parallel[1], serial[1])


def test_categories_one_hot_and_unknown_category_names_the_valid_ones():
    rows = [{"n": n, "fam": f} for n in (2, 4, 8, 16) for f in ("c4", "m4", "r4")]
    factor = {"c4": 1.0, "m4": 1.3, "r4": 1.6}
    T = np.array([(10 + 80 / r["n"]) + 5 * factor[r["fam"]] for r in rows])
    m = fit_family("product", rows, T, numeric=["n"], categorical=["fam"])
    assert np.allclose(m.predict(rows), T, rtol=1e-9)
    assert m.to_dict()["encoder"]["categorical"] == {"fam": ["c4", "m4", "r4"]}
    with pytest.raises(ModelError, match="valid: c4, m4, r4"):
        m.predict([{"n": 4, "fam": "x1"}])
    for family in ("knn", "loglog2", "nimo"):
        assert np.all(np.isfinite(fit_family(family, rows, T, numeric=["n"],
                                             categorical=["fam"]).predict(rows)))


@pytest.mark.parametrize("family", LINEAR_FORMS)
def test_update_after_every_added_run_equals_the_batch_fit(family):
    """Seed 004's incremental normal equations: after each added run the coefficients and
    predictions equal the batch fit of all runs so far to 1e-9."""
    rows, T = grid(seed=3, noise=0.05)
    start = 8
    model = fit_family(family, rows[:start], T[:start], numeric=["P", "C"])
    for i in range(start, len(rows)):
        model = model.update(rows[i:i + 1], T[i:i + 1])
        # the batch fit of all runs so far (on the scales fixed at the first fit)
        batch = fit_on(family, model, rows[:i + 1], T[:i + 1])
        a, b = np.asarray(model.params["coef"]), np.asarray(batch.params["coef"])
        assert np.allclose(a, b, rtol=1e-9, atol=1e-9 * np.abs(b).max()), (i, a, b)
        assert np.allclose(model.predict(rows), batch.predict(rows), rtol=1e-9)
        assert model.training["runs"] == i + 1
    if family != "ernest":  # its log terms with t0 >= 0 depend on the attribute scale
        fresh = fit_family(family, rows, T, numeric=["P", "C"])
        assert np.allclose(model.predict(rows), fresh.predict(rows), rtol=1e-7)


def fit_on(family, model, rows, T):
    from nimo.families import linear

    stats = linear.fit_stats(family, model.encoder, rows, T)
    return FamilyModel(family, model.encoder, {"coef": linear.solve(family, stats).tolist(),
                                               "stats": stats.to_dict()})


def test_a_linear_form_extrapolating_below_zero_is_held_positive():
    # T falls with x; the straight-line fit of the 'product' form crosses zero beyond x = 6
    rows = [{"x": float(x)} for x in (1, 2, 3, 4)]
    T = np.array([10.0, 8.2, 5.9, 4.1])
    m = fit_family("product", rows, T, numeric=["x"], load=["x"])
    raw = m._raw([{"x": 9.0}])[0]
    assert raw < 0
    assert m.predict([{"x": 9.0}])[0] == pytest.approx(4.1 / 4)
    assert np.allclose(m.predict(rows), m._raw(rows))  # positive predictions are unchanged
    # the incremental update keeps the same range as the batch fit
    up = m.update([{"x": 5.0}], np.array([0.5]))
    batch = fit_family("product", [*rows, {"x": 5.0}], np.append(T, 0.5), numeric=["x"],
                       load=["x"])
    assert up.training["t_range"] == batch.training["t_range"] == [0.5, 10.0]
    back = FamilyModel.from_dict(json.loads(json.dumps(up.to_dict())))
    assert np.all(back.predict([{"x": 50.0}, {"x": 9.0}]) > 0)
    # a model written before t_range: the update does not invent a range from its new runs
    old = FamilyModel(m.family, m.encoder, m.params, {"runs": 4})
    assert "t_range" not in old.update([{"x": 5.0}], np.array([0.5])).training
    assert old.predict([{"x": 9.0}])[0] == pytest.approx(1e-9)


def test_update_refuses_a_non_linear_family():
    rows, T = grid()
    with pytest.raises(ModelError, match="updatable: product"):
        fit_family("knn", rows, T, numeric=["P", "C"]).update(rows[:1], T[:1])


def test_knn_weighted_mean_and_variance():
    from nimo.families import knn

    rows = [{"x": 1.0}, {"x": 2.0}, {"x": 4.0}, {"x": 8.0}]
    m = fit_family("knn", rows, np.array([8.0, 4.0, 2.0, 1.0]), numeric=["x"])
    mean, var = knn.predict(m.encoder, m.params, [{"x": 2.0}])
    assert mean[0] == pytest.approx(4.0, rel=1e-3)  # an exact match dominates the weights
    assert var[0] >= 0


def test_knn_neighbours_match_a_stable_sort_across_blocks_and_ties(monkeypatch):
    from nimo.families import knn

    rng = np.random.default_rng(3)
    F = rng.integers(0, 3, size=(23, 2)).astype(float)  # many exact ties and duplicates
    monkeypatch.setattr(knn, "CHUNK", 5)  # several blocks, the last one short
    for skip_self in (False, True):
        d = np.sqrt(((F[:, None, :] - F[None, :, :]) ** 2).sum(axis=2))
        if skip_self:
            np.fill_diagonal(d, np.inf)
        for k in (1, 4, 22):
            idx, dist = knn._neighbours(F, F, k, skip_self=skip_self)
            want = np.argsort(d, axis=1, kind="stable")[:, :k]
            assert (idx == want).all()
            assert np.array_equal(dist, np.take_along_axis(d, want, axis=1))


def test_choice_is_honest_and_extrapolation_folds_train_below_the_held_level():
    method, splits = folds([{"n": float(v)} for v in (4, 8, 12, 16, 20)], "n")
    assert method == "extrapolate"
    # rolling origins: each fit on the levels below it predicts every level from it up
    assert [(list(train), list(test)) for train, test in splits] == [
        ([0, 1, 2], [3, 4]), ([0, 1, 2, 3], [4])]
    rows = [{"q": float(q)} for q in (1, 2, 4, 8, 16)]
    T = np.array([0.1 * q + 50 / q for q in (1, 2, 4, 8, 16)])
    choice = choose_family(AUTO_CANDIDATES, rows, T, numeric=["q"], extrapolate_on="q")
    assert set(choice.errors) == set(AUTO_CANDIDATES)
    best = min(v for v in choice.errors.values() if v is not None)
    assert choice.errors[choice.family] == best


def test_repeats_of_one_configuration_stay_in_one_fold():
    rows = [{"x": float(v)} for v in (1, 1, 2, 2, 3, 3)]
    method, splits = folds(rows)
    assert method == "loo" and len(splits) == 3
    for train, test in splits:
        assert {rows[i]["x"] for i in train}.isdisjoint({rows[i]["x"] for i in test})


def test_design_family_option_is_checked_and_default_unchanged():
    assert PredictorOptions.from_dict({"mode": "auto"}).family is None
    assert "family" not in PredictorOptions.from_dict({"mode": "auto"}).to_dict()
    opts = PredictorOptions.from_dict({"family": "auto", "candidates": ["scaling", "ernest"]})
    assert opts.family.candidates == ("scaling", "ernest")
    with pytest.raises(ConfigError, match="valid: auto, nimo, paper, product"):
        PredictorOptions.from_dict({"family": "bogus"})
    with pytest.raises(ConfigError, match=r"candidates\[1\]"):
        PredictorOptions.from_dict({"candidates": ["knn", "nope"]})


def test_model_fit_auto_keeps_and_says_each_candidates_fold_error(tmp_path, capsys):
    """`--family auto` exports its choice's cross-validated errors; an update, which adds
    runs those errors never saw, drops them."""
    from workbench.cli import main

    rows, T = grid(noise=0.02)
    runs = tmp_path / "runs.csv"
    runs.write_text("P,C,T\n" + "".join(f"{r['P']},{r['C']},{t}\n"
                                         for r, t in zip(rows, T, strict=True)))
    out = tmp_path / "m.json"
    assert main(["model", "fit", str(runs), "--family", "auto", "--attributes", "P,C",
                 "-o", str(out)]) == 0
    said = capsys.readouterr().out
    training = json.loads(out.read_text())["training"]
    errors = training["honest_error_pct"]
    best = min((e, f) for f, e in errors.items() if e is not None)
    assert json.loads(out.read_text())["family"] == best[1]
    assert training["chosen_by"] in said and f"{best[1]} {best[0]:.1f}%" in said
    product = tmp_path / "p.json"
    product.write_text(json.dumps({**fit_family("product", rows, T, numeric=["P", "C"])
                                   .to_dict(), "training": training}))
    assert main(["model", "update", str(product), str(runs), "-o", str(tmp_path / "u.json")]) == 0
    updated = json.loads((tmp_path / "u.json").read_text())["training"]
    assert "honest_error_pct" not in updated and "chosen_by" not in updated
    assert updated["runs"] == 2 * len(rows)
