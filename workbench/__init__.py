"""NIMO workbench: everything with side effects (replay data, SSH, tc, cgroups, monitors, lab,
store wiring, CLI). The pure learning core is ``nimo``."""
