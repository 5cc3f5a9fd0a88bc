"""Workload integrations: one module per consumer (JupyterHub, Kubeflow, Flyte, plain Kubernetes),
each a pure function of the pools' scheduling hints, so none can disagree with the pools.

May import: `config`, `catalog`, the cross-platform modules (`pools`, `labels`, `sharing`, `nodes`)
and the platform seam (`platform`: a pool's selector, labels and own sharing are the platform's to
say); never a platform package, the operator, Pulumi or a cloud SDK.
"""

INTEGRATIONS = ("jupyterhub", "kubeflow", "flyte", "kubernetes")
