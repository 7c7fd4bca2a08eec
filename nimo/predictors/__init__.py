"""Fitting predictor functions (Algorithm 6) with transform/interaction selection and LOO.

May import statsmodels (lazily, for the final OLS fit); the fitted result is a plain
:class:`nimo.model.FittedPredictor` that needs only numpy.
"""

from nimo.predictors.fit import fit_predictor
from nimo.predictors.loo import loo_mape, loo_predictions
from nimo.predictors.options import PredictorOptions

__all__ = ["PredictorOptions", "fit_predictor", "loo_mape", "loo_predictions"]
