"""Writes examples/quickstart.ipynb (unexecuted) from the cells below: edit here, then run
``python examples/make_quickstart.py``. tests/integration/test_notebook.py executes it."""

from pathlib import Path

import nbformat

CELLS = [
    ("md", "# NIMO from Python\n\nReplay a learning campaign, read the store as a DataFrame, "
           "drive ask/tell with your own runner, and load a model to predict. "
           "`nimo` is the pure learning core; `workbench.api` adds files (replay, presets, "
           "shipped datasets) and re-exports everything of `nimo`."),
    ("code", "import tempfile\nfrom pathlib import Path\n\n"
             "import nimo\nfrom workbench import api\n\n"
             "work = Path(tempfile.mkdtemp(prefix='nimo-notebook-'))\n"
             "print(nimo.__version__, api.dataset_names())"),
    ("md", "## 1. Replay a campaign on a shipped dataset, stored in SQLite"),
    ("code", "store = f'sqlite:///{work}/nimo.db'\n"
             "result = api.replay('memory_cliff', seed=1, store=store, name='nb1')\n"
             "final = result.to_dict()['final']\n"
             "print(result.stopped_because)\nfinal"),
    ("md", "## 2. The store's campaigns, convergence log and samples as DataFrames "
           "(pandas: `pip install 'nimo-workbench[pandas]'`)"),
    ("code", "campaigns = api.to_dataframe(api.campaign_records(store))\n"
             "log = api.to_dataframe(api.iteration_records('nb1', store))\n"
             "samples = api.to_dataframe(api.sample_records('nb1', store))\n"
             "assert len(samples) == final['runs'] and campaigns.name.tolist() == ['nb1']\n"
             "log.tail()"),
    ("md", "## 3. Export the model, load it as a scheduler would (numpy only), predict"),
    ("code", "path = result.model.save(work / 'model.json')\n"
             "model = nimo.load_model(path)\n"
             "p = nimo.predict(model, cpu_mhz=930, mem_mb=256, latency_ms=7.2, "
             "bandwidth_mbit=60)\n"
             "print(f'T = {p.mean:.1f} s (90% interval {p.lo:.1f} .. {p.hi:.1f} s)')"),
    ("md", "## 4. Your own runner: ask/tell\n\nAny function that measures an assignment can "
           "be the workbench. Here a made-up application: CPU-bound work plus a latency cost "
           "per I/O round trip."),
    ("code", "space = nimo.ResourceSpace((\n"
             "    nimo.Attribute('cpu_ghz', (1.0, 1.5, 2.0, 2.5, 3.0)),\n"
             "    nimo.Attribute('latency_ms', (0, 2, 5, 10), direction=-1, resource='network'),\n"
             "))\n\n"
             "def my_runner(a):\n"
             "    return 100 / a['cpu_ghz'] + 4 * a['latency_ms']\n\n"
             "design = api.design('recommended')\n"
             "learned = nimo.learn(space, my_runner, design=design, kind='direct')\n"
             "print(len(learned.records), 'runs;', learned.stopped_because)\n"
             "learned.model.predict({'cpu_ghz': 2.0, 'latency_ms': 5})"),
    ("md", "The same loop, step by step:"),
    ("code", "planner = nimo.make_planner(space, design, seed=0, kind='direct')\n"
             "while requests := planner.ask():\n"
             "    for request in requests:\n"
             "        planner.tell(nimo.outcome(request, my_runner(request.assignment)))\n"
             "assert abs(planner.model().predict({'cpu_ghz': 2.0, 'latency_ms': 5}) - 70) < 7\n"
             "planner.stopped_because"),
]


def main() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md"
                else nbformat.v4.new_code_cell(src) for kind, src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, Path(__file__).with_name("quickstart.ipynb"))


if __name__ == "__main__":
    main()
