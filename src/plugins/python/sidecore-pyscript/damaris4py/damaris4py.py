"""The older name of damaris4py.server (`from damaris4py.damaris4py import getservercomm`),
kept so that scripts written for earlier Damaris releases run unchanged."""
from damaris4py.server import *  # noqa: F401,F403
from damaris4py.server import __all__  # noqa: F401
