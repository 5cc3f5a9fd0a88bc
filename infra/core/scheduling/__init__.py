"""The kube-scheduler's filters as pure predicates, and the pods they judge against a plan's nodes.

``predicates`` decides whether a pod fits a node (node selector and required node affinity,
taints and tolerations, resources) or a namespace's ResourceQuota; the nodes are the platform's
(``Platform.pool_nodes``: the node as it runs, and the node the autoscaler imagines at zero);
``workloads`` builds every pod the plan emits or describes; ``priority`` compares their priorities
with the warm placeholders'. ``proof`` runs one over the other on the ``Plan``. May import the
plan, the operator, warm, integrations and the cross-platform modules; never a platform's package,
Pulumi or an SDK.
"""
