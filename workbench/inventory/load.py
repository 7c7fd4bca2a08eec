"""Reading an inventory file: ``load_inventory(path)`` and ``parse_inventory(data)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nimo.config import Argv, Checker, Choice, Nested, Text
from workbench.errors import InventoryError
from workbench.inventory.argv import PLACEHOLDERS
from workbench.inventory.hosts import parse_hosts, read_inventory_yaml
from workbench.inventory.knobs import SLURM_KNOB_KINDS, Knob, parse_assignments, parse_knobs
from workbench.inventory.model import (
    EXECUTORS,
    TOP_KEYS,
    Application,
    Dataset,
    Inventory,
    Monitors,
    Policies,
    Slurm,
    Storage,
)


def load_inventory(path: str | Path) -> Inventory:
    """Read and validate an inventory file (raises InventoryError, one line)."""
    p = Path(path)
    return parse_inventory(read_inventory_yaml(p), str(p), base_dir=p.parent)


def parse_inventory(data: Any, path: str = "<inventory>", base_dir: Path | None = None,
                    ) -> Inventory:
    """Validate an already-parsed YAML document (``path`` is used in messages)."""
    ck = Checker(path, InventoryError)
    top = ck.mapping(data if data is not None else {}, "", TOP_KEYS)
    if "version" in top and (top["version"] != 1 or isinstance(top["version"], bool)):
        raise ck.fail("version", f"{top['version']!r} is not supported", "valid: 1")
    knobs = parse_knobs(ck, top.get("knobs"))
    executor = _executor(ck, top, knobs)
    # a Slurm cluster needs no host list (its nodes are Slurm's); one may still be given
    hosts = () if executor == "slurm" and not {"hosts", "hosts_from"} & set(top) \
        else parse_hosts(ck, top, base_dir or Path("."))
    return Inventory(
        path=path,
        name=Text().parse(ck, "name", top.get("name", Path(path).stem)),
        hosts=hosts,
        knobs=knobs,
        application=_application(ck, ck.required(top, "", "application"), knobs),
        storage=ck.section(Storage, top.get("storage", {}), "storage"),
        monitors=ck.section(Monitors, top.get("monitors", {}), "monitors"),
        policies=ck.section(Policies, top.get("policies", {}), "policies"),
        assignments=parse_assignments(ck, top.get("assignments"), knobs),
        executor=executor,
        slurm=ck.section(Slurm, top.get("slurm", {}), "slurm"),
    )


def _executor(ck: Checker, top: Any, knobs: tuple[Knob, ...]) -> str:
    """``executor`` (ssh or slurm); Slurm-only knob kinds and the ``slurm`` section need
    ``executor: slurm``."""
    executor = Choice(EXECUTORS).parse(ck, "executor", top.get("executor", "ssh"))
    for i, k in enumerate(knobs):  # per-level datasets are made by the SSH executor only
        if executor == "slurm" and k.kind in ("dataset_mb", "dataset_files"):
            raise ck.fail(f"knobs[{i}].kind", f"{k.kind} needs executor: ssh",
                          "use a fixed dataset, or an app_param knob")
    if executor != "slurm":
        for i, k in enumerate(knobs):
            if k.kind in SLURM_KNOB_KINDS:
                raise ck.fail(f"knobs[{i}].kind", f"{k.kind} needs executor: slurm",
                              "set `executor: slurm` or use another knob kind")
        if "slurm" in top:
            raise ck.fail("slurm", "is only read with executor: slurm", "set executor: slurm")
    return executor


def _application(ck: Checker, raw: Any, knobs: tuple[Knob, ...]) -> Application:
    """``application``, whose argv templates may also use the knob names as placeholders."""
    argv = Argv((*PLACEHOLDERS, *(k.name for k in knobs)))
    app = ck.section(Application, raw, "application",
                     {"command": argv, "dataset": Nested(Dataset, {"generate": argv})})
    for k in knobs:  # each file-count level must make a different dataset
        if k.kind == "dataset_files" and app.dataset.generate and not any(
                f"{{{k.name}}}" in a for a in app.dataset.generate):
            raise ck.fail("application.dataset.generate", f"does not use {{{k.name}}}",
                          f"pass the file count, e.g. --files {{{k.name}}}")
        if k.categories and not any(f"{{{k.name}}}" in a for a in app.command):
            raise ck.fail("application.command", f"does not use {{{k.name}}}",
                          f"valid: a command passing it, e.g. --algorithm {{{k.name}}}")
    return app
