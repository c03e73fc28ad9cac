"""A pickle the app wrote and kept, read back as data anyone may have written: its shape is checked before it is built.

A restricted unpickler alone decides only which classes may be named. It still lets a 1 MB file nest
a tuple 10^6 deep (hashing it as a dict key overflows the C stack: a segfault), reference one object
from every level of a tree (2^depth work to hash or compare it), ask for a memo slot at 2^32 (the C
unpickler sizes its memo to it) or call a callable with a size (`bytearray(3e9)`) or an iterable
(`frozenset(range(1e8))`). So the opcodes are walked once, without building anything, and the file is
refused unless every rule holds; only then does the C unpickler build it.

Rule 1: only the binary opcodes of protocols 2–5 that plain data, dataclasses and enums need; no
        text opcodes, no extension registry, no persistent ids, no out-of-band buffers or bytearrays.
Rule 2: a class is named only by `STACK_GLOBAL` with two strings, and only if `allowed(module, name)`
        gives it; `REDUCE` calls only an Enum class with one number or string, or a `FrozenMap` with
        one dict; `NEWOBJ` only makes an empty dataclass, filled by `BUILD` with a dict — no callable
        takes a size or an iterable, and no `__init__` runs.
Rule 3: nesting is at most `MAX_DEPTH` deep, and the objects counted once per reference (the tree a
        hash or a comparison walks) at most `MAX_NODES_PER_BYTE` per byte of the file.
Rule 4: a memo slot is the next one or one already used; an object is filled (`APPEND`, `SETITEM`,
        `ADDITEMS`, `BUILD`) only before any reference to it was taken, so the counts of Rule 3 are
        exact (a filled container was counted where it was used).
Rule 5: a file may hold several pickles one after another, each walked and built in its turn: a large
        index is kept in chunks, so no one call of the C unpickler holds the interpreter lock for long
        (the window's thread waits on it: 50,000 entries in one pickle took 1.6 s of it).
Any broken rule is a `pickle.UnpicklingError`.
"""

from __future__ import annotations

import io
import pickle
import struct
from dataclasses import is_dataclass
from enum import Enum
from typing import Any, Callable

from gguf_budget.core.frozen import FrozenMap

MAX_DEPTH = 64
"""Nesting the kept records never approach (the library index nests 7 deep)."""
MAX_NODES_PER_BYTE = 2
"""The tree of references, per byte of the file: each reference is an opcode of at least one byte."""
MAX_NODES_SLACK = 4096

Allowed = Callable[[str, str], "type | None"]

_BINGET, _MEMOIZE, _MARK, _LONG1 = pickle.BINGET[0], pickle.MEMOIZE[0], pickle.MARK[0], pickle.LONG1[0]
_SMALL_SCALARS = {pickle.NONE[0]: 0, pickle.NEWTRUE[0]: 0, pickle.NEWFALSE[0]: 0, pickle.BININT1[0]: 1,
                  pickle.BININT2[0]: 2, pickle.BININT[0]: 4, pickle.BINFLOAT[0]: 8}
"""Opcodes that push a number or None from a fixed-size argument (walked inline)."""
_SCALAR, _STR, _TUPLE, _LIST, _DICT, _SET, _FROZENSET, _CLASS, _OBJECT = range(9)
_EMPTY = {pickle.EMPTY_TUPLE[0]: _TUPLE, pickle.EMPTY_LIST[0]: _LIST, pickle.EMPTY_DICT[0]: _DICT,
          pickle.EMPTY_SET[0]: _SET}
"""Opcodes that push a new empty container (walked inline)."""


