"""Thin Pulumi ComponentResources that map a `Plan` onto resources; they decide nothing."""
