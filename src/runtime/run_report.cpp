// Totals are summed over the processes with one reduction; the parts travel as text (one
// gather of their lengths, one of their bytes) and rank 0 joins them in rank order. The file
// is written next to its final name and renamed, so that a reader never sees half of it.
#include "runtime/run_report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "common/environment.hpp"
#include "common/gather.hpp"
#include "common/json_writer.hpp"
#include "common/mpi_handles.hpp"
#include "common/run_clock.hpp"
#include "common/text.hpp"

namespace sidecore::run_report {
namespace {

constexpr int report_version = 1;

double seconds_of(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// Sums of every process's counters, in this order.
enum total : int {
  handed_over,
  blocks_handed_over,
  client_dropped,
  client_blocks_dropped,
  iterations_skipped,
  received,
  written,
  dropped,
  skipped,
  failed,
  spilled,
  pending,
  iterations_stored,
  store_failures,
  rejected,
  action_failures,
  total_count
};

// Each process's part as one text (empty parts left out), in rounds: a long run's report on
// many writers may pass what one MPI_Gatherv carries.
std::vector<std::string> gather_texts(MPI_Comm comm, const std::string& mine) {
  std::vector<std::string> texts;
  for (std::string& part : gather_parts(comm, mine))
    if (!part.empty()) texts.push_back(std::move(part));
  return texts;
}

void latency_json(json_writer& j, const protocol::live_values& v) {
  j.key("latency").begin_object();
  j.field("count", v.latency_count);
  if (v.latency_count) {
    j.field("min", seconds_of(v.latency_min_ns));
    j.field("mean", seconds_of(v.latency_sum_ns) / static_cast<double>(v.latency_count));
    j.field("max", seconds_of(v.latency_max_ns));
    j.field("last", seconds_of(v.latency_last_ns));
  } else {
    j.key("min").null().key("mean").null().key("max").null().key("last").null();
  }
  j.end_object();
}

// The directory every HDF5 store of the configuration writes to (their one FilesPath), when it
// exists; "" (the working directory) otherwise.
std::string output_directory(const config::model& model) {
  std::string directory;
  for (const config::store& s : model.stores) {
    if (s.type != "HDF5") continue;
    std::string path = s.option("FilesPath");
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (path.empty()) path = ".";
    if (!directory.empty() && directory != path) return {};  // several: none is "the" one
    directory = path;
  }
  return directory.empty() || !is_directory(directory) ? std::string() : directory + "/";
}

// <simulation>_<job id or local start time>_report.json, with -2, -3... when a report of that
// name is there already (two runs in one batch job, or in one second): one report per run,
// never one replacing another.
std::string run_file_name(const std::string& directory, const std::string& simulation) {
  std::string label = environment::batch_job_id();
  if (label.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    char text[32] = "";
    if (::localtime_r(&now, &local) != nullptr)
      std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
    label = text;
  }
  const std::string stem = simulation + "_" + label;
  std::string name = stem + "_report.json";
  struct stat info {};
  for (int n = 2; ::lstat((directory + name).c_str(), &info) == 0 && n < 10000; ++n)
    name = stem + "-" + std::to_string(n) + "_report.json";
  return name;
}

}  // namespace

std::string path_for(const config::model& model) {
  const std::string simulation =
      model.simulation_name.empty() ? std::string("sidecore") : model.simulation_name;
  const std::string name = simulation + "_report.json";
  const environment::report_choice choice = environment::report();
  if (choice.where == environment::report_choice::kind::default_place) {
    const std::string directory = output_directory(model);
    return directory + run_file_name(directory, simulation);
  }
  if (choice.where == environment::report_choice::kind::off) return {};
  const std::string& value = choice.path;
  if (value.back() == '/' || is_directory(value)) {
    return (value.back() == '/' ? value : value + "/") + name;
  }
  return value;
}

std::string writer_json(const writer_part& w) {
  const protocol::live_values& v = w.live;
  json_writer j;
  j.begin_object();
  j.field("kind", w.kind).field("index", w.index).field("rank", w.world_rank);
  j.key("clients").begin_array();
  for (int c : w.clients) j.value(c);
  j.end_array();
  j.field("bytes_received", v.bytes_received).field("blocks_received", v.blocks_received);
  j.field("bytes_written", v.bytes_written).field("bytes_dropped", v.bytes_dropped);
  j.field("bytes_skipped", v.bytes_skipped).field("bytes_failed", v.bytes_failed);
  j.field("bytes_spilled", v.bytes_spilled).field("bytes_pending", v.bytes_pending);
  j.key("buffer").begin_object();
  j.field("capacity", v.buffer_capacity).field("peak", v.buffer_peak);
  j.field("in_use", v.bytes_buffered).field("in_server_memory", v.bytes_in_server_memory);
  j.end_object();
  j.field("iterations_complete", v.iterations_complete);
  j.field("iterations_stored", v.iterations_stored);
  j.field("iterations_incomplete", v.iterations_incomplete);
  j.field("store_failures", v.store_failures);
  j.field("notifications_rejected", w.rejected);
  j.field("store_seconds", seconds_of(v.store_ns));
  latency_json(j, v);
  j.field("throughput_bytes_per_second", v.throughput_bps);
  j.field("io_debt_seconds", seconds_of(v.debt_ns));
  // Action plugins, <pyscript> scripts and the <paraview> pipelines: their failures are
  // logged and counted here, not returned to the simulation.
  j.key("actions").begin_array();
  for (const storing::action_summary& a : w.actions) {
    j.begin_object();
    j.field("name", a.name).field("kind", a.kind).field("calls", a.calls);
    j.field("failures", a.failures).field("seconds", a.seconds);
    j.end_object();
  }
  j.end_array();
  j.key("iterations");
  if (!w.records) {
    j.null();
  } else {
    using record = storing::iteration_record;
    const std::vector<record>& r = *w.records;
    j.begin_object();
    j.column("iteration", r, [](const record& x) { return static_cast<int>(x.iteration); });
    j.column("blocks", r, [](const record& x) { return static_cast<unsigned>(x.blocks); });
    j.column("bytes", r, [](const record& x) { return x.bytes; });
    j.column("completed", r, [](const record& x) { return x.completed; });
    j.column("store_begin", r, [](const record& x) { return x.store_begin; });
    j.column("stored", r, [](const record& x) { return x.stored; });
    j.column("buffer_in_use", r, [](const record& x) { return x.buffered; });
    j.column("incomplete", r, [](const record& x) { return x.incomplete; });
    j.column("failed", r, [](const record& x) { return x.failed; });
    j.end_object();
  }
  j.end_object();
  return j.text();
}

std::string client_json(const client_part& c) {
  json_writer j;
  j.begin_object();
  j.field("index", c.index).field("rank", c.world_rank).field("writer", c.writer);
  j.field("iterations", c.iterations);
  j.field("blocks_written", c.counters.blocks_written);
  j.field("bytes_written", c.counters.bytes_written);
  j.field("blocks_dropped", c.counters.blocks_dropped);
  j.field("bytes_dropped", c.counters.bytes_dropped);
  j.field("iterations_skipped", c.counters.iterations_skipped);
  j.key("write_seconds");
  if (c.times)
    j.value(c.counters.seconds_in_calls);
  else
    j.null();
  j.key("iteration_times");
  if (!c.times) {
    j.null();
  } else {
    using record = client::iteration_time;
    j.begin_object();
    j.column("write_seconds", *c.times,
             [](const record& x) { return static_cast<double>(x.write_seconds); });
    j.column("ended", *c.times, [](const record& x) { return x.ended; });
    j.end_object();
  }
  j.end_object();
  return j.text();
}

std::string gather_and_write(MPI_Comm comm, const std::string& path, const run_facts& facts,
                             const std::string& writer, const std::string& client,
                             const writer_part* w, const client_part* c) {
  std::uint64_t mine[total_count] = {};
  if (c) {
    mine[handed_over] = c->counters.bytes_written;
    mine[blocks_handed_over] = c->counters.blocks_written;
    mine[client_dropped] = c->counters.bytes_dropped;
    mine[client_blocks_dropped] = c->counters.blocks_dropped;
    mine[iterations_skipped] = c->counters.iterations_skipped;
  }
  if (w) {
    mine[received] = w->live.bytes_received;
    mine[written] = w->live.bytes_written;
    mine[dropped] = w->live.bytes_dropped;
    mine[skipped] = w->live.bytes_skipped;
    mine[failed] = w->live.bytes_failed;
    mine[spilled] = w->live.bytes_spilled;
    mine[pending] = w->live.bytes_pending;
    mine[iterations_stored] = w->live.iterations_stored;
    mine[store_failures] = w->live.store_failures;
    mine[rejected] = w->rejected;
    for (const storing::action_summary& a : w->actions) mine[action_failures] += a.failures;
  }
  std::uint64_t sums[total_count] = {};
  check_mpi(MPI_Reduce(mine, sums, total_count, MPI_UINT64_T, MPI_SUM, 0, comm), "MPI_Reduce");
  int iterations = c ? c->iterations : 0, most_iterations = 0;
  check_mpi(MPI_Reduce(&iterations, &most_iterations, 1, MPI_INT, MPI_MAX, 0, comm), "MPI_Reduce");
  const std::vector<std::string> writers = gather_texts(comm, writer);
  const std::vector<std::string> clients = gather_texts(comm, client);
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rank != 0) return {};

