"""The `sidecore` command of a pip installation: runs the command-line tool (docs/cli.md) that
the wheel carries in sidecore/bin, with this interpreter for what the tool runs in Python
(`report`'s drawing script, `validate`'s compile check of <pyscript> files) unless
SIDECORE_PYTHON names another."""
import os
import sys


def tool_path():
    """The command-line tool inside this package, or None when the wheel was built without it."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sidecore")
    return path if os.access(path, os.X_OK) else None


def main(argv=None):
    arguments = sys.argv[1:] if argv is None else list(argv)
    tool = tool_path()
    if tool is None:
        print("sidecore: this installation has no command-line tool (validate, inspect, report): "
              "it was built without CLI11. Install it (Debian: apt-get install libcli11-dev) "
              "and reinstall the package (pip install --force-reinstall --no-deps <wheel or "
              "source>), or use a CMake build's tools/cli/sidecore.", file=sys.stderr)
        return 1
    os.environ.setdefault("SIDECORE_PYTHON", sys.executable)
    sys.stdout.flush()
    os.execv(tool, [tool] + arguments)
    return 1  # not reached: execv raises OSError when it fails


if __name__ == "__main__":
    sys.exit(main())
