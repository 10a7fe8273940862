"""What the load benchmarks share: their PostgreSQL database, the server environment, gunicorn as
documented, CPU time per process group, percentiles and an open-loop load generator."""

import contextlib
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def open_loop(*, rate: float, duration: float, seed: int, clients: "queue.Queue", send, in_flight: int = 64) -> dict:
    """Requests arriving at random (a Poisson process of ``rate`` per second) for ``duration`` s.

    A team of people produces arrivals that do not wait for the server: a closed loop (each client
    sends again when answered) slows down with the server and hides its queueing. Each arrival
    takes an idle client from ``clients`` (a person with a page in front of them) and calls
    ``send(client)``, which returns ``(ok, error, client)``: the client goes back to the pool
    unless it is None (nothing left for it). Latency runs from the arrival's scheduled instant,
    so the time an arrival waits for a free client or thread is counted, not hidden.
    """
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(seed)
    latencies, errors, lag, lock = [], [], [], threading.Lock()
    by_arrival = []  # (seconds into the window, latency): shows whether the slow answers come together

    def arrive(scheduled: float) -> None:
        try:
            client = clients.get(timeout=max(duration, 30.0))
        except queue.Empty:
            with lock:
                errors.append("no client left with a page open (every queue ran out)")
            return
        try:
            ok, error, client = send(client)
        except Exception as exc:  # a dropped connection is an error of this arrival, not the run's end
            ok, error, client = False, f"{type(exc).__name__}: {exc}", None
        took = time.perf_counter() - scheduled
        if client is not None:
            clients.put(client)
        with lock:
            (latencies.append(took) if ok else errors.append(error))
            if ok:
                by_arrival.append((scheduled - begin, took))

    offered = 0
    begin = time.perf_counter()
    scheduled = begin
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        while True:
            scheduled += rng.expovariate(rate)
            if scheduled - begin > duration:
                break
            time.sleep(max(0.0, scheduled - time.perf_counter()))
            lag.append(time.perf_counter() - scheduled)
            pool.submit(arrive, scheduled)
            offered += 1
    elapsed = time.perf_counter() - begin
    done = len(latencies)
    return {
        "offered": offered,
        "offered_rate": offered / duration,
        "answers": done,
        # Over the window (or longer, when the last answers come after it): the same time base as
        # the offered rate, so a server that keeps up serves what was offered and never more.
        "rate": done / max(elapsed, duration) if duration > 0 else 0.0,
        "p50": percentile(latencies, 0.50) if done else float("nan"),
        "p95": percentile(latencies, 0.95) if done else float("nan"),
        "max": max(latencies, default=float("nan")),
        "errors": len(errors),
        "error_sample": errors[:3],
        # How late the generator itself sent (a busy client machine): large values void the run.
        "generator_lag_p95": percentile(lag, 0.95) if lag else 0.0,
        # p95 of the answers arriving in each 5 s of the window: a tail from queueing at random
        # spreads over them all, one from something else on the machine (a background job, the
        # database's autovacuum) stands out in one or two.
        "p95_by_slice": slice_percentiles(by_arrival, width=5.0, q=0.95),
    }


