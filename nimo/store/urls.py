"""Store URLs: the default, the driver PostgreSQL URLs go through, checks with one-line errors
and masking passwords.

A URL is shown only through :func:`mask_url`: its password (and a ``password=`` query
parameter) becomes ``***``. The user part ends at the LAST ``@`` before the path, so a
password with an unescaped ``@`` is hidden whole, never partly shown as a host.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote, unquote

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from nimo.errors import StoreError
from nimo.store.default import DEFAULT_URL

FORMS = ("valid: sqlite:///FILE or postgresql://USER:PASSWORD@HOST:PORT/DB "
         "(write @ : / in a password as %40 %3A %2F)")
_QUERY_PASSWORD = re.compile(r"(?i)((?:^|&)password=)[^&]*")
IN_MEMORY = ("", ":memory:")


def default_url() -> str:
    """``$NIMO_STORE_URL`` or the SQLite file ``./nimo.db`` next to the user's work."""
    return os.environ.get("NIMO_STORE_URL") or DEFAULT_URL


def mask_url(url: str) -> str:
    """The URL with its password (and any ``password=`` parameter) replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:  # not a URL: whatever precedes an @ may be a password
        return f"***{url[url.rfind('@'):]}" if "@" in url else url
    rest, qsep, query = rest.partition("?")
    query = _QUERY_PASSWORD.sub(r"\1***", query)
    at = rest.rfind("@")
    if at >= 0 and not rest.startswith("/"):  # sqlite:///path has no user part
        user, colon, _ = rest[:at].partition(":")
        rest = f"{user}:***{rest[at:]}" if colon else rest
    return f"{scheme}://{rest}{qsep}{query}"


def password_of(url: str) -> str:
    """The password part of ``url`` as written ('' if none), by :func:`mask_url`'s rule."""
    rest = url.partition("://")[2].partition("?")[0]
    at = rest.rfind("@")
    if at < 0 or rest.startswith("/"):
        return ""
    return rest[:at].partition(":")[2]


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's message) with ``url``'s password, raw or URL-decoded, hidden."""
    secret = password_of(url)
    for form in {secret, unquote(secret)} - {""}:
        text = text.replace(form, "***")
    return text


def normalise_url(url: str) -> str:
    """``url`` checked (:func:`check_url`), with ``postgresql://`` and ``postgres://`` going
    through the psycopg 3 driver."""
    check_url(url)
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def check_url(url: str) -> None:
    """``StoreError`` (one line, password masked) unless ``url`` parses as a store URL: a
    scheme, a numeric port, no unescaped ``@`` left in the host."""
    shown = mask_url(url)
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"malformed store URL {shown!r}", hint=FORMS) from None
    except ValueError:
        port = _raw_port(url)
        raise StoreError(f"malformed store URL {shown}: port {port!r} is not a number",
                         hint=FORMS) from None
    if "@" in (parsed.host or ""):
        raise StoreError(f"malformed store URL {shown}: an unescaped @ in the user or "
                         "password", hint=FORMS)
    if parsed.get_backend_name() not in ("sqlite", "postgresql", "postgres"):
        raise StoreError(f"unsupported store URL {shown}: scheme {parsed.drivername!r}",
                         hint=FORMS)
    database = parsed.database or ""
    if (parsed.get_backend_name() == "sqlite" and database not in IN_MEMORY
            and not database.startswith("file:") and not Path(database).parent.is_dir()):
        raise StoreError(f"store {shown}: directory {Path(database).parent} does not exist",
                         hint=f"create it first: mkdir -p {Path(database).parent}")


def _raw_port(url: str) -> str:
    """The text after the host's ``:`` (what ``make_url`` failed to read as a port)."""
    authority = url.partition("://")[2].split("?")[0]
    host = authority[authority.rfind("@") + 1 :].split("/")[0]
    return host.rpartition(":")[2]


def is_in_memory(url: str) -> bool:
    """Whether ``url`` is an in-memory SQLite store (``sqlite://``, ``sqlite:///:memory:``)."""
    try:
        parsed = make_url(normalise_url(url))
    except StoreError:
        return False
    return parsed.get_backend_name() == "sqlite" and (parsed.database or "") in IN_MEMORY


def refuse_in_memory(url: str | None) -> None:
    """``StoreError`` for an in-memory store (None: ``default_url()``) where a campaign must
    persist (run, submit, serve): it would vanish with the process, never resumed or shown."""
    url = default_url() if url is None else url
    if is_in_memory(url):
        raise StoreError(f"store {mask_url(url)} is in memory: a campaign there is lost when "
                         "this process ends", hint="use a file (sqlite:///nimo.db) or "
                         "PostgreSQL (postgresql://USER@HOST/DB)")


def refuse_missing_file(url: str, shown: str) -> None:
    """``StoreError`` when ``url`` is a SQLite file that does not exist, or an in-memory
    store (read-only commands must not create an empty store at a mistyped path)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return
    if parsed.get_backend_name() != "sqlite":
        return
    if (parsed.database or "") in IN_MEMORY:
        raise StoreError(f"no store at {shown}: an in-memory store is always empty",
                         hint="check --store or $NIMO_STORE_URL")
    if not Path(parsed.database or "").is_file():
        raise StoreError(f"no store at {shown}: {parsed.database} does not exist",
                         hint="check --store or $NIMO_STORE_URL")


def reader_uri(url: str, shown: str) -> str | None:
    """How a reader opens the SQLite store file of ``url`` that this user may not write
    (None: as usual): ``mode=ro``, so that SQLite writes nothing. A write-ahead-logged file
    that no process has open (no ``-shm``) is read ``immutable``: else SQLite would create
    a ``-shm`` and ``-wal`` beside it, owned by this user, that lock its owner out. An
    unfolded log there is refused (``immutable`` would not read it)."""
    database = _file_of(url)
    if database is None or os.access(database, os.W_OK) or not os.access(database, os.R_OK):
        return None  # SQLite reports an unreadable file in its own words
    uri = f"file:{quote(str(Path(database).resolve()))}?mode=ro"
    if Path(f"{database}-shm").exists() or not _is_wal(database):
        return uri
    if any(_holds_data(f"{database}{end}") for end in ("-wal", "-journal")):
        raise StoreError(f"cannot read store {shown}: this user may not write it, and its "
                         "log holds data that only a writer can fold in",
                         hint="read it as its owner, or have the owner open it once")
    return uri + "&immutable=1"


def _file_of(url: str) -> str | None:
    """The file of a SQLite ``url`` (None: another backend, in memory or a SQLite URI)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return None
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in IN_MEMORY:
        return None
    return None if database.startswith("file:") else database


def _is_wal(database: str) -> bool:
    """Whether the SQLite file is in write-ahead-log mode (header byte 18 is 2)."""
    with open(database, "rb") as f:
        header = f.read(20)
    return len(header) == 20 and header[18] == 2


def _holds_data(path: str) -> bool:
    return os.path.isfile(path) and os.path.getsize(path) > 0


def create_private_file(url: str) -> None:
    """Create a new SQLite store file readable by its owner only (0600) before SQLite
    creates it with the default umask (journal and WAL files follow its mode); an existing
    file and other backends are left as they are."""
    database = _file_of(url)
    if database is None:  # another backend, in memory, or a SQLite URI SQLite opens itself
        return
    try:
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return
    except OSError:
        return  # SQLite reports a missing directory or no permission in its own words
