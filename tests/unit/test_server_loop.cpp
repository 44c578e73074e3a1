// The dedicated core's loop, alone in one process: clients (on a thread, through their
// shared-memory engines) write two iterations and stop; the loop stores them, frees every byte
// of the shared buffer, and serves a second session after a new damaris_start. A buggy client's
// malformed notifications are dropped without harm to the others, memory never announced is
// reported, and what was committed before the heap was poisoned is still stored.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "config/model.hpp"
#include "topology/topology.hpp"
#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/server_loop.hpp"
#include "transports/dedicated_cores/shm_engine.hpp"
#include "unit_support.hpp"

namespace fs = std::filesystem;
using namespace sidecore;

namespace {

// A configuration with one variable `v` of 4 ints, stored by a file-per-core HDF5 store in
// `directory`.
config::model server_model_in(const std::string& directory) {
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

// The 4 ints client `source` writes at `iteration`.
std::vector<std::int32_t> client_values(int iteration, int source) {
  return {iteration, source, 100 * iteration + source, -1};
}

// What a client does between damaris_start and damaris_stop: one block per iteration.
void client_session(const config::model& model, transports::channel& channel, std::uint32_t slot,
                    int first_iteration, int iterations, bool resume) {
  transports::shm_engine engine(model, channel, slot, static_cast<int>(slot));
  if (resume) engine.resume(first_iteration);
  for (int it = first_iteration; it < first_iteration + iterations; ++it) {
    transports::reservation r = engine.reserve(16);
    const std::vector<std::int32_t> values = client_values(it, static_cast<int>(slot));
    std::memcpy(r.address, values.data(), 16);
    protocol::message m{};
    m.kind = protocol::message_kind::block;
    m.iteration = it;
    m.source = static_cast<std::int32_t>(slot);
    m.ndims = 1;
    m.dims[0] = 4;
    m.offset = r.offset;
    m.bytes = 16;
    engine.commit(m, {});
    engine.end_iteration(it, false, 0);
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
  transports::channel make_channel() {
    transports::channel_sizes sizes;
    sizes.heap_bytes = 65536;
    sizes.clients = 2;
    sizes.ring_capacity = 8;  // small: the clients also meet a full ring
    transports::channel channel = transports::channel::create(
        "/sidecore-test-" + std::to_string(::getpid()) + "-loop", sizes);
    channel.unlink();
    return channel;
  }

  topology::layout m_topo;
};

TEST_F(server_loop_test, stores_every_iteration_of_every_client_and_frees_the_buffer) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
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
                client_values(it, source))
          << "iteration " << it << " source " << source;
}

TEST_F(server_loop_test, a_second_run_serves_clients_that_start_again) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
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
            client_values(3, 1));
}

// The notification of a block of 4 ints at `offset` from client `slot` at `iteration`.
protocol::message client_block(int iteration, std::uint32_t slot, std::uint64_t offset) {
  protocol::message m{};
  m.kind = protocol::message_kind::block;
  m.iteration = iteration;
  m.source = static_cast<std::int32_t>(slot);
  m.ndims = 1;
  m.dims[0] = 4;
  m.offset = offset;
  m.bytes = 16;
  return m;
}

// Reserves a block and writes the values of (iteration, slot) into it; returns its offset.
std::uint64_t written(transports::shm_engine& engine, int iteration, std::uint32_t slot) {
  transports::reservation r = engine.reserve(16);
  const std::vector<std::int32_t> values = client_values(iteration, static_cast<int>(slot));
  std::memcpy(r.address, values.data(), 16);
  return r.offset;
}

// Ends an iteration and starts the next; the store failures the server reported (which the
// engine raises as storage_error) are counted, not fatal.
void end_and_count(transports::shm_engine& engine, int iteration, int& failures_seen) {
  engine.end_iteration(iteration, false, 0);
  try {
    engine.iteration_started(iteration + 1);
  } catch (const storage_error&) {
    ++failures_seen;
  }
}

void sync_and_count(transports::shm_engine& engine, int iterations, int& failures_seen,
                    std::string* message = nullptr) {
  try {
    engine.sync(iterations);
  } catch (const storage_error& e) {
    ++failures_seen;
    if (message) *message = e.what();
  }
}

