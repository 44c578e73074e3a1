// Engines, each alone: what a client hands over reaches the store (inline, background thread),
// the dedicated core's ring and buffer (shared memory), or the server rank (MPI), intact.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/client.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "config/model.hpp"
#include "protocol/notifications.hpp"
#include "transports/background_thread/thread_engine.hpp"
#include "transports/dedicated_cores/channel.hpp"
#include "transports/dedicated_cores/heap_reserver.hpp"
#include "transports/dedicated_cores/shm_engine.hpp"
#include "transports/dedicated_nodes/mpi_engine.hpp"
#include "transports/synchronous/inline_engine.hpp"
#include "unit_support.hpp"

namespace fs = std::filesystem;
using namespace sidecore;
using protocol::message;
using protocol::message_kind;

namespace {

// A configuration with one variable `v` of 4 ints, an event `mark`, a file-per-core HDF5 store
// in `directory`, and the given buffer policy.
config::model model_in(const std::string& directory, const char* policy = "wait",
                       std::uint64_t buffer = 1 << 20, const char* timeout = "5") {
  const std::string xml =
      "<simulation name=\"eng\">\n<architecture><buffer name=\"b\" size=\"" +
      std::to_string(buffer) + "\" policy=\"" + policy + "\" timeout=\"" + timeout +
      "\"/></architecture>\n"
      "<data><layout name=\"l\" type=\"int\" dimensions=\"4\"/>\n"
      "<variable name=\"v\" layout=\"l\" store=\"s\"/></data>\n"
      "<storage><store name=\"s\" type=\"HDF5\"><option key=\"FilesPath\">" +
      directory +
      "</option><option key=\"VirtualView\">false</option></store></storage>\n"
      "<actions><event name=\"mark\" action=\"engine_test_mark\"/></actions>\n</simulation>\n";
  return config::parse_model(xml, "engines.xml");
}

// The notification of block 0 of `v` at `iteration` from `source`, 4 ints at offset.
message block_of(int iteration, int source, std::uint64_t offset = 0) {
  message m{};
  m.kind = message_kind::block;
  m.variable = 0;
  m.iteration = iteration;
  m.block = 0;
  m.source = source;
  m.ndims = 1;
  m.dims[0] = 4;
  m.offset = offset;
  m.bytes = 4 * sizeof(std::int32_t);
  return m;
}

class engines_test : public testing_support::output_directory_test {
 protected:
  engines_test() : output_directory_test("engines") {}
};

const std::vector<std::int32_t> values = {7, -8, 9, 1 << 30};

// A test's own channel: heap_bytes of shared buffer, one ring of ring_capacity notifications
// per client, its name already unlinked (it goes with the process).
transports::channel unlinked_channel(const std::string& suffix, std::uint64_t heap_bytes,
                                     std::uint32_t clients, std::uint32_t ring_capacity) {
  transports::channel_sizes sizes;
  sizes.heap_bytes = heap_bytes;
  sizes.clients = clients;
  sizes.ring_capacity = ring_capacity;
  const std::string name = "/sidecore-test-" + std::to_string(::getpid()) + "-" + suffix;
  transports::channel channel = transports::channel::create(name, sizes);
  channel.unlink();
  return channel;
}

TEST_F(engines_test, inline_engine_stores_the_iteration_when_it_ends) {
  const config::model model = model_in(m_directory);
  transports::inline_engine engine(model, MPI_COMM_WORLD, 0, true);
  EXPECT_EQ(engine.capacity(), 1u << 20);
  transports::reservation r = engine.reserve(16);
  ASSERT_TRUE(r);
  std::memcpy(r.address, values.data(), 16);
  engine.commit(block_of(0, 0), std::move(r.owned));
  EXPECT_FALSE(fs::exists(m_directory + "eng_It0_Pr0.h5"));  // stored at the end only
  engine.end_iteration(0, false, 0);
  engine.iteration_started(1);
  EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "eng_It0_Pr0.h5", "v/P0"), values);
  engine.stop(1);
}

namespace {
// Threads of this process whose scheduling policy is `policy` (field 41 of
// /proc/self/task/<tid>/stat).
int threads_with_policy(int policy) {
  int count = 0;
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream in(task.path() / "stat");
    std::string text;
    if (!std::getline(in, text)) continue;
    std::istringstream fields(text.substr(text.rfind(')') + 1));
    std::string field;
    for (int n = 3; n <= 41 && fields >> field; ++n)
      if (n == 41 && std::atoi(field.c_str()) == policy) ++count;
  }
  return count;
}
}  // namespace

