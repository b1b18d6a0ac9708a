"""The Runner's hook methods: registering hooks by priority, calling them, describing them."""

from __future__ import annotations

from typing import Any

from treadle.runner.hooks.hook import Hook

from .hook_list import build_hook, hooks_info, insert_by_priority, merge_default_hooks


class RunnerHooks:
    """The part of :class:`~treadle.runner.runner.Runner` that holds its hooks (``_hooks``, a
    HookList, and ``_dispatch``, the table of which hook acts at which point).

    Example:
        >>> runner.register_hook(dict(type='EMAHook'), priority='NORMAL')  # doctest: +SKIP
    """

    _hooks: Any
    _dispatch: Any

    def get_hooks_info(self) -> str:
        """The hooks of each stage, in calling order, with their priorities."""
        return hooks_info(self._hooks)

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call ``fn_name(self, **kwargs)`` of every hook that acts there, in priority order.

        An exception raised by a hook carries a note naming the hook and the point.
        """
        for hook, method in self._dispatch.methods(fn_name):
            try:
                method(self, **kwargs)
            except Exception as error:
                error.add_note(f"raised by {type(hook).__name__}.{fn_name}")
                raise

    def register_hook(self, hook: Hook | dict, priority: int | str | None = None) -> None:
        """Add a hook (an object or a HOOKS config) after the hooks of lower or equal priority
        number. ``priority`` wins over a config's ``priority`` key, which wins over the
        hook's own."""
        built, cfg_priority = build_hook(hook, "hook")
        if priority is not None:
            built.priority = priority
        elif cfg_priority is not None:
            built.priority = cfg_priority
        insert_by_priority(self._hooks, built)

    def register_default_hooks(self, hooks: dict[str, Hook | dict] | None = None) -> None:
        """Register MMEngine's default hooks (runtime_info, timer, sampler_seed, logger,
        param_scheduler, checkpoint) with ``hooks`` merged in by name (None removes one)."""
        for hook in merge_default_hooks(hooks).values():
            self.register_hook(hook)

    def register_custom_hooks(self, hooks: list[Hook | dict]) -> None:
        """Register each of ``hooks`` (configs or Hook objects)."""
        if not isinstance(hooks, (list, tuple)):
            raise TypeError(
                f"custom_hooks should be a list of hook configs or Hooks, got "
                f"{type(hooks).__name__}: {hooks!r}"
            )
        for index, hook in enumerate(hooks):
            built, cfg_priority = build_hook(hook, f"custom_hooks[{index}]")
            self.register_hook(built, priority=cfg_priority)

    def register_hooks(
        self,
        default_hooks: dict[str, Hook | dict] | None = None,
        custom_hooks: list[Hook | dict] | None = None,
    ) -> None:
        """Register the default hooks (merged with ``default_hooks``), then ``custom_hooks``."""
        self.register_default_hooks(default_hooks)
        if custom_hooks is not None:
            self.register_custom_hooks(custom_hooks)