TEST_F(server_loop_test, malformed_notifications_are_dropped_counted_and_reported_without_harm) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
  int good_failures = 0, buggy_failures = 0;
  std::string buggy_message;
  std::thread clients([&] {
    std::thread buggy([&] {
      transports::shm_engine engine(model, channel, 1, 1);
      // Iteration 0: well formed.
      engine.commit(client_block(0, 1, written(engine, 0, 1)), {});
      end_and_count(engine, 0, buggy_failures);
      // Iteration 1: nine dimensions for a layout of one. Its memory is the client's: the
      // server gives it back.
      protocol::message nine = client_block(1, 1, written(engine, 1, 1));
      nine.ndims = 9;
      engine.commit(nine, {});
      end_and_count(engine, 1, buggy_failures);
      // Iteration 2: a block, then the same block again (its memory held by the first: not
      // given back twice).
      const protocol::message twice = client_block(2, 1, written(engine, 2, 1));
      engine.commit(twice, {});
      engine.commit(twice, {});
      end_and_count(engine, 2, buggy_failures);
      // Iteration 3: a block whose data lies outside the heap, a notification of no known
      // kind, then a well-formed block.
      protocol::message outside = client_block(3, 1, written(engine, 3, 1));
      const std::uint64_t kept = outside.offset;
      outside.offset = channel.heap().end_offset() + 4096;
      engine.commit(outside, {});
      protocol::message garbage = client_block(3, 1, kept);
      garbage.kind = static_cast<protocol::message_kind>(77);
      engine.commit(garbage, {});
      engine.commit(client_block(3, 1, kept), {});
      end_and_count(engine, 3, buggy_failures);
      sync_and_count(engine, 4, buggy_failures, &buggy_message);
      engine.stop(4);
    });
    transports::shm_engine engine(model, channel, 0, 0);
    for (int it = 0; it < 4; ++it) {
      engine.commit(client_block(it, 0, written(engine, it, 0)), {});
      end_and_count(engine, it, good_failures);
    }
    sync_and_count(engine, 4, good_failures);
    engine.stop(4);
    buggy.join();
  });
  loop.run();
  clients.join();

  EXPECT_EQ(loop.messages_rejected(), 4u);
  EXPECT_EQ(loop.counters().iterations_stored, 4u);
  EXPECT_EQ(loop.counters().iterations_incomplete, 3u);  // 1, 2 and 3 lost a notification
  EXPECT_EQ(loop.counters().blocks_stored, 7u);
  // Every byte is back (the refused block's too), and the free ranges are sound.
  EXPECT_EQ(channel.heap().used(), 0u);
  EXPECT_EQ(channel.heap().check(), "");
  EXPECT_EQ(channel.heap().poisoned(), "");
  // The clients were told, as of a store failure, naming the first problem.
  EXPECT_EQ(channel.store_failures(), 4u);
  EXPECT_NE(channel.first_store_failure().find("ndims is 9"), std::string::npos)
      << channel.first_store_failure();
  EXPECT_NE(channel.first_store_failure().find("client 1"), std::string::npos);
  EXPECT_GE(good_failures, 1);
  EXPECT_GE(buggy_failures, 1);
  // What was well formed is stored, the rest is not.
  for (int it = 0; it < 4; ++it) {
    const std::string file = m_directory + "loop_It" + std::to_string(it) + "_Pr0.h5";
    EXPECT_EQ(testing_support::read_int32_dataset(file, "v/P0"), client_values(it, 0)) << it;
    if (it != 1)
      EXPECT_EQ(testing_support::read_int32_dataset(file, "v/P1"), client_values(it, 1)) << it;
  }
  EXPECT_TRUE(testing_support::read_int32_dataset(m_directory + "loop_It1_Pr0.h5", "v/P1").empty());
}