TEST_F(engines_test, thread_engine_s_io_thread_never_preempts_the_simulation) {
  const config::model model = model_in(m_directory);
  const int before = threads_with_policy(SCHED_BATCH);
  transports::thread_engine engine(model, MPI_COMM_SELF, MPI_COMM_WORLD, 0, 1, 0);
  // Its I/O thread sets its policy when it starts: a store it ran says it has started.
  transports::reservation r = engine.reserve(16);
  ASSERT_TRUE(r);
  std::memcpy(r.address, values.data(), 16);
  engine.commit(block_of(0, 0), std::move(r.owned));
  engine.end_iteration(0, false, 0);
  engine.sync(1);
  EXPECT_EQ(threads_with_policy(SCHED_BATCH), before + 1)
      << "the I/O thread does not run as SCHED_BATCH (woken by end_iteration, it would take "
         "the processor from the simulation)";
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER) << "the simulation's own thread was changed";
  engine.stop(1);
}

TEST_F(engines_test, thread_engine_stores_on_its_thread_and_sync_waits_for_it) {
  const config::model model = model_in(m_directory);
  transports::thread_engine engine(model, MPI_COMM_SELF, MPI_COMM_WORLD, 0, 1, 0);
  for (int it = 0; it < 3; ++it) {
    transports::reservation r = engine.reserve(16);
    ASSERT_TRUE(r);
    std::vector<std::int32_t> mine = values;
    mine[0] = it;
    std::memcpy(r.address, mine.data(), 16);
    engine.commit(block_of(it, 0), std::move(r.owned));
    engine.end_iteration(it, false, 0);
  }
  engine.sync(3);
  for (int it = 0; it < 3; ++it) {
    std::vector<std::int32_t> mine = values;
    mine[0] = it;
    EXPECT_EQ(testing_support::read_int32_dataset(
                  m_directory + "eng_It" + std::to_string(it) + "_Pr0.h5", "v/P0"),
              mine);
  }
  engine.stop(3);
  // A second damaris_start: the thread runs again.
  engine.resume(3);
  transports::reservation r = engine.reserve(16);
  std::memcpy(r.address, values.data(), 16);
  engine.commit(block_of(3, 0), std::move(r.owned));
  engine.end_iteration(3, false, 0);
  engine.sync(4);
  EXPECT_EQ(testing_support::read_int32_dataset(m_directory + "eng_It3_Pr0.h5", "v/P0"), values);
  engine.stop(4);
}

TEST_F(engines_test, shm_engine_puts_blocks_in_the_buffer_and_notifications_in_its_ring) {
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("engines", 1 << 16, 2, 64);
  transports::shm_engine engine(model, channel, 1, 5);
  EXPECT_EQ(engine.capacity(), channel.heap().capacity());

  transports::reservation r = engine.reserve(16);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.address, channel.address(r.offset));
  std::memcpy(r.address, values.data(), 16);
  engine.commit(block_of(0, 5, r.offset), {});
  config::event mark;
  mark.name = "mark";
  engine.signal(mark, 0, 0);
  engine.end_iteration(0, true, 0);

  message m{};
  ASSERT_TRUE(channel.try_pop(1, m));
  EXPECT_EQ(m.kind, message_kind::block);
  EXPECT_EQ(m.offset, r.offset);
  EXPECT_EQ(std::memcmp(channel.address(m.offset), values.data(), 16), 0);
  ASSERT_TRUE(channel.try_pop(1, m));
  EXPECT_EQ(m.kind, message_kind::signal);
  EXPECT_STREQ(m.name, "mark");
  EXPECT_EQ(m.source, 5);
  ASSERT_TRUE(channel.try_pop(1, m));
  EXPECT_EQ(m.kind, message_kind::end_iteration);
  EXPECT_EQ(m.flags, protocol::iteration_skipped);
  EXPECT_FALSE(channel.try_pop(0, m));  // the other client's ring is untouched

  engine.stop(1);
  ASSERT_TRUE(channel.try_pop(1, m));
  EXPECT_EQ(m.kind, message_kind::stop);
  EXPECT_EQ(m.iteration, 1);
  channel.publish_ended(0, 7);
  EXPECT_EQ(channel.slowest_ended(), 7u);  // a stopped client holds nobody back
  engine.resume(1);
  EXPECT_EQ(channel.slowest_ended(), 1u);
}

