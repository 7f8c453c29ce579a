"""Placeholder."""
NAME = "compare-pod"
TITLE = "compare-pod"


def run(ctx):
    return "not yet"
