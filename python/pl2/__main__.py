"""`python -m pl2`: the command line."""

from __future__ import annotations

from pl2.cli import main

if __name__ == "__main__":
    main()
