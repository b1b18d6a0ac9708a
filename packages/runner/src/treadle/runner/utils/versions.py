"""Version strings as comparable tuples, and the git commit of the working folder."""

from __future__ import annotations

import os
import re

# PEP 440, the parts digit_version uses: release, pre-release, post-release, development.
_VERSION = re.compile(
    r"""^\s*v?
    (?:\d+!)?
    (?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?
    (?P<post>-(?P<post_implicit>\d+)|[-_.]?(?:post|rev|r)[-_.]?(?P<post_n>\d+)?)?
    (?P<dev>[-_.]?dev[-_.]?\d*)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)

# A pre-release sorts before its release; development releases before every pre-release.
_PRE_RANK = {"a": -3, "alpha": -3, "b": -2, "beta": -2, "c": -1, "rc": -1, "pre": -1, "preview": -1}
_DEV_RANK = -4


def digit_version(version_str: str, length: int = 4) -> tuple[int, ...]:
    """``version_str`` as a tuple of ints that compares like the versions do: the release padded
    (or cut) to ``length`` numbers, then two numbers for a pre-, post- or development release.

    Example:
        >>> digit_version('2.1.0') > digit_version('2.1.0rc1') > digit_version('2.0.9')
        True
        >>> digit_version('1.2rc1')
        (1, 2, 0, 0, -1, 1)
    """
    if not isinstance(version_str, str):
        raise TypeError(
            f"digit_version needs a version string, got {type(version_str).__name__}: "
            f"{version_str!r}"
        )
    match = _VERSION.match(version_str)
    if match is None:
        raise ValueError(f"digit_version: {version_str!r} is not a PEP 440 version")
    release = [int(part) for part in match["release"].split(".")][:length]
    release += [0] * (length - len(release))
    if match["pre"]:
        release += [_PRE_RANK[match["pre"].lower()], int(match["pre_n"] or 0)]
    elif match["dev"]:
        release += [_DEV_RANK, 0]
    elif match["post"]:
        release += [1, int(match["post_implicit"] or match["post_n"] or 0)]
    else:
        release += [0, 0]
    return tuple(release)


def get_git_hash(fallback: str = "unknown", digits: int | None = None) -> str:
    """The commit the current folder's git checkout is at (its first ``digits`` characters when
    given), or ``fallback`` outside a checkout or without git.

    Example:
        >>> get_git_hash(digits=7)  # doctest: +SKIP
        '8fe65cf'
    """
    if digits is not None and not isinstance(digits, int):
        raise TypeError(f"digits must be an int or None, got {type(digits).__name__}: {digits!r}")
    import subprocess

    # A fixed locale keeps git's output parseable whatever the user's language.
    env = {key: os.environ[key] for key in ("SYSTEMROOT", "PATH", "HOME") if key in os.environ}
    env.update(LANGUAGE="C", LANG="C", LC_ALL="C")
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, env=env, check=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return fallback
    sha = result.stdout.decode("ascii", "replace").strip()
    return sha[:digits] if digits is not None else sha
