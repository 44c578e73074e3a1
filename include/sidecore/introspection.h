/* Sidecore extension: what a variable or a parameter is, as the configuration declares it and
 * as this process's current parameter values resolve it. Bindings (the Python module) use it
 * to check an array against a variable's layout before handing its address to damaris_write.
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 * A description is read from the same configuration file as damaris_initialize() and answers
 * with the values that damaris_parameter_get() returns at the time of the question: a layout
 * whose dimensions read a parameter changed with damaris_parameter_set() is described with its
 * new extents, exactly as the next damaris_write() sizes the block.
 *
 * Errors. Every function returns a Damaris error code (DAMARIS_OK on success) and never throws
 * or terminates; the message of the last failure of these functions on the calling thread is
 * returned by sidecore_describe_last_error(), an alias of damaris_last_error_message().
 *
 * Thread safety. A description may be read from several threads at once; opening and closing
 * it are the caller's to order. The answers follow damaris_parameter_get(), which belongs to
 * the thread that initialized Sidecore (see Damaris.h).
 */
#ifndef SIDECORE_INTROSPECTION_H
#define SIDECORE_INTROSPECTION_H

#include <mpi.h>
#include <stdint.h>

#include "Damaris.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An opaque description of a configuration. Created by sidecore_describe_open(), released by
 * sidecore_describe_close(). */
typedef struct sidecore_description sidecore_description;

/* Reads configfile on the first rank of comm only and broadcasts it, as damaris_initialize()
 * does, then builds the description. Collective over comm (call it on every process given to
 * damaris_initialize(), after that call). On success *out owns the new description; on
 * failure *out is NULL.
 * Returns DAMARIS_OK; DAMARIS_CONFIG_ERROR (missing or invalid file, the same on every rank);
 * DAMARIS_ARGUMENT_ERROR (NULL configfile or out, MPI_COMM_NULL); DAMARIS_MPI_ERROR;
 * DAMARIS_ALLOCATION_ERROR (out of memory). */
int sidecore_describe_open(const char* configfile, MPI_Comm comm, sidecore_description** out);

/* Releases a description. NULL is accepted and ignored. */
void sidecore_describe_close(sidecore_description* description);

/* A variable's element type, number of dimensions and local extents (ghost zones included,
 * as many bytes as damaris_write() reads), in C order: slowest-varying first, for a layout
 * written for Fortran too (its XML dimensions reversed). The extents are evaluated with the
 * current values of the parameters they read, fetched with damaris_parameter_get(), so
 * Sidecore must be initialized. type receives the element type as stored: DAMARIS_TYPE_CHAR
 * (1 byte; also for layouts of type string or label), _SHORT (2), _INT (4), _LONG (8),
 * _FLOAT (4) or _DOUBLE (8). extents must have room for SIDECORE_MAX_DIMENSIONS values; only
 * the first *ndims are set.
 * Returns DAMARIS_OK; DAMARIS_UNDEFINED_VARIABLE; DAMARIS_ARGUMENT_ERROR (a NULL pointer);
 * DAMARIS_INVALID_DIMENSIONS (a dimension cannot be evaluated with the current values, for
 * example a division by zero); DAMARIS_NOT_INITIALIZED. */
int sidecore_describe_variable(const sidecore_description* description, const char* variable,
                               int32_t* type, int32_t* ndims, int64_t* extents);

/* *fortran = 1 when the variable's layout is written for Fortran (language="fortran": the
 * program gives extents and positions fastest-varying first, the reverse of C order), else 0.
 * Returns DAMARIS_OK; DAMARIS_UNDEFINED_VARIABLE; DAMARIS_ARGUMENT_ERROR (a NULL pointer). */
int sidecore_describe_fortran_order(const sidecore_description* description, const char* variable,
                                    int32_t* fortran);

/* A parameter's declared type, with the same values as sidecore_describe_variable()'s type
 * (its size is the size damaris_parameter_get()/damaris_parameter_set() expect).
 * Returns DAMARIS_OK, DAMARIS_UNDEFINED_PARAMETER, DAMARIS_ARGUMENT_ERROR. */
int sidecore_describe_parameter(const sidecore_description* description, const char* parameter,
                                int32_t* type);

/* The number of blocks (domains) each client may write per variable and iteration.
 * Returns DAMARIS_OK or DAMARIS_ARGUMENT_ERROR. */
int sidecore_describe_domains(const sidecore_description* description, int32_t* domains);

/* The message of the last failed call on this thread ("" if none): an alias of
 * damaris_last_error_message(). Valid until the next failed call from this thread. */
const char* sidecore_describe_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_INTROSPECTION_H */
