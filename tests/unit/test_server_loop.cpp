// The dedicated core's loop, alone in one process: clients (on a thread, through their
// shared-memory engines) write two iterations and stop; the loop stores them, frees every byte
// of the shared buffer, and serves a second session after a new damaris_start.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "config/model.hpp"
#include "engines/shm_engine.hpp"
#include "server/server_loop.hpp"
#include "topology/topology.hpp"
#include "transport/channel.hpp"
#include "unit_support.hpp"

namespace fs = std::filesystem;
using namespace sidecore;

namespace {

config::model model_in(const std::string& directory) {
  return config::parse_model(
      "<simulation name=\"loop\">\n<architecture><buffer name=\"b\" size=\"65536\" "
      "timeout=\"20\"/></architecture>\n"
      "<data><layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
      "<variable name=\"v\" layout=\"l\" store=\"s\"/></data>\n"
      "<storage><store name=\"s\" type=\"HDF5\"><option key=\"FilesPath\">" +
          directory +
          "</option><option key=\"VirtualView\">false</option></store></storage>\n"
          "</simulation>\n",
      "loop.xml");
}

std::vector<std::int32_t> values_of(int iteration, int source) {
  return {iteration, source, 100 * iteration + source, -1};
}

// What a client does between damaris_start and damaris_stop: one block per iteration.
void client_session(const config::model& model, transport::channel& channel, std::uint32_t slot,
                    int first_iteration, int iterations, bool resume) {
  engines::shm_engine engine(model, channel, slot, static_cast<int>(slot));
  if (resume) engine.resume(first_iteration);
  for (int it = first_iteration; it < first_iteration + iterations; ++it) {
    engines::reservation r = engine.reserve(16);
    const std::vector<std::int32_t> values = values_of(it, static_cast<int>(slot));
    std::memcpy(r.address, values.data(), 16);
    transport::message m{};
    m.kind = transport::message_kind::block;
    m.iteration = it;
    m.source = static_cast<std::int32_t>(slot);
    m.ndims = 1;
    m.dims[0] = 4;
    m.offset = r.offset;
    m.bytes = 16;
    engine.commit(m, {});
    engine.end_iteration(it, false);
    engine.iteration_started(it + 1);
  }
  engine.stop(first_iteration + iterations);
}

class server_loop_test : public testing_support::output_directory_test {
 protected:
  server_loop_test() : output_directory_test("loop") {}
  void SetUp() override {
    output_directory_test::SetUp();
    MPI_Comm servers = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_SELF, &servers);
    m_topo.servers = communicator(servers);
    m_topo.is_server = true;
    m_topo.has_servers = true;
    m_topo.server_index = 0;
    m_topo.server_count = 1;
    m_topo.client_count = 2;
  }
  transport::channel make_channel() {
    transport::channel_sizes sizes;
    sizes.heap_bytes = 65536;
    sizes.clients = 2;
    sizes.ring_capacity = 8;  // small: the clients also meet a full ring
    transport::channel channel =
        transport::channel::create("/sidecore-test-" + std::to_string(::getpid()) + "-loop", sizes);
    channel.unlink();
    return channel;
  }

  topology::layout m_topo;
};

}  // namespace

TEST_F(server_loop_test, stores_every_iteration_of_every_client_and_frees_the_buffer) {
  const config::model model = model_in(m_directory);
  transport::channel channel = make_channel();
  server::server_loop loop(model, m_topo, channel);
  std::thread clients([&] {
    std::thread other([&] { client_session(model, channel, 1, 0, 6, false); });
    client_session(model, channel, 0, 0, 6, false);
    other.join();
  });
  loop.run();  // returns once both clients stopped
  clients.join();

  EXPECT_EQ(loop.take_failure(), "");
  EXPECT_EQ(loop.counters().iterations_stored, 6u);
  EXPECT_EQ(loop.counters().blocks_stored, 12u);
  EXPECT_EQ(channel.heap().used(), 0u);  // every byte given back
  for (int it = 0; it < 6; ++it)
    for (int source = 0; source < 2; ++source)
      EXPECT_EQ(testing_support::read_int32_dataset(
                    m_directory + "loop_It" + std::to_string(it) + "_Pr0.h5",
                    "v/P" + std::to_string(source)),
                values_of(it, source))
          << "iteration " << it << " source " << source;
}

TEST_F(server_loop_test, a_second_run_serves_clients_that_start_again) {
  const config::model model = model_in(m_directory);
  transport::channel channel = make_channel();
  server::server_loop loop(model, m_topo, channel);
  for (int session = 0; session < 2; ++session) {
    std::thread clients([&] {
      std::thread other([&] { client_session(model, channel, 1, 2 * session, 2, session > 0); });
      client_session(model, channel, 0, 2 * session, 2, session > 0);
      other.join();
    });
    loop.run();
    clients.join();
  }
  EXPECT_EQ(loop.counters().iterations_stored, 4u);
  EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "loop_It3_Pr0.h5", "v/P1"),
            values_of(3, 1));
}
