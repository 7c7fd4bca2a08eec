#!/usr/bin/env python3
"""A parallel job over TCP: SHA-256 work items handed out by rank 0 to every task.

Run as the tasks of one Slurm job step (``srun``: ``SLURM_PROCID``/``SLURM_NTASKS``), or
alone (one task). Rank 0 listens on a TCP port and writes ``IP PORT`` to
``RENDEZVOUS/pwork-<job>.addr`` (shared storage); every task, rank 0's own included,
connects, asks for work items, hashes its share of the dataset for each and sends the digest
back. Each task reads the dataset (up to 4 MB of it) from shared storage. The work is
``--work-mb`` MB of hashing split into ``--items`` items, so the run time falls with the
number of nodes (and their CPU share) until start-up and messages dominate. The last stdout
line of rank 0 is a JSON summary. Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

READ_LIMIT = 4 << 20
CONNECT_WAIT_S = 60.0


def load_block(dataset: Path) -> bytes:
    """Up to READ_LIMIT bytes of the dataset's files (sorted), at least 1 byte."""
    files = sorted(p for p in dataset.rglob("*") if p.is_file() and not p.name.startswith("."))
    parts, size = [], 0
    for p in files:
        data = p.read_bytes()[: READ_LIMIT - size]
        parts.append(data)
        size += len(data)
        if size >= READ_LIMIT:
            break
    return b"".join(parts) or b"\0"


def work_item(block: bytes, index: int, mb: float) -> str:
    """Hash ``mb`` MB of ``block`` (repeated), salted by ``index``; the hex digest."""
    h = hashlib.sha256(index.to_bytes(8, "little"))
    left = int(mb * (1 << 20))
    while left > 0:
        chunk = block[:left]
        h.update(chunk)
        left -= len(chunk)
    return h.hexdigest()


def own_address(hint: str | None) -> str:
    """This node's address on the route to ``hint`` (the job's launch node)."""
    if not hint:
        return "127.0.0.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((hint, 9))
        return str(s.getsockname()[0])


def serve(server: socket.socket, items: int, workers: int) -> list[str]:
    """Rank 0: hand out item indices to ``workers`` connections; the digests, in order."""
    digests = [""] * items
    next_item = [0]
    lock = threading.Lock()

    def handle(conn: socket.socket) -> None:
        with conn, conn.makefile("rw") as f:
            for line in f:
                words = line.split()
                if words and words[0] == "RESULT":
                    digests[int(words[1])] = words[2]
                with lock:
                    i = next_item[0]
                    next_item[0] += 1
                f.write(f"ITEM {i}\n" if i < items else "DONE\n")
                f.flush()
                if i >= items:
                    return

    threads = []
    for _ in range(workers):
        conn, _addr = server.accept()
        t = threading.Thread(target=handle, args=(conn,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    return digests


def work(addr: tuple[str, int], block: bytes, mb: float) -> int:
    """A task: ask for items until DONE; the number of items it did."""
    done = 0
    with socket.create_connection(addr, timeout=CONNECT_WAIT_S) as s, s.makefile("rw") as f:
        f.write("READY\n")
        f.flush()
        for line in f:
            words = line.split()
            if words[0] == "DONE":
                break
            i = int(words[1])
            f.write(f"RESULT {i} {work_item(block, i, mb)}\n")
            f.flush()
            done += 1
    return done


def rendezvous(path: Path) -> tuple[str, int]:
    deadline = time.monotonic() + CONNECT_WAIT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"pwork: no rendezvous file {path} after {CONNECT_WAIT_S:g} s")
        time.sleep(0.01)
    host, port = path.read_text().split()
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", type=Path)
    ap.add_argument("--work-mb", type=float, default=1200.0)
    ap.add_argument("--items", type=int, default=96)
    ap.add_argument("--rendezvous", type=Path, default=Path("/tmp"))
    args = ap.parse_args(argv)
    rank = int(os.environ.get("SLURM_PROCID", "0"))
    size = int(os.environ.get("SLURM_NTASKS", "1"))
    job = os.environ.get("SLURM_JOB_ID", str(os.getpid()))
    t0 = time.monotonic()
    block = load_block(args.dataset)
    addr_file = args.rendezvous / f"pwork-{job}.addr"
    mb = args.work_mb / args.items
    if rank != 0:
        work(rendezvous(addr_file), block, mb)
        return 0
    server = socket.create_server(("0.0.0.0", 0), backlog=max(8, size))
    ip = own_address(os.environ.get("SLURM_LAUNCH_NODE_IPADDR"))
    tmp = addr_file.with_suffix(".tmp")
    tmp.write_text(f"{ip} {server.getsockname()[1]}\n")
    tmp.replace(addr_file)
    mine = threading.Thread(target=work, args=(("127.0.0.1", server.getsockname()[1]), block, mb))
    mine.start()
    digests = serve(server, args.items, size)
    mine.join()
    server.close()
    addr_file.unlink(missing_ok=True)
    total = hashlib.sha256("".join(digests).encode()).hexdigest()
    print(json.dumps({"app": "pwork", "tasks": size,
                      "nodes": int(os.environ.get("SLURM_NNODES", "1")),
                      "items": args.items, "work_mb": args.work_mb, "digest": total,
                      "seconds": round(time.monotonic() - t0, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
