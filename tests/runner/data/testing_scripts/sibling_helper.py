"""Imported by echo_args.py from its own folder, as ``python echo_args.py`` would allow."""

CALLS = []
