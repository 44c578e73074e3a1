/* Sidecore extension: reading back what an HDF5 store wrote, for restarts and analysis
 * (docs/blocks.md). One iteration's output is opened by its prefix, <FilesPath><simulation>
 * (e.g. "out/sim"), whichever file mode wrote it (FilePerCore or Collective) and however many
 * clients and writers wrote it; its variables and blocks are listed, and a block is read by
 * (source, id), or any region of a variable's global array is read, assembled from the blocks
 * that cover it.
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 *     sidecore_reader* r;
 *     if (sidecore_read_open("out/sim", 40, &r) != DAMARIS_OK) { puts(sidecore_read_last_error());
 * ... } int64_t start[2] = {my_row0, 0}, count[2] = {my_rows, nx}; sidecore_read_region(r,
 * "temperature", start, count, DAMARIS_TYPE_DOUBLE, field, sizeof field); sidecore_read_close(r);
 *
 * Extents, positions and regions are in C order (slowest first), as in the files. A reader is
 * used by one thread at a time; it needs neither MPI nor damaris_initialize(): any process may
 * open any iteration, and many processes may read the same files at once.
 *
 * Errors: every function returns a Damaris error code (DAMARIS_OK on success) and never throws
 * or terminates; the message of the last failure on the calling thread is returned by
 * sidecore_read_last_error(). */
#ifndef SIDECORE_READ_H
#define SIDECORE_READ_H

#include <stdint.h>

#include "sidecore/codes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sidecore_reader sidecore_reader;

/* One stored block. writer is the writer whose file holds it (-1 when the file does not say:
 * per-block datasets of a collective file); extents and position have ndims values. */
typedef struct {
  int32_t writer;
  int32_t source;
  int32_t block;
  int32_t ndims;
  int64_t extents[SIDECORE_MAX_DIMENSIONS];
  int64_t position[SIDECORE_MAX_DIMENSIONS];
} sidecore_block_info;

/* The iterations stored under prefix, ascending: up to capacity of them go to iterations
 * (which may be NULL when capacity is 0), and *count receives how many there are.
 * Returns DAMARIS_OK; DAMARIS_ARGUMENT_ERROR (NULL count, an unreadable directory). */
int sidecore_read_iterations(const char* prefix, int32_t* iterations, int32_t capacity,
                             int32_t* count);

/* Opens the output of one iteration. *reader is NULL on failure.
 * Returns DAMARIS_OK; DAMARIS_ARGUMENT_ERROR (no output of that iteration: the message lists
 * the stored ones); DAMARIS_ERROR_UNKNOWN (an HDF5 failure, named in the message). */
int sidecore_read_open(const char* prefix, int32_t iteration, sidecore_reader** reader);

/* Releases a reader and closes its files. NULL is accepted. */
void sidecore_read_close(sidecore_reader* reader);

/* *complete = 1 when every writer's file of the run that wrote the iteration (files carry
 * their run's id: another run's files under the same names are never read) is there, can be
 * read, and says it holds all of its clients' data; 0 otherwise (a writer's file missing or
 * torn, a client dropped data, a writer failed). */
int sidecore_read_complete(const sidecore_reader* reader, int32_t* complete);

/* The number of variables, and the name of variable index (0 .. count-1; the pointer stays
 * valid until the reader is closed), its stored element type (a DAMARIS_TYPE_STR value:
 * CHAR, SHORT, INT, LONG, FLOAT for 32- and 16-bit floats, DOUBLE), its number of dimensions,
 * its global extents (zeros when it has none; room for SIDECORE_MAX_DIMENSIONS) and its number
 * of blocks. Any output pointer may be NULL. */
int sidecore_read_variable_count(const sidecore_reader* reader, int32_t* count);
int sidecore_read_variable(const sidecore_reader* reader, int32_t index, const char** name,
                           int32_t* type, int32_t* ndims, int64_t* global_extents,
                           int32_t* block_count);

/* Block index (0 .. block_count-1, ordered by source then id) of a variable.
 * Returns DAMARIS_UNDEFINED_VARIABLE; DAMARIS_BLOCK_NOT_FOUND for an index out of range. */
int sidecore_read_block_info(const sidecore_reader* reader, const char* variable, int32_t index,
                             sidecore_block_info* info);

/* Reads block `block` of client `source`, converted to type (DAMARIS_TYPE_CHAR, _SHORT, _INT,
 * _LONG, _FLOAT or _DOUBLE), into buffer, which has buffer_bytes bytes (at least its element
 * count times the type's size).
 * Returns DAMARIS_OK; DAMARIS_UNDEFINED_VARIABLE; DAMARIS_BLOCK_NOT_FOUND; DAMARIS_ARGUMENT_ERROR
 * (NULL buffer, too small, unknown type); DAMARIS_ERROR_UNKNOWN (HDF5). */
int sidecore_read_block(sidecore_reader* reader, const char* variable, int32_t source,
                        int32_t block, int32_t type, void* buffer, uint64_t buffer_bytes);

/* Reads the region [start, start + count) of a variable's global array (ndims values each),
 * in C order, assembled from every block that covers part of it; elements no block covers
 * read as 0, except when a writer's file of the iteration is missing or torn: then elements no
 * readable block covers may have been its data, and the call fails naming the file.
 * Returns DAMARIS_OK; DAMARIS_UNDEFINED_VARIABLE; DAMARIS_INVALID_DIMENSIONS (a region outside
 * the global extents); DAMARIS_ARGUMENT_ERROR (no global extents, NULL or small buffer,
 * unknown type); DAMARIS_ERROR_UNKNOWN (HDF5; data in a missing or torn file). */
int sidecore_read_region(sidecore_reader* reader, const char* variable, const int64_t* start,
                         const int64_t* count, int32_t type, void* buffer, uint64_t buffer_bytes);

/* The message of the last failed call on the calling thread ("" if none): an alias of
 * damaris_last_error_message(). */
const char* sidecore_read_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_READ_H */
