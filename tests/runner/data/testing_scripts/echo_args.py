"""A script for check_python_script's tests: records its argv and imports a sibling module."""

import sys

import sibling_helper

if __name__ == "__main__":
    sibling_helper.CALLS.append(list(sys.argv))
    if "--fail" in sys.argv:
        sys.exit(3)