  json_writer j;
  j.begin_object();
  j.field("format", "sidecore-run-report").field("version", report_version);
  j.field("simulation", facts.simulation).field("configuration", facts.configuration);
  j.field("mode", facts.mode);
  j.field("processes", facts.processes).field("client_count", facts.clients);
  j.field("writer_count", facts.writers);
  j.field("origin_unix_time", run_clock::origin_unix_seconds());
  j.field("duration", run_clock::now());
  j.field("write_times", c && c->times != nullptr);
  j.key("totals").begin_object();
  j.field("iterations", most_iterations);
  j.field("bytes_handed_over", sums[handed_over]);
  j.field("blocks_handed_over", sums[blocks_handed_over]);
  j.field("bytes_dropped_by_clients", sums[client_dropped]);
  j.field("blocks_dropped_by_clients", sums[client_blocks_dropped]);
  j.field("iterations_skipped", sums[iterations_skipped]);
  j.field("bytes_received", sums[received]).field("bytes_written", sums[written]);
  j.field("bytes_dropped", sums[dropped]).field("bytes_skipped", sums[skipped]);
  j.field("bytes_failed", sums[failed]).field("bytes_spilled", sums[spilled]);
  j.field("bytes_pending", sums[pending]);
  j.field("iterations_stored", sums[iterations_stored]);
  j.field("store_failures", sums[store_failures]);
  j.field("notifications_rejected", sums[rejected]);
  j.field("action_failures", sums[action_failures]);
  j.end_object();
  j.key("writers").begin_array();
  for (const std::string& text : writers) j.raw(text);
  j.end_array();
  j.key("clients").begin_array();
  for (const std::string& text : clients) j.raw(text);
  j.end_array();
  j.end_object();

  // Only a regular file is ever replaced: SIDECORE_REPORT may name a path in a directory
  // others can write to, where a symlink or a device node must not be overwritten.
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    return "'" + path + "' exists and is not a regular file (a symlink, directory, device or " +
           "FIFO); the run report only replaces a regular file: set SIDECORE_REPORT to another "
           "path";
  const std::string temporary = path + ".part." + std::to_string(::getpid());
  {
    // O_EXCL|O_NOFOLLOW: a name planted in the meantime is never followed nor reused.
    ::unlink(temporary.c_str());
    const int fd =
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return "cannot create '" + temporary + "': " + std::strerror(errno);
    const std::string text = j.text() + "\n";
    std::size_t done = 0;
    int err = 0;
    while (done < text.size() && err == 0) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n > 0)
        done += static_cast<std::size_t>(n);
      else if (n < 0 && errno != EINTR)
        err = errno;
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      ::unlink(temporary.c_str());
      return "cannot write '" + temporary + "': " + std::strerror(err);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(temporary.c_str());
    return "cannot rename '" + temporary + "' to '" + path + "': " + std::strerror(err);
  }
  return {};
}

}  // namespace sidecore::run_report
