"""Command line interface: `routertwin run`, `routertwin validate`."""

import sys


def main(argv=None) -> int:
    print("routertwin: no commands yet", file=sys.stderr)
    return 2