TEST_F(server_loop_test, random_bytes_in_a_queue_never_crash_the_server_nor_harm_other_data) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
  constexpr int garbage = 3000;
  int failures = 0;
  std::thread clients([&] {
    std::thread buggy([&] {
      std::mt19937_64 random(99);
      protocol::message m;
      auto* bytes = reinterpret_cast<unsigned char*>(&m);
      for (int n = 0; n < garbage; ++n) {
        for (std::size_t i = 0; i < sizeof m; ++i) bytes[i] = static_cast<unsigned char>(random());
        if (n % 2) m.source = 1;  // half of them look as if they came from this client
        while (!channel.try_push(1, m)) std::this_thread::yield();
      }
      transports::shm_engine engine(model, channel, 1, 1);
      engine.stop(0);
    });
    transports::shm_engine engine(model, channel, 0, 0);
    for (int it = 0; it < 3; ++it) {
      engine.commit(client_block(it, 0, written(engine, it, 0)), {});
      end_and_count(engine, it, failures);
    }
    engine.stop(3);
    buggy.join();
  });
  loop.run();
  clients.join();

  EXPECT_EQ(loop.messages_rejected(), static_cast<std::uint64_t>(garbage));
  EXPECT_EQ(channel.heap().used(), 0u);
  EXPECT_EQ(channel.heap().check(), "");
  for (int it = 0; it < 3; ++it)
    EXPECT_EQ(testing_support::read_int32_dataset(
                  m_directory + "loop_It" + std::to_string(it) + "_Pr0.h5", "v/P0"),
              client_values(it, 0));
}

TEST_F(server_loop_test, memory_allocated_and_never_announced_is_reported_at_the_end) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
  std::thread clients([&] {
    std::thread other([&] { client_session(model, channel, 1, 0, 1, false); });
    transports::shm_engine engine(model, channel, 0, 0);
    engine.commit(client_block(0, 0, written(engine, 0, 0)), {});
    (void)engine.reserve(100);  // allocated, never committed (128 bytes in the heap)
    engine.end_iteration(0, false, 0);
    engine.stop(1);
    other.join();
  });
  loop.run();
  clients.join();
  EXPECT_EQ(loop.counters().iterations_stored, 1u);
  EXPECT_EQ(loop.unannounced_bytes(), 128u);
  EXPECT_EQ(channel.heap().used(), 128u);
}

TEST_F(server_loop_test, blocks_committed_before_the_heap_is_poisoned_are_still_stored) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
  std::atomic<int> committed{0};
  std::atomic<bool> poisoned{false};
  std::string errors[2];
  auto client = [&](std::uint32_t slot) {
    transports::shm_engine engine(model, channel, slot, static_cast<int>(slot));
    engine.commit(client_block(0, slot, written(engine, 0, slot)), {});
    ++committed;
    if (slot == 0) {
      while (committed.load() < 2) std::this_thread::yield();
      // A process dies in the middle of an allocation, holding the heap's lock.
      std::fflush(nullptr);
      const pid_t child = ::fork();
      if (child == 0) {
        memory::shared_heap::set_update_probe([](int point) {
          if (point == 2) ::kill(::getpid(), SIGKILL);
        });
        (void)channel.heap().try_allocate(1000);
        ::_exit(5);
      }
      int status = 0;
      ::waitpid(child, &status, 0);
      poisoned = true;
    }
    while (!poisoned.load()) std::this_thread::yield();
    engine.end_iteration(0, false, 0);
    try {
      (void)engine.reserve(16);
    } catch (const allocation_error& e) {
      errors[slot] = e.what();
    }
    engine.stop(1);
  };
  std::thread clients([&] {
    std::thread other(client, 1);
    client(0);
    other.join();
  });
  loop.run();
  clients.join();

  for (const std::string& e : errors)
    EXPECT_NE(e.find("died while it was allocating or freeing"), std::string::npos) << e;
  EXPECT_NE(channel.heap().poisoned(), "");
  EXPECT_EQ(loop.counters().iterations_stored, 1u);
  for (int source = 0; source < 2; ++source)
    EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "loop_It0_Pr0.h5",
                                                  "v/P" + std::to_string(source)),
              client_values(0, source));
}

