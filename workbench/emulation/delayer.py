#!/usr/bin/env python3
"""nimo-delayer: hold every packet of one NFQUEUE for a fixed delay (FIFO), then accept it.

Standalone (stdlib + NetfilterQueue); the workbench copies it to a host and runs it there.
Used where the kernel has no netem: an iptables mangle PREROUTING rule on the receiving side
sends packets to ``--queue`` with ``--queue-bypass`` (so a dead delayer never black-holes the
link). Dies with its SSH session (PR_SET_PDEATHSIG); on SIGTERM it releases held packets.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import ctypes
import os
import select
import signal
import sys
import time

from netfilterqueue import COPY_META, NetfilterQueue

PR_SET_PDEATHSIG = 1


class Stop(Exception):
    """Raised by the SIGTERM/SIGINT handler."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="nimo-delayer")
    ap.add_argument("--queue", type=int, required=True)
    ap.add_argument("--delay-ms", type=float, required=True)
    ap.add_argument("--max-len", type=int, default=65536)
    ap.add_argument("--pidfile")
    args = ap.parse_args(argv)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    delay = args.delay_ms / 1000.0
    held: collections.deque = collections.deque()

    def stop(*_: object) -> None:  # raising interrupts select() at once
        raise Stop

    def hold(pkt) -> None:  # FIFO: arrival order = release order, so no reordering
        held.append((time.monotonic() + delay, pkt))

    nfq = NetfilterQueue()
    nfq.bind(args.queue, hold, max_len=args.max_len, mode=COPY_META)
    if args.pidfile:
        with open(args.pidfile, "w") as f:
            f.write(f"{os.getpid()}\n")
    print(f"nimo-delayer ready queue={args.queue} delay_ms={args.delay_ms}", flush=True)
    fd = nfq.get_fd()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        while True:
            now = time.monotonic()
            while held and held[0][0] <= now:
                held.popleft()[1].accept()
            wait = max(0.0, held[0][0] - now) if held else 1.0
            ready, _, _ = select.select([fd], [], [], wait)
            if ready:
                nfq.run(block=False)
    except Stop:
        pass
    finally:
        while held:
            held.popleft()[1].accept()
        nfq.unbind()
        if args.pidfile:
            with contextlib.suppress(OSError):
                os.unlink(args.pidfile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
