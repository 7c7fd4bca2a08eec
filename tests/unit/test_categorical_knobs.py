"""Issue 12, item 2 in inventories: an app_param knob of named levels (an algorithm variant).

The planner sees the codes 1..k of the sorted names (``Attribute.categories``), the argv gets
the name, the store keeps the code and the campaign spec the names, so that ``samples``,
``log``, the progress table and ``--json`` show names. Mistakes are one line naming the file,
the knob and what is valid.
"""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nimo.errors import ConfigError
from nimo.records import IterationRecord
from nimo.space import Attribute
from workbench.apps import checksum
from workbench.cli import main
from workbench.cli.progress import format_record
from workbench.fingerprint import _digest, meaning
from workbench.inventory import parse_inventory, render_argv
from workbench.replay_categories import named, named_document

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "inventories" / "example.yaml"
VARIANT = {"name": "variant", "kind": "app_param", "levels": ["sha3_256", "sha1"]}


def doc_with(variant: dict | None = None, **top) -> dict:
    doc = yaml.safe_load(EXAMPLE.read_text())
    doc["knobs"] = [{"name": "cpu_share", "kind": "cpu_share", "levels": [0.5, 1.0]},
                    dict(variant or VARIANT)]
    doc["application"]["command"] += ["--algorithm", "{variant}"]
    doc.update(top)
    return doc


def test_named_levels_are_codes_of_the_sorted_names() -> None:
    inv = parse_inventory(doc_with(), "inv.yaml")
    knob = inv.knobs[1]
    assert knob.levels == (1.0, 2.0) and knob.categories == ("sha1", "sha3_256")
    assert knob.unit == "category" and knob.direction is None
    attr = inv.space().attribute("variant")
    assert attr.categories == ("sha1", "sha3_256") and not attr.load
    assert inv.space().categories == {"variant": ("sha1", "sha3_256")}
    assert len(inv.space().candidates) == 4


def test_the_argv_gets_the_name_and_numbers_stay_numbers() -> None:
    inv = parse_inventory(doc_with(), "inv.yaml")
    values = inv.argv_values({"cpu_share": 0.5, "variant": 2.0})
    assert values == {"cpu_share": 0.5, "variant": "sha3_256"}
    argv = render_argv(inv.application.command,
                       {"dataset": "/d", "threads": 1, "app_dir": "/a", **values})
    assert argv[-2:] == ["--algorithm", "sha3_256"]
    assert inv.argv_values({"variant": 1.0})["variant"] == "sha1"


def test_assignments_name_the_category() -> None:
    inv = parse_inventory(doc_with(assignments=[{"cpu_share": 0.5, "variant": "sha3_256"},
                                                {"cpu_share": 1.0, "variant": "sha1"}]),
                          "inv.yaml")
    assert inv.space().candidates == ((0.5, 2.0), (1.0, 1.0))


