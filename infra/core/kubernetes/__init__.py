"""Planning for ``platform: kubernetes``: an existing (on-prem, k3s, RKE2) cluster and its GPU nodes.

`planner.plan_kubernetes` is the entry. May import: `infra.core.config`, the cross-platform modules
and `catalog`; never another platform's package, Pulumi or a cloud SDK.
"""
