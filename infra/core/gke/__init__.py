"""GKE planning: the cluster, its GPU node pools and their ComputeClass fallbacks.

`planner.plan_gke` is the entry; `cluster`, `pools`, `rules`, `series`, `names` (project-scoped
names per stack) and `versions` (GKE version gates) decide one concern each, and `model` holds the
plan dataclasses they return. May import: `infra.core.config`, the cross-platform modules (`pools`,
`labels`, `sharing`, `errors`, `system_pool`, `kubeconfig`), `catalog` and `rules`; never another
platform's package, Pulumi or a cloud SDK.
"""
