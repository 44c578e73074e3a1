// Client write paths. The hot path (damaris_write) is: a hash lookup, one allocation under the
// shared heap's lock, one memcpy, one 320-byte message into this client's own ring. The
// server is woken only at the end of an iteration, for a signal, or when the ring fills up.
#include "client/client.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/error.hpp"
#include "common/log.hpp"
#include "server/actions.hpp"

namespace sidecore::client {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

client::client(const config::model& model, int client_index, const sink& where)
    : m_model(model),
      m_client_index(client_index),
      m_channel(where.channel),
      m_slot(where.slot),
      m_parameters(model) {
  for (std::size_t v = 0; v < model.variables.size(); ++v)
    m_variables.emplace(std::string_view(model.variables[v].name), v);
  m_positions.resize(model.variables.size() * static_cast<std::size_t>(model.arch.domains));
  m_handed_over.assign(m_positions.size(), -1);
  // Room for every block of one iteration, so that damaris_alloc does not grow it.
  m_allocations.reserve(std::min<std::size_t>(m_positions.size(), 1024));
  if (m_channel) {
    // This client's own stretch of the shared buffer: its blocks go there first. Touch the
    // start of it now, so that the first write finds it mapped, cached and in the TLB.
    m_stretch = m_channel->heap().stretch_of(m_slot, m_channel->client_count());
    const std::uint64_t share = m_channel->heap().capacity() / std::max(1u, m_channel->client_count());
    std::memset(m_channel->address(m_stretch), 0, std::min<std::uint64_t>(share, 4u << 20));
    return;
  }
  if (where.link != MPI_COMM_NULL) {
    m_remote = std::make_unique<transport::mpi_sender>(where.link, where.server_rank, model.arch);
    return;
  }
  if (where.background)
    m_background = std::make_unique<background_writer>(
        model, where.writers, where.finish_comm, where.writer_index, where.writer_count);
  else
    m_local = std::make_unique<server::iteration_processor>(model, where.writers, 1, nullptr);
}

client::~client() = default;

std::size_t client::variable_index(std::string_view name) const {
  auto it = m_variables.find(name);
  if (it == m_variables.end())
    throw error(DAMARIS_UNDEFINED_VARIABLE,
                "no variable " + quoted(name) + " in " + m_model.file +
                    " (give the full name, groups joined with '/')");
  return it->second;
}

void client::check_block(std::size_t variable, int block) const {
  if (block < 0 || block >= m_model.arch.domains)
    throw error(DAMARIS_INVALID_BLOCK,
                "block " + std::to_string(block) + " of variable " +
                    quoted(m_model.variables[variable].name) + " is out of range: <domains count=\"" +
                    std::to_string(m_model.arch.domains) + "\"/> allows 0.." +
                    std::to_string(m_model.arch.domains - 1));
}

const std::vector<std::int64_t>& client::position_of(std::size_t variable, int block) const {
  return m_positions[variable * static_cast<std::size_t>(m_model.arch.domains) + block];
}

void client::check_not_handed_over(std::size_t variable, int block) const {
  if (m_handed_over[variable * static_cast<std::size_t>(m_model.arch.domains) + block] ==
      m_iteration)
    throw error(
        DAMARIS_ALLOCATION_ERROR,
        "block " + std::to_string(block) + " of " + quoted(m_model.variables[variable].name) +
            " was already written or allocated in iteration " + std::to_string(m_iteration) +
            ": each block is handed over once per iteration (use another block id, "
            "<domains count=...>, or end the iteration first)");
}

void client::mark_handed_over(std::size_t variable, int block) {
  m_handed_over[variable * static_cast<std::size_t>(m_model.arch.domains) + block] = m_iteration;
}

void client::note_dropped(std::uint64_t bytes) {
  ++m_counters.blocks_dropped;
  m_counters.bytes_dropped += bytes;
}

void* client::reserve(std::size_t variable, std::uint64_t bytes, std::uint64_t& offset) {
  transport::shared_heap& heap = m_channel->heap();
  if (m_model.arch.policy == config::full_buffer_policy::wait) {
    offset = heap.allocate(bytes, m_model.arch.wait_timeout_seconds, m_stretch);
    return m_channel->address(offset);
  }
  if (!m_iteration_skipped) {
    if (auto got = heap.try_allocate(bytes, m_stretch)) {
      offset = *got;
      return m_channel->address(offset);
    }
    mark_skipped(variable);
  }
  return nullptr;
}

void client::mark_skipped(std::size_t variable) {
  m_iteration_skipped = true;
  ++m_counters.iterations_skipped;
  if (!m_skip_reported) {
    m_skip_reported = true;
    log::warning("buffer full at iteration ", m_iteration, " (variable ",
                 quoted(m_model.variables[variable].name),
                 "): policy=\"skip\" drops the rest of this iteration; further drops are "
                 "counted and reported at finalize");
  }
}

block_buffer client::reserve_private(std::size_t variable, std::uint64_t bytes) {
  if (!m_background && !m_remote) return buffer_pool::acquire(bytes);
  if (m_iteration_skipped) return nullptr;
  auto memory = m_background ? m_background->reserve(bytes) : m_remote->reserve(bytes);
  if (!memory) mark_skipped(variable);
  return memory;
}

void client::send(const transport::message& m, bool wake) {
  if (m_channel->try_push(m_slot, m)) {
    if (wake || m_channel->pending(m_slot) * 2 >= m_channel->ring_capacity())
      m_channel->wake_server();
    return;
  }
  // Ring full: the server is behind. Wake it and wait, within the configured timeout.
  auto start = std::chrono::steady_clock::now();
  const double timeout = m_model.arch.wait_timeout_seconds;
  for (int spin = 0;; ++spin) {
    m_channel->wake_server();
    if (spin < 64) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (m_channel->try_push(m_slot, m)) {
      if (wake) m_channel->wake_server();
      return;
    }
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout > 0 && waited > timeout)
      throw error(DAMARIS_CHANNEL_ERROR,
                  "message queue to the dedicated core stayed full for " + std::to_string(timeout) +
                      " s: the server is not consuming (did it call damaris_start?)");
  }
}

