"""``LaunchError``: a run that cannot start its process group as configured.

It lives here, away from the Runner, so that the ``treadle`` command can name it among the
errors it reports in one line without importing torch first.
"""

from __future__ import annotations


class LaunchError(RuntimeError):
    """The run cannot start its process group as configured (a launcher's environment
    variables are missing, or the backend needs devices this machine lacks): a mistake in how
    the run was launched or configured, which the ``treadle`` command reports without a
    traceback.

    Example:
        >>> raise LaunchError("launcher='pytorch' needs RANK")  # doctest: +SKIP
    """
