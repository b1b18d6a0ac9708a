"""Cost of ``Registry.build`` over calling the class directly.

Builds a small class by name in its own registry, by 'scope.Name' from the root registry, and
by name under a default scope, next to the baseline of the same run: ``MyClass(a=1)``. The cfg
dicts are made once, outside the timed loop, so the numbers are the registry's own work.

    python benchmarks/registry_build.py [--steps 200000] [--repeats 5]
"""

from __future__ import annotations

import argparse

from timing import per_call

from treadle.registry import DefaultScope, Registry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    root = Registry("models", scope="treadle")
    downstream = Registry("models", parent=root, scope="mydet")
    Registry("models", parent=root, scope="mycls")  # a sibling, so the tree is not a line

    @downstream.register_module()
    class MyClass:
        def __init__(self, a: int) -> None:
            self.a = a

    by_name = {"type": "MyClass", "a": 1}
    by_scope = {"type": "mydet.MyClass", "a": 1}
    root.build(by_scope)  # the first build reads the entry points, once per process

    def default_scope_build() -> object:
        return root.build(by_name)

    cases = [
        ("MyClass(a=1)", lambda: MyClass(a=1)),
        ("REG.build({'type': 'MyClass', 'a': 1})", lambda: downstream.build(by_name)),
        ("ROOT.build({'type': 'mydet.MyClass', 'a': 1})", lambda: root.build(by_scope)),
    ]
    results = [(label, per_call(function, args.steps, args.repeats)) for label, function in cases]
    DefaultScope.get_instance("bench", scope_name="mydet")
    label = "ROOT.build({'type': 'MyClass', 'a': 1}), default scope mydet"
    results.append((label, per_call(default_scope_build, args.steps, args.repeats)))
    DefaultScope._instance_dict.clear()

    baseline = results[0][1]
    print(f"{args.steps} calls, best of {args.repeats}")
    for label, seconds in results:
        extra = (
            ""
            if seconds is baseline
            else f"  (+{(seconds - baseline) * 1e6:.2f} us, {seconds / baseline:.1f} x)"
        )
        print(f"{label:<62} {seconds * 1e6:7.3f} us/call{extra}")


if __name__ == "__main__":
    main()
