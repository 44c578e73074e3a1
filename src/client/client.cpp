// Client write paths. The hot path (damaris_write) is: a hash lookup, the checks, a
// reservation the engine fills with one memcpy, and the hand-over to the engine.
#include "client/client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/environment.hpp"
#include "common/error.hpp"
#include "common/hot_path.hpp"
#include "common/interrupt_notice.hpp"
#include "common/log.hpp"
#include "common/run_clock.hpp"
#include "common/text.hpp"
#include "storing/actions.hpp"

namespace sidecore::client {
namespace {

// Blocks damaris_alloc may hold at once before its table grows: every declared block of one
// iteration, up to a bound.
std::size_t expected_allocations(const config::model& model) {
  return std::min<std::size_t>(
      model.variables.size() * static_cast<std::size_t>(std::max(1, model.arch.domains)), 1024);
}

// The allocation slots to start with: one per variable and a few more, as a code allocates
// each variable's block once per iteration. Reserving a slot for every declared block (domains
// per variable) put tens of kilobytes between the name index and the block settings, which
// every call reads: two pages apart after a compute phase. More slots come from the arena.
std::size_t initial_allocation_slots(const config::model& model) {
  return std::min(expected_allocations(model), model.variables.size() + 4);
}

// A block's interior extent in dimension d: its extent without the ghost zones.
std::int64_t interior_extent(const evaluated_layout& shape, std::size_t d) noexcept {
  return d < shape.ghosts_before.size()
             ? shape.dims[d] - shape.ghosts_before[d] - shape.ghosts_after[d]
             : shape.dims[d];
}

// About what the client's tables take for this configuration (a little more), so that the
// arena is one allocation: its name index, the layout of each variable, the evaluated
// layouts, the allocation slots with their free list, and the settings of every declared block.
std::size_t table_bytes(const config::model& model) {
  const std::size_t variables = model.variables.size();
  std::size_t bytes = 4096;  // alignment, and the arena's own bookkeeping
  bytes += config::name_index::bytes_for(model.variables) + variables * sizeof(std::uint32_t);
  bytes += model.layouts.size() * sizeof(evaluated_layout);
  bytes += expected_allocations(model) * (sizeof(allocation) + sizeof(std::int32_t));
  bytes += variables * static_cast<std::size_t>(std::max(1, model.arch.domains)) *
           sizeof(block_settings);
  return bytes;
}

std::pmr::vector<std::uint32_t> layout_of_each(const config::model& model,
                                               std::pmr::memory_resource* memory) {
  std::pmr::vector<std::uint32_t> layouts(memory);
  layouts.reserve(model.variables.size());
  for (const config::variable& v : model.variables)
    layouts.push_back(static_cast<std::uint32_t>(v.layout_index));
  return layouts;
}

}  // namespace

client::client(const config::model& model, int client_index,
               std::unique_ptr<transports::engine> engine)
    : m_model(model),
      m_client_index(client_index),
      m_engine(std::move(engine)),
      m_arena(table_bytes(model)),
      m_names(model.variables, &m_arena),
      m_layout(layout_of_each(model, &m_arena)),
      m_parameters(model, &m_arena),
      m_allocations(initial_allocation_slots(model), &m_arena),
      m_blocks(model.variables.size(), model.arch.domains, &m_arena) {
  m_time_calls = environment::write_times();
}

client::~client() = default;

class client::call_timer {
 public:
  // A call made inside another (end_iteration committing a block) is counted once.
  explicit call_timer(client& c) : m_client(c.m_time_calls && !c.m_in_call ? &c : nullptr) {
    if (!m_client) return;
    m_client->m_in_call = true;
    m_start = std::chrono::steady_clock::now();
  }
  ~call_timer() {
    if (!m_client) return;
    m_client->m_call_seconds += elapsed();
    m_client->m_in_call = false;
  }
  call_timer(const call_timer&) = delete;
  call_timer& operator=(const call_timer&) = delete;
  // Seconds so far, and the call no longer counted at destruction.
  double take() {
    if (!m_client) return 0.0;
    const double seconds = elapsed();
    m_client->m_in_call = false;
    m_client = nullptr;
    return seconds;
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  }
  client* m_client;
  std::chrono::steady_clock::time_point m_start{};
};

void client::close_iteration_time(double seconds) noexcept {
  m_call_seconds += seconds;
  m_counters.seconds_in_calls += m_call_seconds;
  try {
    if (m_times.size() < 10000000)
      m_times.push_back({static_cast<float>(m_call_seconds), run_clock::now()});
  } catch (...) {
    // Out of memory: the record is lost, not the iteration.
  }
  m_call_seconds = 0.0;
}

SIDECORE_HOT_PATH std::size_t client::variable_index(std::string_view name) const {
  const std::size_t v = m_names.find(name);
  if (v == config::name_index::npos)
    throw error(DAMARIS_UNDEFINED_VARIABLE,
                m_model.unknown_variable(name) +
                    (name.find('/') == std::string_view::npos && m_model.variables.size() > 12
                         ? "; a variable of a group is named with the groups, joined with '/'"
                         : ""));
  return v;
}

SIDECORE_HOT_PATH void client::check_block(std::size_t variable, int block) const {
  // Any number of blocks: <domains count> is what a client declares, not a limit.
  if (block < 0)
    throw error(DAMARIS_INVALID_BLOCK, "block " + std::to_string(block) + " of variable " +
                                           single_quoted(m_model.variables[variable].name) +
                                           " is out of range: block ids are 0 or more");
}

SIDECORE_HOT_PATH void client::check_not_handed_over(std::size_t variable, int block,
                                                     const block_settings& settings) const {
  if (settings.handed_over == m_iteration)
    throw error(DAMARIS_ALLOCATION_ERROR,
                "block " + std::to_string(block) + " of " +
                    single_quoted(m_model.variables[variable].name) +
                    " was already written or allocated in iteration " +
                    std::to_string(m_iteration) +
                    ": each block is handed over once per iteration (use another block id, "
                    "<domains count=...>, or end the iteration first)");
}

void client::note_dropped(std::uint64_t bytes) {
  ++m_counters.blocks_dropped;
  m_counters.bytes_dropped += bytes;
  m_dropped_this_iteration += bytes;
}

SIDECORE_HOT_PATH transports::reservation client::reserve(std::size_t variable, std::uint64_t bytes,
                                                          const void* data) {
  if (m_iteration_skipped) return {};
  transports::reservation r = data ? m_engine->copy_in(data, bytes) : m_engine->reserve(bytes);
  if (!r) mark_skipped(variable);
  return r;
}

void client::mark_skipped(std::size_t variable) {
  m_iteration_skipped = true;
  ++m_counters.iterations_skipped;
  if (!m_skip_reported) {
    m_skip_reported = true;
    log::warning("buffer full at iteration ", m_iteration, " (variable ",
                 single_quoted(m_model.variables[variable].name),
                 "): policy=\"skip\" drops the rest of this iteration; further drops are "
                 "counted and reported at finalize");
  }
}

SIDECORE_HOT_PATH protocol::message client::block_message(std::size_t variable, int block,
                                                          int iteration, std::uint64_t offset,
                                                          const evaluated_layout& shape,
                                                          const extent_list& position) const {
  protocol::message m{};
  m.kind = protocol::message_kind::block;
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
  for (std::size_t d = 0; d < shape.global_dims.size() && d < protocol::max_dimensions; ++d)
    m.global_dims[d] = shape.global_dims[d];
  return m;
}

SIDECORE_HOT_PATH void client::hand_over(const protocol::message& m, block_buffer owned) {
  ++m_counters.blocks_written;
  m_counters.bytes_written += m.bytes;
  m_engine->commit(m, std::move(owned));
}

SIDECORE_HOT_PATH allocation* client::find_allocation(std::size_t variable, int block,
                                                      int iteration) {
  block_settings* settings = m_blocks.find(variable, block);
  if (!settings || settings->allocation < 0) return nullptr;
  allocation& a = m_allocations[settings->allocation];
  return a.block.iteration == iteration ? &a : nullptr;
}

SIDECORE_HOT_PATH void client::forget_allocation(std::size_t variable, int block) noexcept {
  block_settings* settings = m_blocks.find(variable, block);
  if (!settings || settings->allocation < 0) return;
  m_allocations.remove(settings->allocation);
  settings->allocation = -1;
}

SIDECORE_HOT_PATH void client::check_running(const char* call) const {
  if (m_stopped)
    throw error(DAMARIS_CHANNEL_ERROR,
                std::string(call) +
                    " after damaris_stop: the servers accept nothing more from "
                    "this client");
}

SIDECORE_HOT_PATH void client::check_placement(std::size_t variable, int block,
                                               const evaluated_layout& shape,
                                               const extent_list& position) const {
  // A block's interior (its extents without ghosts) must lie inside the global extents: a
  // collective file could not hold it, and the global view of file-per-core output would
  // leave it out.
  const std::size_t n = shape.dims.size();
  bool fits = true;
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t inside = interior_extent(shape, d);
    const std::int64_t at = d < position.size() ? position[d] : 0;
    if (inside < 1 ||
        (!shape.global_dims.empty() && (at < 0 || at + inside > shape.global_dims[d])))
      fits = false;
  }
  if (!fits) throw_misplaced(variable, block, shape, position);
}

