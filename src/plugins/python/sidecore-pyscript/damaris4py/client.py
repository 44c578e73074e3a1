"""Damaris's damaris4py.client for Python simulations (mpi4py), answered by Sidecore:
damaris_initialize() and the questions Damaris's Environment answers (is this process a client
or a server, the communicators, how many clients, cores and servers per node...).

In a simulation process the answers come from Sidecore's C API through the `sidecore` module,
between damaris_initialize() and damaris_finalize(); the rest of the run (write, end_iteration,
stop...) goes through `sidecore.Session`. Inside a <pyscript> run by Sidecore the answers are
damaris4py.server's, as in Damaris, where both modules read the same Environment."""
import sys

from damaris4py import server as _server

__all__ = ["damaris_initialize", "getclientcomm", "getservercomm", "getdamariscomm",
           "getglobalcomm", "isclient", "isserver", "isdedicatedcore", "isdedicatednode",
           "clientspernode", "corespernode", "serverspernode", "numberofnodes",
           "listknownclients", "magicnumber_string"]


def _in_script():
    return getattr(sys.modules.get("sidecore_script"), "environment", None) is not None


def _ext():
    try:
        from sidecore import _sidecore
    except ImportError as missing:
        raise RuntimeError("damaris4py.client needs Sidecore's Python module `sidecore` "
                           "(pip install it, or put its build directory on sys.path)") from missing
    return _sidecore


def _environment():
    """Sidecore's answers for this process; raises sidecore.Error (NOT_INITIALIZED) outside a
    run, as every Damaris call would fail there."""
    return _ext().environment()


def _comm(fortran_handle):
    from mpi4py import MPI

    return MPI.Comm.f2py(fortran_handle)


def damaris_initialize(xml_path, mpi4py_comm):
    """damaris_initialize(): reads the XML (on the first rank of the communicator), splits
    mpi4py_comm into clients and servers. Collective over mpi4py_comm. Returns the Damaris code
    as Damaris's module does (0, DAMARIS_OK, on success) instead of raising; the message of a
    failure is in the log and in sidecore.Error's text when sidecore.initialize() is used."""
    import os

    from sidecore import Error

    try:
        _ext().initialize(os.fspath(xml_path), mpi4py_comm.py2f())
    except Error as failure:
        return failure.code
    return 0


def getclientcomm():
    """The clients' communicator; only a simulation process has one (RuntimeError elsewhere)."""
    if _in_script():
        return _server.getclientcomm()
    if not _environment()["is_client"]:
        raise RuntimeError("getclientcomm() was not called from a client process; a dedicated "
                           "core or node has getservercomm()")
    return _comm(_ext().client_comm())


def getservercomm():
    """The servers' communicator; only a dedicated core or node has one (RuntimeError
    elsewhere)."""
    if _in_script():
        return _server.getservercomm()
    handle = _ext().server_comm()
    if handle is None:
        raise RuntimeError("getservercomm() was not called from a server process (a dedicated "
                           "core or node); a client has getclientcomm()")
    return _comm(handle)


def getdamariscomm():
    """The communicator of this process's kind: the clients' on a client, the servers' on a
    dedicated core or node."""
    if _in_script():
        return _server.getdamariscomm()
    return getclientcomm() if _environment()["is_client"] else getservercomm()


def getglobalcomm():
    """Every process of the run, clients and servers (Sidecore's duplicate of the communicator
    given to damaris_initialize). Scripts are not given it: there damaris4py.server's answer
    (an error) stands."""
    if _in_script():
        return _server.getglobalcomm()
    return _comm(_ext().global_comm())


def isclient():
    return _server.isclient() if _in_script() else bool(_environment()["is_client"])


def isserver():
    return _server.isserver() if _in_script() else not _environment()["is_client"]


def isdedicatedcore():
    return _server.isdedicatedcore() if _in_script() else _environment()["is_dedicated_core"]


def isdedicatednode():
    return _server.isdedicatednode() if _in_script() else _environment()["is_dedicated_node"]


def clientspernode():
    return _server.clientspernode() if _in_script() else _environment()["clients_per_node"]


def corespernode():
    return _server.corespernode() if _in_script() else _environment()["cores_per_node"]


def serverspernode():
    return _server.serverspernode() if _in_script() else _environment()["servers_per_node"]


def numberofnodes():
    return _server.numberofnodes() if _in_script() else _environment()["number_of_nodes"]


def listknownclients():
    """Client ranks (in the clients' communicator) whose blocks this process receives: a
    server's clients; without dedicated resources the calling client alone; none on a client
    that has a server."""
    if _in_script():
        return _server.listknownclients()
    return list(_environment()["known_clients"])


def magicnumber_string():
    """A string that names this run, the same on every process."""
    return _server.magicnumber_string() if _in_script() else _environment()["magic_number"]
