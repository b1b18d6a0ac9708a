import threading
import time
import warnings

import pytest

from treadle.logging import ManagerMeta, ManagerMixin


class Counter(ManagerMixin):
    def __init__(self, name, start=0):
        super().__init__(name)
        self.value = start


class SubCounter(Counter):
    pass


@pytest.fixture(autouse=True)
def forget_counters():
    Counter._instance_dict.clear()
    SubCounter._instance_dict.clear()
    yield
    Counter._instance_dict.clear()
    SubCounter._instance_dict.clear()


def test_get_instance_builds_once_and_returns_the_same_object():
    first = Counter.get_instance("steps", start=5)
    assert first.value == 5
    assert first.instance_name == "steps"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no arguments: no warning
        assert Counter.get_instance("steps") is first


def test_get_instance_warns_about_ignored_arguments():
    first = Counter.get_instance("steps", start=5)
    with pytest.warns(
        UserWarning, match=r"instance 'steps' of class Counter already exists.*start"
    ):
        again = Counter.get_instance("steps", start=7)
    assert again is first
    assert again.value == 5


def test_get_current_instance_is_the_most_recently_created():
    with pytest.raises(
        RuntimeError, match=r"no Counter instance.*Counter.get_instance\(name=\.\.\.\)"
    ):
        Counter.get_current_instance()
    a = Counter.get_instance("a")
    b = Counter.get_instance("b")
    assert Counter.get_current_instance() is b
    Counter.get_instance("a")  # getting an old instance does not make it current
    assert Counter.get_current_instance() is b
    assert a is not b


def test_check_instance_created():
    assert not Counter.check_instance_created("a")
    Counter.get_instance("a")
    assert Counter.check_instance_created("a")


def test_direct_construction_does_not_register():
    counter = Counter(name="direct")
    assert counter.instance_name == "direct"
    assert not Counter.check_instance_created("direct")


def test_each_class_has_its_own_instances():
    parent = Counter.get_instance("x")
    child = SubCounter.get_instance("x")
    assert parent is not child
    assert type(child) is SubCounter
    assert list(Counter._instance_dict) == ["x"]
    assert list(SubCounter._instance_dict) == ["x"]


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("", ValueError, "must not be empty"),
        (3, TypeError, "must be a str, got int"),
    ],
)
def test_name_is_validated(name, error, message):
    with pytest.raises(error, match=message):
        Counter.get_instance(name)
    with pytest.raises(ValueError, match="must not be empty"):
        ManagerMixin()
    assert not Counter._instance_dict


def test_class_without_name_parameter_is_rejected():
    # A TypeError, and the AssertionError MMEngine raises (with its phrase).
    with pytest.raises(TypeError, match=r"NoName must have the `name` argument: its __init__ must"):

        class NoName(ManagerMixin):
            def __init__(self, size):
                super().__init__("fixed")

    with pytest.raises(AssertionError, match="must accept a `name` parameter"):

        class Plain(metaclass=ManagerMeta):
            pass


def test_keyword_only_name_is_accepted():
    class KeywordOnly(ManagerMixin):
        def __init__(self, *, name):
            super().__init__(name)

    assert KeywordOnly.get_instance("k").instance_name == "k"


def test_concurrent_get_instance_returns_one_object():
    built = []

    class Slow(ManagerMixin):
        def __init__(self, name):
            super().__init__(name)
            time.sleep(0.01)  # widen the window in which a race would build twice
            built.append(self)

    barrier = threading.Barrier(16)
    results = []

    def worker():
        barrier.wait()
        results.append(Slow.get_instance("shared"))

    threads = [threading.Thread(target=worker) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(built) == 1
    assert len(results) == 16
    assert all(result is built[0] for result in results)


def test_lock_is_released_when_construction_fails():
    class Fragile(ManagerMixin):
        def __init__(self, name, fail=False):
            super().__init__(name)
            if fail:
                raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        Fragile.get_instance("bad", fail=True)
    assert not Fragile.check_instance_created("bad")
    # Another thread would block forever on a lock left held by this one.
    got = []
    thread = threading.Thread(target=lambda: got.append(Fragile.get_instance("good")))
    thread.start()
    thread.join(timeout=5)
    assert got and got[0].instance_name == "good"


def test_constructing_one_instance_may_get_another():
    class Inner(ManagerMixin):
        pass

    class Outer(ManagerMixin):
        def __init__(self, name):
            super().__init__(name)
            self.inner = Inner.get_instance(name)

    outer = Outer.get_instance("nested")
    assert outer.inner is Inner.get_instance("nested")


def test_default_instance_name_makes_get_current_instance_create_it():
    class Session(ManagerMixin):
        default_instance_name = "main"

        def __init__(self, name):
            super().__init__(name)

    current = Session.get_current_instance()
    assert current.instance_name == "main"
    assert Session.get_current_instance() is current
    assert Session.check_instance_created("main")