transport::message client::block_message(std::size_t variable, int block, int iteration,
                                          std::uint64_t offset, const evaluated_layout& shape,
                                          const std::vector<std::int64_t>& position) const {
  transport::message m{};
  m.kind = transport::message_kind::block;
  m.variable = static_cast<std::int32_t>(variable);
  m.iteration = iteration;
  m.block = block;
  m.source = m_client_index;
  m.ndims = static_cast<std::uint32_t>(shape.dims.size());
  m.has_global = shape.global_dims.empty() ? 0 : 1;
  m.offset = offset;
  m.bytes = shape.bytes;
  for (std::size_t d = 0; d < shape.dims.size(); ++d) {
    m.dims[d] = shape.dims[d];
    m.position[d] = d < position.size() ? position[d] : 0;
  }
  for (std::size_t d = 0; d < shape.global_dims.size() && d < transport::max_dimensions; ++d)
    m.global_dims[d] = shape.global_dims[d];
  return m;
}

void client::post(const transport::message& m, bool wake) {
  if (m_remote)
    m_remote->send(m, nullptr);
  else
    send(m, wake);
}

void client::hand_over(const transport::message& m, block_buffer owned) {
  ++m_counters.blocks_written;
  m_counters.bytes_written += m.bytes;
  if (m_channel) {
    send(m, false);
    return;
  }
  if (m_remote) {
    m_remote->send(m, std::move(owned));
    return;
  }
  server::stored_block b;
  b.variable = m.variable;
  b.view.source = m.source;
  b.view.block_id = m.block;
  b.view.iteration = m.iteration;
  b.view.data = owned.get();
  b.view.bytes = m.bytes;
  b.view.dims.assign(m.dims, m.dims + m.ndims);
  if (m.has_global) b.view.global_dims.assign(m.global_dims, m.global_dims + m.ndims);
  b.view.position.assign(m.position, m.position + m.ndims);
  b.owned = std::move(owned);
  if (m_background)
    m_background->submit_block(std::move(b));
  else
    m_local->add_block(std::move(b));
}

client::allocation* client::find_allocation(std::size_t variable, int block, int iteration) {
  for (allocation& a : m_allocations)
    if (a.block.variable == static_cast<std::int32_t>(variable) && a.block.block == block &&
        a.block.iteration == iteration)
      return &a;
  return nullptr;
}

void client::check_running(const char* call) const {
  if (m_stopped)
    throw error(DAMARIS_CHANNEL_ERROR,
                std::string(call) + " after damaris_stop: the servers accept nothing more from "
                                    "this client");
}

