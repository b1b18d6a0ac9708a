"""Messages for a type that is not found and a build that fails.

Only the failure paths come here, so difflib and inspect are imported only when a build has
already gone wrong.
"""

from __future__ import annotations

from .entry_points import ENTRY_POINT_GROUP

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from .registry import Registry


def close_matches(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates closest to ``word``: same spelling in another case first, then difflib's."""
    import difflib

    candidates = sorted(set(candidates))
    same_case = [c for c in candidates if c.lower() == word.lower() and c != word]
    close = difflib.get_close_matches(word, candidates, n=n, cutoff=0.6)
    return list(dict.fromkeys(same_case + close))[:n]


def _tree(registry: Registry) -> list[Registry]:
    """Every registry of ``registry``'s tree, the root first, depth first."""
    found: list[Registry] = []
    pending = [registry.root]
    while pending:
        node = pending.pop()
        found.append(node)
        pending.extend(reversed(list(node.children.values())))
    return found


def _chain(registry: Registry) -> list[Registry]:
    """``registry`` and its ancestors: where a plain name is searched."""
    chain = []
    node: Registry | None = registry
    while node is not None:
        chain.append(node)
        node = node.parent
    return chain


def _label(registry: Registry) -> str:
    return f"the {registry.name!r} registry (scope {registry.scope!r})"


def missing_type_message(registry: Registry, key: str) -> str:
    """Why ``registry.get(key)`` found nothing: where it looked and what is close."""
    start: Registry | None = registry
    name, unknown_scope = key, ""
    while start is not None and "." in name:
        scope, name = name.split(".", 1)
        unknown_scope = scope
        start = start._registry_of_scope(scope)
    # "KEY is not in the SCOPE::NAME registry": MMEngine's words, which its users' tests match.
    head = f"{key} is not in the {registry.scope}::{registry.name} registry."
    if start is None:
        scopes = ", ".join(repr(node.scope) for node in _tree(registry))
        return (
            f"{head} No registry of scope {unknown_scope!r} exists in its tree (scopes: "
            f"{scopes}): no installed distribution declares {unknown_scope!r} in the "
            f"entry-point group {ENTRY_POINT_GROUP!r}, no module "
            f"'{unknown_scope}.registry' creates one, and {key!r} is no importable object "
            "either. Check the scope's spelling and that its project is installed."
        )
    searched = _chain(start)
    where = ", ".join(f"{node.scope!r} ({node.name})" for node in searched)
    message = f"{head} Searched the scopes {where}."
    suggestions = close_matches(name, (n for node in searched for n in node.module_dict))
    # The same name, or a close one, registered in a scope that was not searched.
    for node in _tree(registry):
        if node in searched:
            continue
        for match in close_matches(name, node.module_dict, n=2):
            suggestions.append(f"{node.scope}.{match}")
    if suggestions:
        message += f" Did you mean {', '.join(repr(s) for s in suggestions[:5])}?"
    return (
        f"{message} A type is found once the module that registers it is imported: through "
        f"the registry's `locations`, an entry point in the group {ENTRY_POINT_GROUP!r}, or "
        "`custom_imports` in the config."
    )


def _parameters(obj: Any) -> tuple[list[str], bool, list[str]] | None:
    """(keyword parameter names, whether **kwargs is accepted, required ones) of ``obj``'s
    call, or None when it has no readable signature."""
    import inspect

    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    names, required, var_keyword = [], [], False
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            var_keyword = True
        elif parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            names.append(parameter.name)
            if parameter.default is parameter.empty:
                required.append(parameter.name)
    return names, var_keyword, required


def _type_label(obj: Any, written: Any) -> str:
    if isinstance(written, str):
        return repr(written)
    name = getattr(obj, "__qualname__", None)
    if name is None:
        return repr(obj)  # a functools.partial or a callable object: its repr tells most
    module = getattr(obj, "__module__", None)
    return f"{module}.{name}" if module else name


def build_failure_message(
    obj: Any, written: Any, registry: Registry, kwargs: dict[str, Any], error: Exception
) -> str:
    """Message for ``obj(**kwargs)`` raising ``error``; ``written`` is the cfg's 'type'.

    For a TypeError, the call's signature tells which keywords it does not accept (with the
    closest accepted one) and which required ones are missing.
    """
    label = _type_label(obj, written)
    message = f"building {label} from {_label(registry)} failed: {type(error).__name__}: {error}"
    if not isinstance(error, TypeError):
        return message
    parameters = _parameters(obj)
    if parameters is None:
        return message
    names, var_keyword, required = parameters
    hints = []
    for key in [] if var_keyword else [key for key in kwargs if key not in names]:
        matches = close_matches(key, names, n=1)
        guess = f"; did you mean {matches[0]!r}?" if matches else ""
        hints.append(f"{key!r} is not a parameter of {label}{guess}")
    if hints:
        hints.append(f"{label} accepts: {', '.join(names) if names else 'no keywords'}")
    missing = [name for name in required if name not in kwargs]
    if missing:
        hints.append(f"missing required parameters: {', '.join(missing)}")
    return "\n  ".join([message, *hints])


def rewrap(error: Exception, message: str) -> Exception:
    """An exception of ``error``'s type carrying ``message``, so that callers catching that type
    still catch it; RuntimeError where the type cannot be built from a message alone."""
    try:
        wrapped = type(error)(message)
    except Exception:
        return RuntimeError(message)
    if str(wrapped) not in (message, repr(message)):
        return RuntimeError(message)  # a type that rewrites its message would lose ours
    return wrapped
