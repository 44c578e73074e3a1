"""sidecore.Error and the Damaris error codes it carries (Damaris.h; the values never change)."""

OK = 0
INIT_ERROR = 1
FINALIZE_ERROR = 2
CORE_IS_SERVER = 3
NO_SERVER = 4
ALLOCATION_ERROR = 5
CONFIG_ERROR = 6
ARGUMENT_ERROR = 7
MPI_ERROR = 8
DATASPACE_ERROR = 9
CHANNEL_ERROR = 10
INVALID_TAG = 11
NOT_INITIALIZED = 12
ALREADY_INITIALIZED = 13
UNDEFINED_ACTION = 14
UNDEFINED_PARAMETER = 15
UNDEFINED_VARIABLE = 16
INVALID_BLOCK = 17
INVALID_DIMENSIONS = 18
BLOCK_NOT_FOUND = 19
REACTOR_NOT_FOUND = 20
BIND_ERROR = 21
ERROR_UNKNOWN = 22

CODE_NAMES = {value: "DAMARIS_" + name for name, value in globals().items()
              if name.isupper() and isinstance(value, int)}


class Error(Exception):
    """A Sidecore call failed. `code` is the DAMARIS_* value the C API returned (`name` spells
    it), `message` what went wrong, as damaris_last_error_message() says it."""

    def __init__(self, code, message):
        super().__init__(code, message)
        self.code = code
        self.message = message
        # For an error every rank raised alike (a configuration error), on a rank other than
        # 0: this rank's number. Left uncaught, it is printed in one line there, rank 0
        # printing the traceback. False otherwise.
        self.reported_by_rank_0 = False

    @property
    def name(self):
        return CODE_NAMES.get(self.code, f"error code {self.code}")

    def __str__(self):
        return f"{self.name}: {self.message}"


class DtypeError(Error, TypeError):
    """An array's element type is not the one its variable's layout declares."""


class ShapeError(Error, ValueError):
    """An array's shape (or a position's length) does not match its variable's layout."""


class ReleasedArrayError(Error, ValueError):
    """An array Session.alloc lent (or a view of it) was used after its block was given back:
    by release(), end_iteration() or finalize(). Its memory then holds other blocks' data."""
