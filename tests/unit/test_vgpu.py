"""The vGPU driver mode: the chart's vGPU keys as the vendored values spell them, the licensing and
pull Secrets from Pulumi secrets (or existing ones) before the release, the licence-waiting smoke
test, and every misconfiguration reported at its key without showing a secret."""

from __future__ import annotations

from typing import Any

import pytest

from infra.core.catalog.runtime_facts import OPERATOR, runtime_fact
from infra.core.catalog.vendored import DATA_DIR
from infra.core.config.secrets import FROM_ENGINE, masked, secret_refs
from infra.core.config.stack import parse
from infra.core.operator.helm_values import chart_defaults, default_at, vendored_versions
from infra.core.operator.model import ConfigSecret, RegistryAuth
from infra.core.operator.objects import LICENSE_CHECK_LABEL, LICENSED_SMI
from infra.core.operator.vgpu import (
    CLIENT_TOKEN,
    GRIDD_CONF,
    LICENSING_SECRET,
    PULL_SECRET,
    SECRET_LICENSING_FROM,
    registry_host,
)
from tests.unit.operator_fixtures import errors, plan

CIPHER = {"secure": "v1:bm9uY2U=:Y2lwaGVydGV4dA=="}
SECRETS = {
    "gpu-infra:vgpuLicenseConfig": CIPHER,
    "gpu-infra:vgpuLicenseToken": CIPHER,
    "gpu-infra:vgpuRegistryPassword": CIPHER,
}
VGPU = {
    "driverRepository": "registry.example.internal/nvidia",
    "driverVersion": "580.95.05",
    "pullSecret": {"username": "puller"},
}


def _raw(driver: str = "vgpu") -> dict[str, Any]:
    from tests.unit.operator_fixtures import CLUSTERS

    return {
        "gpu-infra:platform": "kubernetes",
        "gpu-infra:cluster": CLUSTERS["kubernetes"],
        "gpu-infra:gpuPools": [
            {
                "name": "vgpu",
                "machineType": "vm",
                "gpu": {"model": "A40-24Q"},
                "nodeSelector": {"gpu-infra/pool": "vgpu"},
                "vcpus": 16,
                "memoryGib": 64,
                "maxNodes": 2,
                "driver": driver,
                "smokeTest": True,
            }
        ],
    }


def vgpu_stack(
    vgpu: dict[str, Any] | None = None,
    secrets: dict[str, Any] | None = None,
    operator: dict[str, Any] | None = None,
    driver: str = "vgpu",
    **extra: Any,
) -> Any:
    """A one-pool vGPU stack; ``vgpu={}`` leaves the block out."""
    from infra.core.config.stack import parse

    block = VGPU if vgpu is None else vgpu
    raw: dict[str, Any] = {
        **_raw(driver),
        "gpu-infra:gpuOperator": {**({"vgpu": block} if block else {}), **(operator or {})},
        **(SECRETS if secrets is None else secrets),
        **{f"gpu-infra:{k}": v for k, v in extra.items()},
    }
    return parse(raw, "vgpu")


def _hints(config: Any) -> Any:
    from tests.unit.operator_fixtures import hints_for

    return hints_for(config, driver="vgpu")


@pytest.mark.parametrize("version", vendored_versions())
def test_the_chart_keys_the_vgpu_mode_sets_are_the_vendored_values_keys(version):
    driver = chart_defaults(version)["driver"]
    assert {"repository", "image", "version", "imagePullSecrets", "licensingConfig"} <= set(driver)
    secret_name = "secretName" in driver["licensingConfig"]
    assert secret_name is (tuple(int(x) for x in version[1:].split(".")) >= SECRET_LICENSING_FROM)
    assert default_at(version, "driver.image") == "driver"  # the image name NVIDIA's build uses


@pytest.mark.parametrize(
    "version",
    [
        v
        for v in vendored_versions()
        if tuple(int(x) for x in v[1:].split(".")) >= SECRET_LICENSING_FROM
    ],
)
def test_the_licensing_secret_keys_are_the_file_names_the_operator_mounts(version):
    # gpu-operator internal/consts/consts.go VGPULicensingFileName, NLSClientTokenFileName.
    facts = {
        f: runtime_fact(OPERATOR, version, f, DATA_DIR)
        for f in ("vgpu.licensing-file", "vgpu.nls-token-file")
    }
    assert {k: f.value for k, f in facts.items() if f} == {
        "vgpu.licensing-file": GRIDD_CONF,
        "vgpu.nls-token-file": CLIENT_TOKEN,
    }


