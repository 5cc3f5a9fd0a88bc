"""Fakes of the two public price APIs, for the real clients to talk to over HTTP.

``FakePriceList``: AWS Price List Query API ``GetProducts`` (JSON 1.1, ``POST /`` with
``X-Amz-Target: AWSPriceListService.GetProducts``), TERM_MATCH filters on product attributes,
``PriceList`` items as JSON strings, paged by ``NextToken``. moto has no Pricing service.

``FakeBillingCatalog``: Cloud Billing Catalog API ``GET /v1/services/{id}/skus``, paged by
``pageToken`` / ``nextPageToken``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.aws import aws_error
from tests.fakes.base import FakeService, Request, Response

_TARGET = "AWSPriceListService."
_JSON = {"Content-Type": "application/x-amz-json-1.1"}


def ec2_product(
    sku: str, usd: str, unit: str = "Hrs", family: str = "Compute Instance", **attributes: str
) -> dict[str, Any]:
    """A PriceList item as GetProducts returns it (product, OnDemand term, one price dimension)."""
    return {
        "product": {"productFamily": family, "attributes": dict(attributes), "sku": sku},
        "serviceCode": attributes.get("servicecode", "AmazonEC2"),
        "terms": {
            "OnDemand": {
                f"{sku}.JRTCKXETXF": {
                    "priceDimensions": {
                        f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
                            "unit": unit,
                            "endRange": "Inf",
                            "description": f"${usd} per {unit} ({sku})",
                            "rateCode": f"{sku}.JRTCKXETXF.6YS6EN2CT7",
                            "beginRange": "0",
                            "pricePerUnit": {"USD": usd},
                        }
                    },
                    "sku": sku,
                    "termAttributes": {},
                }
            }
        },
        "version": "20261120000000",
        "publicationDate": "2026-11-20T00:00:00Z",
    }


class FakePriceList(FakeService):
    """GetProducts over ``products`` (service code -> items), ``page_size`` items per page."""

    def __init__(self, page_size: int = 100) -> None:
        super().__init__()
        self.products: dict[str, list[dict[str, Any]]] = {}
        self.page_size = page_size
        self.requests: list[dict[str, Any]] = []
        self.route("POST", r"/", "json", self._dispatch_target)

    def op_name(self, op: str, req: Request) -> str:
        return req.headers.get("X-Amz-Target", "").removeprefix(_TARGET) or op

    def _dispatch_target(self, req: Request) -> Response:
        if self.op_name("", req) != "GetProducts":
            return aws_error("UnknownOperationException", "only GetProducts is faked", 400)
        body = req.json()
        self.requests.append(body)
        wanted = {f["Field"]: f["Value"] for f in body.get("Filters", [])}
        if any(f["Type"] != "TERM_MATCH" for f in body.get("Filters", [])):
            return aws_error("InvalidParameterException", "unknown filter type")
        items = [
            p
            for p in self.products.get(body["ServiceCode"], [])
            if all(self._attr(p, k) == v for k, v in wanted.items())
        ]
        start = int(body.get("NextToken") or 0)
        size = min(self.page_size, int(body.get("MaxResults") or 100))
        page = items[start : start + size]
        out: dict[str, Any] = {
            "FormatVersion": "aws_v1",
            "PriceList": [json.dumps(p) for p in page],
        }
        if start + size < len(items):
            out["NextToken"] = str(start + size)
        return 200, out, dict(_JSON)

    @staticmethod
    def _attr(product: dict[str, Any], name: str) -> str | None:
        if name == "productFamily":
            return product["product"]["productFamily"]
        return product["product"]["attributes"].get(name)


def gcp_sku(
    description: str,
    group: str,
    usd: float,
    regions: list[str],
    usage: str = "OnDemand",
    unit: str = "h",
    family: str = "Compute",
) -> dict[str, Any]:
    """A Compute Engine SKU as services.skus.list returns it."""
    units = int(usd)
    return {
        "name": f"services/6F81-5844-456A/skus/{abs(hash(description + usage)) % 10**8:08d}",
        "description": description,
        "category": {
            "serviceDisplayName": "Compute Engine",
            "resourceFamily": family,
            "resourceGroup": group,
            "usageType": usage,
        },
        "serviceRegions": regions,
        "pricingInfo": [
            {
                "effectiveTime": "2026-11-20T00:00:00Z",
                "pricingExpression": {
                    "usageUnit": unit,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": round((usd - units) * 1e9),
                            },
                        }
                    ],
                },
            }
        ],
        "serviceProviderName": "Google",
    }


class FakeBillingCatalog(FakeService):
    """services.skus.list of one service, ``page_size`` SKUs per page."""

    def __init__(self, page_size: int = 2) -> None:
        super().__init__()
        self.skus: list[dict[str, Any]] = []
        self.page_size = page_size
        self.route("GET", r"/v1/services/(?P<service>[^/]+)/skus", "skus.list", self._list)

    def _list(self, req: Request) -> Response:
        if req.match.group("service") != "6F81-5844-456A":
            return 404, {"error": {"code": 404, "message": "service not found"}}, {}
        start = int((req.query.get("pageToken") or ["0"])[0])
        page = self.skus[start : start + self.page_size]
        body: dict[str, Any] = {"skus": page, "nextPageToken": ""}
        if start + self.page_size < len(self.skus):
            body["nextPageToken"] = str(start + self.page_size)
        return 200, body, {}