void client::throw_misplaced(std::size_t variable, int block, const evaluated_layout& shape,
                             const extent_list& position) const {
  // Here, not in check_placement: building the message is most of the code, and a call that
  // succeeds should not have it between the lines it runs (src/hot_path.ld).
  const std::size_t n = shape.dims.size();
  std::vector<std::int64_t> interior(n);
  for (std::size_t d = 0; d < n; ++d) interior[d] = interior_extent(shape, d);
  std::vector<std::int64_t> extents = shape.dims.to_vector(),
                            global = shape.global_dims.to_vector();
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
              "block " + std::to_string(block) + " of " +
                  single_quoted(m_model.variables[variable].name) + ": interior extents " +
                  text(interior) + " (extents " + text(extents) +
                  " without ghost zones) at position " + text(at) +
                  (global.empty() ? std::string(" leave no interior")
                                  : " do not fit in the global extents " + text(global)) +
                  "; check damaris_set_position and the layout's global= and ghosts=");
}

SIDECORE_HOT_PATH void client::check_fits(std::size_t variable, std::uint64_t bytes) const {
  // Every mode refuses a block its buffer could never hold, synchronous mode included (it
  // has no buffer to fill), so that a configuration behaves the same whichever mode the XML
  // selects.
  const std::uint64_t capacity = m_engine->capacity();
  if (bytes > capacity)
    throw allocation_error("variable " + single_quoted(m_model.variables[variable].name) + ": " +
                           block_never_fits(bytes, capacity, m_engine->buffer_name()).what());
}

