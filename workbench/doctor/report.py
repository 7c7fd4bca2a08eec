"""The doctor's findings as a table (rich when installed and stdout is a terminal, plain
text otherwise) or JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TextIO

from workbench.doctor.run import Finding, blockers, warnings

MARK = {"ok": "ok", "warn": "WARN", "blocker": "BLOCKER"}


def as_json(findings: Sequence[Finding]) -> str:
    hosts: dict[str, list[dict[str, str]]] = {}
    for f in findings:
        hosts.setdefault(f.host, []).append(f.to_dict())
    return json.dumps({"hosts": hosts, "blockers": len(blockers(findings)),
                       "warnings": len(warnings(findings)),
                       "ok": not blockers(findings)}, indent=2)


def plain_table(findings: Sequence[Finding]) -> str:
    wh = max([4, *(len(f.host) for f in findings)])
    wc = max([5, *(len(f.check) for f in findings)])
    lines = [f"{'host':<{wh}}  {'check':<{wc}}  {'result':<7}  detail"]
    lines += [f"{f.host:<{wh}}  {f.check:<{wc}}  {MARK[f.level]:<7}  {f.detail}"
              for f in findings]
    return "\n".join(lines)


def verdict_line(findings: Sequence[Finding]) -> str:
    b, w = blockers(findings), warnings(findings)
    hosts = len({f.host for f in findings})
    if b:
        return (f"{len(b)} blocker(s) on {len({f.host for f in b})} of {hosts} host(s); "
                f"{len(w)} warning(s): campaigns on this inventory would fail")
    return f"{hosts} host(s) ready; {len(w)} warning(s)"


def print_table(findings: Sequence[Finding], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if getattr(out, "isatty", lambda: False)():
        try:
            from rich.console import Console
            from rich.table import Table
        except ModuleNotFoundError:
            pass
        else:
            style = {"ok": "green", "warn": "yellow", "blocker": "bold red"}
            table = Table("host", "check", "result", "detail")
            for f in findings:
                table.add_row(f.host, f.check, f"[{style[f.level]}]{MARK[f.level]}[/]",
                              f.detail)
            console = Console(file=out)
            console.print(table)
            console.print(verdict_line(findings))
            return
    print(plain_table(findings), file=out)
    print(verdict_line(findings), file=out)
