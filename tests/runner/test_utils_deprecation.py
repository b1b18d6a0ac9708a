"""deprecated_function and deprecated_api_warning."""

from __future__ import annotations

import logging

import pytest

from treadle.logging import Logger
from treadle.runner.utils import deprecated_api_warning, deprecated_function


@pytest.fixture
def log_records():
    logger = Logger.get_instance("test_utils_deprecation")
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    logger.addHandler(handler)
    yield records
    logger.removeHandler(handler)


def test_deprecated_function_warns_once_through_the_current_logger(log_records):
    @deprecated_function("0.2.0", "0.3.0", "use `load_weights` instead")
    def load_params(path):
        """Load parameters.

        Args:
            path: where they are.
        """
        return path

    assert load_params("a") == "a" and load_params("b") == "b"
    warnings = [r.getMessage() for r in log_records if r.levelno == logging.WARNING]
    assert warnings == [
        f"'{__name__}.test_deprecated_function_warns_once_through_the_current_logger.<locals>."
        "load_params' is deprecated in version 0.2.0 and will be removed in version 0.3.0. "
        "Please use `load_weights` instead."
    ]
    assert load_params.__name__ == "load_params"
    # MMEngine's layout, which code reads: the note, then the text indented under it.
    assert load_params.__doc__ == (
        ".. deprecated:: 0.2.0\n"
        "    Deprecated and will be removed in version 0.3.0.\n"
        "    Please use `load_weights` instead.\n"
        "\n\n"
        "    Load parameters.\n"
        "\n"
        "    Args:\n"
        "        path: where they are.\n"
    )


def test_deprecated_function_docstring_of_several_summary_lines():
    @deprecated_function("0.2.0", "0.3.0", "do y")
    def old():
        """A summary that goes
        on a second line.

        Returns:
            nothing.
        """

    assert old.__doc__.endswith(
        "\n\n\n    A summary that goes\n    on a second line.\n\n    Returns:\n        nothing.\n"
    )

    @deprecated_function("0.2.0", "0.3.0", "do y")
    def short():
        """Short summary."""

    assert short.__doc__.endswith("    Please do y.\n\n\n    Short summary.")


def test_deprecated_function_without_docstring():
    @deprecated_function("1.0", "2.0", "use x")
    def old():
        return 1

    assert old.__doc__ == (
        ".. deprecated:: 1.0\n"
        "    Deprecated and will be removed in version 2.0.\n"
        "    Please use x.\n"
        "\n\n"
    )


def test_deprecated_api_warning_moves_old_names_to_new_ones():
    @deprecated_api_warning({"in_channel": "in_channels"}, cls_name="Conv")
    def conv(in_channels=3, bias=True):
        return in_channels, bias

    with pytest.warns(
        DeprecationWarning,
        match='"in_channel" is deprecated in `Conv.conv`, please use "in_channels" instead',
    ):
        assert conv(in_channel=8, bias=False) == (8, False)
    assert conv(5) == (5, True)


def test_deprecated_api_warning_on_a_method_names_the_method():
    class Conv:
        @deprecated_api_warning({"old": "new"})
        def forward(self, new=1):
            return new

    with pytest.warns(DeprecationWarning, match='"old" is deprecated in `forward`'):
        assert Conv().forward(old=2) == 2


def test_deprecated_api_warning_refuses_both_names():
    @deprecated_api_warning({"old": "new"})
    def func(new=1):
        return new

    with pytest.raises(
        TypeError, match="`func` got both 'old' \\(deprecated\\) and its replacement 'new'"
    ):
        func(old=1, new=2)
    # Also the AssertionError MMEngine raises there.
    with pytest.raises(AssertionError, match="pass only 'new'"):
        func(old=1, new=2)
