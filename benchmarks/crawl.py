"""Benchmark the crawl and the snapshot write against the simulator served with latency.

    .venv/bin/python benchmarks/crawl.py --services 1000 --latency-ms 20 --concurrency 16 --json
    .venv/bin/python benchmarks/crawl.py --services 10000 --latency-ms 0 --skip-sequential --json

Three processes, so each figure measures one thing:

- the simulator runs as ``platform-audit sim serve --faults latency_ms=L`` in a subprocess
  (its memory is not counted and its event loop does not compete for this one's GIL);
- a fresh child process (``multiprocessing`` spawn) does only ``take_snapshot``: the crawl
  with ``rate_per_minute=None`` and concurrency C, then the write to a temporary store. Its
  ``ru_maxrss`` is the peak RSS of crawl plus write, and its CPU time is the client's alone
  (``cpu_per_call_ms``): the simulator's is counted apart (``simulator_cpu_s``);
- this process then replays the crawl's planned calls one after another with one blocking
  ``httpx.Client``: the sequential baseline the crawl is compared with.

The lower bound of a crawl is ``max(critical_path * L, calls * L / C)``: no crawl can be
faster than its longest chain of dependent calls, nor than its calls spread evenly over C
connections. The targets are in ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from collections.abc import Iterator

_CREDENTIAL_VARIABLE = "PLATFORM_API_KEY"


@dataclass(frozen=True)
class Simulator:
    """A simulator served by a subprocess: where it listens and its admin key."""

    base_url: str
    token: str
    pid: int


@contextmanager
def served_simulator(
    services: int, latency_ms: float, seed: int, workdir: Path
) -> Iterator[Simulator]:
    """Run ``platform-audit sim serve`` in a subprocess until the block ends."""
    keys_file = workdir / "keys.json"
    command = [
        sys.executable,
        "-m",
        "toolkit.cli",
        "sim",
        "serve",
        "--services",
        str(services),
        "--seed",
        str(seed),
        "--faults",
        f"latency_ms={latency_ms:g}",
        "--keys-out",
        str(keys_file),
    ]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # the first line, printed once it listens
        if not url.startswith("http"):
            raise RuntimeError(f"the simulator did not start (exit code {proc.poll()})")
        keys = json.loads(keys_file.read_text("utf-8"))
        yield Simulator(base_url=keys["base_url"], token=keys["keys"]["admin"], pid=proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def crawl_and_write(
    base_url: str,
    token: str,
    concurrency: int | None,
    workdir: str,
    deployment_depth: int | None,
    label: str,
) -> dict[str, Any]:
    """Run in a fresh child process: one `take_snapshot` into a temp store of its own
    (`label`), and its figures.

    `concurrency=None` leaves every client setting at its default (a user's first run)."""
    import toolkit.pipeline.snapshot_job as snapshot_job
    from toolkit.collect import CrawlOptions
    from toolkit.config import Settings

    os.environ[_CREDENTIAL_VARIABLE] = token
    store = Path(workdir) / f"store-{label}"
    key = Path(workdir) / f"hmac-{label}.key"
    settings = Settings(base_url=base_url, store_url=str(store), hmac_key_file=key)
    if concurrency is not None:
        settings = Settings(
            base_url=base_url,
            concurrency=concurrency,
            rate_per_minute=None,
            store_url=settings.store_url,
            hmac_key_file=settings.hmac_key_file,
        )
    options = None if deployment_depth is None else CrawlOptions(deployment_depth=deployment_depth)
    crawl_cpu: list[float] = []
    crawl = snapshot_job.crawl_settings

    def timed_crawl(*args: Any, **kwargs: Any) -> Any:  # the crawl's CPU, without the write's
        cpu = time.process_time()
        try:
            return crawl(*args, **kwargs)
        finally:
            crawl_cpu.append(time.process_time() - cpu)

    snapshot_job.crawl_settings = timed_crawl  # type: ignore[assignment]
    baseline_mb = _peak_rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    run = snapshot_job.take_snapshot(settings, options=options, quiet=True)
    total_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started
    result = run.result
    return {
        "concurrency": settings.concurrency,
        "rate_per_minute": settings.rate_per_minute,
        "crawl_cpu_s": crawl_cpu[0],
        "cpu_per_call_ms": crawl_cpu[0] * 1000 / max(result.calls, 1),
        "limiter_wait_s": result.stats.throttle_wait_s,
        "status": result.status,
        "calls": result.calls,
        "min_calls": result.min_calls,
        "critical_path": result.critical_path,
        "retries": result.retries,
        "errors": len(result.errors),
        "wall_s": result.duration_s,
        "write_s": run.write_s,
        "snapshot_total_s": total_s,
        "snapshot_cpu_s": cpu_s,
        "rows": sum(run.info.row_counts.values()),
        "peak_rss_mb": _peak_rss_mb(),
        "baseline_rss_mb": baseline_mb,
        "planned": [(call.endpoint, dict(call.params)) for call in result.planned],
    }


def _cpu_s_of(pid: int) -> float | None:
    """CPU seconds (user and system) process `pid` has used so far; None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text("ascii").rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB, macOS in bytes.
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def in_child(
    base_url: str,
    token: str,
    concurrency: int | None,
    workdir: Path,
    deployment_depth: int | None,
    sim_pid: int,
    label: str,
) -> dict[str, Any]:
    """`crawl_and_write` in a spawned process, so its peak RSS and its CPU time are the
    crawl's and write's; `sim_pid`'s CPU time meanwhile is `simulator_cpu_s`."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=1, maxtasksperchild=1) as pool:
        args = (base_url, token, concurrency, str(workdir), deployment_depth, label)
        sim_before = _cpu_s_of(sim_pid)
        figures: dict[str, Any] = pool.apply(crawl_and_write, args)
        sim_after = _cpu_s_of(sim_pid)
    figures["simulator_cpu_s"] = (
        None if sim_before is None or sim_after is None else sim_after - sim_before
    )
    return figures


def sequential(base_url: str, token: str, planned: list[tuple[str, dict[str, Any]]]) -> float:
    """Replay the planned calls one at a time with one blocking client; seconds taken."""
    from toolkit.api import CATALOGUE

    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    with httpx.Client(headers=headers, timeout=30.0) as client:
        started = time.perf_counter()
        for endpoint, params in planned:
            url = base_url.rstrip("/") + CATALOGUE[endpoint].path
            client.get(url, params=params).raise_for_status()
        return time.perf_counter() - started


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Serve, crawl and write in a child, replay sequentially; every figure in one dict.

    Unless `--no-warm-up`, a first crawl at concurrency C is made and set aside, so that
    every measured crawl meets a simulator that has already built the world's deployment
    histories (it caches those of 4,096 services) and run each code path once. With
    `--defaults-too` the same world is crawled again at the client's default settings (no
    arguments but URL and key), beside the run at concurrency C."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="crawl-bench-") as tmp:
        workdir = Path(tmp)
        sim_started = time.perf_counter()
        with served_simulator(args.services, args.latency_ms, args.seed, workdir) as sim:
            sim_start_s = time.perf_counter() - sim_started
            crawl = (sim.base_url, sim.token)
            depth = args.deployment_depth
            warm_up = None
            if not args.no_warm_up:
                warm_up = in_child(*crawl, args.concurrency, workdir, depth, sim.pid, "warm-up")
                warm_up.pop("planned")
            figures = in_child(*crawl, args.concurrency, workdir, depth, sim.pid, "measured")
            planned = figures.pop("planned")
            seq_s = None if args.skip_sequential else sequential(sim.base_url, sim.token, planned)
            defaults = None
            if args.defaults_too:
                defaults = in_child(*crawl, None, workdir, depth, sim.pid, "defaults")
                defaults.pop("planned")
    report = {
        "services": args.services,
        "latency_ms": args.latency_ms,
        **_bounded(figures, args.latency_ms),
        "sequential_wall_s": seq_s,
        "speedup_vs_sequential": (
            seq_s / figures["wall_s"] if seq_s is not None and figures["wall_s"] > 0 else None
        ),
        "sim_start_s": sim_start_s,
        "load_average_1m_before": load,  # other work on the machine slows every figure
    }
    if defaults is not None:
        report["at_defaults"] = _bounded(defaults, args.latency_ms)
    if warm_up is not None:
        warm = _bounded(warm_up, args.latency_ms)
        report["warm_up"] = {k: warm[k] for k in _WARM_UP_FIGURES}
    return report


