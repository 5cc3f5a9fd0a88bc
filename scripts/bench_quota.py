"""Benchmark quota.check against the local fakes (not a timed test).

Every figure comes from paired runs: the same command against the same fakes, once answering at
once and once after ``--latency`` seconds per call, in alternating order. The extra wall time of
the slow run divided by the latency is the number of sequential round trips the check makes
(demand and parsing cancel out within each pair; the check runs in-process after one warm-up run,
so interpreter start-up and SDK imports, which vary by more than a round trip on a shared
machine, are not in the pairs). Printed as medians over the pairs:

* start-up of ``python -m quota.check --help`` (target <= 0.6 s);
* GKE check of the bench stack (target <= 2 round trips);
* EKS checks with every AWS endpoint slowed (Service Quotas, EC2, STS, IAM and EKS, the last four
  relayed to moto): eks-g4dn (EC2 quotas and EKS limits), eks-karpenter (and the IAM role),
  eks-existing (and ListNodegroups); target <= 1.2 round trips: all of them in one;
* ``--where`` over 1, 4 and 16 regions: round trips, and their ratio to the 1-region case
  (target: about 1, i.e. one round trip for any number of regions up to the concurrency bound).

    .venv/bin/python scripts/bench_quota.py [--latency 0.5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from infra.core.catalog.vendored import Catalog  # noqa: E402
from tests.fakes.aws import Ec2WithReservations, FakeServiceQuotas, Relay  # noqa: E402
from tests.fakes.base import FakeService  # noqa: E402
from tests.fakes.gcp import FakeCloudQuotas, FakeCompute, FakeServiceUsage  # noqa: E402

GKE = ROOT / "tests" / "fixtures" / "quota" / "Pulumi.gke-bench.yaml"
P, R = "demo-project", "us-central1"
AMPLE = {
    "NVIDIA_T4_GPUS": (64, 0),
    "PREEMPTIBLE_NVIDIA_T4_GPUS": (64, 0),
    "NVIDIA_L4_GPUS": (64, 0),
    "PREEMPTIBLE_NVIDIA_L4_GPUS": (64, 0),
    "NVIDIA_A100_GPUS": (16, 0),
    "CPUS": (1000, 0),
    "E2_CPUS": (100, 0),
    "PREEMPTIBLE_CPUS": (1000, 0),
    "A2_CPUS": (100, 0),
    "INSTANCES": (1000, 0),
    "IN_USE_ADDRESSES": (1000, 0),
    "SSD_TOTAL_GB": (100000, 0),
}


def wall(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall time and exit code of ``cmd`` in a fresh process (start-up only)."""
    t = time.perf_counter()
    code = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, check=False).returncode
    return time.perf_counter() - t, code


