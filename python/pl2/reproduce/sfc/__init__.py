"""The SFC family: the IEEE 802.1 Source Flow Control slides (seed 003) reproduced."""
