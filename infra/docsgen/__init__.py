"""Generated parts of the docs: the config reference, the code layout, the lifecycle table and
every figure quoted from the sample stacks, each between markers in README.md or a docs/ page.

``python -m infra.docsgen --write`` rewrites them; without ``--write`` it lists the stale ones and
exits 1. Tests compare each block with what its generator makes now.
"""