SIDECORE_HOT_PATH const evaluated_layout& client::checked_shape(std::size_t variable) const {
  const evaluated_layout& shape = m_parameters.layout(m_layout[variable]);
  bool usable = !shape.too_large;
  for (std::int64_t d : shape.dims) usable = usable && d >= 1;
  if (!usable) throw_unusable_shape(variable, shape);
  check_fits(variable, shape.bytes);
  return shape;
}

void client::throw_unusable_shape(std::size_t variable, const evaluated_layout& shape) const {
  // Here, not in checked_shape: the model (and the variable's name) is read only to say what
  // is wrong, so a call that succeeds does not touch its pages.
  const std::string& name = m_model.variables[variable].name;
  for (std::int64_t d : shape.dims)
    if (d < 1)
      throw error(DAMARIS_INVALID_DIMENSIONS,
                  "variable " + single_quoted(name) + ": its layout evaluates to a dimension of " +
                      std::to_string(d) + " with the current parameter values");
  throw error(DAMARIS_INVALID_DIMENSIONS,
              "variable " + single_quoted(name) +
                  ": its layout evaluates to more than 2^64 bytes with the current parameter "
                  "values");
}

SIDECORE_HOT_PATH const evaluated_layout& client::block_shape(std::size_t variable,
                                                              const block_settings& settings) {
  if (settings.extents.empty()) return checked_shape(variable);
  evaluated_layout& shape = m_block_shape;
  const evaluated_layout& declared = m_parameters.layout(m_layout[variable]);
  shape.type = declared.type;
  shape.global_dims = declared.global_dims;
  shape.ghosts_before = declared.ghosts_before;
  shape.ghosts_after = declared.ghosts_after;
  shape.dims = settings.extents;
  shape.bytes = settings.bytes;  // checked by set_extents
  shape.too_large = false;
  check_fits(variable, shape.bytes);
  return shape;
}

