/* An outside program built against the installed Sidecore: writes 4 ints per client per
 * iteration and signals an event implemented here. */
#include <Damaris.h>
#include <stdio.h>

void consumer_event(const char* name, int32_t source, int32_t iteration, const char* args) {
  (void)name;
  (void)args;
  char path[64];
  snprintf(path, sizeof path, "event_ran_%d_%d", source, iteration);
  FILE* f = fopen(path, "w");
  if (f) fclose(f);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (damaris_initialize("consumer.xml", MPI_COMM_WORLD) != DAMARIS_OK) {
    fprintf(stderr, "%s\n", damaris_last_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int is_client = 0;
  damaris_start(&is_client);
  if (is_client) {
    MPI_Comm comm;
    damaris_client_comm_get(&comm);
    int rank;
    MPI_Comm_rank(comm, &rank);
    for (int it = 0; it < 2; ++it) {
      int values[4];
      for (int i = 0; i < 4; ++i) values[i] = it * 1000 + rank * 10 + i;
      if (damaris_write("values", values) != DAMARIS_OK) MPI_Abort(MPI_COMM_WORLD, 2);
      damaris_signal("ran");
      damaris_end_iteration();
    }
    damaris_stop();
  }
  damaris_finalize();
  MPI_Finalize();
  return 0;
}