// A block allocated and never committed when the client stops is handed over (the server then
// stores the unfinished iteration as incomplete) instead of keeping its shared memory for good.
TEST_F(engines_test, a_block_allocated_but_not_committed_is_handed_over_when_the_client_stops) {
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("uncommitted", 1 << 16, 1, 64);
  client::client c(model, 0, std::make_unique<transports::shm_engine>(model, channel, 0, 0));
  auto* data = static_cast<std::int32_t*>(c.alloc("v", 0));
  ASSERT_NE(data, nullptr);
  std::memcpy(data, values.data(), 16);
  c.stop();

  message m{};
  ASSERT_TRUE(channel.try_pop(0, m)) << "the allocated block was never announced";
  EXPECT_EQ(m.kind, message_kind::block);
  EXPECT_EQ(m.iteration, 0);
  EXPECT_EQ(std::memcmp(channel.address(m.offset), values.data(), 16), 0);
  ASSERT_TRUE(channel.try_pop(0, m));
  EXPECT_EQ(m.kind, message_kind::stop);
}

// Blocks allocated and left to damaris_end_iteration to commit, iteration after iteration: each
// is handed over, and the warning about it is said once per variable, not once per iteration.
TEST_F(engines_test, blocks_left_uncommitted_every_iteration_are_handed_over_and_said_once) {
  if (std::getenv("SIDECORE_LOG_LEVEL")) GTEST_SKIP() << "SIDECORE_LOG_LEVEL is set";
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("uncommitted-often", 1 << 16, 1, 64);
  const std::string log_path =
      ::testing::TempDir() + "sidecore_uncommitted_" + std::to_string(::getpid()) + ".log";
  std::remove(log_path.c_str());
  struct restore_log {
    ~restore_log() { log::configure(log::level::warning, ""); }
  } restore;
  log::configure(log::level::warning, log_path);
  client::client c(model, 0, std::make_unique<transports::shm_engine>(model, channel, 0, 0));
  for (int iteration = 0; iteration < 3; ++iteration) {
    auto* data = static_cast<std::int32_t*>(c.alloc("v", 0));
    ASSERT_NE(data, nullptr);
    std::memcpy(data, values.data(), 16);
    c.end_iteration();
    message m{};
    ASSERT_TRUE(channel.try_pop(0, m)) << "iteration " << iteration << ": no block announced";
    EXPECT_EQ(m.kind, message_kind::block);
    EXPECT_EQ(m.iteration, iteration);
    EXPECT_EQ(std::memcmp(channel.address(m.offset), values.data(), 16), 0);
    ASSERT_TRUE(channel.try_pop(0, m));
    EXPECT_EQ(m.kind, message_kind::end_iteration);
  }
  log::configure(log::level::warning, "");
  std::ifstream in(log_path);
  int said = 0;
  for (std::string line; std::getline(in, line);)
    said += line.find("never committed") != std::string::npos;
  EXPECT_EQ(said, 1);
  std::remove(log_path.c_str());
}

// The code of the sidecore::error `call` throws, or 0 when it returns.
template <typename Call>
int error_code_of(Call&& call) {
  try {
    call();
  } catch (const sidecore::error& e) {
    return e.code();
  }
  return 0;
}

