"""`abyss serve` from outside: a stock Redis client (redis-py) drives every
command, bad flags are refused before anything is served, SIGTERM stops it
in order, and a kill -9 loses no acknowledged SET (docs/server.md). The
server speaks RESP2: redis-py 8 and later ask for RESP3 unless given
protocol=2."""

from __future__ import annotations

import contextlib
import resource
import selectors
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from abyss_harness import engine

redis = pytest.importorskip("redis")

BINARY = engine.find_binary(sim=False)
needs_binary = pytest.mark.skipif(not BINARY.exists(), reason="needs the release build (./abyss build)")


@contextlib.contextmanager
def served(tmp_path: Path, *flags: str, name: str = "serve",
           before_exec: Callable[[], None] | None = None) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """A server on a port the system picks; stopped with SIGTERM unless the test ended it."""
    port_file = tmp_path / f"{name}.port"
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen(
        [str(BINARY), "serve", "--port", "0", "--port-file", str(port_file), "--threads", "2", *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=before_exec)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            assert proc.poll() is None, f"serve exited {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}"
            assert time.monotonic() < deadline, "serve did not listen within 30 s"
            time.sleep(0.02)
        yield proc, int(port_file.read_text())
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AssertionError("serve did not stop within 30 s of SIGTERM") from None


@needs_binary
def test_redis_py_drives_every_command(tmp_path: Path) -> None:
    with served(tmp_path, "--cc", "tictoc") as (_, port):
        r = redis.Redis(port=port, protocol=2)
        assert r.ping()
        assert r.set("a", "1") and r.get("a") == b"1"
        assert r.set("a", "2", nx=True) is None and r.get("a") == b"1"
        assert r.set("a", "3", xx=True) and r.get("a") == b"3"
        assert r.set("nope", "x", xx=True) is None and r.get("nope") is None
        assert r.incr("a") == 4 and r.incrby("a", 10) == 14 and r.decr("a") == 13 and r.decrby("a", 3) == 10
        assert r.mset({"k1": "v1", "k2": "v2"})
        assert r.mget("k1", "k2", "k3") == [b"v1", b"v2", None]
        assert r.exists("k1", "k2", "k3") == 2
        assert r.delete("k1", "k3") == 1 and r.get("k1") is None
        assert r.info()["cc"] == "tictoc"
        with pytest.raises(redis.ResponseError, match="unsupported protocol"):
            r.execute_command("HELLO", "3")
        with pytest.raises(redis.ResponseError, match="not an integer"):
            r.incr("k2")
        with pytest.raises(redis.ResponseError, match="unknown command"):
            r.execute_command("NOSUCHCOMMAND")
        # MULTI/EXEC through a transactional pipeline: one transaction.
        p = r.pipeline(transaction=True)
        p.incr("n").incrby("n", 5).get("n").set("m", "x")
        assert p.execute() == [1, 6, b"6", True]


@needs_binary
def test_sigterm_stops_in_order_with_everything_durable(tmp_path: Path) -> None:
    log_dir = tmp_path / "log"
    with served(tmp_path, "--cc", "silo", "--log", "file", "--log-dir", str(log_dir)) as (proc, port):
        r = redis.Redis(port=port, protocol=2)
        for i in range(200):
            r.set(f"key{i}", f"value{i}")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "stopped after" in out and "200 transaction(s)" in out, out
    dump = tmp_path / "dump"
    done = subprocess.run([str(BINARY), "recover", str(log_dir), "--dump", str(dump)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    rows = (dump / "kv.csv").read_text()
    assert all(f'"key{i}","value{i}"' in rows for i in range(200))


@needs_binary
@pytest.mark.parametrize("flags, names", [
    (["--port", "70000"], "--port"),
    (["--workload", "ycsb"], "--workload"),
    (["--bind", ""], "--bind"),
    (["--kv-slots", "100", "--keyspace-partitions", "3"], "--kv-slots"),
    (["--port-file", "/nonexistent-dir/port"], "/nonexistent-dir/port"),
    (["--recover"], "--log-dir"),
    (["--bind", "no-such-host.invalid"], "no-such-host.invalid"),
    (["--semantic-drop", "on"], "--schedule contention-aware"),
    (["--schedule", "lifo"], "--schedule"),
    (["--locking", "global"], "--locking"),
    (["--connection-threads", "fiber"], "--connection-threads"),
    (["--connection-threads", "per-connection", "--pin"], "--pin binds the pool's worker i to core i"),
    # Run flags a server has nothing to act on (Knob::not_served).
    (["--duration", "1"], "--duration: abyss serve runs until it is stopped"),
    (["--abort-buffer", "4"], "--abort-buffer"),
    (["--time-sample", "8"], "--time-sample"),
    (["--queries-per-worker", "8"], "--queries-per-worker"),
    (["--json", "/tmp/x.json"], "--json"),
    (["--kv-read-ratio", "0.5"], "--kv-read-ratio: abyss serve sets the keys and values its clients send"),
    # The limits on one client (docs/server.md, "Limits").
    (["--client-query-buffer-limit", "1000"], "--client-query-buffer-limit"),
    (["--client-query-buffer-limit", "1g"], "--client-query-buffer-limit"),
    (["--proto-max-bulk-len", "1024"], "--proto-max-bulk-len"),
    (["--multi-max-commands", "0"], "--multi-max-commands"),
    (["--timeout", "-1"], "--timeout"),
    (["--timeout", "soon"], "--timeout"),
    (["--max-clients", "0"], "--max-clients"),
])
def test_bad_flags_are_refused_with_one_line(flags: list[str], names: str) -> None:
    done = subprocess.run([str(BINARY), "serve", "--port", "0", *flags], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and names in lines[0], done.stderr
    assert "listening" not in done.stdout


@needs_binary
def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with served(tmp_path) as (_, port):
        done = subprocess.run([str(BINARY), "serve", "--port", str(port)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "cannot listen" in done.stderr, done.stderr


def hammer(port: int, client: int, acked: dict[str, int], sent: dict[str, int], stop: threading.Event) -> None:
    """Sets keys of its own to rising numbers until the server dies, noting each value sent and acknowledged."""
    r = redis.Redis(port=port, protocol=2, socket_timeout=10)
    seq = 0
    try:
        while not stop.is_set():
            seq += 1
            key = f"c{client}:{seq % 40}"
            sent[key] = seq
            r.set(key, str(seq))
            acked[key] = seq
    except (redis.ConnectionError, redis.TimeoutError):
        pass


@needs_binary
@pytest.mark.parametrize("scheme", ["silo", "no_wait", "mvcc"])
def test_kill_9_loses_no_acknowledged_set(tmp_path: Path, scheme: str) -> None:
    log_dir = tmp_path / "log"
    acked: dict[str, int] = {}
    sent: dict[str, int] = {}
    stop = threading.Event()
    flags = ["--cc", scheme, "--log", "file", "--log-dir", str(log_dir), "--checkpoint-every-ms", "200"]
    with served(tmp_path, *flags) as (proc, port):
        clients = [threading.Thread(target=hammer, args=(port, c, acked, sent, stop)) for c in range(4)]
        for t in clients:
            t.start()
        time.sleep(1.5)
        proc.kill()  # SIGKILL, in the middle of the clients' writes
        proc.wait()
        stop.set()
        for t in clients:
            t.join()
    assert len(acked) > 0
    # Recovery from the same directory, then every acknowledged value read back.
    with served(tmp_path, "--recover", "--log-dir", str(log_dir), "--log", "file", name="recovered") as (_, port):
        r = redis.Redis(port=port, protocol=2)
        keys = sorted(sent)
        values = r.mget(keys)
    lost = []
    for key, value in zip(keys, values):
        got = int(value) if value is not None else 0
        # A value past the last acknowledged one was sent and may have been
        # made durable before its reply: allowed, but never past what was sent.
        if got < acked.get(key, 0) or got > sent[key]:
            lost.append(f"{key}: acknowledged {acked.get(key)}, sent {sent[key]}, recovered {value!r}")
    assert not lost, lost[:5]


FULL = b"-ERR max number of clients reached"


def first_lines(port: int, clients: int) -> list[bytes]:
    """Opens `clients` connections, each sending PING, and returns each one's first reply line
    (b"(closed)" if the server closed it without one, b"(none)" if nothing came within 30 s)."""
    conns = []
    for _ in range(clients):
        conn = socket.create_connection(("127.0.0.1", port), timeout=30)
        conn.sendall(b"PING\r\n")
        conn.setblocking(False)
        conns.append(conn)
    lines = [b"(none)"] * clients
    got = [b""] * clients
    waiting = selectors.DefaultSelector()
    for i, conn in enumerate(conns):
        waiting.register(conn, selectors.EVENT_READ, i)
    left = clients
    deadline = time.monotonic() + 30
    while left > 0 and time.monotonic() < deadline:
        for key, _ in waiting.select(timeout=0.5):
            i = key.data
            try:
                data = key.fileobj.recv(4096)
            except ConnectionResetError:
                data = b""
            got[i] += data
            if b"\r\n" in got[i] or not data:
                lines[i] = got[i].split(b"\r\n")[0] if b"\r\n" in got[i] else b"(closed)"
                waiting.unregister(key.fileobj)
                left -= 1
    for conn in conns:
        conn.close()
    return lines


@needs_binary
@pytest.mark.parametrize("lowered_while_serving", [False, True])
def test_clients_past_the_descriptor_limit_are_refused_not_left_waiting(tmp_path: Path,
                                                                        lowered_while_serving: bool) -> None:
    """2,000 clients against a server whose descriptor limit is 1,024, soft and hard: it lowers
    --max-clients (10,000) to what fits and says so, and every client is served or told
    `-ERR max number of clients reached`, none left waiting. Lowered to 256 while it serves, the
    server runs out of descriptors below --max-clients: it refuses the rest all the same."""
    clients = 2000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < clients + 100:
        if hard != resource.RLIM_INFINITY and hard < clients + 100:
            pytest.skip(f"this test's own {clients} connections need a descriptor limit past {clients + 100}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (clients + 100, hard))

    def at_1024() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    with served(tmp_path, before_exec=at_1024) as (proc, port):
        if lowered_while_serving:
            resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (256, 1024))
        lines = first_lines(port, clients)
        assert proc.poll() is None, "the server exited"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    odd = [line for line in lines if line not in (b"+PONG", FULL)]
    assert not odd, f"{len(odd)} of {clients} connections got neither +PONG nor the refusal: {sorted(set(odd))[:5]}"
    served_count = lines.count(b"+PONG")
    assert 0 < served_count < clients and lines.count(FULL) == clients - served_count
    assert "maxclients lowered to " in err, err
    lowered = int(err.split("maxclients lowered to ")[1].split()[0])
    assert lowered < 1024
    if lowered_while_serving:
        assert served_count < 256
    else:
        assert served_count == lowered
    # The stop line counts the refusals.
    assert f"  clients       {clients - served_count} refused" in out, out
