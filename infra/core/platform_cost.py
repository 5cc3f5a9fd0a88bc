"""What a stack costs besides its nodes' machines and GPUs: the priced lines (control plane, NAT,
boot disks, Local SSD) each platform bills (``Platform.cost_lines``), and their prices.

Prices come from ``data/platform_prices.csv``, as the catalog the plan was built with reads it
(``Catalog.prices``): one row per item, cloud and region, each with its own source and the date its price was read (so a line of the estimate is dated by its price, not
by when the catalog was copied). An item whose price the file lacks is listed as unpriced, never
counted as 0. Usage-based charges (NAT data processing, data transfer) cannot be planned and are
always listed as unpriced.
"""

from __future__ import annotations

from dataclasses import dataclass

from infra.core.catalog.pricing import Prices, UnitPrice

# A month is 730 hours: 8,760 hours a year / 12, the average month (a 31-day month is 744 h), so
# twelve monthly figures add up to a year. Prices per GB-month are spread over the same hours.
HOURS_PER_MONTH = 730.0


@dataclass(frozen=True, slots=True)
class Line:
    """One line of the estimate beside the nodes: USD per hour at minimum and maximum scale.

    ``at_min`` / ``at_max`` are ``None`` when the price is unknown (then ``missing`` says what).
    """

    item: str
    at_min: float | None
    at_max: float | None
    price: UnitPrice | None
    missing: str = ""
    more: tuple[UnitPrice, ...] = ()  # the other prices a summed line is made of

    @property
    def prices(self) -> tuple[UnitPrice, ...]:
        """Every price this line is made of, once each."""
        found = (self.price, *self.more) if self.price is not None else self.more
        return tuple({(p.item, p.usd): p for p in found}.values())


def unit_prices(prices: Prices) -> dict[tuple[str, str, str], UnitPrice]:
    """``(cloud, item, region) -> price`` (region ``*``: every region), as the catalog of
    ``prices`` reads them."""
    return prices.units


def price_of(prices: Prices, cloud: str, item: str, region: str) -> UnitPrice | None:
    """The price of ``item`` in ``region`` (or in every region) in ``prices`` (the catalog the
    plan was built with), ``None`` if unknown."""
    return prices.unit(cloud, item, region)


def _per_hour(p: UnitPrice, quantity: float) -> float:
    return p.usd * quantity / (HOURS_PER_MONTH if p.unit == "per_gb_month" else 1.0)


def line_of(
    prices: Prices,
    item: str,
    cloud: str,
    key: str,
    region: str,
    q_min: float,
    q_max: float,
    what: str,
) -> Line:
    """A line for ``q_min`` / ``q_max`` units of price ``key`` of ``prices`` (``what`` names it if
    unpriced)."""
    p = price_of(prices, cloud, key, region)
    if p is None:
        return Line(item, None, None, None, f"{what}: no price for {key} in {region}")
    return Line(item, _per_hour(p, q_min), _per_hour(p, q_max), p)


def sum_lines(item: str, lines: list[Line]) -> Line | None:
    """Lines of the same item added up (unpriced parts reported together)."""
    if not lines:
        return None
    priced = [x for x in lines if x.price is not None]
    missing = "; ".join(x.missing for x in lines if x.missing)
    if not priced:
        return Line(item, None, None, None, missing)
    return Line(
        item,
        sum(x.at_min or 0.0 for x in priced),
        sum(x.at_max or 0.0 for x in priced),
        priced[0].price,
        missing,
        tuple(x.price for x in priced[1:] if x.price is not None),
    )