def test_secrets_are_created_before_the_release_and_the_chart_points_at_them():
    op = plan(vgpu_stack(), _hints(vgpu_stack()))
    assert op.release is not None
    driver = op.release.values["driver"]
    assert driver["repository"] == "registry.example.internal/nvidia"
    assert driver["version"] == "580.95.05"
    assert driver["imagePullSecrets"] == [PULL_SECRET]
    assert driver["licensingConfig"] == {"secretName": LICENSING_SECRET}  # nlsEnabled: the default
    secrets = {m["metadata"]["name"]: m for m in op.before_release if m["kind"] == "Secret"}
    licensing, pull = secrets[LICENSING_SECRET], secrets[PULL_SECRET]
    assert licensing["metadata"]["namespace"] == op.namespace
    assert licensing["stringData"] == {
        GRIDD_CONF: ConfigSecret("vgpuLicenseConfig"),
        CLIENT_TOKEN: ConfigSecret("vgpuLicenseToken"),
    }
    assert pull["type"] == "kubernetes.io/dockerconfigjson"
    assert pull["stringData"][".dockerconfigjson"] == RegistryAuth(
        "registry.example.internal", "puller", "vgpuRegistryPassword"
    )


def test_existing_secrets_are_named_and_none_is_created():
    vgpu = {
        **VGPU,
        "licensing": {"existingSecret": "licensing-config"},
        "pullSecret": {"existingSecret": "registry-secret"},
    }
    config = vgpu_stack(vgpu, secrets={})
    op = plan(config, _hints(config))
    assert op.release is not None
    assert op.release.values["driver"]["imagePullSecrets"] == ["registry-secret"]
    assert op.release.values["driver"]["licensingConfig"]["secretName"] == "licensing-config"
    assert [m for m in op.before_release if m["kind"] == "Secret"] == []


def test_without_nls_the_token_is_neither_mounted_nor_asked_for():
    vgpu = {**VGPU, "licensing": {"nls": False}}
    secrets = {k: v for k, v in SECRETS.items() if not k.endswith("LicenseToken")}
    config = vgpu_stack(vgpu, secrets)
    op = plan(config, _hints(config))
    assert op.release is not None
    assert op.release.values["driver"]["licensingConfig"]["nlsEnabled"] is False
    (licensing, _) = [m for m in op.before_release if m["kind"] == "Secret"]
    assert set(licensing["stringData"]) == {GRIDD_CONF}


def test_a_pre_v25_10_chart_is_refused_its_licence_would_sit_in_a_configmap():
    config = vgpu_stack(operator={"version": "v25.3.4"})
    assert "configMapName" in chart_defaults("v25.3.4")["driver"]["licensingConfig"]
    assert "ConfigMap" in errors(config, _hints(config))["gpuOperator.version"]


def test_missing_and_unused_secrets_are_errors_at_their_keys():
    config = vgpu_stack(secrets={"gpu-infra:vgpuLicenseConfig": CIPHER})
    found = errors(config, _hints(config))
    assert found["vgpuLicenseToken"].startswith("required: the Pulumi secret")
    assert found["vgpuRegistryPassword"].startswith("required: the Pulumi secret")
    existing = {**VGPU, "licensing": {"existingSecret": "x"}, "pullSecret": {"existingSecret": "y"}}
    config = vgpu_stack(existing)
    found = errors(config, _hints(config))
    assert "existingSecret names the Secret to use" in found["vgpuLicenseConfig"]
    assert "would not apply" in found["vgpuRegistryPassword"]


def test_a_plain_secret_value_is_refused_without_showing_it():
    from infra.core.errors import ConfigErrors

    with pytest.raises(ConfigErrors) as e:
        vgpu_stack(secrets={**SECRETS, "gpu-infra:vgpuLicenseToken": "tok-123456"})
    text = str(e.value)
    assert "vgpuLicenseToken: must be a Pulumi secret" in text and "tok-123456" not in text


def test_vgpu_pools_and_the_vgpu_block_need_each_other_and_the_operator():
    config = vgpu_stack(vgpu={}, secrets={})
    assert "needs gpuOperator.vgpu" in errors(config, _hints(config))["gpuPools[0].driver"]
    config = vgpu_stack(driver="operator")
    assert "no gpuPools entry has driver: vgpu" in errors(config)["gpuOperator.vgpu"]
    off = vgpu_stack(vgpu={}, secrets={}, operator={"enabled": False})
    assert "gpuOperator.enabled is false" in errors(off, _hints(off))["gpuPools[0].driver"]


