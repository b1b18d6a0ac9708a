"""The text of a log line: its header (``Epoch(train)  [1][  10/1563]``) and its values.

The spacing is MMEngine 0.10's, character for character, so that tools which parse MMEngine
logs read treadle's too.
"""

from __future__ import annotations

import datetime
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _is_array(value: Any) -> bool:
    # Neither torch nor numpy is imported for this: a value can only be one of their arrays if
    # the program imported them.
    for module, name in (("torch", "Tensor"), ("numpy", "ndarray")):
        kind = getattr(sys.modules.get(module), name, None)
        if kind is not None and isinstance(value, kind):
            return True
    return False


def format_value(value: Any, num_digits: int) -> str:
    """A float with ``num_digits`` decimals; an array on lines of its own; anything else as is."""
    if isinstance(value, float):
        return f"{value:.{num_digits}f}"
    if _is_array(value):
        return f"\n{value}\n"
    return f"{value}"


def format_items(items: dict[str, Any], num_digits: int) -> str:
    """``'name: value  name: value'``."""
    return "  ".join(f"{name}: {format_value(value, num_digits)}" for name, value in items.items())


def format_eta(seconds: float) -> str:
    """``1103.5`` → ``'0:18:23'``."""
    return str(datetime.timedelta(seconds=int(seconds)))


def _count(current: int, total: int | None) -> str:
    # The current count is right-aligned to the width of the total, so that columns line up.
    if total is None:
        return f"{current}"
    return f"{str(current).rjust(len(str(total)))}/{total}"


def iter_header(
    mode: str,
    *,
    by_epoch: bool,
    current: int,
    total: int | None,
    epoch: int | None = None,
    max_epochs: int | None = None,
) -> str:
    """The header of a line logged after an iteration, with its two trailing spaces.

    Example:
        >>> iter_header('train', by_epoch=True, current=10, total=1563, epoch=1, max_epochs=12)
        'Epoch(train)  [1][  10/1563]  '
        >>> iter_header('train', by_epoch=False, current=10, total=1000)
        'Iter(train) [  10/1000]  '
    """
    if not by_epoch:
        return f"Iter({mode}) [{_count(current, total)}]  "
    if epoch is None:
        return f"Epoch({mode}) [{_count(current, total)}]  "
    epoch_str = f"[{epoch}]"
    if max_epochs is not None:
        # Right-aligned to the widest epoch: "[9]" and "[10]" end in the same column.
        epoch_str = epoch_str.rjust(len(str(max_epochs)) + 3)
    else:
        # MMEngine writes "Epoch(val)[0]" here, without the space every other line has.
        epoch_str = f" {epoch_str}"
    return f"Epoch({mode}){epoch_str}[{_count(current, total)}]  "


def epoch_header(mode: str, *, by_epoch: bool, total: int | None, epoch: int | None) -> str:
    """The header of the line logged after a val or test epoch, with its trailing spaces.

    Example:
        >>> epoch_header('val', by_epoch=True, total=3, epoch=2)
        'Epoch(val) [2][3/3]    '
    """
    count = "?" if total is None else f"{total}/{total}"
    if not by_epoch:
        head = f"Iter({mode}) [{count}]"
    elif epoch is None:
        head = f"Epoch({mode}) [{count}]"
    else:
        head = f"Epoch({mode}) [{epoch}][{count}]"
    return f"{head}    "


def format_pass_time(mode: str, seconds: float) -> str:
    """How long a val/test pass took, for the end of its line; a unit, since the line's other
    times are per iteration; a short pass gets one more decimal.

    Example:
        >>> format_pass_time('val', 12.345)
        'val_time: 12.3s'
        >>> format_pass_time('test', 0.256)
        'test_time: 0.26s'
    """
    return f"{mode}_time: {seconds:.{2 if seconds < 10 else 1}f}s"
