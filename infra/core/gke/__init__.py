"""GKE planning: the cluster, its GPU node pools and their ComputeClass fallbacks.

`planner.plan_gke` is the entry; `cluster`, `pools`, `rules`, `series`, `names` (project-scoped
names per stack) and `versions` (GKE version gates) decide one concern each, and `model` holds the
plan dataclasses they return. `platform` is GKE's ``Platform`` (``infra.core.platform``), answering
from the plan with `nodes` (the scheduling proof's nodes), `sent` (receiver checks and claims),
`cost` (priced nodes and lines), `capacity` (quota sizings) and `presets` (its GPU Operator presets,
with `driver_installer`: Google's COS driver installer DaemonSet). May import: `infra.core.config`,
the cross-platform modules (`pools`, `labels`, `sharing`, `errors`, `system_pool`, `kubeconfig`),
the neutral values a platform answers with (`platform`, `nodes`, `sent`, `sizing`,
`platform_cost`), `catalog` and `rules`; never another platform's package, Pulumi or a cloud SDK.
"""
