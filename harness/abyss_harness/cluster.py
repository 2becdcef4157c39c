"""Runs on a Dask cluster (`--cluster ADDRESS`): each run is one task.

The task runs the engine binary on a worker (the binary's path must be the
same there: a shared filesystem is assumed), writes the report to a
temporary file of the worker, and returns its text with the exit code and
message; the local sweep writes the text into its store like any other
run's. `run_remote` uses only the standard library and is sent to the
workers by value, so a worker needs Python and `distributed`, not this
package.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from .runner import Outcome

#: Seconds to wait for the scheduler before giving up (nothing has run yet).
CONNECT_TIMEOUT_S = 5.0


class ClusterError(Exception):
    """The scheduler cannot be reached: bad input, reported in one line (exit 2)."""


def run_remote(binary: str, argv: list[str], timeout_s: float | None) -> tuple[int, str, float, str]:
    """On a worker: `binary ARGV --json TMP`; (exit code, message, seconds, report text)."""
    import os
    import socket
    import subprocess
    import tempfile

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="abyss-run-") as d:
        path = os.path.join(d, "run.json")
        try:
            p = subprocess.run([binary, *argv, "--json", path], capture_output=True, text=True,
                               timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {timeout_s:.0f} s on {socket.gethostname()}", time.monotonic() - t0, ""
        except OSError as e:
            return 127, f"{binary}: {e.strerror} on {socket.gethostname()}", time.monotonic() - t0, ""
        text = ""
        if p.returncode == 0 and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                text = f.read()
        out = "" if p.returncode == 0 else (p.stderr + p.stdout[-4000:])
        return p.returncode, out, time.monotonic() - t0, text


def connect(address: str, timeout_s: float | None = None) -> Any:
    """A `distributed.Client` of the scheduler at `address`, or ClusterError
    (after `timeout_s`, default CONNECT_TIMEOUT_S)."""
    import logging

    timeout_s = CONNECT_TIMEOUT_S if timeout_s is None else timeout_s

    import cloudpickle
    from distributed import Client

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    quiet = [logging.getLogger(n) for n in ("distributed", "distributed.client", "distributed.comm")]
    levels = [lg.level for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.CRITICAL)   # a failed connection is one line of ours, not a traceback
    try:
        return Client(address, timeout=timeout_s, set_as_default=False)
    except Exception as e:  # noqa: BLE001 - OSError, TimeoutError, ValueError for a bad address
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ClusterError(f"--cluster {address}: no Dask scheduler answered within "
                           f"{timeout_s:g} s ({reason})") from None
    finally:
        for lg, level in zip(quiet, levels):
            lg.setLevel(level)


def worker_threads(client: Any) -> int:
    """The threads of the cluster's workers (at least 1): how many runs to keep in flight."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001
        return 1


class ClusterRunner:
    """A RunFn that runs each engine invocation as a task on the cluster."""

    def __init__(self, client: Any, binary: Path, timeout_s: float | None = None) -> None:
        self.client = client
        self.binary = binary
        self.timeout_s = timeout_s

    def __call__(self, argv: list[str], json_path: Path) -> Outcome:
        t0 = time.monotonic()
        try:
            fut = self.client.submit(run_remote, str(self.binary), list(argv), self.timeout_s, pure=False)
            code, out, seconds, text = fut.result()
        except Exception as e:  # noqa: BLE001 - a lost worker, a closed client
            return Outcome(1, f"cluster: {type(e).__name__}: {e}", time.monotonic() - t0)
        if code == 0 and text:
            json_path.write_text(text, encoding="utf-8")
        return Outcome(code, out, seconds)
