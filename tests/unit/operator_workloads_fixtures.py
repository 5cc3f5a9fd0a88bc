"""What the GPU Operator workload modules share: the A100 pool they plan MIG and sharing on."""

from __future__ import annotations

A100 = {"gpu_type": "nvidia-tesla-a100", "gpu_model": "A100-40GB"}
