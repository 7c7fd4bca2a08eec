"""scikit-learn regressors as families: SVR (RBF), polynomial ridge, gradient boosting.

Fitted with scikit-learn (5-fold grid-search cross-validation on the training runs only, as
seed 000) on standardised features (``log x`` of positive numeric attributes, 0/1 columns of
categories) and ``log T``; exported as plain arrays so that prediction needs numpy alone:
SVR's support vectors, dual coefficients, intercept and gamma; the polynomial's exponent
matrix and coefficients; every boosting tree as node arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nimo.errors import ModelError
from nimo.families.encoding import Encoder, Row
from nimo.families.knn import features

LEARNED = ("svr", "poly", "gbr")
GRIDS: dict[str, dict[str, list[Any]]] = {  # fixed a priori (seed 000's kind of grid)
    "svr": {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [0.01, 0.1, 1.0], "epsilon": [0.01, 0.1]},
    "poly": {"poly__degree": [1, 2, 3], "ridge__alpha": [1e-3, 1e-1, 1.0]},
    "gbr": {"n_estimators": [50, 200], "max_depth": [2, 3], "learning_rate": [0.05, 0.1]},
}

# from this many runs the grid search spreads its fits over every core (below, starting the
# worker processes costs more than it saves)
PARALLEL_RUNS = 2000


def _estimator(name: str) -> Any:
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import PolynomialFeatures
    from sklearn.svm import SVR

    if name == "svr":
        return SVR(kernel="rbf")
    if name == "poly":
        return Pipeline([("poly", PolynomialFeatures(include_bias=False)), ("ridge", Ridge())])
    return GradientBoostingRegressor(random_state=0)


def fit(name: str, encoder: Encoder, rows: Sequence[Row], T: np.ndarray) -> dict[str, Any]:
    try:
        from sklearn.model_selection import GridSearchCV, KFold
    except ImportError:
        raise ModelError(f"family {name}: fitting needs scikit-learn",
                         hint="pip install 'nimo-workbench[families]' (prediction needs "
                         "numpy only)") from None

    Z = encoder.numbers(rows)
    logs = [bool(np.all(Z[:, j] > 0)) for j in range(Z.shape[1])]
    F = features(encoder, rows, logs)
    mu, sd = F.mean(axis=0), F.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    F = (F - mu) / sd
    logy = np.log(np.asarray(T, dtype=float))
    y0 = float(logy.mean())
    folds = min(5, len(rows))
    est = _estimator(name)
    if folds >= 2:
        search = GridSearchCV(est, GRIDS[name], cv=KFold(folds, shuffle=True, random_state=0),
                              scoring="neg_mean_absolute_error",
                              n_jobs=-1 if len(rows) >= PARALLEL_RUNS else None)
        est = search.fit(F, logy - y0).best_estimator_
    else:
        est.fit(F, logy - y0)
    common = {"log": logs, "mu": mu.tolist(), "sd": sd.tolist(), "y0": y0}
    return {**common, **_export(name, est)}


def _export(name: str, est: Any) -> dict[str, Any]:
    if name == "svr":
        return {"support": est.support_vectors_.tolist(), "dual": est.dual_coef_[0].tolist(),
                "b": float(est.intercept_[0]), "gamma": float(est._gamma)}
    if name == "poly":
        return {"powers": est.named_steps["poly"].powers_.tolist(),
                "coef": est.named_steps["ridge"].coef_.tolist(),
                "b": float(est.named_steps["ridge"].intercept_)}
    trees = [{"left": t.tree_.children_left.tolist(), "right": t.tree_.children_right.tolist(),
              "feature": t.tree_.feature.tolist(), "threshold": t.tree_.threshold.tolist(),
              "value": t.tree_.value[:, 0, 0].tolist()} for t in est.estimators_[:, 0]]
    return {"trees": trees, "rate": float(est.learning_rate),
            "b": float(est.init_.constant_.reshape(-1)[0])}


def predict(name: str, encoder: Encoder, params: Mapping[str, Any], rows: Sequence[Row]
            ) -> np.ndarray:
    """Predicted T with numpy alone."""
    F = (features(encoder, rows, params["log"]) - np.asarray(params["mu"])) \
        / np.asarray(params["sd"])
    if name == "svr":
        S = np.asarray(params["support"], dtype=float).reshape(-1, F.shape[1])
        K = np.exp(-params["gamma"] * ((F[:, None, :] - S[None, :, :]) ** 2).sum(axis=2))
        out = K @ np.asarray(params["dual"]) + params["b"]
    elif name == "poly":
        P = np.asarray(params["powers"], dtype=float).reshape(-1, F.shape[1])
        out = np.prod(F[:, None, :] ** P[None, :, :], axis=2) @ np.asarray(params["coef"]) \
            + params["b"]
    else:
        out = params["b"] + params["rate"] * sum(_tree(t, F) for t in params["trees"])
    return np.exp(np.asarray(out, dtype=float) + params["y0"])


def _tree(t: Mapping[str, Any], F: np.ndarray) -> np.ndarray:
    left, right = np.asarray(t["left"]), np.asarray(t["right"])
    feature, threshold = np.asarray(t["feature"]), np.asarray(t["threshold"])
    node = np.zeros(F.shape[0], dtype=int)
    rows = np.arange(F.shape[0])
    while True:
        inner = left[node] >= 0
        if not inner.any():
            return np.asarray(t["value"])[node]
        go_left = F[rows, np.maximum(feature[node], 0)] <= threshold[node]
        node = np.where(inner, np.where(go_left, left[node], right[node]), node)
