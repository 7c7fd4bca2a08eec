"""The ``nimo`` command line. Each subcommand lives in its own module and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (args -> int).

Startup is lazy: ``COMMANDS`` names every subcommand with its one-line help, and only the
module of the subcommand being run is imported (``nimo --help`` and ``nimo --version`` import
none, so they never load SQLAlchemy, paramiko or numpy). The other subcommands appear in the
top-level help as stubs.

User errors (``NimoError``) print one line to stderr and exit 2; never a traceback. A usage
error of a subcommand shows that subcommand's usage. A closed output pipe
(``nimo design pb --factors 7 | head -1``) ends the command quietly with exit 141 (the shell's
code for SIGPIPE).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

from nimo import __version__
from nimo.config import printable
from nimo.errors import NimoError, interrupt_reason

# name -> (module, help); each module's register() adds the subcommand (and its own
# sub-subcommands).
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("workbench.cli.replay",
               "run a learning campaign against recorded measurements (CSV)"),
    "datasets": ("workbench.cli.datasets", "list the shipped datasets, designs and inventory"),
    "design": ("workbench.cli.design", "experiment designs (Plackett-Burman)"),
    "predict": ("workbench.cli.predict", "predict run time from an exported cost model"),
    "model": ("workbench.cli.model", "export learned cost models"),
    "campaign": ("workbench.cli.campaign", "run, resume and inspect learning campaigns"),
    "doctor": ("workbench.cli.doctor", "check an inventory's hosts before a campaign"),
    "plot": ("workbench.cli.plot", "plot campaigns' convergence and accuracy"),
    "serve": ("workbench.cli.serve", "run queued campaigns; hosts never shared"),
    "lab": ("workbench.cli.lab", "build or remove a namespace lab on this machine"),
    "clean": ("workbench.cli.clean", "remove nimo- leftovers on an inventory's hosts"),
}

SIGPIPE_EXIT = 141


class NimoParser(argparse.ArgumentParser):
    """An ArgumentParser whose unrecognized arguments are reported by the (sub)parser that
    met them, with that parser's usage (argparse's default reports them at the top level).

    A subcommand made with ``intermixed=True`` (``sub.add_parser(name, intermixed=True)``;
    subparsers are NimoParsers too) takes its options anywhere among its positionals
    (``nimo predict MODEL.json --level 0.5 k=v``), as ``parse_intermixed_args`` does."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.intermixed = intermixed
        self._intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._intermixing:  # the passes of parse_known_intermixed_args (Python < 3.12)
            return super().parse_known_args(args, namespace)
        self._intermixing = self.intermixed
        try:
            parse = super().parse_known_intermixed_args if self.intermixed else \
                super().parse_known_args
            parsed, extra = parse(args, namespace)
        finally:
            self._intermixing = False
        if extra:
            self.error("unrecognized arguments: " + " ".join(extra))
        return parsed, extra


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (None: none, for ``--help``)."""
    parser = NimoParser(
        prog="nimo",
        description="Learn cost models of black-box applications by running them (NIMO).",
        epilog="`nimo COMMAND --help` shows a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"nimo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in COMMANDS.items():
        if name == command:
            importlib.import_module(module_name).register(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def requested_command(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(requested_command(argv))
    except KeyboardInterrupt:  # Ctrl-C while the command's modules load
        print("nimo: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except NimoError as e:
        print(f"nimo {args.command}: error: {printable(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C: 130; SIGTERM/SIGHUP (exitstatus.Terminated): 128+N
        print(f"nimo {args.command}: interrupted ({interrupt_reason(e)})", file=sys.stderr)
        return 128 + int(getattr(e, "signum", 2))
    except BrokenPipeError:
        _silence_stdout()
        return SIGPIPE_EXIT
    except OSError as e:  # stdout on a full disk, a vanished mount: one line, no traceback
        _silence_stdout()
        what = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else e.strerror or e
        print(f"nimo {args.command}: error: {printable(str(what))}", file=sys.stderr)
        return 2


def _silence_stdout() -> None:
    """The reader of stdout went away (``| head``): point stdout at /dev/null so that the
    interpreter's final flush does not print a second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run() -> None:
    """The console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
