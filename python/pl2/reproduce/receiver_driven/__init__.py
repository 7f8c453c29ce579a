"""The receiver-driven family (issue 19): slowdown by message size for Homa, pHost, NDP, DCTCP and RDS on W1–W5 in the Homa paper's network."""
