"""The Polo slides' evaluation (issue 20), one module per experiment; see `common`."""