void client::check_placement(std::size_t variable, int block, const evaluated_layout& shape) const {
  // A block's interior (its extents without ghosts) must lie inside the global extents: a
  // collective file could not hold it, and the global view of file-per-core output would
  // leave it out.
  const std::vector<std::int64_t>& position = position_of(variable, block);
  const std::size_t n = shape.dims.size();
  const auto interior_of = [&](std::size_t d) {
    return d < shape.ghosts_before.size()
               ? shape.dims[d] - shape.ghosts_before[d] - shape.ghosts_after[d]
               : shape.dims[d];
  };
  bool fits = true;
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t inside = interior_of(d);
    const std::int64_t at = d < position.size() ? position[d] : 0;
    if (inside < 1 ||
        (!shape.global_dims.empty() && (at < 0 || at + inside > shape.global_dims[d])))
      fits = false;
  }
  if (fits) return;
  std::vector<std::int64_t> interior(n);
  for (std::size_t d = 0; d < n; ++d) interior[d] = interior_of(d);
  std::vector<std::int64_t> extents = shape.dims, global = shape.global_dims;
  std::vector<std::int64_t> at(n, 0);
  for (std::size_t d = 0; d < n && d < position.size(); ++d) at[d] = position[d];
  // Shown in the order the program uses: fastest first for a Fortran layout.
  if (m_model.layouts[m_model.variables[variable].layout_index].fortran_order)
    for (auto* v : {&interior, &extents, &global, &at}) std::reverse(v->begin(), v->end());
  const auto text = [](const std::vector<std::int64_t>& v) {
    std::string t = "(";
    for (std::size_t i = 0; i < v.size(); ++i) t += (i ? "," : "") + std::to_string(v[i]);
    return t + ")";
  };
  throw error(DAMARIS_INVALID_DIMENSIONS,
              "block " + std::to_string(block) + " of " + quoted(m_model.variables[variable].name) +
                  ": interior extents " + text(interior) + " (extents " + text(extents) +
                  " without ghost zones) at position " + text(at) +
                  (global.empty() ? std::string(" leave no interior")
                                  : " do not fit in the global extents " + text(global)) +
                  "; check damaris_set_position and the layout's global= and ghosts=");
}

void client::check_fits(std::size_t variable, std::uint64_t bytes) const {
  // Every mode refuses a block its buffer could never hold, synchronous mode included (it
  // has no buffer to fill), so that a configuration behaves the same whichever mode the XML
  // selects.
  const std::uint64_t capacity =
      m_channel ? m_channel->heap().capacity() : m_model.arch.buffer_size;
  if (bytes > capacity)
    throw allocation_error(
        "variable " + quoted(m_model.variables[variable].name) + ": " +
        block_never_fits(bytes, capacity,
                         m_channel ? "a dedicated core's shared buffer" : "the buffer")
            .what());
}

const evaluated_layout& client::checked_shape(std::size_t variable) const {
  const evaluated_layout& shape = m_parameters.layout(m_model.variables[variable].layout_index);
  const std::string& name = m_model.variables[variable].name;
  if (shape.dims.size() > static_cast<std::size_t>(transport::max_dimensions))
    throw error(DAMARIS_INVALID_DIMENSIONS, "variable " + quoted(name) + " has " +
                                                std::to_string(shape.dims.size()) +
                                                " dimensions; at most 8 are supported");
  for (std::int64_t d : shape.dims)
    if (d < 1)
      throw error(DAMARIS_INVALID_DIMENSIONS,
                  "variable " + quoted(name) + ": its layout evaluates to a dimension of " +
                      std::to_string(d) + " with the current parameter values");
  check_fits(variable, shape.bytes);
  return shape;
}

void client::write(std::string_view name, int block, const void* data) {
  check_running("damaris_write");
  std::size_t v = variable_index(name);
  check_block(v, block);
  if (!data) throw argument_error("damaris_write(" + quoted(name) + "): data is NULL");
  check_not_handed_over(v, block);
  const evaluated_layout& shape = checked_shape(v);
  check_placement(v, block, shape);
  if (m_channel) {
    std::uint64_t offset = 0;
    void* target = reserve(v, shape.bytes, offset);
    mark_handed_over(v, block);
    if (!target) {
      note_dropped(shape.bytes);
      return;
    }
    std::memcpy(target, data, shape.bytes);
    hand_over(block_message(v, block, m_iteration, offset, shape, position_of(v, block)), {});
    return;
  }
  block_buffer owned = reserve_private(v, shape.bytes);
  mark_handed_over(v, block);
  if (!owned) {
    note_dropped(shape.bytes);
    return;
  }
  std::memcpy(owned.get(), data, shape.bytes);
  hand_over(block_message(v, block, m_iteration, 0, shape, position_of(v, block)), std::move(owned));
}

