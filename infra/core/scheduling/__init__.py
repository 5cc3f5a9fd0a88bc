"""The kube-scheduler's filters as pure predicates, and the nodes and pods they judge.

``predicates`` decides whether a pod fits a node (node selector and required node affinity,
taints and tolerations, resources) or a namespace's ResourceQuota; ``nodes`` builds the node the
cluster-autoscaler imagines at zero and the node as it runs, from a plan; ``workloads`` builds
every pod the plan emits or describes. ``proof`` runs one over the other; ``build_plan`` runs it,
so the plan is read through ``stack.Plan``, not imported. May import the operator, warm, integrations, the cross-platform modules and the platforms' plan types, plus
``eks.autoscaler`` (the template tags, read as cluster-autoscaler reads them); no Pulumi, no SDK.
"""