class _Walk:
    """One pass over the opcodes with a model stack of (kind, depth, nodes) per object (Rules 1–4)."""

    def __init__(self, data: bytes, allowed: Allowed, start: int = 0):
        self.data, self.allowed, self.pos, self.start = data, allowed, start, start
        self.max_nodes = MAX_NODES_PER_BYTE * len(data) + MAX_NODES_SLACK
        self.stack: list[int] = []
        self.marks: list[int] = []
        self.memo: list[int] = []
        self.kind: list[int] = [_SCALAR]
        self.depth: list[int] = [0]
        self.nodes: list[int] = [1]
        self.shared: list[bool] = [True]
        self.value: dict[int, Any] = {}

    def refuse(self, why: str) -> pickle.UnpicklingError:
        return pickle.UnpicklingError(f"{why} at byte {self.pos}")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.refuse("an argument runs past the end")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def number(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        value: int = struct.unpack(fmt, self.take(size))[0]
        return value

    def new(self, kind: int, depth: int, nodes: int, value: Any = None) -> int:
        if depth > MAX_DEPTH:
            raise self.refuse(f"nesting deeper than {MAX_DEPTH}")
        if nodes > self.max_nodes:
            raise self.refuse("more references than the file's size allows")
        self.kind.append(kind)
        self.depth.append(depth)
        self.nodes.append(nodes)
        self.shared.append(False)
        if value is not None:
            self.value[len(self.kind) - 1] = value
        return len(self.kind) - 1

    def pop(self) -> int:
        if len(self.stack) <= (self.marks[-1] if self.marks else 0):
            raise self.refuse("an opcode pops past its mark")
        return self.stack.pop()

    def pop_mark(self) -> list[int]:
        if not self.marks:
            raise self.refuse("no mark to pop to")
        at = self.marks.pop()
        items = self.stack[at:]
        del self.stack[at:]
        return items

    def build(self, kind: int, items: list[int], value: Any = None) -> None:
        depth = 1 + max((self.depth[i] for i in items), default=0)
        self.stack.append(self.new(kind, depth, 1 + sum(self.nodes[i] for i in items), value))

    def kinds(self, obj: int) -> tuple[int, ...]:
        """The kinds of the items of a tuple made by TUPLE1–TUPLE3 (none for any other object)."""
        return tuple(self.kind[i] for i in self.value.get(obj, ()))

    def fill(self, kind: int, items: list[int]) -> None:
        """Rule 4: put `items` into the object under them, which nothing references yet."""
        target = self.stack[-1] if len(self.stack) > (self.marks[-1] if self.marks else 0) else -1
        if target < 0 or self.kind[target] != kind or self.shared[target]:
            raise self.refuse("an object is filled that is not a fresh one of its kind")
        depth = max(self.depth[target], 1 + max((self.depth[i] for i in items), default=0))
        nodes = self.nodes[target] + sum(self.nodes[i] for i in items)
        if depth > MAX_DEPTH or nodes > self.max_nodes:
            raise self.refuse("a filled object nests too deep or holds too many references")
        self.depth[target], self.nodes[target] = depth, nodes

    def refer(self, obj: int) -> None:
        self.shared[obj] = True
        self.stack.append(obj)

    def run(self) -> int:
        """Walk every opcode up to STOP, the commonest (a memo reference, a small number) without a call;
        where the next pickle would start."""
        data, size, stack, memo, shared = self.data, len(self.data), self.stack, self.memo, self.shared
        handlers = _HANDLERS
        while self.pos < size:
            op = data[self.pos]
            self.pos += 1
            if op == _BINGET and self.pos < size and data[self.pos] < len(memo):
                obj = memo[data[self.pos]]
                shared[obj] = True
                stack.append(obj)
                self.pos += 1
            elif op == _MEMOIZE and stack:
                memo.append(stack[-1])
            elif op in _SMALL_SCALARS and self.pos + _SMALL_SCALARS[op] <= size:
                self.pos += _SMALL_SCALARS[op]
                stack.append(0)
            elif op == _MARK:
                self.marks.append(len(stack))
            elif op == _LONG1 and self.pos < size and self.pos + 1 + data[self.pos] <= size:
                self.pos += 1 + data[self.pos]
                stack.append(0)
            elif op in _EMPTY:
                stack.append(self.new(_EMPTY[op], 1, 1))
            else:
                handler = handlers.get(op)
                if handler is None:
                    raise self.refuse(f"opcode {op:#04x} is not allowed")
                if handler(self):
                    if len(stack) != 1 or self.marks:
                        raise self.refuse("the pickle does not end with one object")
                    return self.pos
        raise self.refuse("no STOP opcode")


def _push_scalar(w: _Walk) -> None:
    w.stack.append(0)


def _fixed(n: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        w.take(n)
        w.stack.append(0)
    return handler


def _sized(fmt: str, text: bool) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        raw = w.take(w.number(fmt))
        if not text:
            w.stack.append(0)
            return
        try:
            w.stack.append(w.new(_STR, 0, 1, raw.decode("utf-8", "surrogatepass")))
        except UnicodeDecodeError:
            raise w.refuse("a string is not UTF-8") from None
    return handler


def _tuple(n: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        items = [w.pop() for _ in range(n)][::-1]
        w.build(_TUPLE, items, tuple(items) or None)
    return handler


def _marked(kind: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        w.build(kind, w.pop_mark())
    return handler


def _empty(kind: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        w.stack.append(w.new(kind, 1, 1))
    return handler


def _fill_one(kind: int, n: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        items = [w.pop() for _ in range(n)]
        w.fill(kind, items)
    return handler


def _fill_marked(kind: int) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        w.fill(kind, w.pop_mark())
    return handler


def _put(fmt: str | None) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        slot = len(w.memo) if fmt is None else w.number(fmt)
        if not w.stack or slot > len(w.memo):
            raise w.refuse("a memo slot out of order")
        if slot == len(w.memo):
            w.memo.append(w.stack[-1])
        else:
            w.memo[slot] = w.stack[-1]
    return handler


def _get(fmt: str) -> Callable[[_Walk], None]:
    def handler(w: _Walk) -> None:
        slot = w.number(fmt)
        if slot >= len(w.memo):
            raise w.refuse("a memo slot never set")
        w.refer(w.memo[slot])
    return handler


def _mark(w: _Walk) -> None:
    w.marks.append(len(w.stack))


def _pop(w: _Walk) -> None:
    w.pop()


def _pop_mark(w: _Walk) -> None:
    w.pop_mark()


def _dup(w: _Walk) -> None:
    if not w.stack:
        raise w.refuse("nothing to duplicate")
    w.refer(w.stack[-1])


def _global(w: _Walk) -> None:
    name, module = w.pop(), w.pop()
    if w.kind[module] != _STR or w.kind[name] != _STR:
        raise w.refuse("a class named by something other than two strings")
    found = w.allowed(w.value[module], w.value[name])
    if found is None:
        raise w.refuse(f"{w.value[module]}.{w.value[name]} does not belong here")
    w.stack.append(w.new(_CLASS, 0, 1, found))


def _call(w: _Walk) -> tuple[type, int, tuple[int, ...]]:
    """(the class, the arguments tuple, its items' kinds) under a `REDUCE` or `NEWOBJ`."""
    args, cls = w.pop(), w.pop()
    if w.kind[cls] != _CLASS or w.kind[args] != _TUPLE:
        raise w.refuse("a call that is not a class with a tuple of arguments")
    return w.value[cls], args, w.kinds(args)


def _reduce(w: _Walk) -> None:
    cls, args, kinds = _call(w)
    if issubclass(cls, Enum) and kinds in ((_SCALAR,), (_STR,)) or issubclass(cls, FrozenMap) and kinds == (_DICT,):
        w.build(_SCALAR, [args])
    else:
        raise w.refuse(f"{cls.__name__} may not be called so")


def _newobj(w: _Walk) -> None:
    cls, args, kinds = _call(w)
    if not is_dataclass(cls) or w.nodes[args] != 1:
        raise w.refuse(f"{cls.__name__} is not a record made empty")
    w.stack.append(w.new(_OBJECT, 1, 1))


def _build(w: _Walk) -> None:
    state = w.pop()
    if w.kind[state] != _DICT:
        raise w.refuse("a record's state is not a dict")
    w.fill(_OBJECT, [state])


def _proto(w: _Walk) -> None:
    if not 2 <= w.number("<B") <= 5 or w.pos != w.start + 2:
        raise w.refuse("not a pickle of protocol 2 to 5")


def _frame(w: _Walk) -> None:
    w.number("<Q")


def _stop(w: _Walk) -> bool:
    return True


_HANDLERS: dict[int, Callable[[_Walk], Any]] = {
    pickle.PROTO[0]: _proto, pickle.FRAME[0]: _frame, pickle.STOP[0]: _stop,
    pickle.MARK[0]: _mark, pickle.POP[0]: _pop, pickle.POP_MARK[0]: _pop_mark, pickle.DUP[0]: _dup,
    pickle.NONE[0]: _push_scalar, pickle.NEWTRUE[0]: _push_scalar, pickle.NEWFALSE[0]: _push_scalar,
    pickle.BININT[0]: _fixed(4), pickle.BININT1[0]: _fixed(1), pickle.BININT2[0]: _fixed(2),
    pickle.BINFLOAT[0]: _fixed(8),
    pickle.LONG1[0]: _sized("<B", False), pickle.LONG4[0]: _sized("<i", False),
    pickle.SHORT_BINUNICODE[0]: _sized("<B", True), pickle.BINUNICODE[0]: _sized("<I", True),
    pickle.BINUNICODE8[0]: _sized("<Q", True),
    pickle.SHORT_BINBYTES[0]: _sized("<B", False), pickle.BINBYTES[0]: _sized("<I", False),
    pickle.BINBYTES8[0]: _sized("<Q", False),
    pickle.EMPTY_TUPLE[0]: _tuple(0), pickle.TUPLE1[0]: _tuple(1), pickle.TUPLE2[0]: _tuple(2),
    pickle.TUPLE3[0]: _tuple(3), pickle.TUPLE[0]: _marked(_TUPLE), pickle.FROZENSET[0]: _marked(_FROZENSET),
    pickle.LIST[0]: _marked(_LIST), pickle.DICT[0]: _marked(_DICT),
    pickle.EMPTY_LIST[0]: _empty(_LIST), pickle.EMPTY_DICT[0]: _empty(_DICT), pickle.EMPTY_SET[0]: _empty(_SET),
    pickle.APPEND[0]: _fill_one(_LIST, 1), pickle.APPENDS[0]: _fill_marked(_LIST),
    pickle.SETITEM[0]: _fill_one(_DICT, 2), pickle.SETITEMS[0]: _fill_marked(_DICT),
    pickle.ADDITEMS[0]: _fill_marked(_SET),
    pickle.MEMOIZE[0]: _put(None), pickle.BINPUT[0]: _put("<B"), pickle.LONG_BINPUT[0]: _put("<I"),
    pickle.BINGET[0]: _get("<B"), pickle.LONG_BINGET[0]: _get("<I"),
    pickle.STACK_GLOBAL[0]: _global, pickle.REDUCE[0]: _reduce, pickle.NEWOBJ[0]: _newobj, pickle.BUILD[0]: _build,
}


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: Allowed):
        super().__init__(io.BytesIO(data))
        self.allowed = allowed

    def find_class(self, module: str, name: str) -> Any:
        found = self.allowed(module, name)
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} does not belong here")
        return found


def loads_each(data: bytes, allowed: Allowed) -> list[Any]:
    """Rule 5: the objects of the pickles `data` holds one after another, each built once its opcodes keep
    Rules 1–4; `pickle.UnpicklingError` otherwise."""
    found: list[Any] = []
    at = 0
    while at < len(data) or not found:
        end = _Walk(data, allowed, at).run()
        found.append(_Unpickler(data[at:end], allowed).load())
        at = end
    return found
