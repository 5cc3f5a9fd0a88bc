"""GPUS_ALL_REGIONS where ``projects.get`` lacks it (new projects): its limit from Cloud Quotas, its
usage from every region's own GPU figures.

Used by ``quota.clients.gcp`` only. Quota id per the public quota error ("metric name =
compute.googleapis.com/gpus_all_regions, limit name = GPUS-ALL-REGIONS-per-project, dimensions =
global: global"). Cloud Quotas has no usage; the usage is the sum over every region
(``regions.list``) of the usage of each GPU metric it reports (``*_GPUS``: on-demand, preemptible,
committed and virtual-workstation GPUs), plus the GPUs of the families Compute reports no metric
for (H100 and newer), counted from every region's VMs and reservations as the regional family rows
count them (``gcp_usage.with_family_usage``). A VM with a GPU the quota tables do not know leaves
the usage unknown: its GPUs might be in no figure.
"""

from __future__ import annotations

from typing import Any

from quota.arithmetic import Reading
from quota.clients.gcp_errors import describe_error
from quota.clients.gcp_requests import COMPUTE
from quota.clients.gcp_usage import with_family_usage, with_reserved_usage
from quota.keys import QuotaKey
from quota.own import gce_accelerators
from quota.rules import GCE_HOLDING_STATES, GPUS_ALL_REGIONS, gcp_accelerator_quotas

QUOTA_ID = "GPUS-ALL-REGIONS-per-project"


def global_gpus_fallback(svc: Any, readings: dict[QuotaKey, Reading]) -> bool:
    """Replace a GPUS_ALL_REGIONS reading that ``projects.get`` left missing with its Cloud
    Quotas limit and the regions' usage; whether it did (the Cloud Quotas API is then needed).

    ``svc``: the ``GcpQuotaService``; every call of the fallback runs at once (one round trip).
    """
    key = next(
        (
            k
            for k, r in readings.items()
            if k.quota == GPUS_ALL_REGIONS
            and k.source == "compute-project"
            and (r.error or "").startswith("quota missing")
        ),
        None,
    )
    if key is None:
        return False
    p = svc.s.project
    name = f"projects/{p}/locations/global/services/{COMPUTE}/quotaInfos/{QUOTA_ID}"
    got = svc._run(
        {
            "info": lambda: svc._call(svc.quotas().get_quota_info, name=name),
            "regions": lambda: list(svc._call(svc.regions().list, project=p)),
            "instances": lambda: list(svc._call(svc.instances().aggregated_list, project=p)),
            "reservations": lambda: list(svc._call(svc.reservations().aggregated_list, project=p)),
        }
    )
    info = got["info"]
    if isinstance(info, BaseException):
        err = describe_error(info, "quotaInfos.get", p, svc._endpoint("family"))
        readings[key] = Reading(error=f"{readings[key].error}; fallback {QUOTA_ID}: {err}")
        return True
    limit = next(
        (float(d.details.value) for d in info.dimensions_infos if not dict(d.dimensions)), None
    )
    if limit is None:
        readings[key] = Reading(error=f"quota missing: {QUOTA_ID} lists no project-wide value")
        return True
    usage = regions_gpu_usage(got["regions"], got["instances"], got["reservations"], p, svc.catalog)
    if isinstance(usage, str):
        readings[key] = Reading(limit=limit, error=f"usage unreadable: {usage}")
    else:
        readings[key] = Reading(limit=limit, usage=usage)
    return True


def regions_gpu_usage(
    regions: Any, instances: Any, reservations: Any, project: str, catalog: Any
) -> float | str:
    """GPUs in use across every region (``global_gpus_fallback``), or why that is unknown."""
    for what, got in (("regions.list", regions), ("instances.aggregatedList", instances)):
        if isinstance(got, BaseException):
            return describe_error(got, what, project)
    if isinstance(reservations, BaseException):
        return describe_error(reservations, "reservations.aggregatedList", project)
    known = gcp_accelerator_quotas()
    for _, scoped in instances:
        for inst in scoped.instances:
            gpu, _n = gce_accelerators(inst, catalog)
            if inst.status in GCE_HOLDING_STATES and gpu is not None and gpu not in known:
                return f"VM {inst.name} runs {gpu}, which no quota table names"
    used = 0.0
    families = sorted({q.gpu_family for q in known.values() if q.gpu_family})
    for region in regions:
        used += sum(float(q.usage) for q in region.quotas if str(q.metric).endswith("_GPUS"))
        for fam in families:
            k = QuotaKey("gcp", "region", region.name, fam, "GPUs", "cloudquotas", gpu_family=fam)
            r = with_family_usage(Reading(limit=0.0), k, instances, project, catalog, region)
            r = with_reserved_usage(r, k, reservations, project, catalog)
            if r.error is not None or r.usage is None:
                return r.error or f"{fam} usage in {region.name} unknown"
            used += r.usage
    return used
