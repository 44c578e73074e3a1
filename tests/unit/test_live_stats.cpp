// Live counters: the published copy a client reads, the values a writer keeps, and the JSON
// text of the run report.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/json_writer.hpp"
#include "config/model.hpp"
#include "protocol/live_stats.hpp"
#include "storing/iteration_processor.hpp"
#include "unit_support.hpp"

namespace sidecore {
namespace {

using testing_support::one_variable_model;

TEST(live_stats, nothing_published_reads_false) {
  protocol::live_stats stats;
  protocol::live_values v;
  EXPECT_FALSE(stats.read(v));
  EXPECT_EQ(v.bytes_received, 0u);
}

TEST(live_stats, a_reader_sees_whole_publications_only) {
  protocol::live_stats stats;
  std::atomic<bool> done{false};
  // Every publication has all its fields equal: a torn copy would mix two of them. The writer
  // publishes far more often than a real one (once per iteration or store): every 20 us. A
  // copy read() calls whole must never be torn. (A writer descheduled in the middle of a
  // publication, or one that publishes faster than a reader can copy, keeps the reader from
  // finishing a clean copy within its tries: read() then returns a mixed one, and says so.
  // On a loaded machine, and under ThreadSanitizer, that happens.)
  constexpr std::uint64_t publications = 5000;
  std::thread writer([&] {
    protocol::live_values v;
    for (std::uint64_t n = 1; n <= publications; ++n) {
      v.bytes_received = v.bytes_written = v.debt_ns = v.latency_sum_ns = n;
      stats.publish(v);
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    done = true;
  });
  std::uint64_t last = 0, torn = 0, whole_copies = 0, mixed_copies = 0;
  while (!done) {
    protocol::live_values v;
    bool whole = false;
    if (!stats.read(v, &whole)) continue;
    if (!whole) {
      ++mixed_copies;
      continue;
    }
    ++whole_copies;
    if (v.bytes_received != v.bytes_written || v.bytes_received != v.debt_ns ||
        v.bytes_received != v.latency_sum_ns) {
      ++torn;
      continue;
    }
    EXPECT_GE(v.bytes_received, last);
    last = v.bytes_received;
  }
  writer.join();
  EXPECT_EQ(torn, 0u) << "of " << whole_copies << " copies read() called whole";
  EXPECT_GT(whole_copies, mixed_copies) << "a publication every 20 us leaves room to copy";
  protocol::live_values v;
  bool whole = false;
  ASSERT_TRUE(stats.read(v, &whole));
  EXPECT_TRUE(whole);
  EXPECT_EQ(v.bytes_written, publications);
}

storing::stored_block owned_block(int iteration, int source, std::uint64_t bytes) {
  storing::stored_block b;
  b.variable = 0;
  b.view.iteration = iteration;
  b.view.source = source;
  b.view.bytes = bytes;
  b.view.dims = {static_cast<std::int64_t>(bytes / 8)};
  b.owned = buffer_pool::acquire(bytes);
  b.view.data = b.owned.get();
  return b;
}

// MPI is started by the global environment of test_hdf5_store.cpp (the same program).
TEST(live_values, count_received_skipped_stored_and_time_each_iteration) {
  const config::model model = one_variable_model(4096);
  storing::iteration_processor processor(model, MPI_COMM_SELF, 2, nullptr);
  protocol::live_stats published;
  processor.publish_to(&published);
  processor.add_block(owned_block(0, 0, 64));
  processor.add_block(owned_block(0, 1, 128));
  processor.end_iteration(0, 0, false);
  EXPECT_EQ(processor.live().bytes_received, 192u);  // counted as blocks come
  EXPECT_EQ(processor.live().iterations_stored, 0u);
  protocol::live_values v;
  // Published at once (the buffer's size, for readers before anything completes), then when
  // an iteration completes: not at every block.
  ASSERT_TRUE(published.read(v));
  EXPECT_EQ(v.buffer_capacity, model.arch.buffer_size);
  EXPECT_EQ(v.bytes_received, 0u);
  processor.end_iteration(1, 0, true, 4096);  // source 1 dropped 4096 bytes of iteration 0
  processor.add_block(owned_block(1, 0, 64));
  processor.end_iteration(0, 1, false);
  processor.end_iteration(1, 1, false);

  ASSERT_TRUE(published.read(v));
  EXPECT_EQ(v.bytes_received, 256u);
  EXPECT_EQ(v.blocks_received, 3u);
  EXPECT_EQ(v.bytes_written, 256u);
  EXPECT_EQ(v.bytes_skipped, 4096u);
  EXPECT_EQ(v.bytes_dropped, 4096u);
  EXPECT_EQ(v.bytes_pending, 0u);
  EXPECT_EQ(v.iterations_complete, 2u);
  EXPECT_EQ(v.iterations_stored, 2u);
  EXPECT_EQ(v.iterations_incomplete, 1u);
  EXPECT_EQ(v.latency_count, 2u);
  EXPECT_LE(v.latency_min_ns, v.latency_max_ns);
  // Nothing watched: the bytes held are the buffer, at most iteration 0's (stored before the
  // block of iteration 1 came).
  EXPECT_EQ(v.buffer_peak, 192u);
  EXPECT_EQ(v.buffer_capacity, 4096u);

  const std::vector<storing::iteration_record>& records = processor.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].iteration, 0);
  EXPECT_EQ(records[0].bytes, 192u);
  EXPECT_EQ(records[0].blocks, 2u);
  EXPECT_TRUE(records[0].incomplete);
  EXPECT_FALSE(records[1].incomplete);
  EXPECT_LE(records[1].completed, records[1].store_begin);
  EXPECT_LE(records[1].store_begin, records[1].stored);
}

TEST(live_values, the_watched_buffer_is_reported) {
  const config::model model = one_variable_model(4096);
  storing::iteration_processor processor(model, MPI_COMM_SELF, 1, nullptr);
  processor.watch_buffer([] {
    storing::buffer_use use;
    use.used = 10;
    use.peak = 30;
    use.capacity = 100;
    use.spilled = 7;
    return use;
  });
  processor.add_block(owned_block(0, 0, 64));
  processor.end_iteration(0, 0, false);
  EXPECT_EQ(processor.live().bytes_buffered, 10u);
  EXPECT_EQ(processor.live().buffer_peak, 30u);
  EXPECT_EQ(processor.live().buffer_capacity, 100u);
  EXPECT_EQ(processor.live().bytes_spilled, 7u);
  EXPECT_EQ(processor.records().at(0).buffered, 10u);
}

TEST(json_writer, commas_escapes_and_non_finite_numbers) {
  json_writer j;
  j.begin_object();
  j.field("a", 1).field("s", "q\"\\\n\x01");
  j.key("list").begin_array().value(std::uint64_t{2}).value(0.5).value(1.0 / 0.0).end_array();
  j.key("empty").begin_object().end_object();
  j.key("raw").raw("[true]");
  j.end_object();
  EXPECT_EQ(j.text(),
            "{\"a\":1,\"s\":\"q\\\"\\\\\\n\\u0001\",\"list\":[2,0.5,null],\"empty\":{},"
            "\"raw\":[true]}");
}

}  // namespace
}  // namespace sidecore
