"""The ``nimo`` command line. Each subcommand lives in its own module, imported lazily, and
exposes ``register(subparsers)`` which adds its parser and sets ``func`` (args -> int).

User errors (``NimoError``) print one line to stderr and exit 2; never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from nimo.errors import NimoError

# name -> module; each module's register() adds the subcommand (and its own sub-subcommands).
COMMANDS: dict[str, str] = {
    "replay": "workbench.cli.replay",
    "design": "workbench.cli.design",
    "predict": "workbench.cli.predict",
    "model": "workbench.cli.model",
    "campaign": "workbench.cli.campaign",
    "plot": "workbench.cli.plot",
    "serve": "workbench.cli.serve",
    "lab": "workbench.cli.lab",
    "clean": "workbench.cli.clean",
    "doctor": "workbench.cli.doctor",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nimo",
        description="Learn cost models of black-box applications by running them (NIMO).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name in COMMANDS.values():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:  # a subcommand not built yet must not break the rest
            if e.name == module_name:
                continue
            raise
        module.register(sub)
    return parser



def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except NimoError as e:
        print(f"nimo {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"nimo {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
