/* Sidecore extension: a client tells its writer when it computes, so that under
 * <schedule policy="phase"> (docs/scheduling.md) the writer moves data out only then, and not
 * while the simulation communicates.
 *
 * Copyright (c) 2026, the Sidecore developers. SPDX-License-Identifier: BSD-3-Clause
 *
 *     sidecore_compute_begin();
 *     stencil_sweeps(...);           local work: no collective, no heavy exchange
 *     sidecore_compute_end();
 *     halo_exchange(...); MPI_Allreduce(...);
 *     damaris_write(...); damaris_end_iteration();
 *
 * A writer (a dedicated core, or the background I/O thread of this process) begins the
 * stores of an iteration only while every one of its clients is between the two calls, and,
 * once it has timed its stores, only when the store is expected to end before the clients'
 * compute phase does (judged from the length of their previous one). A client that waits
 * for its writer (damaris_sync, a full buffer) or has stopped never holds the stores back,
 * and no store waits longer than the buffer's timeout.
 *
 * The calls cost a few atomic stores (no system call, no message) and may be made under any
 * policy: without policy="phase", in synchronous mode and on dedicated nodes they change
 * nothing. Calling sidecore_compute_begin() twice in a row, or sidecore_compute_end()
 * outside a compute phase, is harmless.
 *
 * Both return DAMARIS_OK; DAMARIS_NOT_INITIALIZED before damaris_initialize() or after
 * damaris_finalize(); DAMARIS_CORE_IS_SERVER on a dedicated core or node. They are made from
 * the thread that initialized Sidecore, and never throw or terminate. */
#ifndef SIDECORE_SCHEDULE_H
#define SIDECORE_SCHEDULE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The calling client enters a compute phase. */
int sidecore_compute_begin(void);

/* The calling client leaves its compute phase (it communicates, writes, waits...). */
int sidecore_compute_end(void);

#ifdef __cplusplus
}
#endif

#endif /* SIDECORE_SCHEDULE_H */
