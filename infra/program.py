"""The Pulumi program: config -> plan (pure) -> resources (thin) -> stack outputs.

``run()`` is what ``pulumi up`` executes (via ``infra/__main__.py``) and what ``python -m infra.plan``
executes on the mock engine. Config errors end the program with ``pulumi.RunError`` (no traceback).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pulumi

from infra.core import platforms
from infra.core.catalog.vendored import Catalog
from infra.core.config.stack import PROJECT, StackConfig, decode_engine_config, parse
from infra.core.errors import ConfigErrors
from infra.core.plan import Plan, build_plan
from infra.core.pools import GPU_RESOURCE, PoolHints

if TYPE_CHECKING:
    from infra.components.handles import ClusterHandle
    from infra.core.observed import Observed


def engine_config() -> dict[str, Any]:
    """Every config key the engine passes to this program, structured values decoded."""
    # pulumi.Config only answers for keys it is asked about; unknown-key checks need them all.
    from pulumi.runtime import config as runtime_config

    from infra.core.config.secrets import masked

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    secret = set(runtime_config.get_config_secret_keys_env())
    # A secret's plaintext never reaches the parser: the component reads it as a secret output.
    raw = masked(raw, lambda k: k in secret or runtime_config.is_config_secret(k), PROJECT)
    return decode_engine_config(raw)


def load(catalog: Catalog) -> StackConfig:
    """Parse this stack's config as the engine hands it over, for a plan over ``catalog``."""
    return parse(engine_config(), pulumi.get_stack(), catalog.data_dir)


def run(catalog: Catalog | None = None, observed: Observed | None = None) -> dict[str, Any]:
    """Entry point of the Pulumi program: observe, plan, build.

    ``catalog``: the vendored one unless an offline plan compares against an earlier catalog.
    ``observed``: what an offline plan assumes is running (``Observed.none()``, or what the old
    side of ``--diff`` left); ``None`` on ``pulumi up``, where the observe step of the stack's
    platform reads it, before anything is planned.
    """
    try:
        catalog = catalog or Catalog.load()
        config = load(catalog)
        live = observed if observed is not None else _observe(config, catalog)
        plan = build_plan(config, catalog, live)
    except ConfigErrors as e:
        raise pulumi.RunError(f"invalid stack config:\n{e}") from None
    return build(plan)


def _observe(config: StackConfig, catalog: Catalog) -> Observed:
    """The observe step of the stack's platform for a plan over ``catalog``; a failed read ends
    the run (no traceback)."""
    from infra.core.observed import ObserveError
    from infra.observe import observe

    try:
        return observe(config, catalog)
    except ObserveError as e:
        raise pulumi.RunError(f"could not read the live platform:\n{e}") from None


def pool_outputs(pool: PoolHints) -> dict[str, Any]:
    """What a workload needs to land on a pool (also in ``python -m infra.plan`` output)."""
    return {
        "gpuModel": pool.gpu_model,
        "gpuType": pool.gpu_type,
        "gpusPerNode": pool.gpus_per_node,
        "resourceName": GPU_RESOURCE,
        "nodeSelector": dict(pool.node_selector),
        "tolerations": pool.tolerations(),
        "spot": pool.spot,
        "minNodes": pool.min_nodes,
        "maxNodes": pool.max_nodes,
    }


def gpu_pool_outputs(plan: Plan) -> dict[str, dict[str, Any]]:
    """Per pool, the scheduling hints; the operator's (sharing- and MIG-aware) refine the base ones."""
    out = {p.name: pool_outputs(p) for p in plan.pools}
    if plan.operator is not None:
        for name, hints in plan.operator.scheduling.items():
            out[name] = {**out.get(name, {}), **hints}
    return plan.platform.pool_outputs(out)


def _collect_autonamed() -> dict[str, pulumi.Resource]:
    """Logical name -> resource of every resource registered from now on whose physical name
    Pulumi makes up (a random suffix: ``infra.planview.placeholders.AUTONAMED_KINDS``). The stack
    exports their real names and ARNs (``deployedNames``), so ``infra.plan --export
    --stack-outputs`` can fill in what the offline export can only name by logical name."""
    from infra.planview.placeholders import AUTONAMED_KINDS

    found: dict[str, pulumi.Resource] = {}

    def collect(args: pulumi.ResourceTransformationArgs) -> None:
        keys = AUTONAMED_KINDS.get(args.type_)
        # The SDK hands the inputs over under their Python names (nodeGroupName: node_group_name).
        snake = [re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower() for k in keys or ()]
        if keys is not None and not any(args.props.get(k) is not None for k in snake):
            found[args.name] = args.resource

    # A stack transformation sees every resource with its object (the stack's root resource is
    # fresh each run, so nothing carries over between mock-engine runs).
    pulumi.runtime.register_stack_transformation(collect)
    return found


def build(plan: Plan) -> dict[str, Any]:
    """Create every resource of ``plan`` and export the stack outputs; returns the outputs."""
    # The platform's components (the registry's entry), imported for its stacks only.
    builder = platforms.load(platforms.ENTRIES[plan.config.platform].components)
    autonamed = _collect_autonamed()
    cluster: ClusterHandle = builder(plan)
    outputs: dict[str, Any] = {
        "clusterName": cluster.name,
        "clusterEndpoint": cluster.endpoint,
        "kubeconfig": cluster.kubeconfig,
        "gpuPools": gpu_pool_outputs(plan),
    }
    outputs.update(plan.platform.outputs)
    if plan.operator is not None:
        from infra.components.gpu_operator import build_operator

        outputs.update(build_operator(plan, cluster))
    if plan.warm is not None:
        from infra.components.warm import build_warm

        outputs.update(build_warm(plan, cluster))
    if autonamed:
        # The physical name is the output of the kind's name input (name, nodeGroupName).
        outputs["deployedNames"] = {
            name: {
                "name": getattr(r, "node_group_name", None) or getattr(r, "name", None),
                "arn": getattr(r, "arn", None),
            }
            for name, r in autonamed.items()
        }
    for key, value in outputs.items():
        pulumi.export(key, value)
    return outputs
