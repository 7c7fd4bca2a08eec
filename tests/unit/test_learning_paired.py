"""benchmarks.learning.paired: two designs compared campaign by campaign."""

from __future__ import annotations

import json

from benchmarks.learning.paired import main, paired_marks


def _rec(design: str, case: str, seed: int, mapes: tuple[float, float, float]) -> dict:
    return {"design": design, "case": case, "seed": seed,
            "marks": {str(m): {"mape": v} for m, v in zip((0.1, 0.2, 0.3), mapes, strict=True)}}


RECORDS = [_rec("a", "c1", 1, (10.0, 5.0, 3.0)), _rec("b", "c1", 1, (12.0, 5.5, 1.0)),
           _rec("a", "c2", 1, (20.0, 9.0, 4.0)), _rec("b", "c2", 1, (19.5, 9.0, 4.0)),
           _rec("a", "c3", 2, (1.0, 1.0, 1.0))]  # no partner: not paired


def test_pairs_by_case_and_seed_and_counts_clear_wins_and_losses():
    marks = paired_marks(RECORDS, "a", "b")
    assert marks[0.1] == (-0.75, 1, 0, 2)  # diffs -2 and +0.5
    assert marks[0.2] == (-0.25, 0, 0, 2)
    assert marks[0.3] == (1.0, 0, 1, 2)  # diffs +2 and 0


def test_cli_prints_the_marks_and_fails_without_pairs(tmp_path, capsys):
    out = tmp_path / "o.json"
    out.write_text(json.dumps({"records": RECORDS}))
    assert main([str(out), "a", "b"]) == 0
    assert "at 10%: median -0.75; more than 1 point lower in 1, higher in 0 of 2" in (
        capsys.readouterr().out)
    assert main([str(out), "a", "nope"]) == 1
    assert "no campaign of 'a' and 'nope'" in capsys.readouterr().err
