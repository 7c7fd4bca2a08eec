"""Value kinds only inventories have: names, interfaces, IP addresses, local files, datasets."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nimo.config import Checker, Kind, Text, plain_path

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
INTERFACE = Text(re.compile(r"^[A-Za-z0-9_.:-]{1,15}$"),
                 "valid: an interface name (max 15 of letters, digits, _ . : -)")
ADDRESS = Text(re.compile(r"^[A-Za-z0-9_.:-]+$"), "valid: a host name or IP address")


@dataclass(frozen=True)
class IpAddress(Kind):
    """An IPv4 or IPv6 address."""

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        text = Text().parse(ck, key, value)
        try:
            ipaddress.ip_address(text)
        except ValueError:
            raise ck.fail(key, f"{text!r} is not an IP address",
                          "valid: e.g. 10.77.1.11") from None
        return text


@dataclass(frozen=True)
class LocalFile(Kind):
    """A file on this machine; a relative path is taken relative to ``base`` (the directory
    of the inventory file) and made absolute."""

    base: Path = field(default_factory=Path)

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        text = plain_path(ck, key, Text().parse(ck, key, value))
        if text.startswith("/"):
            return text
        try:
            return str((self.base / Path(text).expanduser()).resolve())
        except RuntimeError:  # ~user of no user: expanduser cannot tell the home directory
            raise ck.fail(key, f"{text!r}: no such user's home directory",
                          "valid: an absolute path, or one relative to this file") from None


@dataclass(frozen=True)
class DatasetPath(Kind):
    """A path relative to ``storage.export`` that stays inside it (no ``..``)."""

    def parse(self, ck: Checker, key: str, value: Any) -> str:
        text = plain_path(ck, key, Text().parse(ck, key, value))
        if text.startswith("/") or ".." in Path(text).parts:
            raise ck.fail(key, f"{text!r} must be relative to storage.export",
                          "valid: e.g. compress/data.bin, without ..")
        return text
