"""The price table of ``docs/review.md``: every price of a line beside the nodes, from
``infra/core/data/platform_prices.csv`` with its source and date, so the docs quote no price the
plan does not use."""

from __future__ import annotations


def render() -> str:
    """One row per price: cloud, item, region, USD, unit, date (and whether re-read), source."""
    from infra.core.catalog.vendored import Catalog
    from infra.core.platform_cost import unit_prices

    units = {"per_hour": "per hour", "per_gb_month": "per GB-month", "per_gib": "per GiB (usage)"}
    lines = [
        "| cloud | item | region | USD | unit | as of | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for (cloud, item, region), p in sorted(unit_prices(Catalog.load().prices).items()):
        where = "every region" if region == "*" else region
        lines.append(
            f"| {cloud} | `{item}` | {where} | {p.usd:g} | {units.get(p.unit, p.unit)} | "
            f"{p.dated} | {p.source} |"
        )
    return "\n".join(lines) + "\n"
