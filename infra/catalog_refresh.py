"""``python -m infra.catalog_refresh``: regenerate the GCP or AWS catalog from the cloud's own APIs.

``--cloud gcp --project P`` (default): every zone's accelerator types and machine types (two
aggregated lists) with Application Default Credentials, rewriting ``gcp_accelerators.csv``,
``gcp_machine_types.csv`` (the types with GPUs built in) and the ``gpus`` column of
``gcp_machine_series.csv`` (GPU types of a series it lacks are named, for a row by hand);
``QUOTA_ENDPOINT_COMPUTE`` points the client elsewhere (``http://`` = local emulator, anonymous).

``--cloud aws [--regions R1,R2|all]``: EC2 ``DescribeInstanceTypes`` (GPU, vCPUs, memory,
architecture, EFA, instance store) and ``DescribeInstanceTypeOfferings`` by AZ ID per region through
boto3 with the default credential chain (``AWS_ENDPOINT_URL[_EC2]`` for an emulator), rewriting
``aws_gpu_instances.csv`` (regions not refreshed are kept) and the architecture column of
``aws_gpu_families.csv`` (NVIDIA families new to it are added, marked unreviewed).

Prices are kept from the previous file (neither API has them; a row without one is unknown).
Exit 0 on success, 1 on an API or credentials error (one line, no traceback), 2 on bad usage.

``--verify-prices [--cloud aws|gcp] [--write]``: compare the prices of what the sample stacks run
with the clouds' price APIs (``infra/price_verify.py``), one line per price: match / differs /
unknown. Exit 0 all match, 1 some price could not be read, 3 some price differs; ``--write`` puts
the source's prices in the data files with their own date and source (exit 0 unless unread).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

from infra.core.catalog import build
from infra.core.catalog.vendored import (
    DATA_DIR,
    PRICES_AS_OF,
    forget,
    prices_as_of,
    read_header,
    read_rows,
)

SOURCE = "Compute Engine API v1 acceleratorTypes.aggregatedList / machineTypes.aggregatedList"
AWS_SOURCE = (
    "AWS EC2 DescribeInstanceTypes (GpuInfo Manufacturer NVIDIA) and DescribeInstanceTypeOfferings "
    "(LocationType availability-zone-id), per region"
)


def _clients(endpoint: str | None) -> tuple[Any, Any]:
    # Imported here: only this command needs the Compute SDK.
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    kw: dict[str, Any] = {"transport": "rest"}
    if endpoint:
        kw["client_options"] = ClientOptions(api_endpoint=endpoint)
        if endpoint.startswith("http://"):
            kw["credentials"] = AnonymousCredentials()
    return compute_v1.AcceleratorTypesClient(**kw), compute_v1.MachineTypesClient(**kw)


def fetch(
    project: str, endpoint: str | None
) -> tuple[list[build.AcceleratorOffer], list[build.MachineOffer]]:
    """List every zone's accelerator types and GPU machine types."""
    from google.cloud import compute_v1

    acc_client, mt_client = _clients(endpoint)
    accs: list[build.AcceleratorOffer] = []
    req = compute_v1.AggregatedListAcceleratorTypesRequest(project=project)
    for scope, scoped in acc_client.aggregated_list(request=req):
        zone = scope.removeprefix("zones/")
        accs += [
            build.AcceleratorOffer(zone, a.name, a.maximum_cards_per_instance)
            for a in scoped.accelerator_types
        ]
    machines: list[build.MachineOffer] = []
    # Every machine type, unfiltered: which series carry GPUs is read from the listing
    # (machineTypes[].accelerators), so a series new to the catalog shows up too.
    mreq = compute_v1.AggregatedListMachineTypesRequest(project=project)
    for scope, scoped in mt_client.aggregated_list(request=mreq):
        zone = scope.removeprefix("zones/")
        for m in scoped.machine_types:
            if not m.accelerators:
                continue
            a = m.accelerators[0]
            machines.append(
                build.MachineOffer(
                    zone,
                    m.name,
                    m.guest_cpus,
                    m.memory_mb,
                    a.guest_accelerator_type,
                    a.guest_accelerator_count,
                )
            )
    return accs, machines


