"""The quota preflight's one switch on the cloud: per cloud, its service limits, the client that
reads and raises its quotas, and what to do about a short service limit. Shared code looks the
stack's cloud up here (``QUOTA_CLOUDS[demand.cloud]``) instead of testing its name; each client is
imported only for a stack on its cloud.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from infra.core.errors import Issues
from infra.core.sizing import NodeGroupSizing
from quota.demand import Demand, aws_contributions, gcp_contributions
from quota.keys import Cloud, QuotaKey
from quota.limits import LimitDemand, eks_limits, gke_limits
from quota.sizing import vet_aws, vet_gcp


@dataclass(frozen=True, slots=True)
class QuotaCloud:
    """What the preflight does differently on one cloud.

    Attributes:
        vet: the sizings whose types have quota rows; the rest become config issues.
        contributions: ``(region, sizings, force_preemptible)`` -> every draw of the sizings.
        service_limits: ``(plan, region, sizings)`` -> the stack's service-limit rows.
        service: ``(config, catalog)`` -> the client that reads usage and files requests.
        limit_advice: ``(key, region)`` -> what to do about a short service limit (never filed).
    """

    vet: Callable[[list[NodeGroupSizing], Issues], list[NodeGroupSizing]]
    contributions: Callable[[str, list[NodeGroupSizing], bool], Demand]
    service_limits: Callable[[Any, str, Any], LimitDemand]
    service: Callable[[Any, Any], Any]
    limit_advice: Callable[[QuotaKey, str], str]


def _aws_contributions(region: str, sizings: list[NodeGroupSizing], force: bool) -> Demand:
    del force  # EC2 has no preemptible quota to force
    return aws_contributions(region, sizings)


def _gcp_service(config: Any, catalog: Any) -> Any:
    from quota.clients.gcp import GcpQuotaService, GcpSettings

    return GcpQuotaService(GcpSettings.from_env(config.project), catalog)


def _aws_service(config: Any, catalog: Any) -> Any:
    from quota.clients.aws import AwsQuotaService, AwsSettings

    return AwsQuotaService(AwsSettings.from_env(config.region), catalog)


def _aws_advice(key: QuotaKey, region: str) -> str:
    return (
        "a service limit: request it by hand (aws service-quotas request-service-quota-"
        f"increase --service-code eks --quota-code {key.quota} --region {region}) "
        "or split the stack"
    )


def _gcp_advice(key: QuotaKey, region: str) -> str:
    del key, region  # GKE's system limits are not raised on request, anywhere
    return "a GKE system limit: split the pool or the cluster (larger clusters need support)"


QUOTA_CLOUDS: Mapping[Cloud, QuotaCloud] = {
    "gcp": QuotaCloud(vet_gcp, gcp_contributions, gke_limits, _gcp_service, _gcp_advice),
    "aws": QuotaCloud(vet_aws, _aws_contributions, eks_limits, _aws_service, _aws_advice),
}
