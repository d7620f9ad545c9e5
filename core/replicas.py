"""Several Streamlit processes behind HAProxy on one machine (``serve.py --replicas N``).

One Streamlit process runs every visitor's script under one interpreter lock; a second
process on a second core halves a class's wait (issue 24's table). :class:`ReplicaSet`
starts ``n`` replicas of ``serve.py`` on loopback ports and HAProxy on the public address, and
keeps them running:

* **Stickiness.** Streamlit keeps a visitor's session, uploaded files and generated
  downloads (``/media/…``) in the process that served them, so every request of a browser
  must reach the same replica: HAProxy inserts the cookie :data:`COOKIE` naming it
  (``cookie … insert indirect nocache httponly``); a new visitor goes to the replica with the
  fewest connections (``balance leastconn``).
* **Health.** HAProxy asks each replica's :data:`HEALTH_PATH` every second and stops sending
  visitors to one that fails twice; ``option redispatch`` sends a visitor whose replica is
  down to another one, where the browser's automatic reconnect opens a new session (the pages
  keep their state in the URL, so the view comes back).
* **Restarts.** A replica that exits is started again (after :data:`RESTART_DELAY` seconds,
  at most :data:`MAX_RESTARTS` times in :data:`RESTART_WINDOW` seconds); so is HAProxy.
* **One secret.** Every replica gets the same ``STREAMLIT_SERVER_COOKIE_SECRET`` (yours, or
  one drawn at start): the cookies Streamlit signs with it (its session and login cookies)
  must be accepted by whichever replica a visitor lands on after a move.

Nothing here imports Streamlit; ``serve.py`` parses the command line and calls
:meth:`ReplicaSet.run`. HAProxy comes from Debian's ``haproxy`` package (2.6); without it
``serve.py`` runs one process and says so in one line.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "COOKIE",
    "HEALTH_PATH",
    "MALLOC_ARENAS",
    "MAX_RESTARTS",
    "REPLICA_CAP",
    "RESTART_DELAY",
    "RESTART_WINDOW",
    "ReplicaSet",
    "ServerArgs",
    "haproxy_config",
    "resolve_replicas",
    "split_server_args",
    "workers_per_replica",
]

#: The cookie HAProxy inserts to keep a browser on one replica.
COOKIE = "ARBITER_REPLICA"
#: Streamlit's health endpoint, asked by HAProxy, Docker and Kubernetes alike.
HEALTH_PATH = "/_stcore/health"
#: ``MALLOC_ARENA_MAX`` of every replica (and of ``serve.py``'s own server, the Docker
#: image and the deploy manifests) unless the environment sets it: glibc's heaps per process.
MALLOC_ARENAS = 2
#: ``--replicas auto`` (the Docker image, ``make run``): one per core, at most this many. Each
#: replica holds its own caches (about 1 GB at 40 sessions, README "Deploy").
REPLICA_CAP = 4
#: Seconds before a replica that exited is started again.
RESTART_DELAY = 1.0
#: At most :data:`MAX_RESTARTS` restarts of one process within :data:`RESTART_WINDOW` seconds;
#: then the set stops (something is wrong that a restart will not mend).
MAX_RESTARTS = 5
RESTART_WINDOW = 300.0


def resolve_replicas(value: str | int | None, *, cores: int | None = None) -> int:
    """The replica count of ``--replicas`` / ``ARBITER_REPLICAS``.

    ``None`` or ``""`` → 1; ``"auto"`` → ``min(cores, REPLICA_CAP)``; else an integer from 1
    to :data:`REPLICA_CAP` × 4. Raises ``ValueError`` with a one-line message otherwise.

    >>> resolve_replicas("auto", cores=2), resolve_replicas("3"), resolve_replicas(None)
    (2, 3, 1)
    """
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if value is None or (isinstance(value, str) and not value.strip()):
        return 1
    if isinstance(value, str) and value.strip().lower() == "auto":
        return max(1, min(cores, REPLICA_CAP))
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValueError(f"replicas must be a whole number or 'auto', got {str(value)[:40]!r}"
                         ) from None
    if not 1 <= n <= 4 * REPLICA_CAP:
        raise ValueError(f"replicas must be from 1 to {4 * REPLICA_CAP}, got {n}")
    return n


def workers_per_replica(n: int, *, cores: int | None = None) -> int:
    """``ARBITER_WORKERS`` of each of ``n`` replicas: the cores shared out, at least 1 and at
    most 2 (one replica keeps ``serve.py``'s own default of min(2, cores))."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, min(2, cores // max(1, n)))


@dataclass(frozen=True)
class ServerArgs:
    """Streamlit's address and port from ``serve.py``'s arguments, and the other arguments."""

    address: str
    port: int
    rest: tuple[str, ...]


_OPTIONS = {"--server.port": "port", "--server.address": "address"}


def split_server_args(argv: Sequence[str]) -> ServerArgs:
    """Take ``--server.port`` and ``--server.address`` (``=value`` or a separate value) out of
    ``argv``; defaults 8501 and 0.0.0.0 (HAProxy binds the public side; Streamlit's own
    default binds every address too). Raises ``ValueError`` for a port
    that is not an integer from 1 to 65535 or an option without its value."""
    found: dict[str, str] = {}
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in _OPTIONS:
            if not eq:
                if i + 1 >= len(args):
                    raise ValueError(f"{name} needs a value")
                value = args[i + 1]
                i += 1
            found[_OPTIONS[name]] = value
        else:
            rest.append(arg)
        i += 1
    try:
        port = int(found.get("port", "8501"))
    except ValueError:
        raise ValueError(f"--server.port must be a whole number, got {found['port'][:20]!r}"
                         ) from None
    if not 1 <= port <= 65535:
        raise ValueError(f"--server.port must be from 1 to 65535, got {port}")
    return ServerArgs(found.get("address", "0.0.0.0") or "0.0.0.0", port, tuple(rest))


def haproxy_config(*, address: str, port: int, backends: Sequence[tuple[str, int]],
                   check_interval_ms: int = 1000) -> str:
    """HAProxy 2.6's configuration for ``backends`` (name, loopback port) behind
    ``address:port`` (module docstring: stickiness, health, redispatch).

    Websockets stay open for an hour of silence (``timeout tunnel``); the response header
    ``X-Arbiter-Replica`` names the replica that answered (tests and debugging).
    """
    if not backends:
        raise ValueError("haproxy_config needs at least one backend")
    bind = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    servers = "\n".join(
        f"    server {name} 127.0.0.1:{p} check cookie {name}" for name, p in backends)
    return f"""\
# written by serve.py --replicas (core/replicas.py); regenerated at every start
global
    maxconn 4096

defaults
    mode http
    option http-server-close
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    timeout http-request 10s
    # a replica busy with a long computation answers its health check late, not never:
    # 4 s per check and 3 misses in a row before it counts as down (a dead one refuses the
    # connection at once and its visitors are redispatched by the retries below)
    timeout check 4s
    retries 3
    option redispatch

frontend arbiter
    bind {bind}
    default_backend replicas

backend replicas
    balance leastconn
    cookie {COOKIE} insert indirect nocache httponly
    option httpchk GET {HEALTH_PATH}
    http-check expect status 200
    default-server inter {check_interval_ms} fall 3 rise 1
    http-response set-header X-Arbiter-Replica %[srv_name]
{servers}
"""


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{HEALTH_PATH}", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@dataclass
class _Proc:
    """One supervised process: its command, environment and restart history."""

    name: str
    cmd: list[str]
    env: dict[str, str]
    proc: subprocess.Popen | None = None
    starts: list[float] = field(default_factory=list)

    def start(self, cwd: Path) -> None:
        self.starts.append(time.monotonic())
        self.proc = subprocess.Popen(self.cmd, cwd=cwd, env=self.env, start_new_session=True)

    def stop(self, grace: float = 10.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


class ReplicaSet:
    """``n`` replicas of ``serve.py`` and HAProxy in front (module docstring).

    Parameters
    ----------
    n : replicas (at least 2; one process needs no proxy).
    server : the public address and port, and the other Streamlit options, passed to every
        replica (:func:`split_server_args`).
    root : the repository (``serve.py``'s folder).
    haproxy : the HAProxy binary.
    say : where the one-line status messages go.
    env : the replicas' environment (default ``os.environ``).
    """

    def __init__(self, n: int, server: ServerArgs, *, root: Path, haproxy: str,
                 say: Callable[[str], None], env: dict[str, str] | None = None) -> None:
        if n < 2:
            raise ValueError(f"a replica set needs at least 2 replicas, got {n}")
        self.n, self.server, self.root, self.haproxy, self.say = n, server, root, haproxy, say
        base = dict(os.environ if env is None else env)
        base.setdefault("ARBITER_WORKERS", str(workers_per_replica(n)))
        # glibc gives each thread that allocates its own heap ("arena"), up to 8 per core;
        # a replica's dozens of session threads then keep freed memory in many half-empty
        # heaps. Two arenas cut a replica's memory under load (README "Measured").
        base.setdefault("MALLOC_ARENA_MAX", str(MALLOC_ARENAS))
        # Streamlit takes the secret from its environment only (not from the command line)
        base.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
        self.ports = [_free_port() for _ in range(n)]
        self.replicas = [
            _Proc(f"r{i}", [sys.executable, str(root / "serve.py"), "--replicas", "1",
                            f"--server.port={p}", "--server.address=127.0.0.1",
                            *server.rest],
                  {**base, "ARBITER_REPLICAS": "1", "ARBITER_REPLICA_NAME": f"r{i}"})
            for i, p in enumerate(self.ports)]
        self._folder = Path(tempfile.mkdtemp(prefix="arbiter-haproxy-"))
        self.config = self._folder / "haproxy.cfg"
        self.config.write_text(haproxy_config(
            address=server.address, port=server.port,
            backends=[(r.name, p) for r, p in zip(self.replicas, self.ports, strict=True)]))
        self.proxy = _Proc("haproxy", [haproxy, "-f", str(self.config), "-db"], base)
        self._stopping = False

    def check_config(self) -> None:
        """``haproxy -c`` on the written configuration; ``RuntimeError`` with its first
        complaint when HAProxy refuses it."""
        done = subprocess.run([self.haproxy, "-c", "-f", str(self.config)],
                              capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            lines = [ln for ln in (done.stderr + done.stdout).splitlines() if "ALERT" in ln]
            raise RuntimeError((lines or ["haproxy refused its configuration"])[0][:300])

    def _restart_if_dead(self, p: _Proc) -> bool:
        """Start ``p`` again if it exited; False when it restarted too often."""
        if p.proc is None or p.proc.poll() is None:
            return True
        now = time.monotonic()
        recent = [t for t in p.starts if now - t < RESTART_WINDOW]
        if len(recent) > MAX_RESTARTS:
            self.say(f"{p.name} exited {len(recent)} times in {RESTART_WINDOW:.0f} s "
                     f"(last status {p.proc.returncode}); stopping")
            return False
        self.say(f"{p.name} exited (status {p.proc.returncode}); starting it again")
        try:  # what it started (its worker pool's processes) goes with it
            os.killpg(p.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        time.sleep(RESTART_DELAY)
        p.start(self.root)
        if p is not self.proxy:
            self.say(f"replica {p.name} on 127.0.0.1:{self.ports[self.replicas.index(p)]} "
                     f"(pid {p.proc.pid})")
        return True

    def stop(self, *_args) -> None:
        """Stop HAProxy, then every replica (SIGTERM to each process group, then SIGKILL)."""
        self._stopping = True

    def _shutdown(self) -> None:
        self.proxy.stop()
        for r in self.replicas:
            r.stop()
        shutil.rmtree(self._folder, ignore_errors=True)

    def run(self, *, poll: float = 0.5, ready_timeout: float = 900.0) -> int:
        """Start everything, supervise until :meth:`stop` (SIGTERM/SIGINT) or a process that
        keeps dying; returns the exit status (0 after a stop, 1 otherwise)."""
        self.check_config()
        for r, p in zip(self.replicas, self.ports, strict=True):
            r.start(self.root)
            self.say(f"replica {r.name} on 127.0.0.1:{p} (pid {r.proc.pid})")
        try:
            deadline = time.monotonic() + ready_timeout
            while not any(_healthy(p) for p in self.ports):  # HAProxy opens with the first
                if self._stopping:
                    return 0
                if all(r.proc.poll() is not None for r in self.replicas) or \
                        time.monotonic() > deadline:
                    self.say("no replica became ready; stopping")
                    return 1
                time.sleep(poll)
            self.proxy.start(self.root)
            self.say(f"HAProxy on {self.server.address}:{self.server.port} in front of "
                     f"{self.n} replicas (cookie {COOKIE}, health {HEALTH_PATH})")
            while not self._stopping:
                for p in (self.proxy, *self.replicas):
                    if not self._stopping and not self._restart_if_dead(p):
                        return 1
                time.sleep(poll)
            return 0
        finally:
            self._shutdown()