TEST_F(server_loop_test, a_block_announcing_memory_another_block_holds_is_dropped_not_freed) {
  const config::model model = server_model_in(m_directory);
  transports::channel channel = make_channel();
  transports::server_loop loop(model, m_topo, channel);
  int failures = 0;
  std::thread clients([&] {
    std::thread buggy([&] {
      transports::shm_engine engine(model, channel, 1, 1);
      const std::uint64_t first = written(engine, 0, 1);
      engine.commit(client_block(0, 1, first), {});
      end_and_count(engine, 0, failures);
      // Iteration 1 announces iteration 0's memory again (held by the server, or already
      // freed once stored): never the client's to give.
      engine.commit(client_block(1, 1, first), {});
      end_and_count(engine, 1, failures);
      engine.stop(2);
    });
    transports::shm_engine engine(model, channel, 0, 0);
    for (int it = 0; it < 2; ++it) {
      engine.commit(client_block(it, 0, written(engine, it, 0)), {});
      end_and_count(engine, it, failures);
    }
    engine.stop(2);
    buggy.join();
  });
  loop.run();
  clients.join();

  EXPECT_EQ(loop.messages_rejected(), 1u);
  EXPECT_NE(channel.first_store_failure().find("not memory the client allocated"),
            std::string::npos)
      << channel.first_store_failure();
  EXPECT_EQ(channel.heap().used(), 0u);  // given back once, by the block that held it
  EXPECT_EQ(channel.heap().check(), "");
  EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "loop_It0_Pr0.h5", "v/P1"),
            client_values(0, 1));
  EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "loop_It1_Pr0.h5", "v/P0"),
            client_values(1, 0));
}

// A client that hands over far more blocks than its ring holds while the core takes nothing:
// the notifications wait in the shared heap (transports/dedicated_cores/overflow.hpp), the
// core reads them in order once it runs, and every block is stored with its own values.
TEST_F(server_loop_test, more_blocks_than_the_ring_holds_are_all_stored_with_their_values) {
  constexpr int blocks = 300, iterations = 3;
  const config::model model = config::parse_model(
      "<simulation name=\"loop\">\n<architecture><domains count=\"" + std::to_string(blocks) +
          "\"/><buffer name=\"b\" size=\"4194304\" timeout=\"20\"/></architecture>\n"
          "<data><layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
          "<variable name=\"v\" layout=\"l\" store=\"s\"/></data>\n"
          "<storage><store name=\"s\" type=\"HDF5\"><option key=\"FilesPath\">" +
          m_directory +
          "</option><option key=\"VirtualView\">false</option></store></storage>\n"
          "</simulation>\n",
      "loop.xml");
  transports::channel_sizes sizes;
  sizes.heap_bytes = 4 << 20;
  sizes.clients = 2;
  sizes.ring_capacity = 8;
  transports::channel channel = transports::channel::create(
      "/sidecore-test-" + std::to_string(::getpid()) + "-loop-many", sizes);
  channel.unlink();
  transports::server_loop loop(model, m_topo, channel);
  const auto values_of = [](int it, int source, int block) {
    return std::vector<std::int32_t>{it, source, 1000 * block + it, -block};
  };
  std::atomic<bool> first_ended{false};
  std::thread clients([&] {
    std::thread other([&] { client_session(model, channel, 1, 0, iterations, false); });
    transports::shm_engine engine(model, channel, 0, 0);
    for (int it = 0; it < iterations; ++it) {
      for (int b = 0; b < blocks; ++b) {
        transports::reservation r = engine.reserve(16);
        std::memcpy(r.address, values_of(it, 0, b).data(), 16);
        protocol::message m = client_block(it, 0, r.offset);
        m.block = b;
        engine.commit(m, {});
      }
      engine.end_iteration(it, false, 0);
      first_ended = true;
      engine.iteration_started(it + 1);
    }
    engine.stop(iterations);
    other.join();
  });
  // The core starts only once the first iteration was handed over: its ring was full long
  // before (8 slots for 301 notifications).
  while (!first_ended) std::this_thread::yield();
  loop.run();
  clients.join();

  EXPECT_EQ(loop.messages_rejected(), 0u);
  EXPECT_EQ(loop.counters().iterations_stored, static_cast<std::uint64_t>(iterations));
  EXPECT_EQ(loop.counters().blocks_stored, static_cast<std::uint64_t>((blocks + 1) * iterations));
  EXPECT_EQ(channel.heap().used(), 0u);  // blocks and chunks given back
  EXPECT_EQ(channel.heap().check(), "");
  for (int it = 0; it < iterations; ++it) {
    const std::string file = m_directory + "loop_It" + std::to_string(it) + "_Pr0.h5";
    for (int b = 0; b < blocks; ++b)
      ASSERT_EQ(testing_support::read_int32_dataset(file, "v/P0/B" + std::to_string(b)),
                values_of(it, 0, b))
          << "iteration " << it << " block " << b;
    // With <domains count> above 1, every block has its B level.
    EXPECT_EQ(testing_support::read_int32_dataset(file, "v/P1/B0"), client_values(it, 1));
  }
}

}  // namespace
