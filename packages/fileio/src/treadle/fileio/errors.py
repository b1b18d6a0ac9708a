"""Errors that name the path and the backend a failed operation was about."""

from __future__ import annotations

import errno


class StorageError(OSError):
    """A storage operation failed for a reason other than a missing file.

    ``backend`` is the backend's name and ``path`` the path the user wrote; object-store
    backends also set ``bucket`` and ``key``. The original error is chained as ``__cause__``.

    Example:
        >>> try:
        ...     treadle.fileio.get('s3://bucket/key')
        ... except StorageError as err:
        ...     print(err.bucket, err.key)
    """

    def __init__(
        self,
        message: str,
        *,
        backend: str,
        path: str,
        bucket: str | None = None,
        key: str | None = None,
    ) -> None:
        super().__init__(message)
        self.backend = backend
        self.path = path
        self.bucket = bucket
        self.key = key


class UnknownBackendError(ValueError, KeyError):
    """No backend is registered under the name, or for the path prefix, that was asked for.

    A ValueError, and also a KeyError because MMEngine raises KeyError there, so that
    ``except KeyError`` in ported code still catches it.

    Example:
        >>> try:
        ...     treadle.fileio.get('nope://a/b')
        ... except UnknownBackendError as err:
        ...     print(err)  # lists the registered prefixes
    """

    # KeyError would quote the message like a missing key; print it as written.
    __str__ = BaseException.__str__


class FileioTypeError(TypeError, AssertionError):
    """An argument of the wrong type where MMEngine's fileio asserts.

    A TypeError, which is what it is, and also an AssertionError, which MMEngine raises for the
    same input, so that both ``except`` clauses of ported code catch it.

    Example:
        >>> try:
        ...     treadle.fileio.register_backend('mine', MyBackend, prefixes=1)
        ... except AssertionError as err:
        ...     isinstance(err, TypeError)
        True
    """


class UnsupportedBackendError(NotImplementedError, ImportError):
    """A backend treadle.fileio names but cannot serve, because the client it needs is not
    publicly available (SenseTime's Petrel SDK, the in-house memcached client).

    A NotImplementedError, and also an ImportError, which MMEngine raises when that client is
    not installed, so that code falling back on ``except ImportError`` still falls back.

    Example:
        >>> try:
        ...     treadle.fileio.PetrelBackend()
        ... except ImportError as err:
        ...     print(err)  # says why, and what to use instead
    """


def file_not_found(path: object, backend: str, detail: str = "") -> FileNotFoundError:
    """A FileNotFoundError whose message names the path and the backend.

    ``str(err)`` reads ``[Errno 2] No such file or directory (S3Backend, bucket 'b'): 's3://b/k'``
    and ``err.filename`` is the path, as with the built-in error.
    """
    where = f"{backend}, {detail}" if detail else backend
    return FileNotFoundError(errno.ENOENT, f"No such file or directory ({where})", str(path))