def test_the_smoke_test_passes_only_once_the_driver_reports_a_licence():
    config = vgpu_stack()
    op = plan(config, _hints(config))
    (job,) = [m for m in op.after_release if m["kind"] == "Job"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["sh", "-c", LICENSED_SMI]
    assert "License Status +: Licensed" in LICENSED_SMI and "exit 1" in LICENSED_SMI
    assert job["metadata"]["labels"][LICENSE_CHECK_LABEL] == "true"
    # 60 polls of 10 s end well inside the Job's deadline.
    assert job["spec"]["activeDeadlineSeconds"] > 60 * 10


def _licence_job(config: Any) -> dict[str, Any]:
    (job,) = [m for m in plan(config, _hints(config)).after_release if m["kind"] == "Job"]
    return job


def test_a_licence_is_per_vm_so_the_check_runs_one_pod_on_each_node_the_pool_always_has():
    # nvidia-gridd licenses each guest separately (NVIDIA License System User Guide, one licence
    # per client VM): one pod per node, kept apart by required anti-affinity on the hostname.
    raw = {**_raw(), "gpu-infra:gpuOperator": {"vgpu": VGPU}, **SECRETS}
    raw["gpu-infra:gpuPools"] = [{**raw["gpu-infra:gpuPools"][0], "minNodes": 3, "maxNodes": 3}]
    config = parse(raw, "vgpu")
    job = _licence_job(config)
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (3, 3)
    template = job["spec"]["template"]
    (term,) = template["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    # Only this Job's pods repel each other: the selector is a label no earlier Job carries.
    ((key, value),) = term["labelSelector"]["matchLabels"].items()
    assert template["metadata"]["labels"][key] == value and value in job["metadata"]["name"]
    assert key not in job["metadata"]["labels"]


def test_listed_vgpu_nodes_are_each_checked_for_a_licence():
    raw = {**_raw(), "gpu-infra:gpuOperator": {"vgpu": VGPU}, **SECRETS}
    pool = {**raw["gpu-infra:gpuPools"][0], "nodes": ["vm-a", "vm-b"]}
    raw["gpu-infra:gpuPools"] = [pool]
    job = _licence_job(parse(raw, "vgpu"))
    assert job["spec"]["completions"] == 2


def test_a_passthrough_smoke_test_stays_one_pod():
    from tests.unit.operator_fixtures import stack

    config = stack("kubernetes", pools=[{"minNodes": 3, "maxNodes": 3, "smokeTest": True}])
    (job,) = [m for m in plan(config).after_release if m["kind"] == "Job"]
    assert "completions" not in job["spec"] and "affinity" not in job["spec"]["template"]["spec"]


def test_kubeflow_profiles_come_after_the_licence_checking_jobs():
    ns = [{"name": "team", "gpus": 1, "kubeflowProfile": {"owner": "a@example.com"}}]
    config = vgpu_stack(gpuNamespaces=ns)
    kinds = [m["kind"] for m in plan(config, _hints(config)).after_release]
    assert kinds.index("Job") < kinds.index("Profile")


def test_the_registry_host_is_the_repositorys_first_component_when_it_names_one():
    # distribution/reference: a first path component with '.', ':' or localhost is a host.
    assert registry_host("registry.example.internal/nvidia") == "registry.example.internal"
    assert registry_host("localhost:5000/nvidia") == "localhost:5000"
    assert registry_host("nvidia/driver") == "https://index.docker.io/v1/"


def test_a_secret_the_engine_decrypted_reaches_the_parser_as_a_reference_only():
    config = {"gpu-infra:vgpuLicenseToken": "plaintext-token", "gpu-infra:platform": "kubernetes"}
    out = masked(config, lambda k: k == "gpu-infra:vgpuLicenseToken", "gpu-infra")
    assert out["gpu-infra:vgpuLicenseToken"] == FROM_ENGINE
    assert "plaintext-token" not in repr(out)
    problems: list[tuple[str, str]] = []
    refs = secret_refs(
        {"vgpuLicenseToken": out["gpu-infra:vgpuLicenseToken"]}, lambda *a: problems.append(a)
    )
    assert problems == [] and refs["vgpuLicenseToken"].key == "vgpuLicenseToken"
    # Not marked secret by the engine: refused like a plain value in the stack file.
    unmasked = masked(config, lambda k: False, "gpu-infra")
    secret_refs(
        {"vgpuLicenseToken": unmasked["gpu-infra:vgpuLicenseToken"]}, lambda *a: problems.append(a)
    )
    assert problems and "must be a Pulumi secret" in problems[0][1]