def slice_percentiles(pairs: list[tuple[float, float]], *, width: float, q: float) -> list[float]:
    """The ``q`` percentile of the values of ``(instant, value)`` pairs, per ``width`` seconds of instants."""
    slices: dict[int, list[float]] = {}
    for instant, value in pairs:
        slices.setdefault(int(instant // width), []).append(value)
    return [percentile(slices[i], q) if i in slices else float("nan") for i in range(max(slices, default=-1) + 1)]


# --- PostgreSQL ------------------------------------------------------------------------------


def _connect_kwargs(url: str, dbname: str) -> dict:
    parsed = urlparse(url)
    kwargs = {"host": parsed.hostname or "127.0.0.1", "port": parsed.port or 5432, "dbname": dbname}
    if parsed.username:
        kwargs["user"] = parsed.username
    if parsed.password:
        kwargs["password"] = parsed.password
    return kwargs


def ensure_database(url: str) -> bool:
    """Create the benchmark database when missing; False when PostgreSQL does not answer."""
    import psycopg
    from psycopg import sql

    name = urlparse(url).path.lstrip("/")
    if not name:
        raise SystemExit(f"--database-url must name a database: {url}")
    try:
        connection = psycopg.connect(**_connect_kwargs(url, "postgres"), connect_timeout=3, autocommit=True)
    except psycopg.OperationalError as exc:
        print(f"skipped: PostgreSQL is unreachable at {url} ({str(exc).strip().splitlines()[0]})")
        return False
    with connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")
    return True


def server_env(url: str, var_dir: str) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_ENV": "development",
        "DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "vivid_site.settings",
        "VIVID_VAR_DIR": var_dir,
        "LOG_LEVEL": "WARNING",
    }
    env.pop("VIVID_TEST_SQLITE", None)
    return env


def migrate(env: dict) -> None:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if result.returncode:
        print(result.stdout[-2000:], result.stderr[-4000:], sep="\n")
        raise SystemExit("migrate failed")
    print(f"migrated in {time.perf_counter() - started:.1f} s")


# --- servers -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def group_cpu_seconds(pgid: int) -> float:
    """CPU time (user + system, with reaped children) of every process in a process group."""
    return sum(group_cpu_by_process(pgid).values())


def group_cpu_by_process(pgid: int) -> dict[int, float]:
    """Each process of a process group: its CPU time (user + system, with reaped children)."""
    seconds = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: split after it.
        fields = raw[raw.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:  # field 5 of stat: the process group
            seconds[int(entry)] = sum(int(v) for v in fields[11:15]) / TICKS  # utime, stime, cutime, cstime
    return seconds


def machine_cpu_seconds() -> tuple[float, float]:
    """The machine's busy and total CPU seconds so far, every core (the first line of /proc/stat)."""
    with open("/proc/stat") as stat:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in stat.readline().split()[1:9])
    busy = user + nice + system + irq + softirq + steal
    return busy / TICKS, (busy + idle + iowait) / TICKS


class Spread:
    """How the cores were used between ``start()`` and ``stop()``: the machine's busy share, and the
    share of the servers' CPU that their busiest process did. A server whose work piles on one
    process leaves cores idle however many it has (gthread workers holding every kept-alive
    connection in one process did: README, "Sync workers")."""

    def __init__(self, servers):
        self.servers = servers

    def start(self) -> "Spread":
        self._machine = machine_cpu_seconds()
        self._processes = self._by_process()
        return self

    def stop(self) -> str:
        busy, total = (after - before for after, before in zip(machine_cpu_seconds(), self._machine, strict=True))
        used = {pid: cpu - self._processes.get(pid, 0.0) for pid, cpu in self._by_process().items()}
        spent = sum(used.values())
        busiest = max(used.values()) / spent if spent else 0.0
        return f"the cores busy {100 * busy / total if total else 0:.0f} % of the run; " + (
            f"the busiest of the server's {len(used)} processes did {100 * busiest:.0f} % of their CPU"
            if len(used) > 1
            else "the server is one process"
        )

    def _by_process(self) -> dict[int, float]:
        return {pid: cpu for server in self.servers for pid, cpu in server.cpu_by_process().items()}


class Server:
    """A server in its own process group, so stopping it stops its workers and CPU is counted per group."""

    def __init__(self, command: list[str], *, cwd: Path, env: dict, port: int, ready_path: str):
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.ready_path = ready_path
        # Open for the server's lifetime and closed in stop(): no with-block can span it.
        self.log = tempfile.NamedTemporaryFile(prefix="vivid-bench-server-", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, timeout: float = 120) -> None:
        import requests

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                requests.get(self.base + self.ready_path, timeout=2)
                return
            except requests.RequestException:
                time.sleep(0.3)
        raise SystemExit(f"server did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def cpu(self) -> float:
        return group_cpu_seconds(self.process.pid)

    def cpu_by_process(self) -> dict[int, float]:
        return group_cpu_by_process(self.process.pid)

    def log_tail(self, n: int = 4000) -> str:
        return Path(self.log.name).read_text(errors="replace")[-n:]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        self.log.close()


def gunicorn(env: dict, *, workers: int | None = None, threads: int | None = None) -> Server:
    """gunicorn as the README's Production section runs it (``gunicorn.conf.py``) on a free loopback port.

    Only the address differs from the documented deployment, unless workers or threads are given.
    """
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "vivid_site.wsgi", "-c", "gunicorn.conf.py",
               "--bind", f"127.0.0.1:{port}"]  # fmt: skip
    if workers is not None:
        command += ["--workers", str(workers)]
    if threads is not None:
        command += ["--threads", str(threads)]
    return Server(command, cwd=ROOT, env=env, port=port, ready_path="/accounts/login/")
