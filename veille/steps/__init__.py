"""The flow's steps, one module per step (named like its task in ``tasks/``): pure functions only."""
