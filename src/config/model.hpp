// The validated, immutable configuration model built from a Damaris-format XML file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "Damaris.h"
#include "config/name_index.hpp"

namespace sidecore::config {

// Most dimensions a layout may have: the notifications a client posts carry this many extents
// (the library's one constant, SIDECORE_MAX_DIMENSIONS of Damaris.h).
inline constexpr std::size_t max_dimensions = SIDECORE_MAX_DIMENSIONS;
// Longest event or script name: a signal carries its name NUL-terminated in
// protocol::max_signal_name bytes (a unit test checks that the two agree).
inline constexpr std::size_t max_signal_name_length = 63;
// Deepest nesting of XML elements a configuration may have (groups inside groups...).
inline constexpr int max_xml_depth = 100;
// Most blocks (domains) a client may declare per variable.
inline constexpr std::int64_t max_domains = 1 << 20;

// Element types of parameters and layouts. XML names: short, int/integer, long,
// float/real, double, char/character (also accepted: string, label as char).
enum class element_type : std::uint8_t { int8, int16, int32, int64, float32, float64 };

std::size_t element_size(element_type type) noexcept;
// Bytes of an array of these extents and element size, or nothing when the count does not fit
// in 64 bits (extents below 0 count as 0).
std::optional<std::uint64_t> array_bytes(const std::int64_t* extents, std::size_t count,
                                         std::size_t element_bytes) noexcept;
inline std::optional<std::uint64_t> array_bytes(const std::vector<std::int64_t>& extents,
                                                std::size_t element_bytes) noexcept {
  return array_bytes(extents.data(), extents.size(), element_bytes);
}
const char* element_type_name(element_type type) noexcept;   // "int", "double", ...
std::int32_t damaris_type_code(element_type type) noexcept;  // DAMARIS_TYPE_CHAR, ... (Damaris.h)
bool is_integer(element_type type) noexcept;

// Integer arithmetic over parameters: integers, parameter names, + - * / %, unary minus,
// parentheses. Parameters are referenced by their index in model::parameters.
class expression {
 public:
  struct node;

  expression();  // the constant 0
  expression(std::shared_ptr<const node> root, std::string text);
  // where (file:line) prefixes the messages evaluate() throws.
  expression(std::shared_ptr<const node> root, std::string text, std::string where);

  // Evaluates with the given parameter values (indexed like model::parameters).
  // Throws config_error on division or modulo by zero.
  std::int64_t evaluate(const std::vector<std::int64_t>& parameter_values) const;
  const std::string& text() const noexcept { return m_text; }
  // Indices of the parameters this expression reads.
  std::vector<std::size_t> parameters() const;
  // Where the expression was written, "" when unknown: "file:line", followed for expressions
  // of a configuration by the element, the attribute and the list entry.
  const std::string& where() const noexcept { return m_where; }

