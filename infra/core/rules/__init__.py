"""Field rules: every stack-file value checked as the API that receives it would check it.

One place per rule, one module per receiver (kubernetes, images_paths, gcp, aws with the EC2 IDs,
durations); this package re-exports them all. Each rule is a plain function ``check_*(value) ->
value`` raising ``ValueError`` with the reason (value shortened, rule named) and an ``Annotated``
type the config schemas use. Each cites its primary source in a one-line comment and has a test
named after it (tests/unit/test_config_rules.py and its siblings by receiver, _images_paths, _gcp
and _aws; durations: test_durations.py; IDs and accounts: test_config_rules_ids.py). May import only `errors` and the standard library (limits come from
`infra/core/data/receiver_limits.csv` through `limits`; the NodePool duration patterns from the
vendored CRD).
"""

from __future__ import annotations

from typing import Annotated

from infra.core.rules._common import _rule
from infra.core.rules.aws import (
    MAX_EKS_PUBLIC_CIDRS,
    check_access_scope_namespace,
    check_az_id,
    check_capacity_reservation_id,
    check_ec2_instance_type,
    check_eks_cluster_name,
    check_eks_version,
    check_iam_principal_arn,
    check_ipv4_cidr,
    check_public_access_cidrs,
    check_subnet_id,
    check_vpc_cidr,
    check_vpc_id,
)
from infra.core.rules.durations import (
    MAX_FLEX_RUN_SECONDS,
    check_consolidate_after,
    check_go_duration,
    check_max_run_duration,
    check_nodepool_duration,
    check_termination_grace_period,
    go_duration_ns,
)
from infra.core.rules.gcp import (
    check_gce_labels,
    check_gce_machine_type,
    check_gce_network,
    check_gce_resource_name,
    check_gce_subnetwork,
    check_gcp_project_id,
    check_gcp_service_account_email,
    check_gke_cluster_name,
    check_gke_version,
    check_pool_name,
    check_reservation_name,
    check_rrule,
    gpu_type_hint,
)
from infra.core.rules.images_paths import (
    MAX_ENV_VALUE,
    MAX_PATH,
    check_host_path,
    check_image_reference,
    check_image_repository,
    check_image_tag,
    check_kubeconfig_context,
    check_kubeconfig_path,
    check_operator_values,
    check_runtime_class,
    check_toolkit_env,
)
from infra.core.rules.kubernetes import (
    EKS_MAX_LABEL,
    EKS_RESERVED_LABEL_PREFIXES,
    POD_SECURITY_PREFIX,
    SHARED_NAMESPACES,
    SYSTEM_PRIORITY_CLASSES,
    check_dns1123_label,
    check_dns1123_subdomain,
    check_eks_node_labels,
    check_eks_taint_key,
    check_gpu_namespace_labels,
    check_label_value,
    check_labels,
    check_namespace,
    check_node_labels,
    check_operator_namespace,
    check_qualified_name,
    check_taint_key,
    check_taint_value,
)

# --- Annotated types the schemas use ------------------------------------------------------------
Dns1123Label = Annotated[str, _rule(check_dns1123_label)]
Dns1123Subdomain = Annotated[str, _rule(check_dns1123_subdomain)]
NamespaceName = Annotated[str, _rule(check_namespace)]
OperatorNamespace = Annotated[str, _rule(check_operator_namespace)]
NodeName = Dns1123Subdomain  # Node names are DNS-1123 subdomains
RuntimeClassName = Annotated[str, _rule(check_runtime_class)]
Labels = Annotated[dict[str, str], _rule(check_labels)]
NodeLabels = Annotated[dict[str, str], _rule(check_node_labels)]
GpuNamespaceLabels = Annotated[dict[str, str], _rule(check_gpu_namespace_labels)]
TaintKey = Annotated[str, _rule(check_taint_key)]
TaintValue = Annotated[str, _rule(check_taint_value)]
EksNodeLabels = Annotated[dict[str, str], _rule(check_eks_node_labels)]
EksTaintKey = Annotated[str, _rule(check_eks_taint_key)]
GkeClusterName = Annotated[str, _rule(check_gke_cluster_name)]
PoolName = Annotated[str, _rule(check_pool_name)]
EksClusterName = Annotated[str, _rule(check_eks_cluster_name)]
GceNetwork = Annotated[str, _rule(check_gce_network)]
GceSubnetwork = Annotated[str, _rule(check_gce_subnetwork)]
RRule = Annotated[str, _rule(check_rrule)]
MaxRunDuration = Annotated[str, _rule(check_max_run_duration)]
# Go durations, one type per receiver parser (rules/durations.py)
GoDuration = Annotated[str, _rule(check_go_duration)]
NodePoolTerminationGracePeriod = Annotated[str, _rule(check_termination_grace_period)]
AccessScopeNamespace = Annotated[str, _rule(check_access_scope_namespace)]
ImageReference = Annotated[str, _rule(check_image_reference)]
ImageRepository = Annotated[str, _rule(check_image_repository)]
ImageTag = Annotated[str, _rule(check_image_tag)]
HostPath = Annotated[str, _rule(check_host_path)]
KubeconfigPath = Annotated[str, _rule(check_kubeconfig_path)]
KubeconfigContext = Annotated[str, _rule(check_kubeconfig_context)]
GceLabels = Annotated[dict[str, str], _rule(check_gce_labels)]
GceResourceName = Annotated[str, _rule(check_gce_resource_name)]
GcpServiceAccountEmail = Annotated[str, _rule(check_gcp_service_account_email)]
ReservationName = Annotated[str, _rule(check_reservation_name)]
GkeVersion = Annotated[str, _rule(check_gke_version)]
EksVersion = Annotated[str, _rule(check_eks_version)]
GceMachineType = Annotated[str, _rule(check_gce_machine_type)]
Ec2InstanceType = Annotated[str, _rule(check_ec2_instance_type)]
AzId = Annotated[str, _rule(check_az_id)]
Ipv4Cidr = Annotated[str, _rule(check_ipv4_cidr)]
VpcCidr = Annotated[str, _rule(check_vpc_cidr)]
PublicAccessCidrs = Annotated[list[str], _rule(check_public_access_cidrs)]
IamPrincipalArn = Annotated[str, _rule(check_iam_principal_arn)]
# EC2 IDs, one rule per kind the schema takes
VpcId = Annotated[str, _rule(check_vpc_id)]
SubnetId = Annotated[str, _rule(check_subnet_id)]
CapacityReservationId = Annotated[str, _rule(check_capacity_reservation_id)]


