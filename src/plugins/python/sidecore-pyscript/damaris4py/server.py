"""What a script learns of where it runs (Damaris's damaris4py.server), answered by Sidecore.

Scripts run where the stores run: on dedicated cores or nodes, or on every simulation process
when there are none (a background thread or synchronous output). Importing it works in any
process (as Damaris's post-processing scripts import it); its functions answer only in a
script run by Sidecore."""
import sys

__all__ = ["getservercomm", "getclientcomm", "getdamariscomm", "getglobalcomm", "isclient",
           "isserver", "isdedicatedcore", "isdedicatednode", "clientspernode", "corespernode",
           "serverspernode", "numberofnodes", "listknownclients", "magicnumber_string"]


def _env():
    # The runner's half is loaded by the writers only: found, never imported, from here.
    environment = getattr(sys.modules.get("sidecore_script"), "environment", None)
    if environment is None:
        raise RuntimeError("damaris4py.server answers only in a <pyscript> run by Sidecore's "
                           "writers; this process runs none")
    return environment


def _has_servers():
    return _env().mode in ("dedicated cores", "dedicated nodes")


def getservercomm():
    """The mpi4py communicator of the processes running scripts (the dedicated cores or nodes;
    every simulation process without them)."""
    return _env().lend_comm()


def getdamariscomm():
    """The communicator of this process's kind: the servers' here."""
    return _env().lend_comm()


def getclientcomm():
    """The clients' communicator: only a simulation process has one. Without dedicated cores or
    nodes, scripts run on the clients and this is the communicator of them all."""
    if _has_servers():
        raise RuntimeError("getclientcomm(): scripts run on dedicated servers here, which are "
                           "not clients; use getservercomm()")
    return _env().lend_comm()


def getglobalcomm():
    raise RuntimeError("getglobalcomm(): Sidecore does not give scripts the whole job's "
                       "communicator (clients and servers never meet inside a script); use "
                       "getservercomm()")


def isclient():
    return not _has_servers()


def isserver():
    return _has_servers()


def isdedicatedcore():
    return _env().is_dedicated_core


def isdedicatednode():
    return _env().is_dedicated_node


def clientspernode():
    return _env().clients_per_node


def corespernode():
    return _env().cores_per_node


def serverspernode():
    return _env().servers_per_node


def numberofnodes():
    return _env().number_of_nodes


def listknownclients():
    """Client ranks (in the clients' communicator) whose blocks this process receives."""
    return list(_env().known_clients)


def magicnumber_string():
    """A string that names this run, the same on every process."""
    return _env().magic