 private:
  std::shared_ptr<const node> m_root;
  std::string m_text;
  std::string m_where;
};

// Says why a name absent from the names an expression may read cannot be used there (a
// parameter declared later, say), as "<what>; <hint>"; "" reports it as an unknown parameter.
using unusable_name_reason = std::function<std::string(std::string_view name)>;

// Parses one expression. names maps a parameter name to its index; unknown names, empty
// input and syntax errors throw config_error whose message starts with `where` (file:line...).
expression parse_expression(std::string_view text,
                            const std::map<std::string, std::size_t, std::less<>>& names,
                            const std::string& where,
                            const unusable_name_reason& why_unusable = {});

struct parameter {
  std::string name;
  element_type type = element_type::int32;
  std::int64_t int_value = 0;  // valid when is_integer(type)
  double real_value = 0.0;     // valid otherwise
  int line = 0;
};

enum class language { unknown, c, cpp, fortran, python };

// Dimension, global and ghost lists are always stored in C order (slowest-varying first).
// A layout written for Fortran (language="fortran", or no language on the layout inside a
// simulation whose language is fortran) lists them fastest first in the XML; the parser
// reverses them so that consumers never need to know. lang keeps what the layout declared.
struct layout {
  std::string name;
  element_type type = element_type::int32;
  std::string type_name = "int";  // as the XML names it, lower case: "integer", "label", ...
  // Local dimensions as written in the XML (comma separated).
  std::vector<expression> dimensions;
  // Global dimensions; empty when the XML gives none.
  std::vector<expression> global_dimensions;
  // Ghost zones per dimension ("lo:hi,..."); empty when the XML gives none.
  std::vector<std::pair<expression, expression>> ghosts;
  language lang = language::unknown;
  // Written fastest first (Fortran): positions given with damaris_set_position are in that
  // order too, and are reversed like the dimensions.
  bool fortran_order = false;
  int line = 0;
};

enum class centering { zonal, nodal };

struct variable {
  std::string name;  // full name, groups joined with '/': "coordinates/x2d"
  std::size_t layout_index = 0;
  // Index into model::stores, or npos when the variable names no store.
  std::size_t store_index = npos;
  bool time_varying = true;
  bool enabled = true;
  centering center = centering::zonal;
  std::string mesh;  // "" when none
  std::string unit;
  // Names of the <pyscript> elements that receive this variable (script="a,b"); Damaris
  // separates them with commas, semicolons or spaces.
  std::vector<std::string> scripts;
  std::string kind = "scalar";  // Damaris variable "type": scalar, vector, ...
  int vector_length = 1;        // Damaris "vectorlength": components per element, for visualisation
  // select-file="V" (index into model::variables, npos when none): in Collective files,
  // element i of each block is stored at the global position (C order) that element i of V's
  // block from the same source and block gives. FilePerCore files ignore it, as Damaris does.
  std::size_t select_file = npos;
  int line = 0;

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

struct coordinate {
  std::string name;  // full variable name
  std::string unit;
  std::string label;
};

// A variable holding one piece of an unstructured mesh: its vertex global ids
// (<vertex_global_id>, with an offset added to every id and index), VTK cell type per section
// (<section_types>), elements per section (<section_sizes>), the sections' vertex indices
// (<section_connectivity>), element offsets (<element_offsets>) or polyhedral faces
// (<polyhedral_*>). role is the element's name.
struct mesh_part {
  std::string role;
  std::string variable;  // full name, resolved from the mesh's group outwards as Damaris does
  std::int64_t offset = 0;
  int line = 0;
};

struct mesh {
  std::string name;  // as written (variables name their mesh so, wherever it is declared)
  std::string type;  // rectilinear, curvilinear, unstructured, point, ...
  int topology = 2;
  std::vector<coordinate> coordinates;
  std::vector<mesh_part> parts;  // unstructured meshes; in XML order
  int line = 0;
};

struct store {
  std::string name;
  // "HDF5" or "null", spelled exactly so whatever case the XML used; a plugin's type as written.
  std::string type;
  // Plugin stores: the shared library to load (the XML's library="...", or
  // libsidecore_<type>.so found by the dynamic loader); empty for the built-in types.
  std::string library;
  std::vector<std::pair<std::string, std::string>> options;  // in XML order
  int line = 0;
  int frequency = 1;  // stores every frequency-th iteration (Damaris "frequency")

  // Value of an option, or fallback when absent.
  std::string option(std::string_view key, std::string_view fallback = {}) const;
};

enum class scope { core, group, bcast };
enum class execution { local, remote, coupled };

// An action plugin (<actions><plugin>): a library of <sidecore/plugin.h> that receives the
// blocks of some variables at every frequency-th iteration, and the events routed to it.
struct action_plugin {
  std::string name;
  // As written: a path when it contains '/', else searched by the loader. For a <pyscript>,
  // "" until the runtime names Sidecore's script runner (plugins/python_scripts.hpp).
  std::string library;
  std::vector<std::pair<std::string, std::string>> options;  // in XML order
  std::vector<std::size_t> variables;  // indices into model::variables, in model order
  int frequency = 1;                   // 0: no iteration, events only
  int line = 0;
  // The <pyscript> this action runs (index into model::scripts), or no_script for a plugin
  // library of <actions>. A script's failures are logged and counted, not returned to the
  // simulation: analysis that fails must not fail the run.
  std::size_t script = no_script;

  static constexpr std::size_t no_script = static_cast<std::size_t>(-1);
  bool is_script() const noexcept { return script != no_script; }
};

struct event {
  std::string name;
  std::string action;   // symbol name; "" when the event is routed to a plugin
  std::string library;  // "" means the executable itself
  enum scope scope = scope::core;
  enum execution execution = execution::remote;
  // Index into model::action_plugins of the plugin the event is routed to (plugin="..."), or
  // no_plugin for an event that runs a function.
  std::size_t plugin = no_plugin;
  int line = 0;