__all__ = [
    "EKS_MAX_LABEL",
    "EKS_RESERVED_LABEL_PREFIXES",
    "MAX_EKS_PUBLIC_CIDRS",
    "MAX_ENV_VALUE",
    "MAX_FLEX_RUN_SECONDS",
    "MAX_PATH",
    "POD_SECURITY_PREFIX",
    "SHARED_NAMESPACES",
    "SYSTEM_PRIORITY_CLASSES",
    "AccessScopeNamespace",
    "AzId",
    "CapacityReservationId",
    "Dns1123Label",
    "Dns1123Subdomain",
    "Ec2InstanceType",
    "EksClusterName",
    "EksNodeLabels",
    "EksTaintKey",
    "EksVersion",
    "GceLabels",
    "GceMachineType",
    "GceNetwork",
    "GceResourceName",
    "GceSubnetwork",
    "GcpServiceAccountEmail",
    "GkeClusterName",
    "GkeVersion",
    "GoDuration",
    "GpuNamespaceLabels",
    "HostPath",
    "IamPrincipalArn",
    "ImageReference",
    "ImageRepository",
    "ImageTag",
    "Ipv4Cidr",
    "KubeconfigPath",
    "Labels",
    "MaxRunDuration",
    "NamespaceName",
    "NodeLabels",
    "NodeName",
    "NodePoolTerminationGracePeriod",
    "OperatorNamespace",
    "PoolName",
    "PublicAccessCidrs",
    "RRule",
    "ReservationName",
    "RuntimeClassName",
    "SubnetId",
    "TaintKey",
    "TaintValue",
    "VpcCidr",
    "VpcId",
    "check_access_scope_namespace",
    "check_az_id",
    "check_capacity_reservation_id",
    "check_consolidate_after",
    "check_dns1123_label",
    "check_dns1123_subdomain",
    "check_ec2_instance_type",
    "check_eks_cluster_name",
    "check_eks_node_labels",
    "check_eks_taint_key",
    "check_eks_version",
    "check_gce_labels",
    "check_gce_machine_type",
    "check_gce_network",
    "check_gce_resource_name",
    "check_gce_subnetwork",
    "check_gcp_project_id",
    "check_gcp_service_account_email",
    "check_gke_cluster_name",
    "check_gke_version",
    "check_go_duration",
    "check_gpu_namespace_labels",
    "check_host_path",
    "check_iam_principal_arn",
    "check_image_reference",
    "check_image_repository",
    "check_image_tag",
    "check_ipv4_cidr",
    "check_kubeconfig_context",
    "check_kubeconfig_path",
    "check_label_value",
    "check_labels",
    "check_max_run_duration",
    "check_namespace",
    "check_node_labels",
    "check_nodepool_duration",
    "check_operator_namespace",
    "check_operator_values",
    "check_pool_name",
    "check_public_access_cidrs",
    "check_qualified_name",
    "check_reservation_name",
    "check_rrule",
    "check_runtime_class",
    "check_subnet_id",
    "check_taint_key",
    "check_taint_value",
    "check_termination_grace_period",
    "check_toolkit_env",
    "check_vpc_cidr",
    "check_vpc_id",
    "go_duration_ns",
    "gpu_type_hint",
]
