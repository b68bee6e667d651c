"""Stress tests: perturb responses and measure whether metrics notice (``dialeval stress``)."""
