"""Files shipped with nimo: design presets, the example inventory and the small datasets.

In the source tree they live at the top level (``designs/``, ``inventories/``, ``datasets/``);
a built wheel carries copies under ``workbench/_shipped/`` (``setup.py`` copies them at build
time), so a pip-installed ``nimo`` finds them from any directory. ``shipped_dir`` answers for
both layouts: the installed copy first, then the source tree.
"""

from __future__ import annotations

from pathlib import Path

from nimo.errors import FileAccessError

PACKAGE_DIR = Path(__file__).resolve().parent
INSTALLED = PACKAGE_DIR / "_shipped"
SOURCE_TREE = PACKAGE_DIR.parent
KINDS = ("designs", "inventories", "datasets")


def shipped_dir(kind: str) -> Path:
    """The directory of shipped ``kind`` files (one of ``KINDS``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of shipped files {kind!r} (valid: {', '.join(KINDS)})")
    for root in (INSTALLED, SOURCE_TREE):
        if (root / kind).is_dir():
            return root / kind
    return INSTALLED / kind  # absent: callers report the missing file by name


def example_inventory() -> Path:
    """The example inventory (``inventories/example.yaml``): knobs, application, monitors."""
    return shipped_dir("inventories") / "example.yaml"


def dataset_names() -> list[str]:
    """The shipped datasets as ``GROUP/NAME`` (``synthetic/memory_cliff``), sorted."""
    root = shipped_dir("datasets")
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.glob("*/*.csv"))


def dataset_path(ref: str) -> Path:
    """A shipped dataset by name: ``synthetic/memory_cliff``, ``memory_cliff`` (when
    unambiguous) or either with ``.csv``. Raises naming the valid names."""
    name = ref.removesuffix(".csv").removeprefix("datasets/")
    names = dataset_names()
    matches = [n for n in names if n == name or n.rpartition("/")[2] == name]
    if len(matches) != 1:
        why = "no such shipped dataset" if not matches else "ambiguous name"
        raise FileAccessError(f"dataset {ref!r}: {why}", hint="shipped: " + ", ".join(names))
    return shipped_dir("datasets") / f"{matches[0]}.csv"


def resolve_data(ref: str) -> Path:
    """A CSV to replay: a path as given (the reader reports a missing file), else a shipped
    dataset's name (``memory_cliff``, ``lab/checksum``)."""
    path = Path(ref)
    if path.exists() or path.suffix or path.is_absolute() or ref.startswith("."):
        return path
    return dataset_path(ref)