  static constexpr std::size_t no_plugin = static_cast<std::size_t>(-1);
};

// A Python script (<scripts><pyscript>) run where the stores run, once every frequency-th
// iteration, on the blocks of the variables that name it in script= (docs/python_scripts.md).
// It runs as an action (model::action_plugins[action]).
struct script {
  std::string name;
  std::string file;  // relative paths are taken from the configuration's directory
  language lang = language::python;
  enum scope scope = scope::core;
  enum execution execution = execution::remote;
  int frequency = 1;
  // Dask (Damaris's attributes): the scheduler's JSON file ("" for none), seconds to wait
  // when connecting to it, threads per worker as written ("", a number or "openmp"), and
  // whether workers outlive the run.
  std::string scheduler_file;
  double timeout_seconds = 2.0;
  std::string nthreads;
  bool keep_workers = false;
  // Sidecore: published iterations the Dask cluster keeps per variable (dask-keep="N").
  int dask_keep = 4;
  // Sidecore: seconds one call of the script may take (time-limit="S"); 0: no limit.
  double time_limit_seconds = 0;
  // The pipelines of <paraview> (run by the runner's sidecore_paraview.py, on every variable
  // with a mesh and the meshes' coordinates), not a <pyscript>: file is set at run time.
  bool paraview = false;
  std::size_t action = static_cast<std::size_t>(-1);  // index into model::action_plugins
  int line = 0;
};

// What a writer does when the shared buffer cannot hold a request.
enum class full_buffer_policy { wait, skip };

// When the writers move an iteration out to the stores (<architecture><schedule>,
// docs/scheduling.md). Policies stack (policy="phase rate"): each adds its own wait before a
// writer's stores, and the stores run once every one allows them. None (drain) stores each
// iteration as soon as it is complete.
enum class schedule_policy : unsigned {
  drain = 0,
  rate = 1u << 0,     // at most `writers` writers of the job store at once; `bandwidth` per writer
  slots = 1u << 1,    // the iteration time cut into one slot per writer; each stores in its own
  phase = 1u << 2,    // stores begin only while every client of the writer computes
  ordered = 1u << 3,  // the writers store in one order across the job (schedule_order)
  self = 1u << 4,     // phase, slots or at once, chosen from what is measured, and adapted
};

// ordered: iteration (no writer begins an iteration before every writer stored the one
// before) or writer (also, within an iteration, writer by writer: one total order).
enum class schedule_order { iteration, writer };

struct schedule_settings {
  unsigned policies = 0;   // bits of schedule_policy; 0 is drain
  int writers = 0;         // rate: at most this many writers store at once; 0: no limit
  double bandwidth = 0.0;  // rate: bytes per second per writer; 0: no limit
  schedule_order order = schedule_order::iteration;  // ordered: by what
  std::string trace;  // "" or the path prefix of a per-writer trace (CSV) of stores
  int line = 0;       // of the <schedule> element; 0 when there is none
  bool uses(schedule_policy p) const noexcept { return (policies & static_cast<unsigned>(p)) != 0; }
  bool drains() const noexcept { return policies == 0; }
};

struct architecture {
  int domains = 1;
  int dedicated_cores = 0;
  int dedicated_nodes = 0;
  // Sidecore extension: 1 runs the stores on a background thread of each process (only
  // without dedicated cores or nodes).
  int io_threads = 0;
  std::string buffer_name = "sidecore-buffer";
  std::uint64_t buffer_size = 64ull << 20;
  int buffer_line = 0;  // of the <buffer> element; 0 when there is none
  full_buffer_policy policy = full_buffer_policy::wait;
  double wait_timeout_seconds = 300.0;  // 0 means wait forever
  // Active buffering (Sidecore extension): when the shared buffer is more than half full, a
  // dedicated core moves completed iterations waiting to be stored into its own memory (up to
  // server_memory bytes), then into files in spill_directory, so that clients keep writing.
  std::uint64_t server_memory = 0;
  std::string spill_directory;
  std::string queue_name = "sidecore-queue";
  std::uint64_t queue_size = 1024;  // messages per client
  schedule_settings schedule;
};

enum class log_level { trace, debug, info, warning, error, fatal };

struct log_settings {
  std::string file_name;  // "" logs to stderr
  log_level level = log_level::warning;
  std::string format;
  bool flush = false;
};

// <paraview> (docs/paraview.md): ParaView Catalyst scripts run where the stores run, at the end
// of every frequency-th iteration, on the blocks of the variables that have a mesh.
struct paraview_settings {
  // Catalyst scripts (legacy coprocessing or Catalyst 2), as <pyscript> files are resolved.
  std::vector<std::string> scripts;
  std::vector<int> script_lines;
  int frequency = 1;               // update-frequency
  double realtime_timestep = 0.1;  // Catalyst's time = iteration x this
  std::int64_t end_iteration = 0;  // at this iteration (when > 0), every pipeline writes
  int line = 0;
};

struct model {
  std::string file;  // path the model was read from (for messages)
  std::string simulation_name;
  language lang = language::unknown;
  architecture arch;
  std::vector<parameter> parameters;
  std::vector<layout> layouts;
  std::vector<variable> variables;
  std::vector<mesh> meshes;
  std::vector<store> stores;
  std::vector<event> events;
  std::vector<action_plugin> action_plugins;
  std::vector<script> scripts;
  std::optional<paraview_settings> paraview;
  log_settings log;
  // Non-fatal findings (unused references, deprecated forms), each naming file and line.
  std::vector<std::string> warnings;
  // Kept by index_names(), read by the find_* lookups.
  name_index parameter_names, layout_names, variable_names, event_names;