void* client::alloc(std::string_view name, int block) {
  check_running("damaris_alloc");
  std::size_t v = variable_index(name);
  check_block(v, block);
  check_not_handed_over(v, block);
  const evaluated_layout& shape = checked_shape(v);
  check_placement(v, block, shape);
  allocation a;
  std::uint64_t offset = 0;
  if (m_channel) {
    a.address = reserve(v, shape.bytes, offset);
  } else {
    a.owned = reserve_private(v, shape.bytes);
    a.address = a.owned.get();
  }
  if (!a.address) {
    // Dropped by policy="skip": scratch memory the caller can still fill, discarded at commit.
    a.dropped = true;
    a.owned = buffer_pool::acquire(shape.bytes);
    a.address = a.owned.get();
  }
  mark_handed_over(v, block);
  a.block = block_message(v, block, m_iteration, offset, shape, position_of(v, block));
  void* address = a.address;
  m_allocations.push_back(std::move(a));
  return address;
}

void client::commit(std::string_view name, int block, int iteration) {
  std::size_t v = variable_index(name);
  check_block(v, block);
  allocation* a = find_allocation(v, block, iteration);
  if (!a)
    throw error(DAMARIS_BLOCK_NOT_FOUND, "commit of block " + std::to_string(block) + " of " +
                                             quoted(name) + " at iteration " + std::to_string(iteration) +
                                             ": it was not allocated (call damaris_alloc first)");
  if (a->committed) return;
  a->committed = true;
  if (a->dropped) {
    note_dropped(a->block.bytes);
    return;
  }
  hand_over(a->block, std::move(a->owned));
}

void client::clear(std::string_view name, int block, int iteration) {
  std::size_t v = variable_index(name);
  check_block(v, block);
  allocation* a = find_allocation(v, block, iteration);
  if (!a)
    throw error(DAMARIS_BLOCK_NOT_FOUND, "clear of block " + std::to_string(block) + " of " +
                                             quoted(name) + " at iteration " + std::to_string(iteration) +
                                             ": no such allocated block");
  if (!a->committed) commit(name, block, iteration);
  // The order of allocations does not matter: move the last one into the hole.
  *a = std::move(m_allocations.back());
  m_allocations.pop_back();
}

void client::signal(std::string_view name) {
  check_running("damaris_signal");
  std::size_t e = m_model.find_event(name);
  if (e == config::model::npos)
    throw error(DAMARIS_UNDEFINED_ACTION,
                "no event " + quoted(name) + " in <actions> of " + m_model.file);
  const config::event& event = m_model.events[e];
  if (event.execution == config::execution::local || m_local) {
    server::action_registry::instance().run(event, m_model.file, m_client_index, m_iteration);
    return;
  }
  if (m_background) {
    m_background->submit_signal(event, m_client_index, m_iteration);
    return;
  }
  if (name.size() >= static_cast<std::size_t>(transport::max_signal_name))
    throw argument_error("event name " + quoted(name) + " is longer than 63 characters");
  transport::message m{};
  m.kind = transport::message_kind::signal;
  m.iteration = m_iteration;
  m.source = m_client_index;
  m.variable = static_cast<std::int32_t>(e);
  std::memcpy(m.name, name.data(), name.size());
  post(m, true);
}

