"""Model families beyond the paper's form (issue 12): pure fitting code, numpy prediction.

``fit_family(name, rows, T, numeric=..., categorical=...)`` gives a :class:`FamilyModel`
whose ``predict`` needs numpy alone and whose ``to_dict`` is its exported file;
``choose_family`` picks one among candidates by an honest estimate on the training runs.
"""

from nimo.families.encoding import Encoder
from nimo.families.model import FAMILIES, FamilyModel, check_family, fit_family
from nimo.families.select import AUTO_CANDIDATES, Choice, choose_family, honest_error

__all__ = ["AUTO_CANDIDATES", "FAMILIES", "Choice", "Encoder", "FamilyModel", "check_family",
           "choose_family", "fit_family", "honest_error"]