SIDECORE_HOT_PATH void client::write(std::string_view name, int block, const void* data) {
  call_timer timer(*this);
  check_running("damaris_write");
  std::size_t v = variable_index(name);
  check_block(v, block);
  if (!data) throw argument_error("damaris_write(" + single_quoted(name) + "): data is NULL");
  block_settings& settings = m_blocks.settings_of(v, block);
  check_not_handed_over(v, block, settings);
  const evaluated_layout& shape = block_shape(v, settings);
  check_placement(v, block, shape, settings.position);
  transports::reservation target = reserve(v, shape.bytes, data);
  settings.handed_over = m_iteration;
  if (!target) {
    note_dropped(shape.bytes);
    return;
  }
  hand_over(block_message(v, block, m_iteration, target.offset, shape, settings.position),
            std::move(target.owned));
}

SIDECORE_HOT_PATH client::allocated_block client::alloc_shaped(std::string_view name, int block) {
  call_timer timer(*this);
  check_running("damaris_alloc");
  std::size_t v = variable_index(name);
  check_block(v, block);
  block_settings& settings = m_blocks.settings_of(v, block);
  check_not_handed_over(v, block, settings);
  const evaluated_layout& shape = block_shape(v, settings);
  check_placement(v, block, shape, settings.position);
  transports::reservation target = reserve(v, shape.bytes);
  const bool dropped = !target.address;
  // Dropped by policy="skip": scratch memory the caller can still fill, discarded at commit.
  if (dropped) target.owned = buffer_pool::acquire(shape.bytes);
  // Filled in place: nothing below throws once the slot is claimed.
  const std::int32_t slot = m_allocations.claim();
  allocation& a = m_allocations[slot];
  a.address = dropped ? target.owned.get() : target.address;
  a.owned = std::move(target.owned);
  a.dropped = dropped;
  a.block = block_message(v, block, m_iteration, target.offset, shape, settings.position);
  settings.handed_over = m_iteration;
  settings.allocation = slot;
  return allocated_block{a.address, shape.type, &shape.dims};
}

SIDECORE_HOT_PATH void client::commit(std::string_view name, int block, int iteration) {
  call_timer timer(*this);
  std::size_t v = variable_index(name);
  check_block(v, block);
  allocation* a = find_allocation(v, block, iteration);
  if (!a)
    throw error(DAMARIS_BLOCK_NOT_FOUND, "commit of block " + std::to_string(block) + " of " +
                                             single_quoted(name) + " at iteration " +
                                             std::to_string(iteration) +
                                             ": it was not allocated (call damaris_alloc first)");
  if (a->committed) return;
  a->committed = true;
  if (a->dropped) {
    note_dropped(a->block.bytes);
    return;
  }
  hand_over(a->block, std::move(a->owned));
}

SIDECORE_HOT_PATH void client::clear(std::string_view name, int block, int iteration) {
  call_timer timer(*this);
  std::size_t v = variable_index(name);
  check_block(v, block);
  allocation* a = find_allocation(v, block, iteration);
  if (!a)
    throw error(DAMARIS_BLOCK_NOT_FOUND,
                "clear of block " + std::to_string(block) + " of " + single_quoted(name) +
                    " at iteration " + std::to_string(iteration) + ": no such allocated block");
  if (!a->committed) commit(name, block, iteration);
  forget_allocation(v, block);
}

void client::signal(std::string_view name) {
  check_running("damaris_signal");
  std::size_t e = m_model.find_event(name);
  if (e == config::model::npos)
    throw error(DAMARIS_UNDEFINED_ACTION,
                "no event " + single_quoted(name) + " in <actions> of " + m_model.file);
  const config::event& event = m_model.events[e];
  if (event.execution == config::execution::local) {
    storing::action_registry::instance().run(event, m_model.file, m_client_index, m_iteration);
    return;
  }
  m_engine->signal(event, e, m_iteration);
}

SIDECORE_HOT_PATH void client::end_iteration() {
  call_timer timer(*this);
  check_running("damaris_end_iteration");
  // Allocated blocks of this iteration that were never committed are committed now: the data
  // the simulation put there is what it meant to write.
  m_allocations.for_each([&](allocation& a) {
    if (a.block.iteration <= m_iteration && !a.committed) commit_left_over(a);
  });
  m_allocations.for_each([&](allocation& a) {
    if (a.block.iteration <= m_iteration)
      forget_allocation(static_cast<std::size_t>(a.block.variable), a.block.block);
  });
  m_engine->end_iteration(m_iteration, m_iteration_skipped, m_dropped_this_iteration);
  m_blocks.end_iteration();
  ++m_iteration;
  interrupt_notice::note_iteration(m_iteration);
  m_iteration_skipped = false;
  m_dropped_this_iteration = 0;
  // A store failure reported here still ends the iteration's write time.
  struct close_time {
    client& self;
    call_timer& timer;
    ~close_time() {
      if (self.m_time_calls) self.close_iteration_time(timer.take());
    }
  } closing{*this, timer};
  m_engine->iteration_started(m_iteration);
}

