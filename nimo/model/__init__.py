"""The exportable cost model. Imports ONLY numpy, the stdlib and ``nimo.errors``.

A scheduler loads a model with ``load_model(path)`` and calls ``predict(assignment)``,
``predict_many(X)`` or ``predict_interval(assignment, level)``; the JSON layout is in
docs/model-format.md.
"""

from nimo.model.attributes import attributes_as_dicts
from nimo.model.cost import CostModel, Prediction, load_model
from nimo.model.features import Factor, Term, attribute_scale, design_matrix
from nimo.model.predictor import FittedPredictor

__all__ = [
    "CostModel",
    "Factor",
    "FittedPredictor",
    "Prediction",
    "Term",
    "attribute_scale",
    "attributes_as_dicts",
    "design_matrix",
    "load_model",
]
