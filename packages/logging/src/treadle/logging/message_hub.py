"""``MessageHub``: where the parts of a training run leave scalars and facts for each other."""

from __future__ import annotations

import warnings

from .errors import LoggingKeyError, LoggingTypeError, LoggingValueError
from .history_buffer import HistoryBuffer
from .manager import ManagerMixin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

# What every scalar update calls (as _append does), looked up once.
_update = HistoryBuffer.update
_STATE_KEYS = ("log_scalars", "runtime_info", "resumed_keys")


def _known_keys(keys: Any, limit: int = 20) -> str:
    names = sorted(map(str, keys))
    if not names:
        return "none"
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


class MessageHub(ManagerMixin):
    """Scalars (as ``HistoryBuffer``\\ s) and runtime information shared across a run.

    Hooks and loops write the losses, learning rates and facts such as the current epoch; the
    logger hook reads them. Tensors given as scalars are kept unread until a buffer is read, so
    updating never synchronizes the device. Each key is marked ``resumed`` or not the first time it
    is written; only resumed keys go into ``state_dict()`` and so into checkpoints.

    A writer may hold back values it has recorded and write them only when they are read: set
    ``pending_writer`` to a function of no arguments and every read (``get_scalar``,
    ``log_scalars``, ``get_info``, ``runtime_info``, ``state_dict``) calls it first. A train
    loop that skips its recording hooks at most steps uses it so that whatever reads the hub
    sees every step's values; while no writer is set, a read costs one attribute test more.

    Args:
        name: the instance name.
        log_scalars: initial ``{key: HistoryBuffer}``.
        runtime_info: initial ``{key: value}``.
        resumed_keys: ``{key: bool}`` for keys of the two dicts above; keys left out are not
            saved by ``state_dict()``.

    Example:
        >>> hub = MessageHub.get_instance('train')
        >>> hub.update_scalars({'loss': 0.5, 'acc': {'value': 30, 'count': 40}})
        >>> hub.update_info('epoch', 3)
        >>> hub.get_scalar('loss').current(), hub.get_scalar('acc').mean(), hub.get_info('epoch')
        (0.5, 0.75, 3)
        >>> restored = MessageHub('copy')
        >>> restored.load_state_dict(hub.state_dict())
        >>> restored.get_info('epoch')
        3
        >>> held = [0.25, 0.5]
        >>> hub.pending_writer = lambda: hub.extend_scalar('held', held) or held.clear()
        >>> hub.get_scalar('held').data[0]
        [0.25, 0.5]
        >>> hub.pending_writer = None
    """

    # get_current_instance() with no instance yet creates this one: hooks can always reach a hub.
    default_instance_name = "treadle"

    def __init__(
        self,
        name: str,
        log_scalars: dict[str, HistoryBuffer] | None = None,
        runtime_info: dict[str, Any] | None = None,
        resumed_keys: dict[str, bool] | None = None,
    ) -> None:
        super().__init__(name)
        self._log_scalars: dict[str, HistoryBuffer] = self._check_dict("log_scalars", log_scalars)
        self._runtime_info: dict[str, Any] = self._check_dict("runtime_info", runtime_info)
        self._resumed_keys: dict[str, bool] = self._check_dict("resumed_keys", resumed_keys)
        # Called before every read to write what was recorded but not written yet (see the
        # class docstring); None while nothing is held back.
        self.pending_writer: Callable[[], None] | None = None
        for key, value in self._log_scalars.items():
            if not isinstance(value, HistoryBuffer):
                raise LoggingTypeError(
                    f"log_scalars[{key!r}] must be a HistoryBuffer, got {type(value).__name__}"
                )
        for key in self._resumed_keys:
            if key not in self._log_scalars and key not in self._runtime_info:
                raise LoggingKeyError(
                    f"resumed_keys names {key!r}, which is in neither log_scalars nor runtime_info"
                )

    def _write_pending(self) -> None:
        """Call ``pending_writer``; reads made while it writes (its own, or those of code it
        calls) see the hub as it is, rather than calling it again."""
        writer = self.pending_writer
        if writer is None:
            return
        self.pending_writer = None
        try:
            writer()
        finally:
            # Unless the writer replaced itself meanwhile.
            if self.pending_writer is None:
                self.pending_writer = writer

    @staticmethod
    def _check_dict(argument: str, value: Any) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise TypeError(f"{argument} must be a dict or None, got {type(value).__name__}")
        return dict(value)

    def _check_resumed(self, key: str, resumed: bool) -> bool | None:
        """Return the key's flag (None if it has none); raise if ``resumed`` contradicts it."""
        flag = self._resumed_keys.get(key)
        if flag is not None and flag != resumed:
            raise LoggingValueError(
                f"MessageHub {self.instance_name!r}: key {key!r} was first written with "
                f"resumed={flag} and cannot be written with resumed={resumed}"
            )
        return flag

    def update_scalar(self, key: str, value: Any, count: int = 1, resumed: bool = True) -> None:
        """Append ``value`` (a sum over ``count`` samples) to the buffer of ``key``.

        ``value`` is an int, a float, a one-element tensor (kept unread: no device sync) or a
        numpy scalar or one-element array.
        """
        buffer = self._log_scalars.get(key)
        if buffer is not None and type(count) is int and self._resumed_keys.get(key) is resumed:
            # The per-step case (a known key, written as before): straight to the buffer
            # (_append's work inline: this runs several times a step).
            try:
                _update(buffer, value, count)
            except (TypeError, ValueError) as error:
                raise type(error)(
                    f"MessageHub {self.instance_name!r}: scalar {key!r}: {error}"
                ) from None
            return
        self._add_scalar(key, HistoryBuffer.update, value, count, resumed)

    def extend_scalar(
        self, key: str, values: Iterable[Any], count: int = 1, resumed: bool = True
    ) -> None:
        """Append each of ``values`` (each a sum over ``count`` samples) to the buffer of
        ``key``: the same as :meth:`update_scalar` for each in turn, in one call.

        The train loops hand over the losses and timings of every step since the last logged
        one this way. A bad value leaves the buffer as it was.

        Example:
            >>> hub = MessageHub('demo-extend')
            >>> hub.extend_scalar('train/time', [0.25, 0.5, 0.75])
            >>> hub.get_scalar('train/time').mean()
            0.5
        """
        values = list(values)
        if not values:
            # Checked all the same, so that a wrong call fails before it is ever given values.
            self._check_resumed(key, resumed)
            self._check_count(key, count)
            return
        # Called once per logging interval, not per step: no short path for known keys.
        self._add_scalar(key, HistoryBuffer.extend, values, count, resumed)

    def _check_count(self, key: str, count: Any) -> None:
        if not isinstance(count, int):
            raise LoggingTypeError(
                f"MessageHub {self.instance_name!r}: the count of scalar {key!r} must be an int, "
                f"got {type(count).__name__}: {count!r}"
            )

    def _add_scalar(
        self,
        key: str,
        add: Callable[[HistoryBuffer, Any, int], None],
        value: Any,
        count: int,
        resumed: bool,
    ) -> None:
        """``add(buffer, value, count)`` to the buffer of ``key``, made if it is new, after
        checking ``count`` and ``resumed``."""
        flag = self._check_resumed(key, resumed)
        self._check_count(key, count)
        buffer = self._log_scalars.get(key)
        new = buffer is None
        if buffer is None:
            buffer = HistoryBuffer()
        self._append(key, buffer, value, count, add)
        # Registered only once a valid value is in, so a failed first update leaves no trace.
        if new:
            self._log_scalars[key] = buffer
        if flag is None:
            self._resumed_keys[key] = resumed

    def _append(
        self,
        key: str,
        buffer: HistoryBuffer,
        value: Any,
        count: int,
        add: Callable[[HistoryBuffer, Any, int], None] = HistoryBuffer.update,
    ) -> None:
        try:
            add(buffer, value, count)
        except (TypeError, ValueError) as error:
            raise type(error)(
                f"MessageHub {self.instance_name!r}: scalar {key!r}: {error}"
            ) from None

    def update_scalars(self, log_dict: dict[str, Any], resumed: bool = True) -> None:
        """Update several scalars; a value may be ``{'value': v, 'count': n}``.

        Example:
            >>> hub = MessageHub('demo')
            >>> hub.update_scalars({'loss': 0.25, 'top1': {'value': 9, 'count': 10}})
        """
        if not isinstance(log_dict, dict):
            raise LoggingTypeError(f"log_dict must be a dict, got {type(log_dict).__name__}")
        for key, value in log_dict.items():
            if isinstance(value, dict):
                if "value" not in value:
                    raise LoggingKeyError(
                        f"MessageHub {self.instance_name!r}: log_dict[{key!r}] is a dict, so it "
                        f"must hold 'value' (and optionally 'count'); it holds "
                        f"{_known_keys(value)}"
                    )
                self.update_scalar(key, value["value"], value.get("count", 1), resumed)
            else:
                self.update_scalar(key, value, 1, resumed)

    def update_info(self, key: str, value: Any, resumed: bool = True) -> None:
        """Set the runtime information ``key`` to ``value`` (stored as is, not copied)."""
        if self._resumed_keys.get(key) is resumed:
            # A key written as before (the train loops write 'iter' at every step).
            self._runtime_info[key] = value
            return
        flag = self._check_resumed(key, resumed)
        self._runtime_info[key] = value
        if flag is None:
            self._resumed_keys[key] = resumed

    def update_info_dict(self, info_dict: dict[str, Any], resumed: bool = True) -> None:
        """Set several pieces of runtime information."""
        if not isinstance(info_dict, dict):
            raise LoggingTypeError(f"info_dict must be a dict, got {type(info_dict).__name__}")
        for key, value in info_dict.items():
            self.update_info(key, value, resumed)

    def pop_info(self, key: str, default: Any = None) -> Any:
        """Remove the runtime information ``key`` and return it (``default`` if absent)."""
        value = self._runtime_info.pop(key, default)
        if key not in self._log_scalars:
            # The key is gone entirely: it may come back with another resumed flag.
            self._resumed_keys.pop(key, None)
        return value

    @property
    def log_scalars(self) -> dict[str, HistoryBuffer]:
        """All scalars, ``{key: HistoryBuffer}``."""
        if self.pending_writer is not None:
            self._write_pending()
        return self._log_scalars

    @property
    def runtime_info(self) -> dict[str, Any]:
        """All runtime information, ``{key: value}``."""
        if self.pending_writer is not None:
            self._write_pending()
        return self._runtime_info

    def get_scalar(self, key: str) -> HistoryBuffer:
        """Return the ``HistoryBuffer`` of ``key``; KeyError if it was never updated."""
        if self.pending_writer is not None:
            self._write_pending()
        buffer = self._log_scalars.get(key)
        if buffer is None:
            raise KeyError(
                f"MessageHub {self.instance_name!r} has no scalar {key!r}; its scalars: "
                f"{_known_keys(self._log_scalars)}"
            )
        return buffer

    def get_info(self, key: str, default: Any = None) -> Any:
        """Return the runtime information ``key``, or ``default`` (None) when there is none,
        as MMEngine does: hooks ask for keys that a loop may not have written yet."""
        if self.pending_writer is not None:
            self._write_pending()
        return self._runtime_info.get(key, default)

    def state_dict(self) -> dict[str, Any]:
        """Return copies of the resumed scalars and runtime information, for a checkpoint.

        Runtime information that cannot be deep-copied is returned itself, not a copy, with a
        warning (as MMEngine does: the object is still saved, but later changes to it show in
        the returned state).
        """
        import copy  # imported here: only checkpoints need it

        if self.pending_writer is not None:
            self._write_pending()
        scalars = {
            key: copy.deepcopy(buffer)
            for key, buffer in self._log_scalars.items()
            if self._resumed_keys.get(key, False)
        }
        info: dict[str, Any] = {}
        for key, value in self._runtime_info.items():
            if not self._resumed_keys.get(key, False):
                continue
            try:
                info[key] = copy.deepcopy(value)
            except Exception as error:  # anything deepcopy raises: the object itself is saved
                warnings.warn(
                    f"MessageHub {self.instance_name!r}: runtime info {key!r} cannot be copied "
                    f"({type(error).__name__}: {error}), so state_dict() holds the object "
                    "itself (later changes to it show in the state)",
                    stacklevel=2,
                )
                info[key] = value
        return {
            "log_scalars": scalars,
            "runtime_info": info,
            "resumed_keys": dict(self._resumed_keys),
        }

    def load_state_dict(self, state_dict: dict[str, Any] | MessageHub) -> None:
        """Load a ``state_dict()`` (or every key of another ``MessageHub``) into this hub.

        Keys already here and absent from ``state_dict`` are kept; keys in both take the loaded
        value and resumed flag.
        """
        import copy

        if isinstance(state_dict, MessageHub):
            source = state_dict
            source._write_pending()
            state_dict = {
                "log_scalars": source._log_scalars,
                "runtime_info": source._runtime_info,
                "resumed_keys": source._resumed_keys,
            }
        elif not isinstance(state_dict, dict):
            raise TypeError(
                f"load_state_dict takes a dict from MessageHub.state_dict() or a MessageHub, got "
                f"{type(state_dict).__name__}"
            )
        missing = [key for key in _STATE_KEYS if key not in state_dict]
        if missing:
            raise LoggingKeyError(
                f"MessageHub {self.instance_name!r}: the state dict lacks {', '.join(missing)} "
                f"(it holds {_known_keys(state_dict)})"
            )
        for key, buffer in state_dict["log_scalars"].items():
            if not isinstance(buffer, HistoryBuffer):
                warnings.warn(
                    f"MessageHub {self.instance_name!r}: log_scalars[{key!r}] is a "
                    f"{type(buffer).__name__}, not a HistoryBuffer, so it is not loaded",
                    stacklevel=2,
                )
                continue
            self._log_scalars[key] = copy.deepcopy(buffer)
        for key, value in state_dict["runtime_info"].items():
            try:
                self._runtime_info[key] = copy.deepcopy(value)
            except Exception:  # an object deepcopy cannot copy: share it rather than lose it
                self._runtime_info[key] = value
        for key, resumed in state_dict["resumed_keys"].items():
            if key in self._log_scalars or key in self._runtime_info:
                self._resumed_keys[key] = resumed

    def __repr__(self) -> str:
        return (
            f"<MessageHub {self.instance_name!r}: {len(self._log_scalars)} scalars, "
            f"{len(self._runtime_info)} runtime info keys>"
        )
