"""python -m sidecore --version: what this Sidecore module is and what it was built with.
python -m sidecore <command> ...: the command-line tool (validate, inspect, report), as
the `sidecore` command runs it (sidecore/_cli.py)."""
import argparse
import sys

from . import _cli
from . import _sidecore as _ext


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments and not arguments[0].startswith("-"):
        return _cli.main(arguments)
    parser = argparse.ArgumentParser(
        prog="python -m sidecore",
        description="Sidecore: asynchronous I/O for MPI simulations (docs/python.md).")
    parser.add_argument("--version", action="store_true",
                        help="print the versions of Sidecore, its MPI library and HDF5")
    parser.epilog = ("Commands (validate, inspect, report): python -m sidecore <command> "
                     "--help, or the `sidecore` command.")
    args = parser.parse_args(arguments)
    if not args.version:
        parser.print_help()
        return 0
    print(f"sidecore {_ext.version()}")
    print(f"MPI: {_ext.mpi_library_version()}")
    print(f"HDF5: {_ext.hdf5_version()}")
    scripts = "yes" if _ext.python_scripts() else "no (built without the script runner)"
    print(f"Python scripts (<pyscript>): {scripts}, Python {sys.version.split()[0]}")
    paraview = _ext.paraview_python()
    print("ParaView pipelines (<paraview>): " +
          (f"run with {paraview}" if paraview else
           "not available (no Python that imports ParaView's Catalyst modules was found when "
           "Sidecore was built; docs/paraview.md)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
