"""Planning for ``platform: kubernetes``: an existing (on-prem, k3s, RKE2) cluster and its GPU nodes.

`planner.plan_kubernetes` is the entry; `platform` is its ``Platform`` (``infra.core.platform``),
`presets` its GPU Operator presets (one per distribution's containerd).
May import: `infra.core.config`, the cross-platform modules, the neutral values a platform answers
with (`platform`, `nodes`) and `catalog`; never another platform's package, Pulumi or a cloud SDK.
"""
