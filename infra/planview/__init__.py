"""What `python -m infra.plan` prints besides the plan itself: the table, the change review, the
fleet, the GitOps export, pinned zones, catalog comparisons and notes."""
