"""examples/quickstart.ipynb runs top to bottom in a real Jupyter kernel (nbclient +
ipykernel, from the dev extra); its cells assert what they show."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_quickstart_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebook's work directory, removed after
    nb = nbformat.read(ROOT / "examples" / "quickstart.ipynb", as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code_cells) >= 6 and not any(c.outputs for c in code_cells)  # stored clean
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert not errors
    text = "\n".join(str(o.get("text") or o.get("data", {}).get("text/plain", ""))
                     for c in code_cells for o in c.outputs)
    assert "T = " in text and "90% interval" in text and "runs;" in text
    work = [p for p in tmp_path.iterdir() if p.name.startswith("nimo-notebook-")]
    assert len(work) == 1 and (work[0] / "model.json").exists()  # made where it was told
