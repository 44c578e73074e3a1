"""Xvfb for the ParaView tests and benchmarks: an X server of their own, rendering without a
display (imported by tests/paraview/test_paraview.py and bench/paraview/run_cost.py)."""
import os
import random
import select
import signal
import subprocess
import time


def start_xvfb(xvfb="Xvfb"):
    """Xvfb on a free display number from 100 up, without server resets (a reset while a rank
    connects loses that rank's connection): (process, ":N"). Never :0 to :9: every MPI
    process's hwloc probes those displays for GPUs (its "gl" component), and one that connects
    while another job's Xvfb there is ending dies at once (Xlib's fatal IO error). Raises
    RuntimeError when no display could be started."""
    for number in random.sample(range(100, 1000), 40):
        # -displayfd: Xvfb writes the number when it is ready; a number in use makes it exit.
        ready, announce = os.pipe()
        server = subprocess.Popen([xvfb, f":{number}", "-displayfd", str(announce), "-noreset",
                                   "-nolisten", "tcp", "-screen", "0", "1024x768x24"],
                                  pass_fds=(announce,), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(announce)
        said = b""
        deadline = time.time() + 30
        while not said.endswith(b"\n") and server.poll() is None and time.time() < deadline:
            if select.select([ready], [], [], 0.5)[0]:
                chunk = os.read(ready, 16)
                if not chunk:
                    break
                said += chunk
        os.close(ready)
        if said.endswith(b"\n"):
            return server, f":{int(said)}"
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    raise RuntimeError("Xvfb did not start on any of 40 display numbers")
