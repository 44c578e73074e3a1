"""Every error path of the Python client API, parameters and positions, on every rank (no
dedicated resources). Usage: api.py <xml> <missing xml>. Writes iteration 0 (field from a
list, resizable after W changed, placed at its position); run_test checks the files."""
import os
import re
import sys

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import sidecore  # noqa: E402
import values  # noqa: E402

xml, missing = sys.argv[1], sys.argv[2]
rank = MPI.COMM_WORLD.Get_rank()


def raises(kind, code, *words):
    """A context manager expecting sidecore error `kind` with `code`, naming every word."""
    class Expect:
        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc, tb):
            assert exc is not None, f"expected {kind.__name__} with {words}"
            assert isinstance(exc, kind), f"{exc_type.__name__}: {exc}"
            assert isinstance(exc, sidecore.Error)
            assert exc.code == code, f"code {exc.code} ({exc}), expected {code}"
            assert exc.name == sidecore.CODE_NAMES[code]
            for w in words:
                assert w in str(exc), f"{w!r} not in {exc}"
            # Messages begin with the Python call, never with the C function behind it.
            assert not re.match(r"(sidecore|damaris)_\w+: ", exc.message), str(exc)
            self.error = exc
            return True
    return Expect()


# A missing file: the same error on every rank, naming it; nothing is left initialized.
with raises(sidecore.Error, 6, os.path.basename(missing)):
    sidecore.initialize(missing)
assert not sidecore._ext.initialized()

