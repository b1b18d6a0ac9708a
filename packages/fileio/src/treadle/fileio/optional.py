"""Optional dependencies: imported only when a path needs them, with errors naming the extra."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def missing_extra(what: str, module: str, extra: str) -> ImportError:
    """The ImportError raised when ``module`` (shipped by ``treadle-fileio[extra]``) is missing."""
    return ImportError(
        f"{what} needs {module!r}, which is not installed: "
        f"pip install 'treadle-fileio[{extra}]' (or pip install {module})"
    )


# MMEngine 0.10 sends s3:// to SenseTime's Petrel SDK: a ported program learns here why it
# needs boto3 now.
_S3 = "S3Backend (s3:// paths, which treadle reads with boto3, not MMEngine's Petrel SDK)"


def import_boto3(what: str = _S3) -> ModuleType:
    """Import boto3, or raise an ImportError naming the ``s3`` extra."""
    try:
        import boto3
    except ImportError as exc:
        raise missing_extra(what, "boto3", "s3") from exc
    module: ModuleType = boto3  # boto3 ships no stubs: Any to the checker
    return module