// Blocks allocated in any order, with ids of the dense table (below <domains count>, 1 here)
// and far beyond it, committed and cleared out of order, iteration after iteration: each is
// announced once with its own data, a cleared block's slot serves the next one, and a block is
// found only in the iteration it was allocated in.
TEST_F(engines_test, allocated_blocks_are_found_by_block_and_iteration_until_cleared) {
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("allocations", 1 << 16, 1, 256);
  client::client c(model, 0, std::make_unique<transports::shm_engine>(model, channel, 0, 0));
  const std::vector<int> ids = {0, 7, 1000, 3, 1 << 20};
  for (int iteration = 0; iteration < 3; ++iteration) {
    for (int id : ids) {
      auto* data = static_cast<std::int32_t*>(c.alloc("v", id));
      ASSERT_NE(data, nullptr);
      for (int k = 0; k < 4; ++k) data[k] = iteration * 1000000 + id * 10 + k;
    }
    // Committed last-first; every other block cleared now, the rest left to the iteration's end.
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) c.commit("v", *it, iteration);
    for (std::size_t i = 0; i < ids.size(); i += 2) c.clear("v", ids[i], iteration);
    EXPECT_EQ(error_code_of([&] { c.commit("v", ids[0], iteration); }), DAMARIS_BLOCK_NOT_FOUND)
        << "a cleared block is still found";
    EXPECT_EQ(error_code_of([&] { c.clear("v", ids[1], iteration + 1); }), DAMARIS_BLOCK_NOT_FOUND)
        << "a block is found in an iteration it was not allocated in";
    c.commit("v", ids[1], iteration);  // committed already: nothing more happens
    c.end_iteration();

    std::vector<int> announced;
    message m{};
    while (channel.try_pop(0, m) && m.kind == message_kind::block) {
      EXPECT_EQ(m.iteration, iteration);
      std::int32_t stored[4];
      std::memcpy(stored, channel.address(m.offset), sizeof stored);
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(stored[k], iteration * 1000000 + m.block * 10 + k)
            << "block " << m.block << " of iteration " << iteration;
      announced.push_back(m.block);
    }
    EXPECT_EQ(m.kind, message_kind::end_iteration);
    EXPECT_EQ(announced, std::vector<int>(ids.rbegin(), ids.rend()));
    // Ended with the iteration: not found any more.
    EXPECT_EQ(error_code_of([&] { c.clear("v", ids[1], iteration); }), DAMARIS_BLOCK_NOT_FOUND);
  }
}

// Bytes of this process's mapping that holds `address` now mapped (Rss of /proc/self/smaps).
std::uint64_t resident_bytes_around(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto wanted = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &begin, &end) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = begin <= wanted && wanted < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoull(line.substr(4)) * 1024;
    }
  }
  return 0;
}

// Bytes at the start of the heap that channel_with_its_start_held holds.
constexpr std::uint64_t held_at_the_start = 20u << 20;

// A channel of 64 MiB, its heap wholly reserved, its first held_at_the_start bytes allocated
// as blocks a busy core has not released yet would hold them: the next block lands beyond.
transports::channel channel_with_its_start_held(const std::string& suffix) {
  transports::channel channel = unlinked_channel(suffix, 64u << 20, 1, 64);
  channel.reserve_heap(0);
  const std::atomic<bool> never{false};
  const std::string failure = channel.reserve_heap_rest(never);
  if (!failure.empty()) throw std::runtime_error("reserving the heap: " + failure);
  const std::uint64_t begin = channel.heap().begin_offset();
  if (channel.heap().try_allocate(held_at_the_start, begin).value_or(0) != begin)
    throw std::runtime_error("the start of the heap could not be held");
  return channel;
}

// A client maps the pages after its furthest block ahead of its next writes, on its mapper's
// thread (blocks held by a busy core move the allocator into pages never touched), and only
// those: the pages between its window and that block are left to the writes.
TEST_F(engines_test, shm_engine_maps_the_buffer_ahead_of_its_blocks) {
  const config::model model = model_in(m_directory);
  transports::channel channel = channel_with_its_start_held("ahead");
  const std::uint64_t begin = channel.heap().begin_offset();
  transports::window_mapper mapper(channel, begin, 0);  // no window: nothing mapped at start
  client::client c(model, 0,
                   std::make_unique<transports::shm_engine>(model, channel, 0, 0, -1, &mapper));
  // After the engine touched the start of its stretch (its first write's pages).
  const std::uint64_t before = resident_bytes_around(channel.address(begin));
  ASSERT_NE(c.alloc("v", 0), nullptr);  // lands after the held bytes
  const std::uint64_t ahead = 2 * transports::shm_engine::map_ahead_bytes;
  std::uint64_t mapped = 0;
  // The mapper runs at idle priority: on a busy machine it gets little of the processor.
  for (int i = 0; i < 1200 && mapped < ahead; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    mapped = resident_bytes_around(channel.address(begin)) - before;
  }
  EXPECT_GE(mapped, ahead - (64u << 10)) << "the pages after the block were not mapped ahead";
  // The held 20 MiB were never asked for: at most the block's own page besides.
  EXPECT_LE(mapped, ahead + (64u << 10)) << "pages before the block were mapped too";
  c.stop();
}