void client::commit_left_over(const allocation& a) {
  const std::string& variable = m_model.variables[a.block.variable].name;
  // A program that leaves the commits to the end of the iteration does so every iteration.
  if (log::first_time("uncommitted block of " + variable))
    log::warning("block ", a.block.block, " of '", variable, "' was allocated at iteration ",
                 a.block.iteration,
                 " but never committed; committing it at the end of the iteration (said "
                 "once per variable: later ones are committed alike)");
  commit(variable, a.block.block, a.block.iteration);
}

void client::set_position(std::string_view name, int block, const std::int64_t* position) {
  std::size_t v = variable_index(name);
  check_block(v, block);
  if (!position)
    throw argument_error("damaris_set_position(" + single_quoted(name) + "): position is NULL");
  const config::layout& layout = m_model.layouts[m_model.variables[v].layout_index];
  const std::size_t n = layout.dimensions.size();
  extent_list& stored = m_blocks.settings_of(v, block).position;
  stored.assign(position, n);
  // Kept in C order, like the layout's dimensions.
  if (layout.fortran_order) std::reverse(stored.begin(), stored.end());
}

void client::set_extents(std::string_view name, int block, const std::int64_t* extents) {
  std::size_t v = variable_index(name);
  check_block(v, block);
  if (!extents) {
    if (block_settings* settings = m_blocks.find(v, block)) settings->extents.clear();
    return;
  }
  const config::layout& layout = m_model.layouts[m_model.variables[v].layout_index];
  const std::size_t n = layout.dimensions.size();
  for (std::size_t d = 0; d < n; ++d)
    if (extents[d] < 1)
      throw error(DAMARIS_INVALID_DIMENSIONS,
                  "sidecore_set_block_extents(" + single_quoted(name) + ", block " +
                      std::to_string(block) + "): extent " + std::to_string(d) + " is " +
                      std::to_string(extents[d]) + "; every extent must be 1 or more");
  // Checked aside so that a refused call changes nothing.
  extent_list wanted(extents, n);
  // Kept in C order, like the layout's dimensions.
  if (layout.fortran_order) std::reverse(wanted.begin(), wanted.end());
  const std::optional<std::uint64_t> bytes =
      config::array_bytes(wanted.data(), wanted.size(), config::element_size(layout.type));
  if (!bytes)
    throw error(DAMARIS_INVALID_DIMENSIONS, "sidecore_set_block_extents(" + single_quoted(name) +
                                                "): the extents make more than 2^64 bytes");
  block_settings& settings = m_blocks.settings_of(v, block);
  settings.extents = wanted;
  settings.bytes = *bytes;
}

void client::stop() {
  if (m_stopped) return;
  // Blocks allocated and never committed are handed over now, as at the end of an iteration:
  // otherwise their memory would stay taken, and their data lost, for the rest of the job.
  m_allocations.for_each([&](allocation& a) {
    if (a.committed) return;
    const std::string& variable = m_model.variables[a.block.variable].name;
    log::warning("block ", a.block.block, " of '", variable, "' was allocated at iteration ",
                 a.block.iteration, " but never committed; committing it as the client stops");
    try {
      commit(variable, a.block.block, a.block.iteration);
    } catch (const std::exception& e) {
      log::error("could not hand over block ", a.block.block, " of '", variable, "': ", e.what());
    }
  });
  m_stopped = true;
  m_engine->stop(m_iteration);
}

void client::resume() {
  if (!m_stopped) return;
  m_stopped = false;
  m_engine->resume(m_iteration);
}

void client::sync() { m_engine->sync(m_iteration); }

void client::compute_phase(bool computing) {
  if (m_stopped) return;
  m_engine->phase(computing ? protocol::client_phase::computing : protocol::client_phase::other);
}

}  // namespace sidecore::client
