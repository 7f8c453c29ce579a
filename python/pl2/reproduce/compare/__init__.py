"""Every design on the same network (issue 26), one module per experiment; see `designs`."""
