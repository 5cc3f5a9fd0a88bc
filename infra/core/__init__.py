"""Pure decisions: a stack's config in, a `Plan` out. No Pulumi and no cloud SDK
(`tests/unit/test_purity.py`); modules import only the layers below their own
(`tests/unit/test_layers.py`)."""
