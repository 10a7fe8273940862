"""Reads whose SQL Django compiles once per process, not on every request.

On the review page's save the ORM spent more CPU building the SQL of a query than PostgreSQL spent
running it: compiling a select of four joined tables (70 columns, each quoted and aliased) cost
about five times the round trip. A ``CompiledRead`` keeps the compiled statement of a queryset whose
shape never changes and substitutes only its parameters, then reads the rows through the
queryset's own iterable, so what comes back (model instances with their ``select_related`` rows,
``values`` dicts, ``values_list`` tuples) is what iterating the queryset gives.

The queryset is built by a function of keyword arguments that are ``int`` or ``str`` (or a choices
member of either, read as its value) and are only
passed on to lookups (never branched on): the statement is compiled with two sets of stand-in
values, and each argument's positions among the parameters are where its stand-ins appear. Both
compilations must agree (the same SQL, the same constant parameters, the same positions), or the
read refuses to be defined. The library that once did this (django-prepared-queries) has not been
released since Django 1.11.
"""

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from django.db import connections
from django.db.models import QuerySet
from django.db.transaction import TransactionManagementError

# Stand-ins inside every integer column's range, a small integer's too (0-32767 on PostgreSQL: an
# out-of-range value makes Django's lookup compile to no SQL at all). They are only compiled, never run,
# so the rows they might name do not matter. The two sets are spaced differently, so an argument the
# build transforms (``pk=n + 1``) cannot land on another argument's stand-in in both.
STAND_IN_INT = {"a": (20_011, 1_009), "b": (21_013, 1_409)}
MAX_INT_ARGUMENTS = 8  # the last stand-ins: 27,074 and 30,876


class CompiledReadError(TypeError):
    pass


@dataclass(frozen=True, slots=True)
class _Statement:
    """A compilation of the build with one set of stand-ins: the SQL, its parameters with the arguments'
    places, the compiler that compiled it (its select list and related-object layout, which reading the
    rows follows) and the database it was compiled for."""

    queryset: QuerySet
    compiler: object
    sql: str
    params: tuple
    places: dict[str, list[int]]  # each argument's positions among the parameters
    constants: list  # the parameters that are no argument's
    alias: str


class CompiledRead:
    """``read = CompiledRead(lambda *, pk, owner_id: Model.objects.filter(pk=pk, owner_id=owner_id))``;
    ``read(pk=3, owner_id=7)`` is ``list()`` of that queryset, compiled once per process.

    The statement is compiled for the database the queryset reads from at the first call (this app has
    one); each call runs it on the calling thread's own connection to that database."""

    def __init__(self, build: Callable[..., QuerySet]):
        self._build = build
        self._statements: dict[tuple, _Statement] = {}
        self._lock = threading.Lock()

    def one(self, **arguments):
        """The first row of the read, or None when it finds none (a read by a unique key)."""
        rows = self(**arguments)
        return rows[0] if rows else None

    def __call__(self, **arguments) -> list:
        # A choices member (``Phase.PRE``) is its value, as a queryset's lookup takes it.
        arguments = {name: value.value if isinstance(value, Enum) else value for name, value in arguments.items()}
        for name, value in arguments.items():
            if type(value) not in (int, str):
                raise CompiledReadError(f"{name}={value!r}: a compiled read takes int or str arguments only")
        signature = tuple(sorted((name, type(value)) for name, value in arguments.items()))
        statement = self._statement(signature)
        params = list(statement.params)
        for name, places in statement.places.items():
            for place in places:
                params[place] = arguments[name]
        queryset = statement.queryset._chain()
        # The compiling thread's compiler holds that thread's connection: each call takes its own.
        compiler = copy.copy(statement.compiler)
        compiler.connection = connections[statement.alias]
        features = compiler.connection.features
        if (
            compiler.query.select_for_update
            and features.has_select_for_update
            and features.supports_transactions
            and compiler.connection.get_autocommit()
        ):
            # The check Django's compiler makes while compiling such a statement, which this one skips.
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        sql = statement.sql
        compiler.as_sql = lambda *args, **kwargs: (sql, params)
        queryset.query.get_compiler = lambda *args, **kwargs: compiler
        return list(queryset)

    def _statement(self, signature: tuple) -> _Statement:
        statement = self._statements.get(signature)
        if statement is None:
            with self._lock:
                statement = self._statements.get(signature) or self._compile(signature)
                self._statements[signature] = statement
        return statement

    def _compile(self, signature: tuple) -> _Statement:
        ints = [name for name, kind in signature if kind is int]
        # The stand-ins run out here; a signature refused is never stored, so each such call is refused.
        if len(ints) > MAX_INT_ARGUMENTS:
            raise CompiledReadError(f"a compiled read takes at most {MAX_INT_ARGUMENTS} int arguments")
        first, second = (self._compile_with(signature, ints, label) for label in ("a", "b"))
        if (first.sql, first.places, first.constants) != (second.sql, second.places, second.constants):
            raise CompiledReadError("the statement depends on the arguments' values: it cannot be compiled once")
        for name, found in first.places.items():
            if not found:
                raise CompiledReadError(f"{name} is not a parameter of the statement as given (unused or transformed)")
        return first

    def _compile_with(self, signature: tuple, ints: list[str], label: str) -> _Statement:
        base, step = STAND_IN_INT[label]
        stand_ins = {
            name: base + ints.index(name) * step if kind is int else f"compiled-read-{label}-{name}"
            for name, kind in signature
        }
        queryset = self._build(**stand_ins)
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        places = {name: [i for i, param in enumerate(params) if param == value] for name, value in stand_ins.items()}
        taken = {i for found in places.values() for i in found}
        constants = [param for i, param in enumerate(params) if i not in taken]
        return _Statement(
            queryset=queryset,
            compiler=compiler,
            sql=sql,
            params=tuple(params),
            places=places,
            constants=constants,
            alias=queryset.db,
        )


__all__ = ["CompiledRead", "CompiledReadError"]