  // Lookups by name; npos when absent. They take constant time for the items index_names()
  // has seen (the parser calls it as it adds items and once at the end).
  std::size_t find_parameter(std::string_view name) const;
  std::size_t find_variable(std::string_view name) const;
  // What to say of a variable name the configuration does not declare: "no variable 'x' in
  // <file>; did you mean 'y'?" and the declared names (their count when there are many).
  std::string unknown_variable(std::string_view name) const;
  std::size_t find_layout(std::string_view name) const;
  std::size_t find_event(std::string_view name) const;
  // Indexes the parameters, layouts, variables and events added since the last call.
  void index_names();

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

namespace detail {
// "did you mean 'x'? valid <noun>: a, b, c" built from the closest name (edit distance,
// case-insensitive) when it is close enough; used by every "unknown name" message.
std::string suggest(std::string_view given, const std::vector<std::string>& valid,
                    std::string_view noun);
// The valid name closest to `given` when it is close enough to be a typo of it, else nullptr.
const std::string* closest(std::string_view given, const std::vector<std::string>& valid);
}  // namespace detail

struct parse_options {
  // Every warning is an error (also asked for by strict="true" on <simulation>): for users who
  // want a typo in an attribute name to stop the run rather than be ignored as Damaris does.
  bool strict = false;
};

// Ghost widths of one layout, evaluated once; empty when the layout has none.
struct ghost_widths {
  std::vector<std::int64_t> before;
  std::vector<std::int64_t> after;
  bool empty() const noexcept { return before.empty(); }
};

// Evaluates the ghosts of every layout of the model with the parameters' initial values (a
// stored block does not carry the values in force when it was written; stores use these).
std::vector<ghost_widths> evaluate_ghosts(const config::model& model);

// Builds a model from XML text. file_name is used only in messages.
// Throws config_error (file, line, what is wrong, what would be valid) on the first error.
model parse_model(std::string_view xml_text, const std::string& file_name,
                  const parse_options& options = {});

// The largest configuration accepted, file or text (50,000 variables take about 5 MB).
constexpr std::uint64_t max_configuration_bytes = 64u << 20;
// The longest name (or path) a configuration may give, and so any call may name.
constexpr std::size_t max_name_bytes = 4096;

// Reads a whole configuration file. Throws config_error naming the path when it cannot be
// read (missing, unreadable, a directory, not a regular file, larger than
// max_configuration_bytes). Every reader of a configuration file goes through it, so that all
// of them report the same thing.
std::string read_configuration_file(const std::string& path);

// Reads a file with read_configuration_file and parses it. Throws config_error.
model load_model_file(const std::string& path);

}  // namespace sidecore::config
