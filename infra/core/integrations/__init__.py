"""Workload integrations: one module per consumer (JupyterHub, Kubeflow, Flyte, plain Kubernetes),
each a pure function of the pools' scheduling hints, so none can disagree with the pools."""

INTEGRATIONS = ("jupyterhub", "kubeflow", "flyte", "kubernetes")
