"""`sidecore validate` on known configurations: the numbers it prints are recomputed here from
the layouts, the ranks and the mapping of clients to writers, not copied from its output.

usage: test_validate.py <sidecore executable> <repository root> <case>
"""
import json
import math
import os
import subprocess
import sys

TOOL, ROOT, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
XML = os.path.join(ROOT, "tests", "cli", "xml")
# The defaults read the environment: the cases give what they need on the command line.
ENV = {k: v for k, v in os.environ.items()
       if k not in ("SIDECORE_STRICT", "SIDECORE_RANKS_PER_NODE") and not k.startswith("SLURM_")}


def run(*args, env=None):
    done = subprocess.run([TOOL, *args], capture_output=True, text=True, env=env or ENV, timeout=60)
    return done.returncode, done.stdout, done.stderr


def validate_json(*args, env=None):
    code, out, err = run("validate", "--json", *args, env=env)
    assert code == 0, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    return json.loads(out)


def expect(actual, wanted, what):
    assert actual == wanted, f"{what}: got {actual!r}, expected {wanted!r}"


def server_of_client(client, clients, servers):
    """src/topology: consecutive clients per server."""
    return client * servers // clients


def line64(nbytes):
    """A block's room in a dedicated core's shared buffer: whole 64-byte lines."""
    return max(64, (nbytes + 63) // 64 * 64)


def variable(report, name):
    return next(v for v in report["variables"] if v["name"] == name)


def store(report, name):
    return next(s for s in report["stores"] if s["name"] == name)


def case_cores():
    # 10 ranks, 5 per node, 2 dedicated cores per node: 2 nodes, 4 writers, 6 clients; on each
    # node 3 clients over 2 cores.
    ranks, per_node, cores, domains = 10, 5, 2, 2
    nodes = ranks // per_node
    counts = [0] * cores
    for r in range(per_node - cores):
        counts[server_of_client(r, per_node - cores, cores)] += 1
    r = validate_json(os.path.join(XML, "heat_cores.xml"), "--ranks", str(ranks),
                      "--ranks-per-node", str(per_node))
    job = r["job"]
    expect(job["mode"], "dedicated cores", "mode")
    expect((job["nodes"], job["clients"], job["writers"]), (nodes, ranks - nodes * cores, nodes * cores),
           "nodes, clients, writers")
    expect((job["most_clients_per_writer"], job["fewest_clients_per_writer"]), (max(counts), min(counts)),
           "clients per writer")

    nx = 100
    ny = nx // 2 + 1
    dims = [nx + 2, ny + 2]
    cells = dims[0] * dims[1] * 8
    interior = nx * ny * 8
    t = variable(r, "temperature")
    expect(t["dimensions"], dims, "temperature dimensions")
    expect(t["global_dimensions"], [nx * 4, ny * 2], "temperature global")
    expect((t["block_bytes"], t["stored_bytes"], t["shared_buffer_bytes"]), (cells, interior, line64(cells)),
           "temperature bytes")
    expect(t["blocks_per_client"], domains, "domains")
    expect(t["stores"], ["fpc"], "temperature store")
    ids = variable(r, "ids")
    expect((ids["block_bytes"], ids["time_varying"]), (12, False), "ids")
    expect(variable(r, "step")["block_bytes"], 4, "step (predefined int layout)")
    assert all(v["name"] != "off" for v in r["variables"]), "a disabled variable is listed"

    per_client = domains * (2 * cells + 12 + 4)
    shared = domains * (2 * line64(cells) + line64(12) + line64(4))
    it = r["per_iteration"]
    expect(it["bytes_per_client"], per_client, "bytes per client")
    expect(it["bytes_per_writer"], per_client * max(counts), "bytes per writer")
    expect(it["bytes_per_job"], per_client * job["clients"], "bytes per job")

    size = 1024 * 1024
    use = r["buffer"]["uses"][0]
    expect((use["capacity"], use["bytes_per_iteration"]), (size // cores, shared * max(counts)), "buffer use")
    headroom = (size // cores) / (shared * max(counts))
    assert math.isclose(r["buffer"]["headroom"], headroom, rel_tol=1e-9), r["buffer"]
    assert headroom < 2
    low = [w for w in r["warnings"] if "heat_cores.xml:8: <buffer" in w and "holds 1.51 iterations" in w]
    assert len(low) == 1, r["warnings"]
    assert f'size="{2 * shared * max(counts) * cores}" holds 2 iterations' in low[0], low[0]

    writers = job["writers"]
    fpc = store(r, "fpc")
    expect(fpc["file_mode"], "FilePerCore", "fpc mode")
    expect(fpc["iteration_files"], ["out/fpc/heat_It<i>_Pr<w>.h5"], "fpc pattern")
    expect(fpc["master_file"], "out/fpc/heat_It<i>.h5", "fpc master")
    expect(fpc["xdmf_file"], "out/fpc/heat.xmf", "fpc xdmf")
    expect(fpc["first_iteration_files"],
           [f"out/fpc/heat_It0_Pr{w}.h5" for w in range(writers)] + ["out/fpc/heat_It0.h5", "out/fpc/heat.xmf"],
           "fpc files of iteration 0")
    expect(fpc["datasets"], ["temperature/P<source>/B<block>", "ids/P<source>/B<block>",
                             "step/P<source>/B<block>"], "fpc datasets")
    expect(fpc["frequency"], 2, "fpc frequency")
    fpc_client = domains * (interior + 4)
    expect(fpc["bytes_per_stored_iteration"], fpc_client * job["clients"], "fpc bytes")
    expect(fpc["bytes_per_writer"], fpc_client * max(counts), "fpc bytes per writer")
    coll = store(r, "coll")
    expect(coll["iteration_files"], ["out/coll/heat_It<i>.h5"], "coll pattern")
    expect(coll["first_iteration_files"], ["out/coll/heat_It0.h5"], "coll files of iteration 0")
    expect((coll["master_file"], coll["xdmf_file"]), ("", ""), "coll master and xdmf")
    expect(coll["datasets"], ["pressure"], "coll datasets")
    expect(coll["bytes_per_stored_iteration"], domains * interior * job["clients"], "coll bytes")

    # The same numbers in the text output.
    code, out, _ = run("validate", os.path.join(XML, "heat_cores.xml"), "--ranks", str(ranks),
                       "--ranks-per-node", str(per_node))
    expect(code, 0, "text exit")
    for text in (f"each client    {per_client} bytes", "files          out/fpc/heat_It<i>_Pr<w>.h5, <w> = 0..3",
                 "headroom       1.51 iterations (low)", "iterations 0, 2, 4, ... (frequency 2)"):
        assert text in out, f"{text!r} not in:\n{out}"


def case_damaris_example():
    # A Damaris example file: one dedicated core per node, a Collective store, an undeclared
    # mesh (a warning, as at initialization).
    ranks, per_node = 8, 4
    path = os.path.join(ROOT, "tests", "data", "config", "damaris_3dmesh.xml")
    r = validate_json(path, "--ranks", str(ranks), "--ranks-per-node", str(per_node))
    clients_per_server = per_node - 1
    expect((r["job"]["clients"], r["job"]["writers"]), (ranks - ranks // per_node, ranks // per_node), "roles")
    cube = variable(r, "cube")
    dims = [16 // 4, 8, 4]  # WIDTH/size, HEIGHT, DEPTH
    expect(cube["dimensions"], dims, "cube dimensions")
    block = dims[0] * dims[1] * dims[2] * 4
    expect(cube["block_bytes"], block, "cube bytes")
    use = r["buffer"]["uses"][0]
    expect((use["capacity"], use["bytes_per_iteration"]), (536870912, clients_per_server * line64(block)), "buffer")
    assert math.isclose(r["buffer"]["headroom"], 536870912 / (clients_per_server * line64(block)), rel_tol=1e-9)
    s = store(r, "MyStore")
    expect((s["file_mode"], s["files_path"]), ("Collective", ""), "store mode and path")
    expect(s["iteration_files"], ["3dmesh_It<i>.h5"], "file pattern")
    expect(s["first_iteration_files"], ["3dmesh_It0.h5", "3dmesh.xmf"], "files of iteration 0")
    expect(s["datasets"], ["cube"], "datasets")
    assert any(w.startswith(path + ":16:") and "'mesh'" in w for w in r["warnings"]), r["warnings"]


def case_nodes():
    # 7 ranks, 2 per node: nodes of 2, 2, 2 and 1 ranks; the last 2 nodes (3 ranks) serve 4
    # clients.
    ranks, per_node, dedicated = 7, 2, 2
    sizes = [per_node] * (ranks // per_node) + ([ranks % per_node] if ranks % per_node else [])
    servers = sum(sizes[-dedicated:])
    clients = ranks - servers
    counts = [0] * servers
    for c in range(clients):
        counts[server_of_client(c, clients, servers)] += 1
    r = validate_json(os.path.join(XML, "nodes.xml"), "--ranks", str(ranks), "--ranks-per-node", str(per_node))
    job = r["job"]
    expect((job["mode"], job["nodes"], job["clients"], job["servers"]),
           ("dedicated nodes", len(sizes), clients, servers), "job")
    expect((job["most_clients_per_writer"], job["fewest_clients_per_writer"]), (max(counts), min(counts)),
           "clients per server")
    block = 1000 * 4
    uses = {u["holder"]: u for u in r["buffer"]["uses"]}
    expect(uses["each client process"]["bytes_per_iteration"], block, "client buffer")
    expect(uses["each server process"]["bytes_per_iteration"], block * max(counts), "server buffer")
    assert math.isclose(r["buffer"]["headroom"], 10000 / (block * max(counts))), r["buffer"]
    expect(r["buffer"]["memory_per_node"], 10000 * per_node, "memory per node")
    expect(store(r, "discard")["kind"], "null", "null store")
    assert any("option \"FilesPath\" means nothing to a null store" in w for w in r["warnings"]), r["warnings"]
    assert any("nodes.xml:6: <buffer" in w and "holds 1.25 iterations of each server process" in w
               for w in r["warnings"]), r["warnings"]
    # Without --ranks: as many simulation nodes as dedicated ones, each server with one client.
    r = validate_json(os.path.join(XML, "nodes.xml"), "--ranks-per-node", str(per_node))
    expect((r["job"]["ranks"], r["job"]["clients"], r["job"]["servers"]),
           (2 * dedicated * per_node, dedicated * per_node, dedicated * per_node), "default ranks")


def case_batch_job():
    # Inside a Slurm allocation, without --ranks: the job's task counts, said to come from it.
    path = os.path.join(XML, "heat_cores.xml")
    cores = 2  # <dedicated cores="2"/> of heat_cores.xml
    for tasks_per_node, per_node in (("SLURM_NTASKS_PER_NODE", "6"), ("SLURM_TASKS_PER_NODE", "6(x2)")):
        env = dict(ENV, SLURM_NTASKS="12", **{tasks_per_node: per_node})
        code, out, err = run("validate", "--json", path, env=env)
        assert code == 0, f"exit {code}: {err}"
        r = json.loads(out)
        expect((r["job"]["ranks"], r["job"]["ranks_per_node"]), (12, 6), f"{tasks_per_node} layout")
        expect((r["job"]["clients"], r["job"]["servers"]), (12 - 2 * cores, 2 * cores), "roles")
        expect(r["job"]["ranks_source"], "default: SLURM_NTASKS of this batch job", "ranks source")
        expect(r["job"]["ranks_per_node_source"], f"default: {tasks_per_node} of this batch job",
               "per node source")
    # Nodes of 5, 5 and 4 tasks: 5 per node, the last node partly filled, as the plan shows.
    env = dict(ENV, SLURM_NPROCS="14", SLURM_TASKS_PER_NODE="5(x2),4")
    r = json.loads(run("validate", "--json", path, env=env)[1])
    expect((r["job"]["ranks"], r["job"]["ranks_per_node"]), (14, 5), "block distribution")
    expect(r["job"]["ranks_source"], "default: SLURM_NPROCS of this batch job", "SLURM_NPROCS")
    expect(r["job"]["ranks_per_node_source"], "default: SLURM_TASKS_PER_NODE of this batch job",
           "even")
    # Uneven: a node before the last holds fewer; the largest count, and a word about it.
    env = dict(ENV, SLURM_NTASKS="9", SLURM_TASKS_PER_NODE="4,5")
    r = json.loads(run("validate", "--json", path, env=env)[1])
    expect(r["job"]["ranks_per_node"], 5, "largest count")
    assert "nodes with fewer tasks before its last" in r["job"]["ranks_per_node_source"], r["job"]
    # The options and SIDECORE_RANKS_PER_NODE come first.
    env = dict(ENV, SLURM_NTASKS="12", SLURM_NTASKS_PER_NODE="6", SIDECORE_RANKS_PER_NODE="4")
    r = json.loads(run("validate", "--json", path, "--ranks", "8", env=env)[1])
    expect((r["job"]["ranks"], r["job"]["ranks_per_node"]), (8, 4), "options first")
    # A malformed count is said and left out.
    env = dict(ENV, SLURM_NTASKS="twelve", SLURM_TASKS_PER_NODE="6(x2),x")
    r = validate_json(path, "--ranks", "6", env=env)
    expect((r["job"]["ranks"], r["job"]["ranks_source"]), (6, "--ranks"), "malformed ranks")
    assert r["job"]["ranks_per_node_source"].startswith("default: every rank on this machine"), r["job"]
    said = [w for w in r["warnings"] if w.startswith("batch job environment: ")]
    assert len(said) == 1 and "SLURM_NTASKS='twelve' is not a task count" in said[0] and \
        "SLURM_TASKS_PER_NODE='6(x2),x' is not a list of task counts" in said[0], r["warnings"]


def case_thread():
    ranks = 3
    r = validate_json(os.path.join(XML, "thread.xml"), "--ranks", str(ranks), "--ranks-per-node", str(ranks))
    expect((r["job"]["mode"], r["job"]["writers"]), ("thread", ranks), "job")
    rho = variable(r, "rho")
    expect(rho["dimensions"], [4, 32, 64], "Fortran layout in C order")
    block = 64 * 32 * 4 * 8
    expect(rho["block_bytes"], block, "rho bytes")
    size = 8 * 1024 * 1024
    expect(r["buffer"]["headroom"], size / block, "headroom")
    expect(r["buffer"]["memory_per_node"], size * ranks, "memory per node")
    s = store(r, "files")
    expect(s["first_iteration_files"], [f"bg_It0_Pr{w}.h5" for w in range(ranks)], "files")
    expect((s["master_file"], s["xdmf_file"]), ("", ""), "no master file, no XDMF")
    expect(r["warnings"], [], "warnings")


def case_error():
    path = os.path.join(ROOT, "tests", "c", "xml", "config_undefined_layout.xml")
    code, out, err = run("validate", path)
    expect(code, 1, "exit status")
    assert f"{path}:12:" in err and "'gird'" in err, err
    code, out, err = run("validate", "--json", path)
    expect(code, 1, "exit status with --json")
    r = json.loads(out)
    assert r["valid"] is False and f"{path}:12:" in r["error"], r


def case_strict():
    # A misspelt attribute: a warning, an error under --strict or SIDECORE_STRICT=1.
    path = os.path.join(XML, "typo.xml")
    code, out, err = run("validate", path, "--ranks", "1", "--ranks-per-node", "1")
    expect(code, 0, "exit status")
    assert f"{path}:9: unknown attribute 'ghost'" in out and "did you mean 'ghosts'?" in out, out
    assert ": valid, 1 warning" in out, out
    code, out, err = run("validate", "--strict", path)
    expect(code, 1, "--strict exit status")
    assert f"{path}:9:" in err and "strict checking" in err, err
    code, out, err = run("validate", path, env={**ENV, "SIDECORE_STRICT": "1"})
    expect(code, 1, "SIDECORE_STRICT exit status")


def case_usage():
    code, out, _ = run("--version")
    expect(code, 0, "--version exit")
    assert out.startswith("sidecore ") and "\nMPI: " in out and "\nHDF5: " in out, out
    # Whether <paraview> pipelines can run, and with which Python (docs/paraview.md).
    assert "\nParaView pipelines (<paraview>): " in out, out
    assert ("run with /" in out) == bool(os.environ.get("SIDECORE_TEST_PARAVIEW_PYTHON")), out
    expect(run()[0], 2, "no command")
    expect(run("frobnicate")[0], 2, "unknown command")
    expect(run("validate")[0], 2, "no file")
    expect(run("validate", "--ranks", "0", "x.xml")[0], 2, "ranks 0")
    # --ranks alone: every rank on this machine, as `mpirun -np 6` would start them, and said.
    r = validate_json(os.path.join(XML, "heat_cores.xml"), "--ranks", "6")
    expect((r["job"]["nodes"], r["job"]["clients"], r["job"]["writers"]), (1, 4, 2),
           "--ranks 6 alone: nodes, clients, writers")
    code, out, _ = run("validate", os.path.join(XML, "heat_cores.xml"), "--ranks", "6")
    assert "6 per node (default: every rank on this machine" in out, out
    code, _, err = run("validate", os.path.join(XML, "missing.xml"))
    expect(code, 1, "missing file")
    assert "missing.xml" in err, err
    # Too few ranks per node for the dedicated cores: the job could not start.
    code, _, err = run("validate", os.path.join(XML, "heat_cores.xml"), "--ranks", "6", "--ranks-per-node", "3")
    expect(code, 1, "node too small")
    assert "heat_cores.xml" in err and "at least 4 ranks" in err, err


def case_scripts():
    """<pyscript> files are read and parsed as damaris_initialize would: a missing file and a
    syntax error are configuration errors naming the XML line, the script and (for the syntax
    error) the script's own line; a good script passes; a relative name is taken from the
    working directory."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="sidecore-validate-") as work:
        with open(os.path.join(work, "good.py"), "w") as f:
            f.write("def on_iteration(it):\n    pass\n")
        with open(os.path.join(work, "bad.py"), "w") as f:
            f.write("def on_iteration(it):\n    x = (\n")

        def configuration(names):
            scripts = "\n".join(f'    <pyscript name="{n}" file="{n}.py" language="python"/>'
                                for n in names)
            path = os.path.join(work, "s.xml")
            with open(path, "w") as f:
                f.write(f"""<?xml version="1.0"?>
<simulation name="s" language="c">
  <architecture>
    <domains count="1"/>
    <dedicated cores="1" nodes="0"/>
    <buffer name="b" size="1048576"/>
  </architecture>
  <data>
    <layout name="ids" type="int" dimensions="3"/>
    <variable name="ids" layout="ids" script="{','.join(names)}"/>
  </data>
  <scripts>
{scripts}
  </scripts>
</simulation>
""")
            return path

        def run_in(*args, **extra):
            done = subprocess.run([TOOL, *args], capture_output=True, text=True,
                                  env={**ENV, **extra}, timeout=60, cwd=work)
            return done.returncode, done.stdout, done.stderr

        python = {"SIDECORE_PYTHON": sys.executable}
        code, out, err = run_in("validate", configuration(["good"]), "--ranks", "2", **python)
        expect(code, 0, f"good script exit status\n{err}")
        assert "valid, 0 warnings" in out, out
        code, _, err = run_in("validate", configuration(["good", "bad", "missing"]), "--ranks",
                              "2", **python)
        expect(code, 1, "bad and missing scripts exit status")
        assert 's.xml:14: <pyscript name="bad" file="bad.py">: not Python: bad.py:2:' in err, err
        assert 's.xml:15: <pyscript name="missing" file="missing.py">: cannot read' in err, err
        assert f"working directory, {os.path.realpath(work)}" in err, err
        assert "good.py" not in err, err
        # No interpreter to check the syntax with: said, not an error.
        code, out, err = run_in("validate", configuration(["bad"]), "--ranks", "2",
                                SIDECORE_PYTHON="/nonexistent/python")
        expect(code, 0, f"unchecked syntax exit status\n{err}")
        assert "were not checked for syntax errors" in out, out


CASES = {name[len("case_"):]: f for name, f in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    CASES[CASE]()
    print(f"cli.validate.{CASE}: ok")
