"""Kubeconfig documents whose user gets short-lived tokens from an exec credential plugin."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"


def exec_kubeconfig(name: str, server: str, ca_data: str, exec_block: Mapping[str, Any]) -> str:
    """A single-cluster kubeconfig (JSON) authenticating through an exec plugin.

    Args:
        name: the cluster, context and user name.
        server: the API server URL (``https://...``).
        ca_data: the cluster CA, base64 PEM (``certificate-authority-data``).
        exec_block: the user's ``exec`` entry (``command``, ``args`` ...); ``apiVersion`` defaults
            to ``client.authentication.k8s.io/v1beta1``.

    Returns:
        the kubeconfig as indented JSON (no static credentials in it).
    """
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": name, "cluster": {"server": server, "certificate-authority-data": ca_data}}
            ],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [
                {"name": name, "user": {"exec": {"apiVersion": EXEC_API_VERSION, **exec_block}}}
            ],
        },
        indent=2,
    )
