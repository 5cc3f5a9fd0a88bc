"""What an offline plan shows where only the live platform knows a value.

``python -m infra.plan`` reads nothing live (``Observed.none()``): an existing cluster's endpoint,
CA and OIDC issuer, the account in an ARN, the EKS default version of an add-on without a pin are
these placeholders, never a real cluster's (an RFC 5737 documentation address, the account ID AWS
documentation uses). The mock engine answers with the same ones. ``pulumi up`` never sends them:
its observe step reads the real values, or stops.
"""

from __future__ import annotations

# RFC 5737 TEST-NET-3: an address that is never a real API server.
ENDPOINT = "203.0.113.10"
# A base64 PEM envelope around "mock": no real certificate.
CERTIFICATE_AUTHORITY = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm1vY2sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
)
# The account ID of AWS's documentation examples.
AWS_ACCOUNT = "123456789012"
SECURITY_GROUP_ID = "sg-0123456789abcdef0"
VPC_ID = "vpc-0123456789abcdef0"


def eks_oidc_issuer(region: str) -> str:
    """An EKS OIDC issuer in ``region`` (without ``https://``, as the plan keeps issuers)."""
    return f"oidc.eks.{region}.amazonaws.com/id/MOCK0000000000000000000000000000"


def oidc_provider_arn(issuer_url: str) -> str:
    """The IAM OIDC provider ARN for an issuer URL (``https://`` dropped, as IAM names it)."""
    return f"arn:aws:iam::{AWS_ACCOUNT}:oidc-provider/{issuer_url.removeprefix('https://')}"


def eks_addon_default(kubernetes_version: str) -> str:
    """The version shown for an add-on without a pin: EKS's default, known only at deploy time."""
    return f"(EKS default for {kubernetes_version} at deploy time)"