def refresh(
    project: str, data_dir: Path, endpoint: str | None, today: dt.date
) -> tuple[int, int, list[str]]:
    """Rewrite the GCP catalog files in ``data_dir`` (accelerators, GPU machine types, the series
    table's ``gpus`` column); returns (accelerator rows, machine rows, GPU machine types of a
    series the table lacks)."""
    accs, machines = fetch(project, endpoint)
    acc_prices = {
        (r["accelerator"], r["count"], r["zone"]): (r["price_per_hour"], r["spot_price_per_hour"])
        for r in _existing("gcp_accelerators.csv", data_dir)
    }
    mt_prices = {
        (r["machine_type"], r["zone"]): (r["price_per_hour"], r["spot_price_per_hour"])
        for r in _existing("gcp_machine_types.csv", data_dir)
    }
    acc_rows = build.accelerator_rows(accs, acc_prices)
    mt_rows = build.machine_rows(machines, mt_prices)
    stamp = f"source: {SOURCE}, project {project}; fetched: {today.isoformat()}"
    prices = "prices kept from the previous file where the same row existed (the API has none)"
    acc_prices_line = _kept_prices_line("gcp_accelerators.csv", data_dir)
    mt_prices_line = _kept_prices_line("gcp_machine_types.csv", data_dir)
    (data_dir / "gcp_accelerators.csv").write_text(
        build.render(
            [
                "GPU accelerators offered per GCP zone and count, with hourly prices (USD, GPUs only).",
                stamp,
                acc_prices_line,
                prices,
                "regenerate: python -m infra.catalog_refresh --project <project>",
            ],
            build.ACCELERATOR_COLUMNS,
            acc_rows,
        ),
        encoding="utf-8",
    )
    (data_dir / "gcp_machine_types.csv").write_text(
        build.render(
            [
                "GCP machine types with built-in GPUs, per zone, with hourly prices of vCPUs+memory (USD).",
                stamp,
                mt_prices_line,
                prices,
                "regenerate: python -m infra.catalog_refresh --project <project>",
            ],
            build.MACHINE_COLUMNS,
            mt_rows,
        ),
        encoding="utf-8",
    )
    new_types = _refresh_series(data_dir, machines, f"{SOURCE}, project {project}, {today}")
    forget()  # readers in this process see the rewritten files
    return len(acc_rows), len(mt_rows), new_types


SERIES_FILE = "gcp_machine_series.csv"
_GPUS_STAMP = "gpus regenerated from "


def _refresh_series(data_dir: Path, machines: list[build.MachineOffer], stamp: str) -> list[str]:
    """Regenerate the series table's ``gpus`` column from the machine-type listing."""
    rows, new_types = build.series_gpu_rows(_existing(SERIES_FILE, data_dir), machines)
    header = [h for h in _header(SERIES_FILE, data_dir) if not h.startswith(_GPUS_STAMP)]
    (data_dir / SERIES_FILE).write_text(
        build.render([*header, _GPUS_STAMP + stamp], build.SERIES_COLUMNS, rows),
        encoding="utf-8",
    )
    return new_types


def _kept_prices_line(name: str, data_dir: Path) -> str:
    """The ``prices as of:`` line for a file whose prices are kept from the one it replaces.

    The previous file's own line is carried over verbatim: it names where those prices came from
    (a regeneration has none of its own). Without one, the date the previous header implies.
    """
    header = _header(name, data_dir)
    for line in header:
        if line.startswith(PRICES_AS_OF):
            return line
    date = prices_as_of(header) if header else "unknown"
    return f"{PRICES_AS_OF}{date} (the previous file's prices date)"


