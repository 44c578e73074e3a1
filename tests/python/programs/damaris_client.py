"""Damaris's damaris4py.client in an mpi4py simulation run by Sidecore. Usage:
damaris_client.py <xml> <dedicated cores per node> <ranks per node>. Every answer is checked
against the job's shape, recomputed here from the world communicator (servers are the last
ranks of each node); then each client writes `resizable` = 10 * its client rank + 7 through
sidecore.Session for test_damaris4py_client.py to read back."""
import os
import sys

import numpy as np
from mpi4py import MPI

sys.path.insert(0, os.environ["SIDECORE_TEST_DAMARIS4PY"])
import sidecore  # noqa: E402
from damaris4py import client as dc  # noqa: E402

xml, cores, per_node = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
world = MPI.COMM_WORLD
rank, size = world.Get_rank(), world.Get_size()


def refused(call, kind, code=None):
    try:
        call()
    except kind as e:
        assert code is None or e.code == code, f"{call.__name__}: code {e.code}, expected {code}"
        return
    raise AssertionError(f"{call.__name__}() answered outside its role or run")


# Before damaris_initialize there is no run to answer about: Sidecore's NOT_INITIALIZED.
refused(dc.isclient, sidecore.Error, 12)

# Damaris's module returns the code of the C call instead of raising.
assert dc.damaris_initialize(xml, world) == 0
assert dc.damaris_initialize(xml, world) == 13  # DAMARIS_ALREADY_INITIALIZED

nodes = size // per_node
node, node_rank = divmod(rank, per_node)
server = cores > 0 and node_rank >= per_node - cores
clients_per_node = per_node - cores
servers = world.allgather(server)
client_index = sum(not s for s in servers[:rank])

assert dc.isclient() is (not server)
assert dc.isserver() is server
assert dc.isdedicatedcore() is server
assert dc.isdedicatednode() is False
assert dc.clientspernode() == clients_per_node
assert dc.corespernode() == per_node
assert dc.serverspernode() == cores
assert dc.numberofnodes() == nodes
magic = dc.magicnumber_string()
assert magic.isdigit(), magic
assert len(set(world.allgather(magic))) == 1, "magic number differs between ranks"

everyone = dc.getglobalcomm()
assert everyone.Get_size() == size and everyone.Get_rank() == rank
assert MPI.Comm.Compare(everyone, world) == MPI.CONGRUENT

if server:
    assert dc.listknownclients() == [node * clients_per_node + i
                                     for i in range(clients_per_node)], dc.listknownclients()
    servers_comm = dc.getservercomm()
    assert servers_comm.Get_size() == nodes * cores
    assert servers_comm.Get_rank() == sum(servers[:rank])
    assert MPI.Comm.Compare(dc.getdamariscomm(), servers_comm) == MPI.IDENT
    refused(dc.getclientcomm, RuntimeError)
else:
    # A client with a dedicated core hands its blocks over and receives none; without one it
    # writes its own.
    assert dc.listknownclients() == ([] if cores else [client_index]), dc.listknownclients()
    clients = dc.getclientcomm()
    assert clients.Get_size() == nodes * clients_per_node
    assert clients.Get_rank() == client_index
    assert MPI.Comm.Compare(dc.getdamariscomm(), clients) == MPI.IDENT
    refused(dc.getservercomm, RuntimeError)

session = sidecore.Session()
if session.start():
    client_rank = dc.getclientcomm().Get_rank()
    session.write("resizable", np.full(3, 10 * client_rank + 7, dtype=np.int32))
    session.end_iteration()
    session.stop()
session.finalize()
refused(dc.isserver, sidecore.Error, 12)
print(f"rank {rank}: done", flush=True)
