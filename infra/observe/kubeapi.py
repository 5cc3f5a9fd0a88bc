"""The observe step's reads of an existing cluster's Kubernetes API (GKE's ComputeClasses).

No Pulumi provider function lists Kubernetes objects, so the step asks the API server itself:
``GET https://<endpoint><path>`` with the cluster's CA and a bearer token of the stack's cloud
provider identity (GKE: ``gcp.organizations.get_client_config().access_token``, the pattern the
pulumi-gcp docs give for a Kubernetes provider of a GKE cluster: "Configure Kubernetes Provider
With OAuth2 Access Token"). A 404 (the resource type is not served) is ``NotServed``; any other
failure is ``KubeReadError`` with the API's reason, which the step turns into an
``ObserveError``. ``READ`` is the function the step calls: the mock engine sets it to one
answering from its fake account (``infra.mocklive.kube_read``) for the length of a run.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from infra.core.observed import ClusterAccess

TIMEOUT_S = 30


class NotServed(Exception):
    """The API server answered 404: it serves no such resource type (the CRD is not installed)."""


class KubeReadError(Exception):
    """A read the API server refused or that did not reach it; the text is the reason."""


def https_read(cluster: ClusterAccess, token: str, path: str) -> Any:
    """The JSON body of ``GET https://<endpoint><path>`` with ``token`` as the bearer, the server
    verified by the cluster's CA (base64 PEM)."""
    try:
        ca = base64.b64decode(cluster["certificate_authority"]).decode()
        context = ssl.create_default_context(cadata=ca)
    except (ValueError, ssl.SSLError) as e:
        raise KubeReadError(f"the cluster's CA certificate is not usable ({e})") from e
    request = urllib.request.Request(
        f"https://{cluster['endpoint']}{path}",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, context=context, timeout=TIMEOUT_S) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            raise NotServed(path) from e
        # A refusal's body is a metav1.Status whose message says why (RBAC's "forbidden: ...").
        detail = _status_message(e.read())
        raise KubeReadError(f"HTTP {e.code} {e.reason}" + (f": {detail}" if detail else "")) from e
    except (OSError, ValueError) as e:  # unreachable, TLS refused, not JSON
        raise KubeReadError(str(e)) from e


def _status_message(body: bytes) -> str:
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    return str(doc.get("message") or "") if isinstance(doc, dict) else ""


Read = Callable[[ClusterAccess, str, str], Any]  # (cluster, bearer token, path) -> JSON body
READ: ContextVar[Read] = ContextVar("kube_read", default=https_read)