// Blocks that stay within the first iteration's window ask for no page beyond it: a run that
// reuses its window maps nothing more, and nothing is mapped while its first iteration is
// copied (it slowed that copy by a sixth). The first block beyond the window asks.
TEST_F(engines_test, shm_engine_maps_nothing_ahead_while_its_blocks_stay_in_the_window) {
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("window", 64u << 20, 1, 64);
  channel.reserve_heap(0);
  const std::atomic<bool> never{false};
  ASSERT_EQ(channel.reserve_heap_rest(never), "");
  const std::uint64_t begin = channel.heap().begin_offset();
  const std::uint64_t window = 4u << 20;
  transports::window_mapper mapper(channel, begin, window);
  transports::shm_engine engine(model, channel, 0, 0, -1, &mapper);
  ASSERT_EQ(mapper.window_end(), begin + window);
  const transports::reservation first = engine.reserve(window - 4096);
  ASSERT_TRUE(first);
  ASSERT_EQ(first.offset, begin);
  EXPECT_EQ(mapper.asked_to(), begin + window) << "a block inside the window asked for more";
  // Held, as a busy core holds it: the next block lands after it, beyond the window.
  const transports::reservation second = engine.reserve(1u << 20);
  ASSERT_TRUE(second);
  ASSERT_GT(second.offset + (1u << 20), begin + window);
  EXPECT_EQ(mapper.asked_to(),
            second.offset + (1u << 20) + 2 * transports::shm_engine::map_ahead_bytes)
      << "the first block beyond the window did not ask for the pages after it";
  channel.heap().release(first.offset, window - 4096);
  channel.heap().release(second.offset, 1u << 20);
}

// A block beyond every earlier block and beyond what the mapper has reached (a mapper the busy
// processor starves, or none) is mapped by its reservation, in one system call, before the
// program writes it: the write itself takes no page fault.
TEST_F(engines_test, shm_engine_maps_a_block_beyond_its_reach_before_the_write) {
  const config::model model = model_in(m_directory);
  transports::channel channel = channel_with_its_start_held("reach");
  const std::uint64_t begin = channel.heap().begin_offset();
  transports::shm_engine engine(model, channel, 0, 0);  // no mapper
  const std::uint64_t bytes = 4u << 20;
  const std::uint64_t before = resident_bytes_around(channel.address(begin));
  const transports::reservation block = engine.reserve(bytes);
  ASSERT_TRUE(block);
  EXPECT_GE(block.offset, begin + held_at_the_start);
  EXPECT_GE(resident_bytes_around(channel.address(begin)) - before, bytes)
      << "the block's pages were not mapped when the reservation returned";
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer's shadow memory takes its own faults on first access: only the mapping counts.
  std::memset(block.address, 7, bytes);
#else
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const long faults = usage.ru_minflt;
  std::memset(block.address, 7, bytes);
  ::getrusage(RUSAGE_SELF, &usage);
  EXPECT_LE(usage.ru_minflt - faults, 2) << "writing the reserved block faulted";
#endif
}

// `count` bytes whose values tell their place: a part copied to the wrong place shows.
std::vector<std::uint8_t> placed_bytes(std::uint64_t count, std::uint8_t seed) {
  std::vector<std::uint8_t> bytes(count);
  for (std::uint64_t i = 0; i < count; ++i)
    bytes[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12) + seed);
  return bytes;
}

