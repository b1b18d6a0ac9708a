"""Suspicious input that MMEngine accepts: drawn or written as MMEngine does, with a warning;
refused only in the strict mode this module switches on.

treadle.visual follows MMEngine 0.10.7 on input that looks like a mistake but that MMEngine
takes without a word: a per-item list longer than the items (the extra entries are ignored), a
shorter one for shapes (matplotlib repeats it in turn), a mask or feature-map opacity outside
[0, 1] (the blend is extrapolated and clipped to 0-255), an image with values outside 0-255 or
of dtype bool (cast to uint8: 300 wraps to 44, True becomes 1), and scalars that are not
numbers (``scalars.json`` holds them as JSON). Each such call warns with a
:class:`SuspiciousInputWarning` that says what was done; ``StrictChecks.enabled`` (or the
environment variable ``TREADLE_VISUAL_STRICT=1`` at import) turns each of them into the error
treadle raised before it followed MMEngine.

Example:
    >>> import warnings
    >>> from treadle.visual.strict_checks import StrictChecks, SuspiciousInputWarning
    >>> StrictChecks.enabled  # off unless TREADLE_VISUAL_STRICT is set
    False
    >>> warnings.simplefilter('error', SuspiciousInputWarning)  # or: raise on every one
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["STRICT_ENV", "StrictChecks", "SuspiciousInputWarning", "suspicious"]

STRICT_ENV = "TREADLE_VISUAL_STRICT"
"""Set to anything but ``""`` or ``"0"`` to start with ``StrictChecks.enabled = True``."""


class SuspiciousInputWarning(UserWarning):
    """Input MMEngine accepts that is probably a mistake; the warning says what was done with it.

    Example:
        >>> issubclass(SuspiciousInputWarning, UserWarning)
        True
    """


class StrictChecks:
    """Whether treadle.visual refuses suspicious input instead of warning (off by default).

    A class-level switch, like :class:`~treadle.visual.mmengine_checks.MMEngineChecks`: it
    affects every Visualizer and backend of the process. Under it, each input this module's
    docstring lists raises the ``ValueError`` or ``TypeError`` that names it.

    Example:
        >>> StrictChecks.enabled = True   # refuse, e.g. in a project's own tests
        >>> StrictChecks.enabled = False  # MMEngine's leniency, with a warning (the default)
    """

    enabled: bool = os.environ.get(STRICT_ENV, "") not in ("", "0")


def suspicious(error: Exception, warning: str) -> None:
    """Raise ``error`` under strict checks; else warn with ``warning`` (what is done instead).

    The warning points at the first caller outside treadle.visual (the user's drawing call, or
    the hook that made it), wherever in the package the input was found.

    Example:
        >>> suspicious(ValueError('alphas has 2 entries for 1 mask'), 'the extra one is ignored')
        ... # doctest: +SKIP
    """
    if StrictChecks.enabled:
        raise error
    warnings.warn(warning, SuspiciousInputWarning, stacklevel=_outside_the_package())


def _outside_the_package() -> int:
    """The ``stacklevel`` of the first frame, above the caller of ``warnings.warn`` (level 1),
    whose module is not part of treadle.visual."""
    frame, level = sys._getframe(1), 1  # the function calling warnings.warn
    while frame.f_back is not None and frame.f_globals.get("__name__", "").startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


_PACKAGE = __name__.rsplit(".", 1)[0] + "."  # "treadle.visual."
