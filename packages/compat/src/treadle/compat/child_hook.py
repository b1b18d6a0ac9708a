"""Imported by a ``forkserver`` process started while the hook is installed (see
:mod:`treadle.compat.children`): installs the hook there, so the children it forks have it."""

from .finder import install

install()
