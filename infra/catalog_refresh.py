"""``python -m infra.catalog_refresh --project P``: regenerate the GCP catalog from the Compute API.

Reads every zone's accelerator types and GPU machine types (two aggregated lists) with the caller's
Application Default Credentials, and rewrites ``infra/core/data/gcp_accelerators.csv`` and
``gcp_machine_types.csv``, keeping the prices already on file (the Compute API has none).
``QUOTA_ENDPOINT_COMPUTE`` points the client elsewhere (``http://`` = local emulator, anonymous).
Exit 0 on success, 1 on an API or credentials error (one line, no traceback).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

from infra.core import catalog_build as build
from infra.core.catalog import DATA_DIR, read_rows

SOURCE = "Compute Engine API v1 acceleratorTypes.aggregatedList / machineTypes.aggregatedList"


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
    # Server-side regex filter keeps the listing to GPU families (thousands of types otherwise).
    families = "|".join(build.GPU_MACHINE_FAMILIES)
    mreq = compute_v1.AggregatedListMachineTypesRequest(
        project=project, filter=f'name eq "({families})-.*"'
    )
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


def refresh(project: str, data_dir: Path, endpoint: str | None, today: dt.date) -> tuple[int, int]:
    """Rewrite both GCP catalog files in ``data_dir``; returns (accelerator rows, machine rows)."""
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
    (data_dir / "gcp_accelerators.csv").write_text(
        build.render(
            [
                "GPU accelerators offered per GCP zone and count, with hourly prices (USD, GPUs only).",
                stamp,
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
                prices,
                "regenerate: python -m infra.catalog_refresh --project <project>",
            ],
            build.MACHINE_COLUMNS,
            mt_rows,
        ),
        encoding="utf-8",
    )
    return len(acc_rows), len(mt_rows)


def _existing(name: str, data_dir: Path) -> list[dict[str, str]]:
    return list(read_rows(name, data_dir)) if (data_dir / name).exists() else []


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m infra.catalog_refresh",
        description=(__doc__ or "").split("\n")[0],
        epilog="examples:\n  python -m infra.catalog_refresh --project my-project\n\n"
        "exit codes: 0 success; 1 an API or credentials error (one line, no traceback); "
        "2 usage",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project", required=True, help="GCP project to list with")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DATA_DIR,
        help="where the catalog files live (default: the vendored ones)",
    )
    args = parser.parse_args(argv)
    try:
        n_acc, n_mt = refresh(
            args.project,
            args.data_dir,
            os.environ.get("QUOTA_ENDPOINT_COMPUTE"),
            dt.datetime.now(dt.UTC).date(),
        )
    except Exception as e:  # noqa: BLE001  # API/credential errors end in one readable line
        print(f"catalog refresh failed: {type(e).__name__}: {e}".splitlines()[0], file=sys.stderr)
        return 1
    print(f"wrote {n_acc} accelerator rows and {n_mt} machine-type rows to {args.data_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