with sidecore.initialize(xml, MPI.COMM_WORLD) as sc:
    with raises(sidecore.Error, 13, "already initialized"):
        sidecore.initialize(xml)
    assert sc.start() is True and sc.is_client and sc.has_servers is False
    source = sc.client_comm.Get_rank()

    # Layouts as resolved now.
    assert sc.layout("field") == (np.dtype(np.float64), (values.NY, values.NX))
    assert sc.layout("ids") == (np.dtype(np.int32), (values.NZ, values.NY, values.NX))
    with raises(sidecore.Error, 16, "sidecore.layout: ", "'nope'"):
        sc.layout("nope")

    # dtype and shape errors name the variable, what was given and what is expected.
    good = values.field(source, 0, 0)
    with raises(sidecore.DtypeError, 7, "'field'", "float32", "float64"):
        sc.write("field", good.astype(np.float32))
    with raises(TypeError, 7, "int64", "float64"):
        sc.write("field", np.zeros((values.NY, values.NX), dtype=np.int64))
    with raises(sidecore.ShapeError, 18, "'field'", "(6, 5)", "(5, 6)"):
        sc.write("field", np.zeros((values.NX, values.NY)))
    with raises(ValueError, 18, "(5, 6, 1)", "(5, 6)"):
        sc.write("field", good.reshape(values.NY, values.NX, 1))
    with raises(sidecore.DtypeError, 7, "'field'", ">f8", "byte order"):
        sc.write("field", good.astype(">f8"))
    with raises(sidecore.ShapeError, 18, "'ids'", "(4, 5, 7)"):
        sc.write("ids", np.zeros((4, 5, 7), dtype=np.int32))
    with raises(sidecore.DtypeError, 7, "'field'", "<U", "float64"):  # strings
        sc.write("field", [[1.0, "x"]])
    with raises(sidecore.DtypeError, 7, "'counts'", "bool", "int32"):
        sc.write("counts", np.ones((values.NY, values.NX), dtype=bool))
    with raises(sidecore.Error, 16, "sidecore.write: ", "'nope'"):
        sc.write("nope", good)
    with raises(sidecore.Error, 16, "did you mean 'field'?"):
        sc.write("fielt", good)
    with raises(sidecore.Error, 17):
        sc.write("field", good, block=-1)  # any id 0 or more is valid

    # Parameters, typed by their declared type.
    assert sc.parameter_get("NX") == values.NX and type(sc.parameter_get("NX")) is int
    assert sc.parameter_get("W") == 3 and sc.parameter_type("W") == "int64"
    assert sc.parameter_get("scale") == 1.5 and type(sc.parameter_get("scale")) is float
    assert sc.parameter_get("ratio") == 0.25 and sc.parameter_type("ratio") == "float32"
    sc.parameter_set("scale", 3)
    assert sc.parameter_get("scale") == 3.0
    sc.parameter_set("ratio", 0.125)
    assert sc.parameter_get("ratio") == 0.125
    with raises(sidecore.DtypeError, 7, "'NX'", "2.5", "integer"):
        sc.parameter_set("NX", 2.5)
    with raises(sidecore.DtypeError, 7, "'scale'", "'x'"):
        sc.parameter_set("scale", "x")
    with raises(sidecore.ShapeError, 7, "'NX'", "int32", "2147483647"):
        sc.parameter_set("NX", 2**31)
    with raises(sidecore.Error, 15, "'NOPE'"):
        sc.parameter_get("NOPE")
    with raises(sidecore.Error, 15):
        sc.parameter_set("NOPE", 1)
    assert sc.parameter_get("NX") == values.NX  # unchanged by the failures

    # A parameter changes a layout: the next write has the new shape.
    sc.parameter_set("W", 5.0)
    assert sc.parameter_get("W") == 5
    assert sc.layout("resizable") == (np.dtype(np.int32), (5,))
    with raises(sidecore.ShapeError, 18, "'resizable'", "(3,)", "(5,)"):
        sc.write("resizable", np.arange(3, dtype=np.int32))
    sc.write("resizable", np.arange(5, dtype=np.int32) + 10 * source)

    # Positions: one per dimension, inside the global extents.
    with raises(sidecore.ShapeError, 7, "'placed'", "3 coordinates", "2 dimensions"):
        sc.set_position("placed", (0, 0, 0))
    sc.set_position("placed", (0, values.NX * 4))
    with raises(sidecore.Error, 18):
        sc.write("placed", good)
    sc.set_position("placed", (0, values.NX * source))
    sc.write("placed", good)

    # A list is converted (Python floats are float64).
    sc.write("field", good.tolist())

    # Zero copy: read-only once committed, no second allocation, no commit of nothing.
    a = sc.alloc("counts")
    a[...] = values.counts(source, 0, 0)
    sc.commit("counts")
    try:
        a[0, 0] = 1
        raise AssertionError("a committed block's array is still writable")
    except ValueError as e:
        assert "read-only" in str(e)
    with raises(sidecore.Error, 5, "sidecore.alloc: "):
        sc.alloc("counts")
    # Committed, it still reads; what is taken from it now: a view shares its fate, copies
    # (a.copy(), arithmetic) are the program's own.
    expected = values.counts(source, 0, 0)
    assert isinstance(a, sidecore.LentArray) and (a == expected).all() and a.sum() == expected.sum()
    view, kept, doubled = a[1:], a.copy(), a * 2
    assert type(doubled) is np.ndarray
    sc.release("counts")
    # Given back: any use of the array or of its view raises, naming the call that ended it.
    for use in (lambda: a[0, 0], lambda: a.sum(), lambda: np.add(a, 1), lambda: a + 1,
                lambda: view[0], lambda: view.max(), lambda: np.concatenate([a, a]),
                lambda: np.mean(a), lambda: a.tolist(), lambda: a.copy(), lambda: a.reshape(-1),
                lambda: list(view)):
        with raises(sidecore.ReleasedArrayError, 17, "alloc('counts', block=0)", "release()"):
            use()
    assert "given back by release()" in repr(a) and "given back" in str(view)
    assert (kept == expected).all() and (doubled == 2 * expected).all()
    with raises(sidecore.Error, 19, "sidecore.commit: "):
        sc.commit("counts", block=1)
    b = sc.alloc("counts", block=1)
    # Arrays in C order whatever the layout's language, sized by the parameters' current values.
    f = sc.alloc("fortran_counts")
    assert (f.dtype, f.shape) == sc.layout("fortran_counts") == (np.dtype(np.int32),
                                                                (values.NY, values.NX))
    assert f.flags.c_contiguous and f.flags.writeable
    f[...] = values.counts(source, 0, 3)
    r = sc.alloc("resizable", block=1)
    assert (r.dtype, r.shape) == (np.dtype(np.int32), (5,))
    r[...] = np.arange(5, dtype=np.int32) * 7 + source
    sc.commit("resizable", block=1)
    sc.end_iteration()  # commits the others (with a warning) and gives their blocks back
    assert not b.flags.writeable and not f.flags.writeable and not r.flags.writeable
    with raises(sidecore.ReleasedArrayError, 17, "resizable", "end_iteration()"):
        r[0]

    # Events.
    with raises(sidecore.Error, 14, "'nope'"):
        sc.signal("nope")
    assert sc.iteration == 1
    sc.sync()

# Finalized by the with block: calls fail cleanly.
assert not sidecore._ext.initialized()
with raises(sidecore.Error, 12):
    sc.parameter_get("NX")
print(f"rank {rank}: done", flush=True)
