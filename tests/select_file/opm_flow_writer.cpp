// A simulation shaped like OPM Flow's Damaris output (opm-simulators DamarisWriter): the same
// calls in the same order, with a cell numbering that is not the ranks' order. Step one sets
// the sizes, positions and time-invariant data (GLOBAL_CELL_INDEX, MPI_RANK, OUTPUTDIR, the
// mesh through damaris_alloc); every step then writes each field and ends the iteration.
// check_opm_flow.py recomputes every value from the formulas below.
// Usage: opm_flow_writer <xml> <steps>
#include <Damaris.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "../initialize_or_leave.h"

namespace {

// The fields OPM passes through (PRESSURE first), in the order of the configuration.
const char* const field_names[] = {
    "PRESSURE", "FIPGAS",   "FIPOIL", "FIPWAT",  "KRNSW_GO", "KRNSW_OW", "PCSWM_GO", "PCSWM_OW",
    "PPCW",     "RS",       "RV",     "SOMAX",   "1OVERBG",  "1OVERBO",  "1OVERBW",  "GASKR",
    "GAS_DEN",  "GAS_VISC", "OILKR",  "OIL_DEN", "OIL_VISC", "WATKR",    "WAT_DEN",  "WAT_VISC",
    "2FBF",     "4FBF",     "DFBF",   "GCDI",    "GCDM",     "GIP",      "GIPG",     "GIPL",
    "GIPR",     "GKDI",     "GKDM",   "GKMO",    "GKTR",     "GMDS",     "GMGP",     "GMIP",
    "GMMO",     "GMTR",     "HTOF",   "OIP",     "OIPG",     "OIPL",     "OIPR",     "RPV",
    "S36F",     "SEAF",     "SGAS",   "SIP",     "SWAT",     "TFBF",     "WCD",      "WIP",
    "WIPG",     "WIPL",     "WIPR"};

void check(int rc, const std::string& call) {
  if (rc != DAMARIS_OK && rc != DAMARIS_NO_SERVER) {
    std::fprintf(stderr, "opm_flow_writer: %s returned %d (%s): %s\n", call.c_str(), rc,
                 damaris_error_string(rc), damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int cells_of(int rank) { return 7 + 2 * rank; }

// Global cell number of the k-th cell in rank order (check_opm_flow.py: global_numbers).
long global_number(long k, long n) {
  long a = 1 + n / 3;
  while (std::gcd(a, n) != 1) ++a;
  return (a * k + n / 2) % n;
}

// Value of field f for the cell numbered g at step `step`.
double field_value(int f, int step, long g) { return 1.0e6 * f + 1000.0 * step + g + 0.5; }

void set_parameter(const char* name, int value) {
  check(damaris_parameter_set(name, &value, sizeof value), std::string("parameter_set ") + name);
}

void set_position(const char* name, std::int64_t offset) {
  check(damaris_set_position(name, &offset), std::string("set_position ") + name);
}

// What OPM's DamarisVar does: size the layout through its parameter, then fill the variable
// in Sidecore's shared memory; committed and cleared when done.
template <typename T, typename Fill>
void write_in_place(const char* name, const char* parameter, int count, Fill fill) {
  set_parameter(parameter, count);
  void* memory = nullptr;
  check(damaris_alloc(name, &memory), std::string("alloc ") + name);
  T* values = static_cast<T*>(memory);
  for (int i = 0; i < count; ++i) values[i] = fill(i);
  check(damaris_commit(name), std::string("commit ") + name);
  check(damaris_clear(name), std::string("clear ") + name);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: opm_flow_writer <xml> <steps>\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int steps = std::atoi(argv[2]);
  initialize_or_leave("opm_flow_writer", argv[1]);
  int is_client = -1;
  check(damaris_start(&is_client), "damaris_start");
  if (is_client) {
    MPI_Comm comm;
    check(damaris_client_comm_get(&comm), "damaris_client_comm_get");
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    // setupWritingPars: sizes gathered from every rank, offsets by a prefix sum.
    const int n_local = cells_of(rank);
    std::vector<int> sizes(static_cast<std::size_t>(size));
    MPI_Allgather(&n_local, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm);
    const long offset = std::accumulate(sizes.begin(), sizes.begin() + rank, 0L);
    const long n_total = std::accumulate(sizes.begin(), sizes.end(), 0L);
    std::vector<int> local_to_global(static_cast<std::size_t>(n_local));
    for (int i = 0; i < n_local; ++i)
      local_to_global[static_cast<std::size_t>(i)] =
          static_cast<int>(global_number(offset + i, n_total));

    std::vector<double> data(static_cast<std::size_t>(n_local));
    for (int step = 0; step < steps; ++step) {
      if (step == 0) {
        set_parameter("n_elements_local", n_local);
        set_parameter("n_elements_total", static_cast<int>(n_total));
        set_position("PRESSURE", offset);
        set_position("GLOBAL_CELL_INDEX", offset);
        set_position("MPI_RANK", offset);
        // setGlobalIndexForDamaris
        set_position("GLOBAL_CELL_INDEX", offset);
        check(damaris_write("GLOBAL_CELL_INDEX", local_to_global.data()),
              "write GLOBAL_CELL_INDEX");
        write_in_place<int>("MPI_RANK", "n_elements_local", n_local, [&](int) { return rank; });
        const std::string output_dir = "./opm-output";
        set_parameter("path_string_length", static_cast<int>(output_dir.size()));
        check(damaris_write("OUTPUTDIR", output_dir.c_str()), "write OUTPUTDIR");
        // writeDamarisGridOutput: two vertices per cell, one segment each (made up, but shaped
        // as OPM's: coordinates, connectivity, offsets of ncells+1 entries, types).
        const int vertices = 2 * n_local;
        write_in_place<double>("coordset/coords/values/x", "n_coords_local", vertices,
                               [&](int i) { return 1000.0 * rank + i; });
        write_in_place<double>("coordset/coords/values/y", "n_coords_local", vertices,
                               [&](int i) { return 2000.0 * rank + i; });
        write_in_place<double>("coordset/coords/values/z", "n_coords_local", vertices,
                               [&](int i) { return -1.0 * i; });
        write_in_place<int>("topologies/topo/elements/connectivity", "n_connectivity_ph", vertices,
                            [](int i) { return i; });
        write_in_place<int>("topologies/topo/elements/offsets", "n_offsets_types_ph", n_local + 1,
                            [](int i) { return 2 * i; });
        write_in_place<char>("topologies/topo/elements/types", "n_offsets_types_ph", n_local,
                             [](int) { return static_cast<char>(3); });  // VTK_LINE
      }
      for (std::size_t f = 0; f < sizeof field_names / sizeof field_names[0]; ++f) {
        for (int i = 0; i < n_local; ++i)
          data[static_cast<std::size_t>(i)] =
              field_value(static_cast<int>(f), step, local_to_global[static_cast<std::size_t>(i)]);
        set_position(field_names[f], offset);
        check(damaris_write(field_names[f], data.data()), std::string("write ") + field_names[f]);
      }
      check(damaris_end_iteration(), "damaris_end_iteration");
    }
    check(damaris_stop(), "damaris_stop");
  }
  check(damaris_finalize(), "damaris_finalize");
  MPI_Finalize();
  return 0;
}
