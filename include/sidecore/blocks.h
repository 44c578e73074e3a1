/* Sidecore extension: irregular blocks. A client writes any number of blocks of a variable
 * per iteration (block ids 0 or more; <domains count> is the number a Damaris code declares,
 * not a limit), each with its own extents and position, and the blocks may change in number
 * and size from one iteration to the next (docs/blocks.md).
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 *     for (int b = 0; b < my_block_count; ++b) {
 *       sidecore_set_block_extents("mesh/pressure", id[b], extents[b]);
 *       damaris_set_block_position("mesh/pressure", id[b], corner[b]);
 *       damaris_write_block("mesh/pressure", id[b], data[b]);
 *     }
 *     damaris_end_iteration();
 */
#ifndef SIDECORE_BLOCKS_H
#define SIDECORE_BLOCKS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets the extents of block `block` of a variable: as many values as the variable's layout
 * has dimensions, in the program's order (fastest first for a layout declared
 * language="fortran"), each 1 or more, ghost zones included (the layout's ghost widths still
 * apply). The block's damaris_write_block and damaris_alloc_block use them, from this call on,
 * instead of the layout's extents; like a position set with damaris_set_block_position, they
 * stay until set again. extents == NULL goes back to the layout's extents.
 *
 * Returns DAMARIS_OK; DAMARIS_UNDEFINED_VARIABLE for an unknown variable; DAMARIS_INVALID_BLOCK
 * for a negative block id; DAMARIS_INVALID_DIMENSIONS for an extent below 1 (nothing is
 * changed then); DAMARIS_NOT_INITIALIZED, DAMARIS_CORE_IS_SERVER as every client call. */
int sidecore_set_block_extents(const char* variable, int32_t block, const int64_t* extents);

/* damaris_alloc_block() that also tells what it reserved, for bindings that make an array on
 * the block in one call: *type receives the element type (DAMARIS_TYPE_CHAR, _SHORT, _INT,
 * _LONG, _FLOAT or _DOUBLE, as sidecore_describe_variable() gives it), *ndims the number of
 * dimensions and extents the block's extents in C order (slowest-varying first: a layout
 * declared language="fortran" has them reversed), ghost zones included. They are the extents
 * set with sidecore_set_block_extents(), or else the layout's with the current parameter
 * values. extents must have room for 8 values (SIDECORE_MAX_DIMENSIONS).
 *
 * Returns what damaris_alloc_block() returns; DAMARIS_ARGUMENT_ERROR for a NULL pointer
 * (nothing is reserved then). */
int sidecore_alloc_block_shaped(const char* variable, int32_t block, void** address, int32_t* type,
                                int32_t* ndims, int64_t* extents);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_BLOCKS_H */
