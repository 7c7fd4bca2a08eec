"""NIMO learning core: pure planning and modelling, no commands, no SSH.

Data flow: inventory/space -> planner (ask) -> runner (workbench) -> samples (tell)
-> predictors -> cost model (export).
"""

__version__ = "0.1.0"
