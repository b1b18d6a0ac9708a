"""LmdbBackend: read values from an LMDB database by key (the ``lmdb`` extra)."""

from __future__ import annotations

import os

from ..errors import StorageError
from ..optional import missing_extra
from .base import BaseStorageBackend, PathLike

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class LmdbBackend(BaseStorageBackend):
    """Values of an LMDB database, read by key: ``get(key)`` is the value stored under
    ``str(key)`` (UTF-8 encoded), as MMEngine's LmdbBackend reads image datasets packed in LMDB.

    Args:
        db_path: the database directory (or file, with ``subdir=False``).
        readonly: passed to ``lmdb.open``, as ``lock`` and ``readahead`` are; the defaults of
            the three suit many readers.
        lock: passed to ``lmdb.open``.
        readahead: passed to ``lmdb.open``.
        **kwargs: other ``lmdb.open`` arguments (``max_readers``, ``subdir``, ...).

    The database is opened on first read, not in the constructor, so a backend made in the
    main process can be sent to DataLoader workers, each of which opens its own environment
    (an open LMDB environment must not cross a fork).

    ``get_text(key)`` decodes the value, where MMEngine's LmdbBackend refuses text reads
    (NotImplementedError); under treadle.compat it refuses them too (``text_reads``).

    Example:
        >>> backend = LmdbBackend('data/train.lmdb')
        >>> backend.get('images/0001.jpg')  # doctest: +SKIP
        b'\\xff\\xd8...'
    """

    #: Whether get_text decodes values. treadle.compat's install() turns it off, for MMEngine's
    #: behaviour: its LmdbBackend holds encoded images and raises NotImplementedError there.
    text_reads: ClassVar[bool] = True

    def __init__(
        self,
        db_path: PathLike,
        readonly: bool = True,
        lock: bool = False,
        readahead: bool = False,
        **kwargs: Any,
    ) -> None:
        if not isinstance(db_path, str | os.PathLike):
            raise TypeError(
                f"LmdbBackend's db_path must be a str or os.PathLike, got {type(db_path).__name__}"
            )
        self.db_path = os.fspath(db_path)
        self._options = dict(readonly=readonly, lock=lock, readahead=readahead, **kwargs)
        self._env: Any = None

    def _environment(self) -> Any:
        if self._env is None:
            try:
                import lmdb
            except ImportError as exc:
                raise missing_extra("LmdbBackend", "lmdb", "lmdb") from exc
            if not os.path.exists(self.db_path):
                raise FileNotFoundError(2, "No LMDB database (LmdbBackend, db_path)", self.db_path)
            try:
                self._env = lmdb.open(self.db_path, **self._options)
            except lmdb.Error as exc:
                raise StorageError(
                    f"LmdbBackend cannot open the LMDB database {self.db_path!r}: {exc}",
                    backend=self.name,
                    path=self.db_path,
                ) from exc
        return self._env

    def get(self, filepath: PathLike) -> bytes:
        key = os.fspath(filepath)
        with self._environment().begin(write=False) as txn:
            value = txn.get(key.encode("utf-8"))
        if value is None:
            # MMEngine returns None here, which fails later, far from the missing key.
            raise FileNotFoundError(
                2, f"No such key in the LMDB database {self.db_path!r} (LmdbBackend)", key
            )
        return bytes(value)

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        if not type(self).text_reads:
            raise NotImplementedError(
                "LmdbBackend.get_text is off (LmdbBackend.text_reads is False, as treadle.compat "
                "sets it: MMEngine's LmdbBackend does not read text): read the bytes with "
                "get(key) and decode them"
            )
        return self.get(filepath).decode(encoding)

    def exists(self, filepath: PathLike) -> bool:
        with self._environment().begin(write=False) as txn:
            return txn.get(os.fspath(filepath).encode("utf-8")) is not None

    isfile = exists

    def close(self) -> None:
        """Close the database; the next read opens it again."""
        if self._env is not None:
            self._env.close()
            self._env = None

    def __getstate__(self) -> dict[str, Any]:
        # An open environment cannot be pickled; the copy opens its own.
        state = self.__dict__.copy()
        state["_env"] = None
        return state
