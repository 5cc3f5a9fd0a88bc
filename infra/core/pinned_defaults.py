"""The config defaults the catalog decides: what a stack that names no GPU Operator chart
version, smoke-test image or JupyterHub notebook images gets, from ``pins.csv`` of the catalog the
plan is built with (``--old-catalog``: the old side's), so that a gpu-infra update moving a pin
shows in ``--diff`` as the update ``pulumi up`` makes. The operator planner decides them first;
its release and profiles record them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from infra.core.catalog.pins import pin, pins
from infra.core.config.operator import DEFAULT_JUPYTER_CHOICES, JupyterImageSpec
from infra.core.config.stack import StackConfig

OPERATOR_PIN, SMOKE_TEST_PIN, NOTEBOOK_PIN = "gpu-operator", "cuda-smoke-test", "jupyter-notebook"


def with_pinned_defaults(config: StackConfig, data_dir: Path) -> StackConfig:
    """``config`` with every default above decided against the catalog in ``data_dir``."""
    op, hub = config.operator, config.integrations.jupyterhub
    update: dict[str, str] = {}
    if op.version is None:
        update["version"] = pin(OPERATOR_PIN, data_dir).version
    if op.smoke_test_image is None:
        update["smoke_test_image"] = pin(SMOKE_TEST_PIN, data_dir).image
    if hub.images is None:
        notebooks = pins(NOTEBOOK_PIN, data_dir)
        images = [
            JupyterImageSpec(name=n, display_name=d, image=notebooks[n].image)
            for n, d in DEFAULT_JUPYTER_CHOICES
        ]
        hub = hub.model_copy(update={"images": images})
    integrations = config.integrations.model_copy(update={"jupyterhub": hub})
    return dataclasses.replace(
        config, operator=op.model_copy(update=update), integrations=integrations
    )