def _generated_against(today: dt.date) -> list[str]:
    """A provenance line when boto3 was pointed at an emulator instead of AWS (none otherwise).

    boto3 reads ``AWS_ENDPOINT_URL_EC2`` / ``AWS_ENDPOINT_URL``
    (https://docs.aws.amazon.com/sdkref/latest/guide/feature-ss-endpoints.html).
    """
    if not (os.environ.get("AWS_ENDPOINT_URL_EC2") or os.environ.get("AWS_ENDPOINT_URL")):
        return []
    from importlib.metadata import PackageNotFoundError, version

    try:
        moto = version("moto")
    except PackageNotFoundError:
        return [f"generated {today} against an EC2 endpoint override (AWS_ENDPOINT_URL), not AWS"]
    # The emulator this project runs is moto's server (tests/emulator), from this environment.
    return [
        f"generated {today} against moto {moto}'s server, whose EC2 responses come from its "
        "bundled AWS data (moto/ec2/resources/instance_types.json.gz, "
        "instance_type_offerings/availability-zone-id/<region>.json.gz)"
    ]


def _existing(name: str, data_dir: Path) -> list[dict[str, str]]:
    return list(read_rows(name, data_dir)) if (data_dir / name).exists() else []


def fetch_aws(
    regions: list[str] | None,
) -> tuple[dict[str, build.AwsTypeInfo], list[tuple[str, str, str]], list[str]]:
    """NVIDIA instance types and their (region, AZ ID, type) offerings in ``regions`` (all
    enabled regions when ``None``)."""
    import boto3  # only this command needs boto3 here

    if regions is None:
        ec2 = boto3.client("ec2", region_name="us-east-1")
        regions = sorted(r["RegionName"] for r in ec2.describe_regions()["Regions"])
    types: dict[str, build.AwsTypeInfo] = {}
    offerings: list[tuple[str, str, str]] = []
    for region in regions:
        ec2 = boto3.client("ec2", region_name=region)
        # NVIDIA GPUs are in the G and P families ("Accelerated computing" instance types,
        # https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html); the instance-type filter
        # takes wildcards, so the listing skips the ~1,000 other types.
        listing = ec2.get_paginator("describe_instance_types").paginate(
            Filters=[{"Name": "instance-type", "Values": ["g*", "p*"]}]
        )
        for page in listing:
            for item in page["InstanceTypes"]:
                info = build.aws_type_info(item)
                if info is not None:
                    types.setdefault(info.name, info)
        pages = ec2.get_paginator("describe_instance_type_offerings").paginate(
            LocationType="availability-zone-id"
        )
        for page in pages:
            for o in page["InstanceTypeOfferings"]:
                if o["InstanceType"] in types:
                    offerings.append((region, o["Location"], o["InstanceType"]))
    return types, offerings, regions


def refresh_aws(
    regions: list[str] | None, data_dir: Path, today: dt.date
) -> tuple[int, int, list[str]]:
    """Rewrite the AWS catalog files; returns (instance rows, regions refreshed, families added)."""
    types, offerings, done = fetch_aws(regions)
    previous = _existing("aws_gpu_instances.csv", data_dir)
    prices = {
        (r["instance_type"], r["region"], r["availability_zone"]): (
            r["price_per_hour"],
            r["spot_price_per_hour"],
        )
        for r in previous
    }
    kept = [
        {c: r.get(c, "") for c in build.AWS_INSTANCE_COLUMNS}
        for r in previous
        if r["region"] not in done
    ]
    rows = build.aws_instance_rows(types, offerings, prices)
    rows = sorted(
        [*kept, *rows], key=lambda r: (r["instance_type"], r["region"], r["availability_zone"])
    )
    stamp = f"source: {AWS_SOURCE}; regions refreshed: {', '.join(done)}; fetched: {today}"
    # The kept prices keep their own date: the previous file's, never today's fetch date.
    kept_prices_line = _kept_prices_line("aws_gpu_instances.csv", data_dir)
    (data_dir / "aws_gpu_instances.csv").write_text(
        build.render(
            [
                "AWS NVIDIA GPU instance types per region and availability-zone ID (IDs, not names: "
                "names differ per account).",
                stamp,
                *_generated_against(today),
                kept_prices_line,
                "prices (USD/hour, on-demand and spot) kept from the previous file where the same "
                "type was priced in the region; empty = unknown (the EC2 APIs list none)",
                "gpus: NVIDIA GPUs the node sees (LogicalGpuCount for fractional types); "
                "gpu_fraction: GpuPartitionSize when below one GPU",
                "efa_cards: network card indices whose NetworkInfo.NetworkCards[].InterfaceTypes "
                "include efa-only (ranges)",
                "regenerate: python -m infra.catalog_refresh --cloud aws [--regions R1,R2]",
            ],
            build.AWS_INSTANCE_COLUMNS,
            rows,
        ),
        encoding="utf-8",
    )
    families, added = build.aws_family_rows(types, _existing("aws_gpu_families.csv", data_dir))
    header = [
        h for h in _header("aws_gpu_families.csv", data_dir) if not h.startswith("refreshed:")
    ]
    (data_dir / "aws_gpu_families.csv").write_text(
        build.render(
            [*header, f"refreshed: architecture from {AWS_SOURCE}, {today}"],
            build.AWS_FAMILY_COLUMNS,
            families,
        ),
        encoding="utf-8",
    )
    forget()
    return len(rows), len(done), added


