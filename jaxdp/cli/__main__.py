"""``python -m jaxdp.cli``: the ``jaxdp`` command."""
import sys

from jaxdp.cli import main

if __name__ == "__main__":
    sys.exit(main())
