"""GPU Operator presets: which of the platform's presets (``Platform.presets``) serves the stack's
pools, and its chart values as settings with reasons."""

from __future__ import annotations

from collections.abc import Sequence

from infra.core.config.stack import StackConfig
from infra.core.errors import Issues
from infra.core.operator.helm_values import Setting, is_cdi_era
from infra.core.platform import Platform, Preset, PresetInputs
from infra.core.pools import PoolHints, PoolSpecs, spec_of

# --------------------------------------------------------------------------------------------------
# Preset choice and preset values


def choose_preset(
    config: StackConfig,
    pools: Sequence[PoolHints],
    platform: Platform,
    specs: PoolSpecs,
    issues: Issues,
) -> Preset | None:
    """The preset: ``gpuOperator.preset`` if given, else the platform's; checked against every
    pool."""
    allowed = platform.presets()
    given = config.operator.preset
    if given is not None and given not in allowed:
        issues.add(
            "gpuOperator.preset",
            f"{given!r} is not a preset for platform {config.platform}; "
            f"use one of: {', '.join(allowed)}",
        )
        return None
    preset = allowed[given or platform.default_preset(pools)]
    ok = True
    for h in pools:
        i, pool = spec_of(specs, h)
        problem = preset.problem(h)
        if problem is None:
            continue
        ok = False
        if given is not None:
            issues.add("gpuOperator.preset", f"{given!r} {problem} (gpuPools[{i}] {h.name})")
        else:
            issues.add(
                platform.driver_key(i, pool),
                f"{problem}; one operator install serves every pool, so pools must agree "
                f"(preset {preset.name!r} chosen from gpuPools[0])",
            )
    if platform.features.own_hardware and pools:
        first = pools[0].driver
        for h in pools[1:]:
            if h.driver != first:
                ok = False
                i, pool = spec_of(specs, h)
                issues.add(
                    platform.driver_key(i, pool),
                    f"{h.driver!r} differs from gpuPools[0]'s {first!r}; one operator install "
                    "either installs the driver on every GPU node or on none",
                )
    return preset if ok else None


def preset_settings(
    preset: Preset, version: str, platform: Platform, pools: Sequence[PoolHints]
) -> list[Setting]:
    """The values ``preset`` overrides for chart ``version``, each with its reason."""
    cdi = is_cdi_era(version)
    data = platform.catalog.data_dir
    found = preset.settings(PresetInputs(version, cdi, platform.kubernetes_version, pools, data))
    return [Setting(path, value, f"preset {preset.name}: {why}") for path, value, why in found]


def preset_notes(preset: Preset, version: str) -> list[str]:
    """Where a preset departs from NVIDIA's or the distribution's documented setup, with the
    source, for ``gpuOperator.notes``."""
    return preset.notes(version, is_cdi_era(version))
