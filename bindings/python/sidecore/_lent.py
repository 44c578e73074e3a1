"""The arrays Session.alloc lends (docs/python.md, "Zero copy"): NumPy arrays on a block of
Sidecore's buffer that refuse to be used once the block is given back, so that a program never
reads another block's data through them.

A lent array and the views taken from it share one lease. release(), end_iteration() and
finalize() end it (sidecore._sidecore does, for the arrays of the blocks they give back); from
then on indexing, arithmetic, NumPy functions, printing and the common methods raise
ReleasedArrayError. Copies (a.copy(), a + 1, np.array(a)) made before have memory of their own
and no lease. What NumPy lets through without asking the subclass (a buffer or memoryview, a
plain view such as np.asarray(a) or a.view(np.ndarray)) is not watched: after finalize() such
a view reads zeros, before it whatever the buffer holds.
"""
import numpy as np

from . import _errors
from ._errors import ReleasedArrayError


# A lease is a list, made by sidecore._sidecore at each alloc() (a list costs less to make than
# an object): [the call that gave the block back, or None while it has not; the variable; the
# block; the iteration].
ENDED_BY, VARIABLE, BLOCK, ITERATION = range(4)


def _what(lease):
    return f"alloc('{lease[VARIABLE]}', block={lease[BLOCK]}) of iteration {lease[ITERATION]}"


def _fail(lease):
    raise ReleasedArrayError(
        _errors.INVALID_BLOCK,
        f"sidecore.alloc: the array lent by {_what(lease)} was used after {lease[ENDED_BY]} gave "
        f"its block back (its memory holds other data now); copy it (a.copy()) before "
        f"{lease[ENDED_BY]} to keep its values")


def _ended(x):
    """x's lease when its block was given back, else None."""
    lease = getattr(x, "_lease", None)
    return lease if lease is not None and lease[ENDED_BY] is not None else None


def _check(x):
    lease = _ended(x)
    if lease is not None:
        _fail(lease)


def _plain(x):
    """x as NumPy sees it without the subclass, checked first when it is a lent array."""
    if isinstance(x, LentArray):
        _check(x)
        return x.view(np.ndarray)
    return x


def _check_arguments(values):
    for x in values:
        if isinstance(x, LentArray):
            _check(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                if isinstance(y, LentArray):
                    _check(y)


class LentArray(np.ndarray):
    """A NumPy array on a block of Sidecore's buffer, returned by Session.alloc. It behaves as
    an ndarray until its block is given back (release(), end_iteration(), finalize()); then
    any use raises ReleasedArrayError. Results of arithmetic and of NumPy functions are plain
    ndarrays."""

    __slots__ = ("_lease",)

    def __array_finalize__(self, obj):
        # Views share the lease of what they view; an array with memory of its own has none.
        lease = getattr(obj, "_lease", None)
        self._lease = lease if lease is not None and not self.flags.owndata else None

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        inputs = tuple(_plain(x) for x in inputs)
        if out is not None:
            kwargs["out"] = tuple(_plain(x) for x in out)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if out is not None and method != "at":  # the arrays given, as NumPy returns them
            return out[0] if len(out) == 1 else out
        return result

    def __repr__(self):
        lease = _ended(self)
        if lease is not None:  # say so rather than raise
            return f"<LentArray of {_what(lease)}, given back by {lease[ENDED_BY]}>"
        return np.ndarray.__repr__(self)

    def __str__(self):
        return repr(self) if _ended(self) is not None else np.ndarray.__str__(self)

    def __array_function__(self, func, types, args, kwargs):
        _check_arguments(args)
        _check_arguments(kwargs.values())
        return super().__array_function__(func, types, args, kwargs)


def _guarded(name):
    plain = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        _check(self)
        return plain(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"LentArray.{name}"
    method.__doc__ = plain.__doc__
    return method


# What reads or writes the memory without going through a ufunc or a NumPy function.
for _name in ("__getitem__", "__setitem__", "__iter__", "__format__",
              "__array__", "__bool__", "__float__", "__int__", "__complex__", "__index__",
              "__copy__", "__deepcopy__", "__reduce__", "__reduce_ex__", "__contains__",
              "copy", "astype", "view", "tobytes", "tolist", "tofile", "item", "itemset",
              "fill", "sort", "argsort", "argmax", "argmin", "argpartition", "partition",
              "nonzero", "searchsorted", "byteswap", "dump", "dumps", "getfield", "setfield",
              "put", "take", "choose", "compress", "repeat", "diagonal", "ravel", "flatten",
              "reshape", "transpose", "swapaxes", "squeeze"):
    if hasattr(np.ndarray, _name):
        setattr(LentArray, _name, _guarded(_name))
del _name