def inventory_file(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def one_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in out.err, out
    return lines[0]


def _edit(fn):
    def apply(d: dict) -> dict:
        d = copy.deepcopy(d)
        fn(d)
        return d
    return apply


@pytest.mark.parametrize("edit,expected", [
    (_edit(lambda d: d["knobs"][0].update(levels=[0.5, "fast"])),
     "inv.yaml: knobs[0].levels[1]: must be a number, got 'fast' (valid: > 0 and <= 64; "
     "names (categories) only on an app_param knob)"),
    (_edit(lambda d: d["knobs"][1].update(levels=["md5", "sha1", "md5"])),
     "inv.yaml: knobs[1].levels: has duplicate level 'md5' (valid: each level once)"),
    (_edit(lambda d: d["knobs"][1].update(levels=[])),
     "inv.yaml: knobs[1].levels: must be a non-empty list of numbers or of names"),
    (_edit(lambda d: d["knobs"][1].update(levels=["md5", 3])),
     "inv.yaml: knobs[1].levels[1]: 3 is not a category name (valid: every level a "
     "non-empty name (categories), or every level a number)"),
    (_edit(lambda d: d["knobs"][1].update(levels=["md5", " "])),
     "inv.yaml: knobs[1].levels[1]: ' ' is not a category name"),
    (_edit(lambda d: d["knobs"][1].update(direction="load")),
     "inv.yaml: knobs[1].direction: a knob of named levels (categories) has no direction "
     "(valid: no direction (remove it))"),
    (_edit(lambda d: d.update(assignments=[{"cpu_share": 0.5, "variant": "md5"}])),
     "inv.yaml: assignments[0].variant: 'md5' is not a level of knob variant "
     "(valid: sha1, sha3_256)"),
    (_edit(lambda d: d["application"].update(command=d["application"]["command"][:-2])),
     "inv.yaml: application.command: does not use {variant} (valid: a command passing it, "
     "e.g. --algorithm {variant})"),
])
def test_mistakes_are_one_line_naming_file_knob_and_valid(tmp_path, capsys, edit,
                                                          expected) -> None:
    path = inventory_file(tmp_path, edit(doc_with()))
    line = one_error(capsys, main(["doctor", str(path)]))
    assert expected in line, line


def test_an_attribute_with_categories_needs_levels_one_to_k() -> None:
    with pytest.raises(ConfigError, match="levels are 1..2"):
        Attribute("v", (0.0, 1.0), categories=("a", "b"))
    a = Attribute("v", (2.0, 1.0), categories=("a", "b"))
    assert a.category(2.0) == "b" and Attribute("c", (1.0,)).category(1.0) == 1.0


def test_renamed_categories_change_what_a_sample_means() -> None:
    base = meaning(parse_inventory(doc_with(), "inv.yaml"))
    other = meaning(parse_inventory(doc_with({**VARIANT, "levels": ["sha3_256", "md5"]}),
                                    "inv.yaml"))
    assert base["knobs"] != other["knobs"]
    plain = parse_inventory(yaml.safe_load(EXAMPLE.read_text()), "inv.yaml")
    before = _digest([[k.name, k.kind, k.unit, list(k.levels)] for k in plain.knobs])
    assert meaning(plain)["knobs"] == before  # no categorical knob: the hash is as it was


def test_names_in_documents_and_log_lines() -> None:
    cats = {"variant": ("sha1", "sha3_256")}
    assert named({"cpu_share": 0.5, "variant": 2.0}, cats) == {"cpu_share": 0.5,
                                                               "variant": "sha3_256"}
    doc = {"iterations": [{"run": 1, "assignment": {"cpu_share": 0.5, "variant": 1.0}}]}
    out = named_document(doc, cats)
    assert out["iterations"][0]["assignment"]["variant"] == "sha1"
    assert out["categories"] == {"variant": ["sha1", "sha3_256"]}
    assert named_document(doc, {}) is doc
    rec = IterationRecord(3, {"cpu_share": 0.5, "variant": 2.0}, "train", "cpu", {}, 1.0, None)
    assert format_record(rec, cats).endswith("cpu_share=0.5 variant=sha3_256")
    assert format_record(rec).endswith("cpu_share=0.5 variant=2")


def test_samples_and_log_show_the_names(tmp_path, capsys) -> None:
    from nimo.records import CampaignKind, RunOutcome, RunPurpose, RunRequest, RunStatus, Sample
    from nimo.store import open_store

    url = f"sqlite:///{tmp_path / 'n.db'}"
    with open_store(url) as store:
        store.create_campaign("cat", CampaignKind.LIVE, design={}, seed=1,
                              spec={"categories": {"variant": ["sha1", "sha3_256"]}})
        reqs = [RunRequest(i + 1, {"cpu_share": 0.5, "variant": float(v)}, RunPurpose.TRAIN)
                for i, v in enumerate((1, 2))]
        store.queue_runs("cat", reqs)
        for r in reqs:
            store.record_outcome("cat", RunOutcome(r, RunStatus.DONE,
                                                   Sample(dict(r.assignment), T=2.0 * r.run,
                                                          cost_s=2.0 * r.run)))
            store.record_iteration("cat", IterationRecord(r.run, r.assignment, "train", None,
                                                          {}, 2.0 * r.run, None))
    out = tmp_path / "s.csv"
    assert main(["campaign", "samples", "cat", "--store", url, "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["variant"] for r in rows] == ["sha1", "sha3_256"]
    assert "wrote" in capsys.readouterr().out
    assert main(["campaign", "log", "cat", "--store", url, "--format", "json"]) == 0
    log = json.loads(capsys.readouterr().out)
    assert [r["assignment"]["variant"] for r in log] == ["sha1", "sha3_256"]
    assert main(["campaign", "log", "cat", "--store", url]) == 0
    assert "variant=sha3_256" in capsys.readouterr().out


def test_checksum_variants_digest_differently(tmp_path) -> None:
    data = tmp_path / "d"
    data.mkdir()
    (data / "a.bin").write_bytes(b"x" * 100_000)
    script = Path(checksum.__file__)
    docs = {}
    for algorithm in ("sha1", "sha3_256"):
        proc = subprocess.run([sys.executable, str(script), str(data), "--algorithm",
                               algorithm], capture_output=True, text=True, check=True)
        docs[algorithm] = json.loads(proc.stdout)
    assert docs["sha1"]["algorithm"] == "sha1"
    assert len(docs["sha1"]["digests"]["a.bin"]) == 40
    assert len(docs["sha3_256"]["digests"]["a.bin"]) == 64
    bad = subprocess.run([sys.executable, str(script), str(data), "--algorithm", "crc"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