def _header(name: str, data_dir: Path) -> list[str]:
    return list(read_header(name, data_dir)) if (data_dir / name).exists() else []


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m infra.catalog_refresh",
        description=(__doc__ or "").split("\n")[0],
        epilog="examples:\n  python -m infra.catalog_refresh --project my-project\n\n"
        "  python -m infra.catalog_refresh --verify-prices [--cloud aws|gcp] [--write]\n\n"
        "exit codes: 0 success (--verify-prices: every price matches); 1 an API or credentials "
        "error (one line, no traceback; --verify-prices: a price not read); 2 usage; "
        "3 --verify-prices: a price differs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--cloud", choices=("gcp", "aws"), help="default gcp; with --verify-prices, both"
    )
    parser.add_argument("--project", help="GCP project to list with (--cloud gcp)")
    parser.add_argument(
        "--regions", help="--cloud aws: comma-separated regions, or 'all' (default: all enabled)"
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DATA_DIR,
        help="where the catalog files live (default: the vendored ones)",
    )
    parser.add_argument(
        "--verify-prices",
        action="store_true",
        help="check the sample stacks' prices against the clouds' price APIs (no catalog rewrite)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="--verify-prices: write the prices read at the source, with their own date and source",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    today = dt.datetime.now(dt.UTC).date()
    if args.verify_prices:
        if args.project or args.regions:
            parser.error("--verify-prices takes --cloud, --write and --data-dir only")
        from infra import price_verify

        clouds = [args.cloud] if args.cloud else ["aws", "gcp"]
        return price_verify.run(clouds, args.data_dir, today.isoformat(), args.write)
    if args.write:
        parser.error("--write is for --verify-prices")
    if args.cloud == "aws":
        if args.project:
            parser.error("--project is for --cloud gcp")
        regions = None
        if args.regions and args.regions != "all":
            regions = [r.strip() for r in args.regions.split(",") if r.strip()]
        try:
            n, n_regions, added = refresh_aws(regions, args.data_dir, today)
        except Exception as e:  # noqa: BLE001  # API/credential errors end in one readable line
            print(
                f"catalog refresh failed: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr
            )
            return 1
        print(f"wrote {n} AWS instance rows ({n_regions} regions refreshed) to {args.data_dir}")
        if added:
            print(
                "NVIDIA families new to aws_gpu_families.csv (marked unreviewed, eks_nvidia_ami "
                f"no): {', '.join(added)}",
                file=sys.stderr,
            )
        return 0
    if args.regions:
        parser.error("--regions is for --cloud aws")
    if not args.project:
        parser.error("--project is required with --cloud gcp")
    try:
        n_acc, n_mt, new_types = refresh(
            args.project,
            args.data_dir,
            os.environ.get("QUOTA_ENDPOINT_COMPUTE"),
            today,
        )
    except Exception as e:  # noqa: BLE001  # API/credential errors end in one readable line
        print(f"catalog refresh failed: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return 1
    print(f"wrote {n_acc} accelerator rows and {n_mt} machine-type rows to {args.data_dir}")
    if new_types:
        print(
            f"GPU machine types of a series {SERIES_FILE} lacks (add its row from the Compute "
            f"Engine docs: boot disks, provisioning models, Local SSD): {', '.join(new_types)}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
