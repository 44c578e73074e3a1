// The client's per-call path: what damaris_write, damaris_alloc/commit/clear and
// damaris_end_iteration run on a client of a dedicated core or of a background thread. Marked
// functions are compiled as hot, each into a section .text.hot.<symbol> of its own (GCC with
// -ffunction-sections), and the link lays them out in call order on pages of their own
// (src/hot_path.ld; checked by the test layout.hot_path_code). After a compute phase a call
// finds its pages out of the TLB and its lines out of the cache, and pays for each distinct page
// and line it touches (bench/run_cold_write.py): left where their sources fell in the library,
// the calls of damaris_write + damaris_end_iteration ran over six pages of code; laid out, two.
// What a marked function runs only on an error (building a message) belongs in a function of
// its own, unmarked, so that it does not sit between the lines a successful call runs.
#pragma once

#if defined(__GNUC__)
#define SIDECORE_HOT_PATH __attribute__((hot))
#else
#define SIDECORE_HOT_PATH
#endif
