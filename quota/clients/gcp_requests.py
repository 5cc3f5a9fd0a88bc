"""GCP quota increase requests: one Cloud Quotas QuotaPreference per quota and dimensions.

Used by ``quota.clients.gcp`` only. A preference for the same quota id and dimensions may exist
under any id (the console makes its own): that one is reused and updated over its etag, never
duplicated. https://cloud.google.com/docs/quotas/reference/rest/v1/projects.locations.quotaPreferences
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud.cloudquotas_v1.types import cloudquotas as cq_req
from google.cloud.cloudquotas_v1.types import resources as cq

from quota.clients.gcp_errors import describe_error
from quota.demand import DemandRow
from quota.keys import QuotaKey, quota_id_of

COMPUTE = "compute.googleapis.com"
# QuotaConfig.annotations key naming the stacks whose need a preference carries ("annotations map
# for clients to store small amounts of arbitrary data", cloudquotas_v1 QuotaConfig): one
# preference per quota and region serves every stack of the project, so each names itself.
STACKS_ANNOTATION = "gpu-infra-stacks"


def stacks_of(pref: Any) -> list[str]:
    """The stacks a preference names (none: made by the console or an older version)."""
    value = pref.quota_config.annotations.get(STACKS_ANNOTATION, "")
    return [s for s in value.split(",") if s]


def preference_id_of(key: QuotaKey) -> str:
    """Deterministic QuotaPreference id: one preference per quota and dimensions, reused forever."""
    parts = ["gpu-infra", quota_id_of(key)]
    for fam in (key.gpu_family, key.vm_family):
        if fam:
            parts.append(fam.replace("_", "-"))
    if key.region:
        parts.append(key.region)
    return "-".join(parts).lower()


def dimensions_of(key: QuotaKey) -> dict[str, str]:
    """QuotaPreference dimensions (empty for global quotas)."""
    dims: dict[str, str] = {}
    if key.region:
        dims["region"] = key.region
    if key.gpu_family:
        dims["gpu_family"] = key.gpu_family
    if key.vm_family:
        dims["vm_family"] = key.vm_family
    return dims


def file_preference(
    svc: Any,
    row: DemandRow,
    desired: int,
    email: str,
    justification: str,
    force: bool = False,
    stack: str = "",
    usage: float = 0.0,
) -> dict[str, Any]:
    """Create or raise the row's QuotaPreference to ``desired`` (idempotent).

    ``stack`` goes into the annotations. Another stack's pending preference is ``held`` without
    ``force``; with it, raised by this stack's ``desired - usage`` (the usage and free headroom
    are in its value already), naming both stacks. ``svc``: the ``GcpQuotaService`` (its Cloud Quotas client and retrying call). One that
    already asks for at least ``desired`` (pending or settled) is reported, not re-filed; one that
    asks for less is raised, even while it is pending (``reconciling``): left alone it would be
    granted short. A settled one that was granted less (a denial or a partial grant) is filed
    again for ``desired`` with ``force``: the update starts a new review.
    """
    p = svc.s.project
    key = row.key
    qid, dims = quota_id_of(key), dimensions_of(key)
    parent = f"projects/{p}/locations/global"
    base: dict[str, Any] = {"quotaId": qid, "desired": desired}
    info, prefs = _info_and_preferences(svc, parent, qid)
    if isinstance(info, BaseException):
        return {**base, "action": "failed", "status": describe_error(info, "quotaInfos.get", p)}
    blocked = _ineligible(info)
    if blocked:
        return {**base, "action": "ineligible", "status": blocked}
    if isinstance(prefs, BaseException):
        err = describe_error(prefs, "quotaPreferences.list", p)
        return {**base, "action": "failed", "status": err}
    existing = _same_quota(prefs, qid, dims, preference_id_of(key))
    pid = existing.name.rsplit("/", 1)[-1] if existing else preference_id_of(key)
    base = {
        "id": pid,
        **base,
        "follow": f"gcloud beta quotas preferences describe {pid} --project={p}",
    }
    named = stacks_of(existing) if existing is not None else []
    if existing is not None and existing.reconciling and set(named) - {stack}:
        if not force:
            return {**base, **_held_for(existing, named, stack), "action": "held"}
        desired = int(existing.quota_config.preferred_value) + max(0, desired - math.ceil(usage))
        base["desired"] = desired
        justification = f"{existing.justification} | {justification}"
    # A pending preference asking for less than the need is raised (with its etag) rather than
    # left to be granted short; one asking for at least as much is left to reconcile.
    elif existing is not None and int(existing.quota_config.preferred_value) >= desired:
        held = _held_action(existing, desired)
        if not (force and held in _REFILE):
            state = _preference_state(existing)
            if held in _REFILE:
                state["hint"] = "--force files it again"
            return {**base, **state, "action": held}
    pref = cq.QuotaPreference(
        name=f"{parent}/quotaPreferences/{pid}",
        service=COMPUTE,
        quota_id=qid,
        dimensions=dims,
        quota_config=cq.QuotaConfig(
            preferred_value=desired,
            annotations={STACKS_ANNOTATION: ",".join(sorted({*named, stack} - {""}))},
        ),
        justification=justification,
        contact_email=email,
        etag=existing.etag if existing is not None else "",
    )
    try:
        return {**base, **_write(svc, pref, parent, pid, existing)}
    except Exception as e:  # noqa: BLE001  # reported per row, the run goes on
        call = "quotaPreferences.create" if existing is None else "quotaPreferences.update"
        if existing is not None and existing.reconciling:  # still pending, for too little
            state = {**_preference_state(existing), "status": describe_error(e, call, p)}
            return {**base, **state, "action": "pending"}
        return {**base, "action": "failed", "status": describe_error(e, call, p)}


def _held_for(existing: Any, named: list[str], stack: str) -> dict[str, Any]:
    """The state of a preference another stack has pending, and what ``--force`` does."""
    state = _preference_state(existing)
    state["status"] = f"pending for stack {', '.join(s for s in named if s != stack)}, not this one"
    state["hint"] = "--force adds this stack's need to it"
    return state


def _info_and_preferences(svc: Any, parent: str, qid: str) -> tuple[Any, Any]:
    """The quota's QuotaInfo and every preference of the project, read at once (each a value or
    the exception its call raised)."""
    info_name = f"{parent}/services/{COMPUTE}/quotaInfos/{qid}"

    def capture(fn: Any) -> Any:
        try:
            return fn()
        except Exception as e:  # noqa: BLE001  # the caller turns it into a reason
            return e

    with ThreadPoolExecutor(max_workers=2) as pool:
        info_f = pool.submit(
            capture, lambda: svc._call(svc.quotas().get_quota_info, name=info_name)
        )
        list_f = pool.submit(capture, lambda: _preferences(svc, parent))
        return info_f.result(), list_f.result()


def _write(svc: Any, pref: Any, parent: str, pid: str, existing: Any) -> dict[str, Any]:
    """Create the preference, or update ``existing`` over its etag; the new state."""
    if existing is None:
        try:
            out = svc._call(
                svc.quotas().create_quota_preference,
                parent=parent,
                quota_preference=pref,
                quota_preference_id=pid,
            )
            return {**_preference_state(out), "action": "created"}
        except gexc.Conflict:
            pref.etag = ""  # created concurrently: fall through to the upsert
    upd = cq_req.UpdateQuotaPreferenceRequest(quota_preference=pref, allow_missing=existing is None)
    out = svc._call(svc.quotas().update_quota_preference, request=upd)
    raised = {"was": int(existing.quota_config.preferred_value)} if existing else {}
    return {**_preference_state(out), **raised, "action": "updated"}


def _preferences(svc: Any, parent: str) -> list[Any]:
    """Every QuotaPreference of the project (all pages).

    No server-side filter: the documented filters cover state, type and time only, and the
    quota id and dimensions are matched here.
    """
    req = cq_req.ListQuotaPreferencesRequest(parent=parent)
    return list(svc._call(svc.quotas().list_quota_preferences, request=req))


def _same_quota(prefs: Sequence[Any], qid: str, dims: dict[str, str], own: str) -> Any:
    """The preference for ``qid`` with exactly ``dims``: ours if it exists, else the newest."""
    same = [
        x
        for x in prefs
        if x.quota_id == qid and x.service in ("", COMPUTE) and dict(x.dimensions) == dims
    ]
    for x in same:
        if x.name.rsplit("/", 1)[-1] == own:
            return x
    return max(same, key=lambda x: str(x.update_time or x.create_time), default=None)


def _ineligible(info: Any) -> str | None:
    """Why Cloud Quotas will not take an increase for this quota (``None``: it will)."""
    if info.is_fixed:
        return f"{info.quota_id} is fixed and cannot be changed"
    elig = info.quota_increase_eligibility
    # An unset eligibility message reads as not eligible; only an explicit False blocks.
    if "quota_increase_eligibility" in info and not elig.is_eligible:
        reason = getattr(elig.ineligibility_reason, "name", str(elig.ineligibility_reason))
        return f"not eligible for an increase: {reason}"
    return None


def _preference_state(pref: Any) -> dict[str, Any]:
    qc = pref.quota_config
    out: dict[str, Any] = {
        "status": "pending" if pref.reconciling else (qc.state_detail or "settled"),
        "preferred": int(qc.preferred_value),
        "granted": None if qc.granted_value is None else int(qc.granted_value),
    }
    if qc.trace_id:
        out["traceId"] = qc.trace_id
    return out


# Settled preferences --force files again: granted less than the need, or nothing at all
# (QuotaConfig.granted_value unset once reconciling is over: the request was not granted).
_REFILE = frozenset({"partially-granted", "not-granted"})


def _held_action(pref: Any, desired: int) -> str:
    """What an existing preference asking for >= desired means: pending, not granted, partial,
    or granted."""
    if pref.reconciling:
        return "pending"
    granted = pref.quota_config.granted_value
    if granted is None:
        return "not-granted"
    if int(granted) < desired:
        return "partially-granted"
    return "already-requested"
