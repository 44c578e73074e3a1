// A transport: how the clients of one mode hand their blocks to their writers. Each mode has
// its folder under src/transports/ with its client engine (engine.hpp), its server side when
// it has dedicated processes, and its setup; modes.cpp lists the modes (docs/design.md, "How
// to add a transport").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/model.hpp"
#include "plugins/python_scripts.hpp"
#include "protocol/live_stats.hpp"
#include "storing/iteration_processor.hpp"
#include "topology/topology.hpp"
#include "transports/engine.hpp"

namespace sidecore::transports {

// The loop of a dedicated process (dedicated core or node): receives its clients' blocks and
// stores them through its iteration_processor.
class server {
 public:
  virtual ~server() = default;
  // Serves the clients until every one of them has stopped, then stores what is left.
  virtual void run() = 0;
  // The first store failure not yet reported ("" if none), and forgets it.
  virtual std::string take_failure() = 0;
  // Live values, counters and per-iteration records (reports).
  virtual const storing::iteration_processor& processor() const noexcept = 0;
  const storing::processor_counters& counters() const noexcept { return processor().counters(); }
  // The live counters, readable from any thread (what a failed job's message says is stored).
  virtual const protocol::live_stats& stats() const noexcept = 0;
  // Most bytes of the buffer in use at once.
  virtual std::uint64_t buffer_high_water() const = 0;
  // Malformed notifications dropped: from a buggy or dying client. Each is counted as a store
  // failure reported to the clients, and its iteration stored incomplete.
  virtual std::uint64_t messages_rejected() const noexcept = 0;
  // What the end-of-run report says beyond the counters every server has (log lines).
  virtual void report_more(int server_index) const { (void)server_index; }
};

// What one mode builds in every process of the job: created collectively once the topology is
// known (shared segments, communicators), then asked for the engine of a client or the server
// of a dedicated process. Outlives both.
class setup {
 public:
  // model and topo outlive the setup.
  setup(const config::model& model, const topology::layout& topo) : m_model(model), m_topo(topo) {}
  virtual ~setup() = default;
  setup(const setup&) = delete;
  setup& operator=(const setup&) = delete;
  // A client's engine (the client's index is topo.client_index).
  virtual std::unique_ptr<engine> make_engine() = 0;
  // A dedicated process's server; modes without dedicated processes never have one.
  virtual std::unique_ptr<server> make_server();
  // The mode as the run report and messages name it. A background thread that must store
  // synchronously instead (see its setup) says "synchronous" once its engine is made.
  virtual const char* mode_name() const noexcept = 0;

 protected:
  const config::model& m_model;
  const topology::layout& m_topo;
};

struct mode {
  const char* name;  // "dedicated cores", ...: what the XML asks for, in messages
  // Whether the configuration and topology select this mode (the table's first that does).
  bool (*selected)(const config::model& model, const topology::layout& topo);
  // What scripts and programs learn of the mode (script_environment's mode-specific fields).
  void (*describe)(const config::model& model, const topology::layout& topo,
                   plugins::script_environment& environment);
  // Collective over topo.world: sets the mode up in every process. The model and topology
  // outlive the setup.
  std::unique_ptr<setup> (*set_up)(const config::model& model, const topology::layout& topo);
};

// The mode this configuration and topology select.
const mode& mode_of(const config::model& model, const topology::layout& topo);

}  // namespace sidecore::transports