// A write soon after start-up may land partly on pages the core has not reserved yet: the part
// reserved is copied at once, not after the rest. When the rest will never be reserved (the core
// stopped), the block is refused with the reason and given back. Three clients, so that the
// second one's stretch starts off a page boundary.
TEST_F(engines_test, shm_engine_copies_the_reserved_part_of_a_block_before_the_rest) {
  const config::model model = model_in(m_directory);
  transports::channel channel = unlinked_channel("parts", 31u << 20, 3, 64);
  const std::uint64_t window = 4u << 20;
  channel.reserve_heap(window);
  // The third client copies: after the windows, the core waits for that copy to end.
  channel.begin_copy(2);
  std::atomic<bool> stop{false};
  std::string failure = "not returned";
  std::thread core([&] { failure = channel.reserve_heap_rest(stop, std::chrono::minutes(1)); });
  const std::uint64_t stretch = channel.heap().stretch_of(1, 3);
  ASSERT_NE(stretch % 4096, 0u);
  // Polled, not waited for: a client waiting would let the core go on.
  for (int i = 0; i < 30000 && !channel.heap_ready(channel.heap().stretch_of(2, 3), window); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const std::uint64_t bytes = 8u << 20;
  ASSERT_EQ(channel.ready_bytes(stretch, bytes), window) << "not only the windows are reserved";
  EXPECT_EQ(channel.ready_bytes(stretch, window / 2), window / 2);
  stop = true;  // the rest will never be reserved
  core.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(channel.ready_bytes(stretch, bytes), window);

  transports::shm_engine engine(model, channel, 1, 1);
  const std::vector<std::uint8_t> data = placed_bytes(bytes, 5);
  try {
    engine.copy_in(data.data(), bytes);
    ADD_FAILURE() << "a block on pages that will never be reserved was accepted";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("stopped reserving the shared buffer"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(std::memcmp(channel.address(stretch), data.data(), window), 0)
      << "the part of the block already reserved was not copied before the wait for the rest";
  EXPECT_EQ(channel.heap().try_allocate(bytes, stretch).value_or(0), stretch)
      << "the refused block was not given back";
}

// Blocks copied while the core reserves the heap, some partly on pages not reserved yet when
// the copy starts: every byte lands where it belongs, none is overwritten by the reservation.
TEST_F(engines_test, shm_engine_copies_exactly_beside_the_reservation) {
  const config::model model = model_in(m_directory, "wait", 1 << 20, "30");
  transports::channel channel = unlinked_channel("beside", 64u << 20, 1, 64);
  channel.reserve_heap(8u << 20);
  std::atomic<bool> stop{false};
  std::thread core([&] { EXPECT_EQ(channel.reserve_heap_rest(stop), ""); });
  transports::shm_engine engine(model, channel, 0, 0);
  std::vector<std::pair<transports::reservation, std::vector<std::uint8_t>>> blocks;
  for (std::uint64_t mib : {12, 3, 20, 1}) {
    std::vector<std::uint8_t> data = placed_bytes(mib << 20, static_cast<std::uint8_t>(mib));
    transports::reservation r = engine.copy_in(data.data(), data.size());
    ASSERT_TRUE(r);
    blocks.emplace_back(std::move(r), std::move(data));
  }
  core.join();
  ASSERT_TRUE(channel.reserved_fully());
  for (const auto& [block, data] : blocks) {
    EXPECT_EQ(block.address, channel.address(block.offset));
    EXPECT_EQ(std::memcmp(block.address, data.data(), data.size()), 0)
        << "the block of " << data.size() << " bytes at " << block.offset << " differs";
    channel.heap().release(block.offset, data.size());
  }
}

TEST_F(engines_test, shm_engine_under_skip_policy_drops_what_does_not_fit) {
  const config::model model = model_in(m_directory, "skip");
  transports::channel channel = unlinked_channel("skip", 1 << 12, 1, 16);
  transports::shm_engine engine(model, channel, 0, 0);
  transports::reservation first = engine.reserve(engine.capacity());
  EXPECT_TRUE(first);
  EXPECT_FALSE(engine.reserve(64));  // full: dropped, not waited for
}

// A block whose notification cannot be sent (the ring stays full past the timeout, and the
// buffer is too small to keep notifications) gives its shared memory back: the server will
// never hear of it.
TEST_F(engines_test, shm_engine_gives_back_a_block_it_could_not_announce) {
  const config::model model = model_in(m_directory, "wait", 1 << 20, "0.2");
  transports::channel channel = unlinked_channel("leak", 1 << 12, 1, 1);
  transports::shm_engine engine(model, channel, 0, 0);
  transports::reservation first = engine.reserve(16);
  engine.commit(block_of(0, 0, first.offset), {});  // fills the ring (nobody pops)
  const std::uint64_t used = channel.heap().used();
  transports::reservation second = engine.reserve(16);
  EXPECT_GT(channel.heap().used(), used);
  EXPECT_THROW(engine.commit(block_of(0, 0, second.offset), {}), error);
  EXPECT_EQ(channel.heap().used(), used);
}

// While the core takes nothing (busy storing), a client hands over any number of blocks
// without waiting: the notifications the full ring cannot take wait in the shared heap, and the
// end of the iteration hands them over as one batch, in a slot the ring kept for it.
TEST_F(engines_test, shm_engine_keeps_notifications_in_the_heap_while_the_ring_is_full) {
  // A timeout of 0.2 s: a client that waited for the ring would fail.
  const config::model model = model_in(m_directory, "wait", 1 << 20, "0.2");
  transports::channel channel =
      unlinked_channel("overflow", 1 << 20, 1, 16);  // keeps 2 slots for batches
  transports::shm_engine engine(model, channel, 0, 3);
  constexpr int blocks = 1000;
  std::vector<std::uint64_t> offsets;
  for (int b = 0; b < blocks; ++b) {
    transports::reservation r = engine.reserve(16);
    ASSERT_TRUE(r);
    std::memcpy(r.address, values.data(), 16);
    message m = block_of(0, 3, r.offset);
    m.block = b;
    ASSERT_NO_THROW(engine.commit(m, {})) << "block " << b;
    offsets.push_back(r.offset);
  }
  ASSERT_NO_THROW(engine.end_iteration(0, false, 0));
  const std::uint64_t blocks_bytes = blocks * memory::shared_heap::rounded(16);
  EXPECT_GT(channel.heap().used(), blocks_bytes);  // the chain's chunks

  // What the core reads: the plain notifications, then one batch holding the rest in order.
  std::vector<message> got;
  message m{};
  while (channel.try_pop(0, m)) {
    if (m.kind != message_kind::batch) {
      got.push_back(m);
      continue;
    }
    EXPECT_EQ(m.source, 3);
    const std::string problem = transports::read_overflow(
        channel, m,
        [&](std::uint64_t offset, std::uint64_t) {
          return std::find(offsets.begin(), offsets.end(), offset) == offsets.end();
        },
        [&](const message& inner) { got.push_back(inner); });
    EXPECT_EQ(problem, "");
  }
  EXPECT_EQ(got.size(), 14u + (blocks - 14) + 1) << "14 plain notifications, then the batch";
  ASSERT_EQ(got.size(), static_cast<std::size_t>(blocks + 1));
  for (int b = 0; b < blocks; ++b) {
    EXPECT_EQ(got[b].kind, message_kind::block);
    EXPECT_EQ(got[b].block, b);
    EXPECT_EQ(got[b].offset, offsets[b]);
  }
  EXPECT_EQ(got.back().kind, message_kind::end_iteration);
  EXPECT_EQ(channel.heap().used(), blocks_bytes) << "the chunks went back to the heap";
  EXPECT_EQ(std::memcmp(channel.address(offsets.back()), values.data(), 16), 0);
}

TEST_F(engines_test, mpi_engine_announces_blocks_and_sends_their_data_to_the_server) {
  const config::model model = model_in(m_directory);
  // The server is this very process, rank 0 of MPI_COMM_SELF.
  MPI_Comm link = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &link);
  {
    transports::mpi_engine engine(model, link, 0, 2);
    transports::reservation r = engine.reserve(16);
    ASSERT_TRUE(r);
    std::memcpy(r.address, values.data(), 16);
    engine.commit(block_of(0, 2), std::move(r.owned));
    engine.end_iteration(0, false, 0);

    message m{};
    MPI_Recv(&m, sizeof m, MPI_BYTE, 0, transports::announce_tag, link, MPI_STATUS_IGNORE);
    EXPECT_EQ(m.kind, message_kind::block);
    EXPECT_EQ(m.source, 2);
    std::vector<std::int32_t> received(4);
    MPI_Recv(received.data(), 16, MPI_BYTE, 0, transports::data_tag, link, MPI_STATUS_IGNORE);
    EXPECT_EQ(received, values);
    MPI_Recv(&m, sizeof m, MPI_BYTE, 0, transports::announce_tag, link, MPI_STATUS_IGNORE);
    EXPECT_EQ(m.kind, message_kind::end_iteration);

    MPI_Request stop_request;
    message stop{};
    MPI_Irecv(&stop, sizeof stop, MPI_BYTE, 0, transports::announce_tag, link, &stop_request);
    engine.stop(1);
    MPI_Wait(&stop_request, MPI_STATUS_IGNORE);
    EXPECT_EQ(stop.kind, message_kind::stop);
  }
  MPI_Comm_free(&link);
}

TEST(engine_messages, signal_names_a_message_cannot_carry_are_refused) {
  config::event event;
  event.name = std::string(protocol::max_signal_name, 'x');
  EXPECT_THROW(protocol::signal_message(event, 0, 0, 0), argument_error);
  event.name = "fine";
  const message m = protocol::signal_message(event, 3, 4, 5);
  EXPECT_EQ(m.variable, 3);
  EXPECT_EQ(m.iteration, 4);
  EXPECT_EQ(m.source, 5);
  EXPECT_STREQ(m.name, "fine");
}

}  // namespace
