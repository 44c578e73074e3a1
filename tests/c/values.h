/* The values the C API tests write; run_c_test.py recomputes them to check what was stored. */
#ifndef SIDECORE_TESTS_C_VALUES_H
#define SIDECORE_TESTS_C_VALUES_H

#include <Damaris.h>

/* Shapes of xml/api.xml.in: layout "grid" is NY x NX doubles, layout "vec" is N ints. */
enum { VALUES_NX = 4, VALUES_NY = 3, VALUES_N = 5 };

static inline void values_field(double* out, int iteration, int source, int block) {
  for (int y = 0; y < VALUES_NY; ++y)
    for (int x = 0; x < VALUES_NX; ++x)
      out[y * VALUES_NX + x] =
          iteration * 10000.0 + source * 1000.0 + block * 100.0 + y * VALUES_NX + x;
}

static inline void values_counts(int* out, int count, int iteration, int source) {
  for (int i = 0; i < count; ++i) out[i] = iteration * 1000 + source * 100 + i;
}

/* Shape of xml/full.xml.in's "data": n doubles, value iteration * 1e6 + source * 1e5 + i. */
static inline void values_data(double* out, int n, int iteration, int source) {
  for (int i = 0; i < n; ++i) out[i] = iteration * 1e6 + source * 1e5 + i;
}

#endif /* SIDECORE_TESTS_C_VALUES_H */
