"""Table 1's choices as small strategy classes, one module per role.

Each module holds a tiny ABC, its implementations and an explicit registry dict keyed by the
names used in ``designs/*.yaml``: ``reference``, ``predictor_order``, ``attribute_order``,
``traversal``, ``sampling``, ``error`` and the ``stop`` conditions. ``NimoPlanner``
(``nimo.planner.active``) is the loop that composes the chosen ones.
"""
