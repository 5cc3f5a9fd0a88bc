"""Benchmark quota.check against the local fakes with injected latency (not a timed test).

Prints: start-up of ``python -m quota.check --help``; for a GKE stack with 10 quota rows and an
EKS stack, the wall time of a full check against emulators answering every call after 250 ms,
and that time in round trips (target: <= 2 round trips plus start-up, start-up being the same
command with ``--offline``).

    .venv/bin/python scripts/bench_quota.py [--latency 0.25] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.aws import FakeServiceQuotas  # noqa: E402
from tests.fakes.gcp import FakeCloudQuotas, FakeCompute, FakeServiceUsage  # noqa: E402

GKE = ROOT / "tests" / "fixtures" / "quota" / "Pulumi.gke-bench.yaml"
P, R = "demo-project", "us-central1"


def timed(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, int]:
    """Median wall time of ``cmd`` and its last exit code."""
    times: list[float] = []
    code = 0
    for _ in range(repeat):
        t = time.perf_counter()
        code = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, check=False).returncode
        times.append(time.perf_counter() - t)
    return statistics.median(times), code


def round_trip(url: str, repeat: int) -> float:
    """Median time of one HTTP call to a fake (its injected latency plus loopback overhead)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{url}/compute/v1/projects/{P}/regions/{R}").read()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _quiet_werkzeug() -> None:
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    py = [sys.executable, "-m", "quota.check"]
    base_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    help_t, _ = timed([*py, "--help"], base_env, max(5, a.repeat))
    print(f"start-up  python -m quota.check --help: {help_t:.3f} s (target <= 0.6 s)")

    compute, quotas, usage = (
        FakeCompute(a.latency),
        FakeCloudQuotas(a.latency),
        FakeServiceUsage(a.latency),
    )
    for f in (compute, quotas, usage):
        f.start()
    compute.set_region(
        P,
        R,
        NVIDIA_T4_GPUS=(64, 0),
        PREEMPTIBLE_NVIDIA_T4_GPUS=(64, 0),
        NVIDIA_L4_GPUS=(64, 0),
        PREEMPTIBLE_NVIDIA_L4_GPUS=(64, 0),
        NVIDIA_A100_GPUS=(16, 0),
        CPUS=(1000, 0),
        PREEMPTIBLE_CPUS=(1000, 0),
        A2_CPUS=(100, 0),
    )
    compute.set_project(P, GPUS_ALL_REGIONS=(100, 0), CPUS_ALL_REGIONS=(2000, 0))
    env = {
        **base_env,
        "QUOTA_ENDPOINT_COMPUTE": compute.url,
        "QUOTA_ENDPOINT_CLOUDQUOTAS": quotas.url,
        "QUOTA_ENDPOINT_SERVICEUSAGE": usage.url,
    }
    rtt = round_trip(compute.url, 3)
    offline, _ = timed([*py, "--config", str(GKE), "--offline", "--json"], env, a.repeat)
    compute.reset()
    usage.reset()
    check, code = timed([*py, "--config", str(GKE), "--json"], env, a.repeat)
    calls = (sum(compute.calls.values()) + sum(usage.calls.values())) // a.repeat
    bare, _ = timed([sys.executable, "-c", "pass"], env, a.repeat)
    sdk, _ = timed([sys.executable, "-c", "import quota.clients.gcp"], env, a.repeat)
    sdk -= bare
    print(f"gke  one round trip: {rtt:.3f} s; offline (start-up + demand): {offline:.3f} s")
    print(f"gke  Google SDK import (google-cloud-compute & co): {sdk:.3f} s")
    print(
        f"gke  check of 10 rows: {check:.3f} s (exit {code}, {calls} calls per run) = "
        f"start-up + SDK import + {(check - offline - sdk) / rtt:.2f} round trips (target <= 2)"
    )
    for f in (compute, quotas, usage):
        f.stop()

    from moto.server import ThreadedMotoServer

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    _quiet_werkzeug()
    moto.start()
    host, port = moto.get_host_and_port()
    sq = FakeServiceQuotas(a.latency)
    sq.start()
    sq.applied.update(
        {
            ("us-west-2", "L-DB2E81BA"): 200.0,
            ("us-west-2", "L-3819A6DF"): 200.0,
            ("us-west-2", "L-1216C47A"): 64.0,
        }
    )
    aenv = {
        **base_env,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_ENDPOINT_URL_EC2": f"http://{host}:{port}",
        "AWS_ENDPOINT_URL_SERVICE_QUOTAS": sq.url,
    }
    # moto builds its EC2 backend on the first request; keep that out of the measurement.
    import boto3

    boto3.client(
        "ec2",
        region_name="us-west-2",
        endpoint_url=aenv["AWS_ENDPOINT_URL_EC2"],
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    ).describe_instances()
    offline, _ = timed([*py, "--stack", "eks-g4dn", "--offline", "--json"], aenv, a.repeat)
    sdk, _ = timed([sys.executable, "-c", "import quota.clients.aws"], aenv, a.repeat)
    sdk -= bare
    check, code = timed([*py, "--stack", "eks-g4dn", "--json"], aenv, a.repeat)
    print(
        f"eks  check of 3 rows (Service Quotas +{a.latency}s, EC2 on moto without latency): "
        f"{check:.3f} s (exit {code}) = start-up + boto3 import ({sdk:.3f} s) + "
        f"{(check - offline - sdk) / rtt:.2f} round trips"
    )
    sq.stop()
    moto.stop()


if __name__ == "__main__":
    main()
