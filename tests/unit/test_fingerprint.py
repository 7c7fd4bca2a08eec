"""``workbench.fingerprint``: a resume refuses an inventory whose application, dataset or
knobs changed; a campaign stored without hashes is warned about once and gets them."""

from __future__ import annotations

from pathlib import Path

import pytest

from nimo.store import MemoryStore
from workbench.errors import InventoryError
from workbench.fingerprint import SPEC_KEY, check_unchanged, meaning_of_file

EXAMPLE = Path(__file__).resolve().parents[2] / "inventories" / "example.yaml"


def _copy(tmp_path: Path, *edits: tuple[str, str]) -> str:
    text = EXAMPLE.read_text().replace("key_file: lab/", f"key_file: {EXAMPLE.parent}/lab/") \
        .replace("known_hosts: lab/", f"known_hosts: {EXAMPLE.parent}/lab/")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return str(path)


def _campaign(store: MemoryStore, path: str, with_hashes: bool = True) -> None:
    spec = {"inventory": path, **({SPEC_KEY: meaning_of_file(path)} if with_hashes else {})}
    store.create_campaign("c", "live", design={}, spec=spec)


@pytest.mark.parametrize(("edit", "part"), [
    (("size_mb: 48", "size_mb: 8"), "dataset"),
    (('"--threads", "{threads}"]', '"--threads", "1"]'), "application"),
])
def test_a_changed_inventory_is_refused_naming_the_part(tmp_path, edit, part) -> None:
    store = MemoryStore()
    path = _copy(tmp_path)
    _campaign(store, path)
    check_unchanged(store, store.campaign("c"))  # unchanged: no error
    _copy(tmp_path, edit)
    with pytest.raises(InventoryError, match=f"the {part} changed since campaign 'c'") as e:
        check_unchanged(store, store.campaign("c"))
    assert "\n" not in str(e.value) and "--new" in str(e.value)


def test_host_edits_do_not_change_what_a_sample_means(tmp_path) -> None:
    store = MemoryStore()
    _campaign(store, _copy(tmp_path))
    _copy(tmp_path, ("    role: storage", "    role: storage\n    shareable: true"))
    check_unchanged(store, store.campaign("c"))


def test_a_campaign_without_hashes_is_warned_about_and_recorded(tmp_path, capsys) -> None:
    store = MemoryStore()
    path = _copy(tmp_path)
    _campaign(store, path, with_hashes=False)
    check_unchanged(store, store.campaign("c"))
    assert "stored without inventory hashes" in capsys.readouterr().err
    assert store.campaign("c").spec[SPEC_KEY] == meaning_of_file(path)
