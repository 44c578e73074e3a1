/* Sidecore: the codes every C header shares, without MPI.
 *
 * Damaris.h includes this header; sidecore/read.h includes it alone, so that a program that
 * only reads stored output needs neither MPI's headers nor Damaris.h. */
#ifndef SIDECORE_CODES_H
#define SIDECORE_CODES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: Damaris's names and values (those of every Damaris header we could read); they
 * will never change. */
enum {
  DAMARIS_OK = 0,               /* success */
  DAMARIS_INIT_ERROR = 1,       /* initialization failed (see the message) */
  DAMARIS_FINALIZE_ERROR = 2,   /* finalization failed */
  DAMARIS_CORE_IS_SERVER = 3,   /* client-only call made on a server process */
  DAMARIS_NO_SERVER = 4,        /* no dedicated core or node (damaris_start/stop): not a failure */
  DAMARIS_ALLOCATION_ERROR = 5, /* the buffer cannot hold the request (or wait timed out) */
  DAMARIS_CONFIG_ERROR = 6,     /* invalid XML configuration */
  DAMARIS_ARGUMENT_ERROR = 7,   /* invalid argument (null pointer, wrong size...) */
  DAMARIS_MPI_ERROR = 8,        /* an MPI call failed */
  DAMARIS_DATASPACE_ERROR = 9,  /* invalid data space */
  DAMARIS_CHANNEL_ERROR = 10,   /* a communication channel failed */
  DAMARIS_INVALID_TAG = 11,     /* invalid message tag */
  DAMARIS_NOT_INITIALIZED = 12, /* call made before damaris_initialize() */
  DAMARIS_ALREADY_INITIALIZED = 13, /* damaris_initialize() called twice */
  DAMARIS_UNDEFINED_ACTION = 14,    /* no event or script of that name */
  DAMARIS_UNDEFINED_PARAMETER = 15, /* no parameter of that name */
  DAMARIS_UNDEFINED_VARIABLE = 16,  /* no variable of that name */
  DAMARIS_INVALID_BLOCK = 17,       /* negative block id (Sidecore accepts any id >= 0) */
  DAMARIS_INVALID_DIMENSIONS = 18,  /* a layout evaluates to invalid dimensions */
  DAMARIS_BLOCK_NOT_FOUND = 19,     /* commit/clear of a block that was not allocated */
  DAMARIS_REACTOR_NOT_FOUND = 20,   /* internal messaging not available */
  DAMARIS_BIND_ERROR = 21,          /* damaris_bind() failed */
  DAMARIS_ERROR_UNKNOWN = 22        /* anything else, including storage failures */
};

/* The element type of a variable's layout, as damaris_get_type() reports it (Damaris 1.9 API,
 * the names OPM Flow compares against). The values are Sidecore's own: no public Damaris source
 * we could read pins them, so compile against this header. The XML
 * types map as: short -> SHORT; int, integer -> INT; long -> LONG; float, real -> FLOAT;
 * double -> DOUBLE; char, character -> CHAR; string -> STRING; label -> LABEL. The unsigned
 * types have no XML spelling and are never reported. */
typedef enum {
  DAMARIS_TYPE_UNDEFINED = 0,
  DAMARIS_TYPE_SHORT = 1,
  DAMARIS_TYPE_INT = 2,
  DAMARIS_TYPE_LONG = 3,
  DAMARIS_TYPE_FLOAT = 4,
  DAMARIS_TYPE_DOUBLE = 5,
  DAMARIS_TYPE_CHAR = 6,
  DAMARIS_TYPE_USHORT = 7,
  DAMARIS_TYPE_UINT = 8,
  DAMARIS_TYPE_ULONG = 9,
  DAMARIS_TYPE_UCHAR = 10,
  DAMARIS_TYPE_STRING = 11,
  DAMARIS_TYPE_LABEL = 12
} DAMARIS_TYPE_STR;

/* The most dimensions a layout has (damaris_write_block() and every header that takes
 * extents). A constant of the library: defining it otherwise before this header only draws the
 * compiler's "redefined" warning. */
#define SIDECORE_MAX_DIMENSIONS 8

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_CODES_H */
