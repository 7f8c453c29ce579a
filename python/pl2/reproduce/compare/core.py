"""Placeholder."""
NAME = "compare-core"
TITLE = "compare-core"


def run(ctx):
    return "not yet"
