"""Learning benchmark of issue 9: generated applications the project cannot overfit, the real
Scout and Bell measurements, and a harness that prints the acceptance figures.

- ``appgen``: seeded generator of random, physically plausible applications (replay CSV format);
- ``suites``: the tuning and (disjoint) evaluation sets, and the real-data suites;
- ``evaluate``: replays designs on a suite and prints the acceptance figures.

See benchmarks/learning/README.md.
"""
