// The client's per-call path: what damaris_write, damaris_alloc/commit/clear and
// damaris_end_iteration run on a client of a dedicated core or of a background thread, marked so
// that GCC and Clang place it in one stretch of code (.text.hot) instead of wherever its sources
// fall in the library. After a
// compute phase a call finds its pages out of the TLB and its lines out of the cache, and pays
// for each distinct page it touches (bench/run_cold_write.py: about 0.5 us per page on a
// virtual machine after 100 ms); spread over the library's 1.2 MB of code, the path touched 25.
#pragma once

#if defined(__GNUC__)
#define SIDECORE_HOT_PATH __attribute__((hot))
#else
#define SIDECORE_HOT_PATH
#endif
