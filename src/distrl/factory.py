"""A user's function where distrl expects a name: an env factory instead of a Gymnasium id, a network
factory instead of distrl's own network.

`Factory` is a str (so config.json, run directory names and logs take it as they take an id) that also
carries the function, which travels with the config to Ray's workers. Its text, "factory:module:name",
is the function's import path: a run whose factory is a module-level function can be resumed and
evaluated from its config.json alone; a lambda or a functools.partial cannot be rebuilt from text, so
those runs need the factory passed again (`distrl.load_policy(run_dir, env=...)`)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pickle
from collections.abc import Callable
from typing import Any

from distrl.errors import ConfigError

PREFIX = "factory:"


class Factory(str):
    fn: Callable[..., Any]

    def __new__(cls, fn: Callable[..., Any]) -> Factory:
        if not callable(fn):
            raise ConfigError(f"{fn!r} is not callable: give a function (or a functools.partial of one)")
        self = super().__new__(cls, PREFIX + import_path(fn))
        self.fn = fn
        return self

    def __reduce__(self) -> tuple:  # pickles (for Ray) as the function, not as the text
        return Factory, (self.fn,)

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)


def import_path(fn: Callable[..., Any]) -> str:
    """"module:qualname" of a function or class; a partial or a callable object is marked, as its arguments
    or state are not in the text."""
    if isinstance(fn, functools.partial):
        return import_path(fn.func).split("(")[0] + "(partial)"
    if inspect.isfunction(fn) or inspect.isclass(fn) or inspect.isbuiltin(fn):
        return f"{fn.__module__}:{fn.__qualname__}"
    return f"{type(fn).__module__}:{type(fn).__qualname__}(object)"


def is_factory(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def resolve(value: str, what: str) -> Factory:
    """The Factory a config names: itself, or the function its text imports (a saved config)."""
    if isinstance(value, Factory):
        return value
    path = value[len(PREFIX):]
    module, _, name = path.partition(":")
    fix = (f"this run's {what} was {path}, which cannot be imported again; pass the same function "
           f"(e.g. distrl.load_policy(run_dir, {what}=...)), or use a module-level function")
    if "<" in name or name.endswith(")") or not name:
        raise ConfigError(fix)
    try:
        target: Any = importlib.import_module(module)
        for part in name.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{fix} ({type(exc).__name__}: {exc})") from None
    return Factory(target)


def check_picklable(value: Any, what: str) -> None:
    """Ray's workers build envs and networks themselves, so a factory must pickle (by reference)."""
    if not isinstance(value, Factory):
        return
    try:
        pickle.dumps(value.fn)
    except Exception as exc:
        raise ConfigError(f"the {what} factory {value[len(PREFIX):]} cannot be pickled for Ray's workers "
                          f"({type(exc).__name__}: {exc}): define it with `def` at the top level of a module "
                          "(a functools.partial of such a function works too), or use runtime='inline'") from None
