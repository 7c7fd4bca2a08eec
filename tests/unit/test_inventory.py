"""Inventory loading: the example loads, and every validation rule gives one line naming the
file, the key path and what would be valid."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from nimo.config import option_names
from workbench.errors import InventoryError
from workbench.inventory import (
    Application,
    Dataset,
    Host,
    Knob,
    Monitors,
    Policies,
    Storage,
    load_inventory,
    parse_inventory,
    render_argv,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "inventories" / "example.yaml"


def base() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    return p


def error(tmp_path: Path, doc: dict) -> str:
    with pytest.raises(InventoryError) as e:
        load_inventory(write(tmp_path, doc))
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(str(tmp_path / "inv.yaml"))
    return msg


def test_example_loads_with_space_and_defaults():
    inv = load_inventory(EXAMPLE)
    assert [h.role for h in inv.hosts] == ["compute", "storage"]
    assert inv.hosts[0].peer == "storage1"
    assert inv.hosts[0].key_file == str((EXAMPLE.parent / "lab/id_ed25519").resolve())
    space = inv.space()
    assert space.names == ("cpu_share", "memory_mb", "delay_ms", "rate_mbit")
    assert len(space.candidates) == 4 * 3 * 4 * 4
    assert space.attribute("delay_ms").direction == -1
    assert space.attribute("delay_ms").resource == "network"
    assert space.attribute("cpu_share").direction == 1
    assert space.attribute("memory_mb").resource == "compute"
    assert inv.policies.on_failure == "continue" and inv.policies.retries == 1
    assert inv.monitors.sar and inv.monitors.tshark and inv.monitors.profile
    assert inv.storage.mountpoint is None


def test_explicit_assignments_are_the_only_candidates(tmp_path):
    doc = base()
    doc["assignments"] = [{"cpu_share": 1.0, "memory_mb": 256, "delay_ms": 0, "rate_mbit": 400},
                          {"cpu_share": 0.25, "memory_mb": 48, "delay_ms": 10, "rate_mbit": 20}]
    inv = load_inventory(write(tmp_path, doc))
    assert inv.space().candidates == ((1.0, 256.0, 0.0, 400.0), (0.25, 48.0, 10.0, 20.0))


def test_single_storage_host_becomes_the_default_peer(tmp_path):
    doc = base()
    del doc["hosts"][0]["peer"]
    assert load_inventory(write(tmp_path, doc)).hosts[0].peer == "storage1"


def test_malformed_yaml_names_file_and_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("version: 1\nhosts:\n  - name: a\n    address: [unclosed\n")
    with pytest.raises(InventoryError, match=r"bad\.yaml:\d+: malformed YAML"):
        load_inventory(p)


def test_missing_file():
    with pytest.raises(InventoryError, match="cannot read inventory"):
        load_inventory("/nonexistent/inv.yaml")


def mutate(fn):
    doc = base()
    fn(doc)
    return doc


CASES = [
    # (mutation, expected key path, expected fragment of what is valid)
    (lambda d: d.update(colour="red"), "colour: unknown key", "valid: version, name"),
    (lambda d: d.update(version=2), "version:", "valid: 1"),
    (lambda d: d.update(version=True), "version:", "valid: 1"),  # YAML true == 1 in Python
    (lambda d: d["hosts"][0].update(key_file="/keys/id\ted"), "hosts[0].key_file:",
     "valid: a path without backslashes, tabs or newlines"),
    (lambda d: d["hosts"][0].update(name="compute1\n"), "hosts[0].name:", None),
    (lambda d: d.pop("hosts"), "hosts: is required", None),
    (lambda d: d.update(hosts=[]), "hosts: must be a non-empty list", None),
    (lambda d: d["hosts"][1].update(role="gpu"), "hosts[1].role: 'gpu' is not valid",
     "valid: compute, storage"),
    (lambda d: d["hosts"][1].pop("address"), "hosts[1].address: is required", None),
    (lambda d: d["hosts"][1].update(address="a b"), "hosts[1].address:", "host name or IP"),
    (lambda d: d["hosts"][0].update(port=70000), "hosts[0].port: 70000 is out of range",
     "valid: 1..65535"),
    (lambda d: d["hosts"][0].update(port="22"), "hosts[0].port: must be an integer", None),
    (lambda d: d["hosts"][0].update(data_address="10.1.1"), "hosts[0].data_address:",
     "e.g. 10.77.1.11"),
    (lambda d: d["hosts"][0].update(data_iface="a-very-long-interface0"), "hosts[0].data_iface:",
     "interface name"),
    (lambda d: d["hosts"][0].update(name="bad name"), "hosts[0].name:", "letters, digits"),
    (lambda d: d["hosts"][1].update(name="compute1"), "hosts[1].name: duplicate host name",
     "hosts[0]"),
    (lambda d: d["hosts"][0].update(peer="nowhere"), "hosts[0].peer: 'nowhere' is not a storage",
     "valid: storage1"),
    (lambda d: d["hosts"][1].update(peer="compute1"), "hosts[1].peer: only compute hosts", None),
    (lambda d: d["hosts"][0].update(sudo=True), "hosts[0].sudo: unknown key", "valid: name"),
    (lambda d: d["hosts"][1].update(role="compute"), "hosts: no host has role storage", None),
    (lambda d: d["hosts"][0].update(role="storage", peer=None), "hosts: no host has role compute",
     None),
    (lambda d: d["hosts"].append({**d["hosts"][1], "name": "storage2"}),
     "hosts[0].peer", None),  # peer still valid: storage1 -> loads; replaced below
    (lambda d: d.pop("knobs"), "knobs: is required", None),
    (lambda d: d["knobs"][0].update(kind="gpu_count"), "knobs[0].kind: 'gpu_count' is not valid",
     "valid: cpu_share, memory_mb, delay_ms, rate_mbit"),
    (lambda d: d["knobs"][0].update(levels=[0, 0.5]), "knobs[0].levels[0]: 0 is out of range",
     "valid: > 0"),
    (lambda d: d["knobs"][1].update(levels=[8]), "knobs[1].levels[0]: 8 is out of range",
     "valid: >= 16"),
    (lambda d: d["knobs"][2].update(levels=[-1]), "knobs[2].levels[0]: -1 is out of range",
     "valid: >= 0"),
    (lambda d: d["knobs"][3].update(levels=["fast"]), "knobs[3].levels[0]: must be a number",
     None),
    (lambda d: d["knobs"][3].update(levels=[]), "knobs[3].levels: must be a non-empty list", None),
    (lambda d: d["knobs"][3].update(levels=[20, 20]), "knobs[3].levels: has duplicate levels",
     None),
    (lambda d: d["knobs"][0].update(levels=[0.333]), "knobs[0].levels: cpu_share needs",
     "0.25, 0.5"),
    (lambda d: d["knobs"][1].update(name="cpu_share"), "knobs[1].name: duplicate knob name",
     None),
    (lambda d: d["knobs"].append({"name": "cpu2", "kind": "cpu_share", "levels": [1]}),
     "knobs[4].kind: a second cpu_share knob", None),
    (lambda d: d["knobs"][1].update(name="dataset"), "knobs[1].name: 'dataset' is reserved", None),
    (lambda d: d["knobs"][1].update(name="9mem"), "knobs[1].name:", "identifier"),
    (lambda d: d.update(assignments=[{"cpu_share": 1.0}]), "assignments[0].memory_mb: is required",
     None),
    (lambda d: d.update(assignments=[{"cpu_share": 0.3, "memory_mb": 48, "delay_ms": 0,
                                      "rate_mbit": 20}]),
     "assignments[0].cpu_share: 0.3 is not a level", "valid: 0.25, 0.5, 0.75, 1"),
    (lambda d: d.update(assignments=[{"cpu_share": 1.0, "memory_mb": 48, "delay_ms": 0,
                                      "rate_mbit": 20, "gpu": 1}]),
     "assignments[0].gpu: unknown key", None),
    (lambda d: d.pop("application"), "application: is required", None),
    (lambda d: d["application"].update(command="python3 run.py"),
     "application.command: must be a non-empty list", None),
    (lambda d: d["application"].update(command=["run", "{nope}"]),
     "application.command[1]: unknown placeholder {nope}", "valid: dataset, workdir"),
    (lambda d: d["application"].update(command=["run", "{oops"]),
     "application.command[1]: bad placeholder syntax", "{{"),
    (lambda d: d["application"]["dataset"].update(path="/abs"),
     "application.dataset.path: '/abs' must be relative", None),
    (lambda d: d["application"]["dataset"].update(path="a/../../etc"),
     "application.dataset.path:", "without .."),
    (lambda d: d["application"]["dataset"].update(size_mb=0),
     "application.dataset.size_mb: 0 is out of range", "valid: > 0"),
    (lambda d: d["application"]["dataset"].update(generate=["gen", "{bogus}"]),
     "application.dataset.generate[1]: unknown placeholder", None),
    (lambda d: d["application"].update(workdir="tmp/x"), "application.workdir:",
     "starting with /"),
    (lambda d: d["application"].update(timeout_s=0), "application.timeout_s: 0 is out of range",
     None),
    (lambda d: d["application"].update(repeats=0), "application.repeats: 0 is out of range",
     "valid: 1..100"),
    (lambda d: d["application"].update(threads=1.5), "application.threads: must be an integer",
     None),
    (lambda d: d["storage"].update(method="smb"), "storage.method: 'smb' is not valid",
     "valid: auto, sshfs, nfs"),
    (lambda d: d["storage"].update(export="srv"), "storage.export:", "starting with /"),
    (lambda d: d["storage"].update(identity_file="id"), "storage.identity_file:", None),
    (lambda d: d["monitors"].update(sar="yes"), "monitors.sar: must be true or false", None),
    (lambda d: d["monitors"].update(sar_interval_s=0), "monitors.sar_interval_s: 0 is out of",
     None),
    (lambda d: d["monitors"].update(pcap=True), "monitors.pcap: unknown key", None),
    (lambda d: d["policies"].update(on_failure="retry"), "policies.on_failure: 'retry'",
     "valid: continue, stop"),
    (lambda d: d["policies"].update(max_failures=-1), "policies.max_failures: -1 is out of",
     None),
    (lambda d: d["policies"].update(retries=11), "policies.retries: 11 is out of range",
     "valid: 0..10"),
]


@pytest.mark.parametrize("fn,path,valid", [c for c in CASES if c[1] != "hosts[0].peer"])
def test_each_rule_is_one_line_with_key_path_and_hint(tmp_path, fn, path, valid):
    msg = error(tmp_path, mutate(fn))
    assert path in msg
    if valid:
        assert valid in msg


def test_several_storage_hosts_need_an_explicit_peer(tmp_path):
    doc = base()
    doc["hosts"].append({**copy.deepcopy(doc["hosts"][1]), "name": "storage2"})
    del doc["hosts"][0]["peer"]
    msg = error(tmp_path, doc)
    assert "hosts[0].peer: is required with several storage hosts" in msg
    assert "valid: storage1, storage2" in msg


def test_hosts_from_reads_another_inventory(tmp_path):
    (tmp_path / "lab").mkdir()
    lab = tmp_path / "lab" / "inventory.yaml"
    lab.write_text(yaml.safe_dump(base()))
    doc = base()
    del doc["hosts"]
    doc["hosts_from"] = "lab/inventory.yaml"
    inv = load_inventory(write(tmp_path, doc))
    assert [h.name for h in inv.hosts] == ["compute1", "storage1"]
    doc["hosts"] = base()["hosts"]
    assert "hosts_from: cannot be combined with hosts" in error(tmp_path, doc)
    lab.write_text("[1, 2]\n")  # an error in the file pointed to names both files
    del doc["hosts"]
    msg = error(tmp_path, doc)  # starts with this inventory's path
    assert f"inv.yaml: hosts_from: {lab}: must be a mapping" in msg, msg


def test_parse_inventory_rejects_non_mapping():
    with pytest.raises(InventoryError, match="must be a mapping, got list"):
        parse_inventory([1, 2], "x.yaml")


def test_render_argv_keeps_each_value_one_argument():
    argv = render_argv(["run", "--in={dataset}", "{cpu_share}", "{{x}}"],
                       {"dataset": "/d/a b; rm -rf /", "cpu_share": 0.5})
    assert argv == ["run", "--in=/d/a b; rm -rf /", "0.5", "{x}"]
    with pytest.raises(InventoryError, match="placeholder {missing} has no value"):
        render_argv(["{missing}"], {})


def test_docs_describe_every_declared_key():
    doc = (ROOT / "docs" / "inventory.md").read_text()
    tables = {part.split("\n", 1)[0].strip(): part for part in doc.split("\n## ")[1:]}
    declared = {"`hosts[i]`": option_names(Host), "`knobs[i]`": option_names(Knob),
                "`storage`": option_names(Storage), "`monitors`": option_names(Monitors),
                "`policies`": option_names(Policies),
                "`application`": [*(n for n in option_names(Application) if n != "dataset"),
                                  *(f"dataset.{n}" for n in option_names(Dataset))]}
    for heading, names in declared.items():
        for name in names:
            assert f"| `{name}` |" in tables[heading], f"{heading} lacks {name}"


def test_declared_defaults_are_the_yaml_defaults(tmp_path):
    doc = base()
    for key in ("storage", "monitors", "policies"):
        del doc[key]
    inv = load_inventory(write(tmp_path, doc))
    assert (inv.storage, inv.monitors, inv.policies) == (Storage(), Monitors(), Policies())
    assert inv.storage.method == "sshfs" and inv.storage.export == "/srv/nimo"
    assert inv.monitors.sar_interval_s == 1 and inv.policies.max_failures is None
