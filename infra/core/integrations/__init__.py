"""Workload integrations: one module per consumer (JupyterHub, Kubeflow, Flyte, plain Kubernetes),
each a pure function of the pools' scheduling hints."""
