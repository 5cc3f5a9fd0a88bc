"""Workload integrations: one module per consumer (JupyterHub, Kubeflow, Flyte, plain Kubernetes),
each a pure function of the pools' scheduling hints, so none can disagree with the pools.

May import: `config`, `catalog` and the cross-platform modules (`pools`, `labels`, `sharing`); never a
platform package, the operator, Pulumi or a cloud SDK.
"""

INTEGRATIONS = ("jupyterhub", "kubeflow", "flyte", "kubernetes")