def in_process(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """Wall time and exit code of ``quota.check`` run in this process (imports already warm).

    In-process runs leave out interpreter start-up and SDK imports, which on a shared machine
    vary by more than a round trip; the pair's difference is then the network part alone.
    """
    from quota.check import main

    saved = dict(os.environ)
    os.environ.update(env)
    try:
        t = time.perf_counter()
        code = main(argv, out=io.StringIO(), err=io.StringIO())
        return time.perf_counter() - t, code
    finally:
        os.environ.clear()
        os.environ.update(saved)


def paired(
    cmd: list[str], env: dict[str, str], fakes: list[FakeService], latency: float, repeat: int
) -> tuple[float, float, float, int]:
    """Median (fast wall, slow wall, round trips) over ``repeat`` pairs, and the last exit code."""

    def set_latency(x: float) -> None:
        for f in fakes:
            f.latency = x

    fast: list[float] = []
    slow: list[float] = []
    trips: list[float] = []
    code = 0
    for i in range(repeat):
        pair: dict[float, float] = {}
        for x in (0.0, latency) if i % 2 == 0 else (latency, 0.0):  # alternate the order
            set_latency(x)
            pair[x], code = in_process(cmd, env)
        fast.append(pair[0.0])
        slow.append(pair[latency])
        trips.append((pair[latency] - pair[0.0]) / latency)
    set_latency(0.0)
    med = statistics.median
    return med(fast), med(slow), max(0.0, med(trips)), code


def bench_gke(base_env: dict[str, str], latency: float, repeat: int) -> None:
    """GKE check of the bench stack and ``--where`` over 1, 4 and 16 regions, on the GCP fakes."""
    compute, quotas, usage = FakeCompute(), FakeCloudQuotas(), FakeServiceUsage()
    fakes: list[FakeService] = [compute, quotas, usage]
    for f in fakes:
        f.start()
    t4_regions = Catalog.load().gcp_regions_offering("nvidia-tesla-t4")
    for region in {R, *t4_regions}:
        compute.set_region(P, region, **AMPLE)
    compute.set_project(P, GPUS_ALL_REGIONS=(200, 0), CPUS_ALL_REGIONS=(5000, 0))
    env = {
        **base_env,
        "QUOTA_ENDPOINT_COMPUTE": compute.url,
        "QUOTA_ENDPOINT_CLOUDQUOTAS": quotas.url,
        "QUOTA_ENDPOINT_SERVICEUSAGE": usage.url,
    }
    paired(["--config", str(GKE), "--json"], env, fakes, latency, 1)  # warm the imports
    fast, slow, trips, code = paired(["--config", str(GKE), "--json"], env, fakes, latency, repeat)
    print(
        f"gke  check: {fast:.3f} s at 0 latency, {slow:.3f} s at {latency} s/call "
        f"(exit {code}) = {trips:.2f} round trips (target <= 2)"
    )
    where: dict[int, float] = {}
    for n in (1, 4, 16):
        regions = ",".join(sorted(t4_regions)[:n])
        cmd = ["--stack", "gke-t4", "--where", "--regions", regions, "--json"]
        fast, slow, where[n], code = paired(cmd, env, fakes, latency, repeat)
        print(
            f"gke  --where over {n:2d} regions: {fast:.3f} s / {slow:.3f} s (exit {code}) = "
            f"{where[n]:.2f} round trips; ratio to 1 region: {where[n] / max(where[1], 0.1):.2f}"
        )
    for f in fakes:
        f.stop()


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    """moto's server in its own process (in this one it would share the GIL with the check)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        host, port = sock.getsockname()
    moto = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", host, "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return moto, f"http://{host}:{port}"


def bench_eks(base_env: dict[str, str], latency: float, repeat: int) -> None:
    """EKS checks and ``--where`` over 4 regions: every AWS endpoint slowed (EC2, STS, IAM and
    EKS relayed to moto)."""
    moto, moto_url = start_moto()
    sq = FakeServiceQuotas()
    ec2 = Ec2WithReservations(moto_url)
    relays = {name: Relay(moto_url) for name in ("STS", "IAM", "EKS")}
    fakes: list[FakeService] = [sq, ec2, *relays.values()]
    for f in fakes:
        f.start()
    regions = ("us-west-2", "us-east-1", "us-east-2", "eu-west-1")
    for region in regions:
        sq.applied.update(
            {(region, "L-DB2E81BA"): 500.0, (region, "L-3819A6DF"): 500.0}
            | {(region, "L-1216C47A"): 64.0}
        )
    aenv = {
        **base_env,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_ENDPOINT_URL_EC2": ec2.url,
        "AWS_ENDPOINT_URL_SERVICE_QUOTAS": sq.url,
        **{f"AWS_ENDPOINT_URL_{name}": r.url for name, r in relays.items()},
    }
    import boto3

    creds = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    for region in regions:  # build moto's backends
        boto3.client("ec2", region_name=region, endpoint_url=moto_url, **creds).describe_instances()
    # eks-existing attaches to cluster "shared" (moto answers 500 for a cluster it lacks)
    boto3.client("eks", region_name=regions[0], endpoint_url=moto_url, **creds).create_cluster(
        name="shared",
        roleArn="arn:aws:iam::123456789012:role/eks",
        resourcesVpcConfig={"subnetIds": ["subnet-0a1b2c3d4e5f60001"]},
    )
    trips: dict[str, float] = {}
    for stack in ("eks-g4dn", "eks-karpenter", "eks-existing"):
        cmd = ["--stack", stack, "--json"]
        paired(cmd, aenv, fakes, latency, 1)  # warm the imports
        fast, slow, trips[stack], code = paired(cmd, aenv, fakes, latency, repeat)
        print(
            f"eks  check {stack} (every AWS endpoint +{latency} s): {fast:.3f} s / "
            f"{slow:.3f} s (exit {code}) = {trips[stack]:.2f} round trips (target <= 1.2)"
        )
    cmd = ["--stack", "eks-g4dn", "--where", "--json", "--regions", ",".join(regions)]
    fast, slow, trips4, code = paired(cmd, aenv, fakes, latency, repeat)
    print(
        f"eks  --where over 4 regions: {fast:.3f} s / {slow:.3f} s (exit {code}) = "
        f"{trips4:.2f} round trips; ratio to the 1-region check: "
        f"{trips4 / max(trips['eks-g4dn'], 0.1):.2f}"
    )
    for f in fakes:
        f.stop()
    moto.terminate()
    moto.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    base_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    py = [sys.executable, "-m", "quota.check"]
    helps = [wall([*py, "--help"], base_env)[0] for _ in range(max(5, a.repeat))]
    print(f"start-up  python -m quota.check --help: {statistics.median(helps):.3f} s (<= 0.6 s)")
    bench_gke(base_env, a.latency, a.repeat)
    bench_eks(base_env, a.latency, a.repeat)


if __name__ == "__main__":
    main()