void client::end_iteration() {
  check_running("damaris_end_iteration");
  // Allocated blocks of this iteration that were never committed are committed now: the data
  // the simulation put there is what it meant to write.
  for (allocation& a : m_allocations) {
    if (a.block.iteration > m_iteration || a.committed) continue;
    const std::string& variable = m_model.variables[a.block.variable].name;
    log::warning("block ", a.block.block, " of '", variable, "' was allocated at iteration ",
                 a.block.iteration, " but never committed; committing it at the end of the iteration");
    commit(variable, a.block.block, a.block.iteration);
  }
  m_allocations.erase(std::remove_if(m_allocations.begin(), m_allocations.end(),
                                     [this](const allocation& a) {
                                       return a.block.iteration <= m_iteration;
                                     }),
                      m_allocations.end());
  if (m_channel || m_remote) {
    transport::message m{};
    m.kind = transport::message_kind::end_iteration;
    m.iteration = m_iteration;
    m.source = m_client_index;
    m.flags = m_iteration_skipped ? transport::iteration_skipped : 0;
    post(m, true);
  } else if (m_background) {
    m_background->submit_end_iteration(0, m_iteration, m_iteration_skipped);
  } else {
    m_local->end_iteration(0, m_iteration, m_iteration_skipped);
  }
  ++m_iteration;
  m_iteration_skipped = false;
  if (m_channel && m_model.arch.policy == config::full_buffer_policy::wait)
    wait_for_slower_clients();
  if (m_local) {
    std::string failure = m_local->take_failure();
    if (!failure.empty()) throw storage_error(failure);
  }
}

void client::wait_for_slower_clients() {
  // The iteration this client now starts may be at most max_iterations_ahead past the one the
  // slowest client of its dedicated core is in. Without this bound, clients out of step would
  // fill the shared buffer with younger iterations, and the dedicated core would have to keep
  // moving them into its own memory (without limit) so that the slowest client can write.
  // The others' progress is read from the rings only when the last value seen is too old.
  m_channel->publish_ended(m_slot, static_cast<std::uint32_t>(m_iteration));
  const std::int64_t needed = static_cast<std::int64_t>(m_iteration) - max_iterations_ahead;
  if (needed <= m_slowest_seen) return;
  const auto start = std::chrono::steady_clock::now();
  const double timeout = m_model.arch.wait_timeout_seconds;
  for (int spin = 0;; ++spin) {
    m_slowest_seen = m_channel->slowest_ended();
    if (needed <= m_slowest_seen) return;
    if (timeout > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout)
      throw error(DAMARIS_CHANNEL_ERROR,
                  "iteration " + std::to_string(m_iteration) + " would be more than " +
                      std::to_string(max_iterations_ahead) +
                      " iterations ahead of the slowest client of this dedicated core, which "
                      "did not end iteration " +
                      std::to_string(needed - 1) + " within " + std::to_string(timeout) +
                      " s (<buffer timeout=...>): is a client stuck?");
    if (spin < 64)
      sched_yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void client::set_position(std::string_view name, int block, const std::int64_t* position) {
  std::size_t v = variable_index(name);
  check_block(v, block);
  if (!position) throw argument_error("damaris_set_position(" + quoted(name) + "): position is NULL");
  const config::layout& layout = m_model.layouts[m_model.variables[v].layout_index];
  const std::size_t n = layout.dimensions.size();
  std::vector<std::int64_t>& stored =
      m_positions[v * static_cast<std::size_t>(m_model.arch.domains) + block];
  stored.assign(position, position + n);
  // Kept in C order, like the layout's dimensions.
  if (layout.fortran_order) std::reverse(stored.begin(), stored.end());
}

void client::stop() {
  if (m_stopped) return;
  m_stopped = true;
  if (m_channel) m_channel->publish_ended(m_slot, UINT32_MAX);  // nobody waits for this client
  if (m_channel || m_remote) {
    transport::message m{};
    m.kind = transport::message_kind::stop;
    m.iteration = m_iteration;
    m.source = m_client_index;
    post(m, true);
    if (m_remote) m_remote->flush();
  } else if (m_background) {
    m_background->finish();
  } else {
    m_local->finish();
    std::string failure = m_local->take_failure();
    if (!failure.empty()) throw storage_error(failure);
  }
}

void client::resume() {
  if (!m_stopped) return;
  m_stopped = false;
  if (m_channel) m_channel->publish_ended(m_slot, static_cast<std::uint32_t>(m_iteration));
  if (m_background) m_background->resume();
}

void client::sync() {
  if (m_remote) {
    m_remote->wait_stored(m_iteration);
  } else if (m_background) {
    m_background->sync(m_model.arch.wait_timeout_seconds);
  } else if (m_channel) {
    if (!m_channel->wait_stored(static_cast<std::uint32_t>(m_iteration),
                                m_model.arch.wait_timeout_seconds))
      throw error(DAMARIS_CHANNEL_ERROR,
                  "the dedicated core did not store iteration " + std::to_string(m_iteration - 1) +
                      " within " + std::to_string(m_model.arch.wait_timeout_seconds) + " s");
  }
}

}  // namespace sidecore::client
