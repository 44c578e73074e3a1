"""Blocks of 1 to 8 dimensions and of every element type reach scripts intact: an mpi4py
simulation (shapes_writer.py) writes one variable per dimension count, each of another type,
plus an 8-dimensional Fortran layout and ghosted layouts in C and Fortran order; a
Sidecore-style script (scripts/record.py) and a Damaris-style one (scripts/dd_record.py) save
what they receive, which is compared here with what was written: shape, dtype and every value
(a wrong stride or offset shows as a wrong value)."""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from mpi_job import expect_array  # noqa: E402
from test_scripts import load, pyscript, run  # noqa: E402

EXTENTS = (3, 2, 4, 2, 3, 2, 2, 3)
# (XML type, NumPy dtype, Damaris's type_string): every type the XML accepts for numbers.
TYPES = (("char", np.int8, "_char"), ("short", np.int16, "_short"), ("int", np.int32, "_int"),
         ("long", np.int64, "_longint"), ("float", np.float32, "_float"),
         ("double", np.float64, "_double"), ("integer", np.int32, "_int"),
         ("real", np.float32, "_float"))
CLIENTS, ITERATIONS = 2, 3


class Variable:
    def __init__(self, name, xml_type, dims, fortran=False, ghosts=None):
        """dims and ghosts ((before, after) per dimension) in the order the XML lists them."""
        self.name, self.xml_type, self.dims, self.fortran = name, xml_type, tuple(dims), fortran
        self.ghosts = ghosts
        _, self.dtype, self.type_string = next(t for t in TYPES if t[0] == xml_type)
        order = (lambda seq: tuple(reversed(seq))) if fortran else tuple
        self.shape = order(self.dims)  # C order, as the Python client and scripts see it
        self.c_ghosts = order(ghosts) if ghosts else None

    def full(self, it, client):
        """The block written at iteration it by client, ghost zones included (C order)."""
        n = int(np.prod(self.shape))
        values = (np.arange(n) * 7 + it * 3 + client * 11) % 120
        if np.issubdtype(self.dtype, np.floating):
            values = values + 0.25
        return values.astype(self.dtype).reshape(self.shape)

    def interior(self, it, client):
        full = self.full(it, client)
        if not self.c_ghosts:
            return full
        return full[tuple(slice(b, e - a) for (b, a), e in zip(self.c_ghosts, self.shape))]

    def layout_xml(self):
        ghosts = ""
        if self.ghosts:
            ghosts = ' ghosts="' + ",".join(f"{b}:{a}" for b, a in self.ghosts) + '"'
        language = ' language="fortran"' if self.fortran else ""
        return (f'<layout name="{self.name}_layout" type="{self.xml_type}" '
                f'dimensions="{",".join(map(str, self.dims))}"{ghosts}{language}/>')


VARIABLES = [Variable(f"c{n}", TYPES[n - 1][0], EXTENTS[:n]) for n in range(1, 9)] + [
    Variable("f8", "double", EXTENTS, fortran=True),
    Variable("g8", "long", EXTENTS, ghosts=((1, 1), (0, 0), (1, 0), (0, 0), (0, 0), (0, 0),
                                            (0, 0), (0, 1))),
    Variable("gf4", "float", EXTENTS[:4], fortran=True,
             ghosts=((1, 1), (0, 0), (0, 1), (0, 0))),
]


def configure(tmp_path, cores, threads):
    out = tmp_path / "out"
    out.mkdir()
    layouts = "\n    ".join(v.layout_xml() for v in VARIABLES)
    variables = "\n    ".join(f'<variable name="{v.name}" layout="{v.name}_layout" '
                               f'script="rec,dd"/>' for v in VARIABLES)
    xml = tmp_path / "shapes.xml"
    xml.write_text(f"""<?xml version="1.0"?>
<simulation name="shapes" xmlns="http://damaris.gforge.inria.fr/damaris/model">
  <architecture>
    <domains count="1"/>
    <dedicated cores="{cores}" nodes="0" threads="{threads}"/>
    <buffer name="buffer" size="8388608" policy="wait" timeout="60"/>
    <queue name="queue" size="64"/>
  </architecture>
  <data>
    {layouts}
    {variables}
  </data>
  <scripts>
    {pyscript("rec", "record.py")}
    {pyscript("dd", "dd_record.py")}
  </scripts>
</simulation>
""")
    return str(xml), str(out)


def check(out):
    for it in range(ITERATIONS):
        type_strings = {}
        for name in os.listdir(out):
            if name.startswith("dd_S") and name.endswith(f"_it{it}.json"):
                with open(os.path.join(out, name)) as f:
                    for variable, info in json.load(f)["variables"].items():
                        type_strings[variable] = info["type_string"]
        for v in VARIABLES:
            assert type_strings.get(v.name) == v.type_string, (v.name, type_strings.get(v.name))
            for c in range(CLIENTS):
                what = f"{v.name} ({len(v.dims)}-D {v.xml_type}) P{c} it{it}"
                stem = f"{out}/sc_{v.name}_P{c}_B0_it{it}"
                expect_array(what + " data", load(stem + "_data.npy"), v.interior(it, c))
                expect_array(what + " full", load(stem + "_full.npy"), v.full(it, c))
                with open(stem + ".json") as f:
                    meta = json.load(f)
                assert meta["writeable"] is False, what
                expected_ghosts = None
                if v.c_ghosts:
                    expected_ghosts = [[b for b, _ in v.c_ghosts], [a for _, a in v.c_ghosts]]
                assert meta["ghosts"] == expected_ghosts, (what, meta["ghosts"])
                # Damaris's view: the whole block, in the order the XML lists the dimensions.
                full = v.full(it, c)
                expect_array(what + " DamarisData", load(f"{out}/dd_{v.name}_P{c}_B0_it{it}.npy"),
                             full.T if v.fortran else full)


def test_dedicated_cores(tmp_path):
    xml, out = configure(tmp_path, cores=1, threads=0)
    run([sys.executable, os.path.join(HERE, "shapes_writer.py"), xml, str(ITERATIONS)],
        CLIENTS + 1, out)
    check(out)


def test_synchronous(tmp_path):
    xml, out = configure(tmp_path, cores=0, threads=0)
    run([sys.executable, os.path.join(HERE, "shapes_writer.py"), xml, str(ITERATIONS)],
        CLIENTS, out)
    check(out)
