"""Griffe extension: the names a package exports where reading its source alone misses them.

- treadle.runner imports its top-level names on first access (``__getattr__`` over the
  ``_REEXPORTS`` table, so that ``import treadle.runner.registry`` does not pay for torch):
  each becomes an alias of the object in its subpackage.
- Any other exported name a package imports on first access (``treadle.visual.plot_scalars``)
  is the object of that name defined in one of its submodules.
- An exported function named like the module that defines it (``treadle.config.read_base``)
  is the function, not the submodule, as at run time.
- ``Runner`` keeps its module short by inheriting parts of itself from mixins of the same
  subpackage (``RunnerProperties``: ``epoch``, ``work_dir``...; ``RunnerBuilders``: the
  ``build_*`` methods; ``RunnerHooks``: ``register_hook``, ``call_hook``...), which the API
  reference does not otherwise show (it renders a class's own members): each public member a
  class of ``treadle.runner.runner`` inherits from a class of that subpackage becomes a member
  of the class, as if written there (``MixinMembers``).
"""

from __future__ import annotations

import ast
from typing import Any

import griffe


class LazyExports(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for module in _modules(pkg):
            _alias_lazy_names(module)
            _prefer_functions_over_submodules(module)
            _alias_names_of_submodules(module)


def _modules(module: griffe.Module) -> list[griffe.Module]:
    found = [module]
    for member in module.modules.values():
        if not member.is_alias:
            found.extend(_modules(member))
    return found


def _alias_lazy_names(module: griffe.Module) -> None:
    table = module.members.get("_REEXPORTS")
    if table is None or not isinstance(table, griffe.Attribute) or table.value is None:
        return
    reexports: dict[str, tuple[str, ...]] = ast.literal_eval(str(table.value))
    exports = set(module.exports or ())
    for source, names in reexports.items():
        for name in names:
            module.set_member(name, griffe.Alias(name, f"{source}.{name}", parent=module))
            exports.add(name)
    if "__version__" in module.members:  # __all__ = ["__version__", *sorted(_MODULE_OF)]
        exports.add("__version__")
    module.exports = sorted(exports)


def _prefer_functions_over_submodules(module: griffe.Module) -> None:
    for name in list(module.exports or ()):
        member = module.members.get(name)
        if isinstance(member, griffe.Module) and name in member.members:
            module.set_member(name, griffe.Alias(name, f"{member.path}.{name}", parent=module))


def _alias_names_of_submodules(module: griffe.Module) -> None:
    for name in module.exports or ():
        if name in module.members:
            continue
        for submodule in module.modules.values():
            member = submodule.members.get(name)
            if member is not None and not member.is_alias:
                module.set_member(name, griffe.Alias(name, member.path, parent=module))
                break


MIXIN_SUBPACKAGE = "treadle.runner.runner"


class MixinMembers(griffe.Extension):
    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for module in _modules(pkg):
            if module.path.startswith(MIXIN_SUBPACKAGE + "."):
                for cls in module.classes.values():
                    if not cls.is_alias:
                        _adopt_mixin_members(cls)


def _adopt_mixin_members(cls: griffe.Class) -> None:
    try:
        inherited = cls.inherited_members
    except Exception:  # a base griffe cannot resolve (torch's): nothing to adopt
        return
    for name, member in inherited.items():
        if name.startswith("_") or name in cls.members:
            continue
        owner = member.parent
        if owner is None or not owner.path.startswith(MIXIN_SUBPACKAGE + "."):
            continue
        cls.set_member(name, griffe.Alias(name, member.target_path, parent=cls))