_WARM_UP_FIGURES = ("wall_s", "ratio_to_lower_bound", "cpu_per_call_ms", "simulator_cpu_s")
"""What the report keeps of the crawl set aside: enough to see what warming up changed."""


def _bounded(figures: dict[str, Any], latency_ms: float) -> dict[str, Any]:
    """A run's figures with its lower bound, its ratio to it, and the crawl's CPU time
    against it: the client runs on one core (one event loop), so above 1 the crawl cannot
    reach its lower bound however the calls are scheduled."""
    latency_s = latency_ms / 1000
    lower = max(
        figures["critical_path"] * latency_s, figures["calls"] * latency_s / figures["concurrency"]
    )
    wall = figures["wall_s"]
    return {
        **figures,
        "lower_bound_s": lower,
        "ratio_to_lower_bound": wall / lower if lower > 0 else None,
        "crawl_cpu_to_lower_bound": figures["crawl_cpu_s"] / lower if lower > 0 else None,
    }


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=1000, help="services in the world")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="simulated latency")
    parser.add_argument("--concurrency", type=int, default=16, help="crawl concurrency")
    parser.add_argument("--seed", type=int, default=7, help="world seed")
    parser.add_argument(
        "--deployment-depth", type=int, default=None, help="deployments per service (default: 20)"
    )
    parser.add_argument(
        "--skip-sequential", action="store_true", help="skip the one-at-a-time baseline"
    )
    parser.add_argument(
        "--defaults-too",
        action="store_true",
        help="crawl the same world again at the client's default settings",
    )
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="measure the first crawl of the world too (no crawl set aside before)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON only")
    return parser.parse_args(argv)


def _describe(report: dict[str, Any]) -> str:
    def fmt(value: Any) -> str:
        return f"{value:.3f}" if isinstance(value, float) else str(value)

    lines = []
    for key, value in report.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines.extend(f"{k:>26}  {fmt(v)}" for k, v in value.items())
        else:
            lines.append(f"{key:>24}  {fmt(value)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    report = benchmark(args)
    print(json.dumps(report, indent=2) if args.json else _describe(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
