// An outside C++ program written the way OPM Flow drives Damaris: its XML is a template filled
// in with damaris::model::ModifyModel (RepalceWithRegEx with a std::map of placeholders), saved
// by rank 0 and given to damaris_initialize(); damaris::Environment is asked where each process
// stands and its answers are checked against the layout the test asks for; each client writes
// a field of its own size at its global offset, as OPM Flow's DamarisWriter does.
// Usage: damaris_cxx_consumer <output dir> <ranks per node> <dedicated cores per node>
//        [<dedicated nodes>]   (with dedicated nodes, give 0 dedicated cores)
// With CONSUMER_CONFIGURATION_AS_TEXT set, damaris_initialize() gets the XML text itself, as
// PDI's Damaris plugin gives it, and no file is written.
// The stored values are checked by run_damaris_package_test.sh: PRESSURE[i] = 1000 * it + i + 0.5
// over the whole field, MPI_RANK[i] = the client index owning cell i.
#include <Damaris.h>
#include <damaris/env/Environment.hpp>
// OPM Flow defines this before including ModifyModel.hpp (Damaris's XSD-generated model).
#define XSD_CXX11_TEMPLATE_ALIAS 1
#include <mpi.h>
#include <damaris/model/ModifyModel.hpp>

#include <cstdlib>
#include <iostream>
#include <list>
#include <map>
#include <string>
#include <vector>

namespace {

int failures = 0;
int world_rank = 0;

#define EXPECT(condition)                                                       \
  do {                                                                          \
    if (!(condition)) {                                                         \
      std::cerr << "rank " << world_rank << ": " << __FILE__ << ":" << __LINE__ \
                << ": expected " #condition << std::endl;                       \
      ++failures;                                                               \
    }                                                                           \
  } while (0)

#define EXPECT_EQ(actual, expected)                                                             \
  do {                                                                                          \
    const auto actual_value = (actual);                                                         \
    const auto expected_value = (expected);                                                     \
    if (!(actual_value == expected_value)) {                                                    \
      std::cerr << "rank " << world_rank << ": " << __FILE__ << ":" << __LINE__ << ": " #actual \
                << " is " << actual_value << ", expected " << expected_value << std::endl;      \
      ++failures;                                                                               \
    }                                                                                           \
  } while (0)

// The shape of OPM Flow's built-in template (opm/simulators/utils/initDamarisXmlFile.cpp),
// reduced to two fields; every placeholder is one OPM Flow fills in.
std::string damaris_template() {
  return R"(<?xml version="1.0"?>
<simulation name="_SIM_NAME_" language="c" xmlns="http://damaris.gforge.inria.fr/damaris/model">
<architecture>
    <domains count="1"/>
    <dedicated cores="_DC_REGEX_" nodes="_DN_REGEX_"/>
    <buffer name="_SHMEM_NAME_" size="_SHMEM_BUFFER_BYTES_REGEX_" />
    <placement />
    <queue  name="queue" size="300" />
</architecture>
<data>
    <parameter name="n_elements_total" type="int" value="1" />
    <parameter name="n_elements_local" type="int" value="1" />
    <layout name="zonal_layout_usmesh_integer" type="int" dimensions="n_elements_local" global="n_elements_total" />
    <layout name="zonal_layout_usmesh" type="double" dimensions="n_elements_local" global="n_elements_total" />
    <variable name="PRESSURE" layout="zonal_layout_usmesh" type="scalar" visualizable="true" unit="_PRESSURE_UNIT_" centering="zonal" store="_MYSTORE_OR_EMPTY_REGEX_" script="_MAKE_AVAILABLE_IN_PYTHON_" />
    _MORE_VARIABLES_REGEX_
</data>
<storage>
    <store name="MyStore" type="HDF5">
        <option key="FileMode">_File_Mode</option>
        <option key="XDMFMode">NoIteration</option>
        <option key="FilesPath">_PATH_REGEX_/</option>
    </store>
</storage>
<scripts>
    <_DISABLEPYTHONSTART_pyscript name="PythonScript" file="_PYTHON_SCRIPT_" language="python" frequency="1" /_DISABLEPYTHONFIN_>
</scripts>
<actions>
</actions>
</simulation>
)";
}

bool same_on_every_rank(long long value) {
  long long low = value, high = value;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int world_size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (argc != 4 && argc != 5) {
    if (world_rank == 0)
      std::cerr << "usage: damaris_cxx_consumer <output dir> <ranks per node> <dedicated cores> "
                   "[<dedicated nodes>]\n";
    MPI_Finalize();
    return 2;
  }
  const std::string output_dir = argv[1];
  const int per_node = std::atoi(argv[2]);
  const int dedicated = std::atoi(argv[3]);
  const int dedicated_nodes = argc == 5 ? std::atoi(argv[4]) : 0;
  using damaris::Environment;

  // Before damaris_initialize(): Damaris's answers for an uninitialized environment.
  EXPECT(!Environment::Initialized());
  EXPECT(Environment::IsClient());
  EXPECT(!Environment::IsServer());
  EXPECT(!Environment::HasServer());
  EXPECT_EQ(Environment::ClientsPerNode(), -1);
  EXPECT_EQ(Environment::GetGlobalProcessID(), -1);
  EXPECT_EQ(Environment::GetMagicNumber(), std::string());
  EXPECT(Environment::GetEntityComm() == MPI_COMM_NULL);
  EXPECT(Environment::GetKnownLocalClients().empty());
  // Collective over the communicator, usable before initialization (a run name for OPM Flow).
  const std::string early_magic = Environment::GetMagicNumber(MPI_COMM_WORLD);
  EXPECT(!early_magic.empty());
  EXPECT(same_on_every_rank(std::stoll(early_magic)));

  // OPM Flow's sequence: fill in the template, rank 0 saves it, everyone initializes from it.
  std::string damaris_config_xml = damaris_template();
  damaris::model::ModifyModel myMod = damaris::model::ModifyModel(damaris_config_xml);
  const std::string sim_name = "opm-like-" + early_magic;
  std::map<std::string, std::string> find_replace_map = {
      {"_SHMEM_BUFFER_BYTES_REGEX_", "8388608"},
      {"_DC_REGEX_", std::to_string(dedicated)},
      {"_DN_REGEX_", std::to_string(dedicated_nodes)},
      {"_File_Mode", "Collective"},
      {"_MORE_VARIABLES_REGEX_",
       "<variable name=\"MPI_RANK\" layout=\"zonal_layout_usmesh_integer\" type=\"scalar\" "
       "store=\"_MYSTORE_OR_EMPTY_REGEX_\" script=\"#\" />"},
      {"_PATH_REGEX_", output_dir},
      {"_MYSTORE_OR_EMPTY_REGEX_", "MyStore"},
      {"_PARAVIEW_PYTHON_SCRIPT_", ""},
      {"_PYTHON_SCRIPT_", ""},
      {"_PRESSURE_UNIT_", "Pa"},
      {"_MAKE_AVAILABLE_IN_PYTHON_", "#"},
      {"_SIM_NAME_", sim_name},
      {"_SHMEM_NAME_", "opm-like-" + early_magic + "-buffer"},
      {"_DISABLEPYTHONSTART_", "!--"},
      {"_DISABLEPYTHONFIN_", "--"},
  };
  myMod.RepalceWithRegEx(find_replace_map);
  // Every placeholder is gone (_MORE_VARIABLES_REGEX_ brought one more, replaced after it).
  EXPECT(myMod.GetConfigString().find("_REGEX_") == std::string::npos);
  EXPECT(myMod.GetConfigString().find("<!--pyscript") != std::string::npos);
  const std::string damaris_xml_filename_str =
      find_replace_map.at("_PATH_REGEX_") + "/damaris_config.xml";
  // PDI's Damaris plugin gives damaris_initialize the text itself instead (Damaris 1.12).
  const bool as_text = std::getenv("CONSUMER_CONFIGURATION_AS_TEXT") != nullptr;
  if (world_rank == 0 && !as_text) myMod.SaveXMLStringToFile(damaris_xml_filename_str);
  const std::string& configuration = as_text ? myMod.GetConfigString() : damaris_xml_filename_str;
  int err = damaris_initialize(configuration.c_str(), MPI_COMM_WORLD);
  if (err != DAMARIS_OK) {
    std::cerr << "rank " << world_rank << ": damaris_initialize: " << damaris_error_string(err)
              << ": " << damaris_last_error_message() << std::endl;
    MPI_Finalize();
    return 1;
  }

  // Where each process stands. With dedicated cores the last `dedicated` ranks of each node of
  // `per_node` ranks are servers; with dedicated nodes every rank of the last nodes is.
  const int node = world_rank / per_node;
  const int in_node = world_rank % per_node;
  const int nodes = world_size / per_node;
  const bool by_nodes = dedicated_nodes > 0;
  const int client_nodes = nodes - dedicated_nodes;
  // Without dedicated resources every process is a client and its own server (Damaris's
  // standalone mode).
  const bool standalone = dedicated == 0 && !by_nodes;
  const bool client = by_nodes ? node < client_nodes : in_node < per_node - dedicated;
  const int total_clients = by_nodes ? client_nodes * per_node : nodes * (per_node - dedicated);
  const int total_servers = world_size - total_clients;
  EXPECT(Environment::Initialized());
  EXPECT_EQ(Environment::IsClient(), client);
  EXPECT_EQ(Environment::IsServer(), !client || standalone);
  EXPECT_EQ(Environment::IsDedicatedCore(), !client && !by_nodes);
  EXPECT_EQ(Environment::IsDedicatedNode(), !client && by_nodes);
  EXPECT_EQ(Environment::HasServer(), !standalone);
  EXPECT_EQ(Environment::GetSimulationName(), sim_name);
  EXPECT_EQ(Environment::CoresPerNode(), per_node);
  // Damaris's answers with dedicated nodes: client nodes and dedicated nodes, not processes.
  EXPECT_EQ(Environment::ClientsPerNode(), by_nodes ? client_nodes : per_node - dedicated);
  EXPECT_EQ(Environment::ServersPerNode(), by_nodes ? dedicated_nodes : standalone ? 1 : dedicated);
  EXPECT_EQ(Environment::CountTotalClients(), total_clients);
  EXPECT_EQ(Environment::CountTotalServers(), total_servers);
  EXPECT_EQ(Environment::NumDomainsPerClient(), 1);
  EXPECT_EQ(Environment::GetGlobalProcessID(), world_rank);
  int entity_id = world_rank - total_clients;  // servers after every client (dedicated nodes)
  if (client && !by_nodes) entity_id = node * (per_node - dedicated) + in_node;
  if (client && by_nodes) entity_id = world_rank;
  if (!client && !by_nodes) entity_id = node * dedicated + (in_node - (per_node - dedicated));
  EXPECT_EQ(Environment::GetEntityProcessID(), entity_id);
  int entity_size = 0;
  MPI_Comm_size(Environment::GetEntityComm(), &entity_size);
  EXPECT_EQ(entity_size, client ? total_clients : total_servers);
  int global_size = 0;
  MPI_Comm_size(Environment::GetGlobalComm(), &global_size);
  EXPECT_EQ(global_size, world_size);
  // A server receives the blocks of an equal share of the clients (of its own node with
  // dedicated cores).
  const std::list<int>& known = Environment::GetKnownLocalClients();
  // Without dedicated resources each process receives its own.
  if (standalone)
    EXPECT(known.size() == 1 && known.front() == world_rank);
  else
    EXPECT_EQ(static_cast<int>(known.size()), client ? 0 : total_clients / total_servers);
  if (!by_nodes)
    for (int c : known) EXPECT_EQ(c / (per_node - dedicated), node);
  const std::string magic = Environment::GetMagicNumber();
  EXPECT(!magic.empty());
  EXPECT(same_on_every_rank(std::stoll(magic)));
  EXPECT_EQ(Environment::GetMagicNumber(MPI_COMM_WORLD), magic);

  int is_client = -1;
  err = damaris_start(&is_client);
  EXPECT(err == (standalone ? DAMARIS_NO_SERVER : DAMARIS_OK));
  EXPECT_EQ(is_client, client ? 1 : 0);
  if (is_client == 1) {
    MPI_Comm clients = MPI_COMM_NULL;
    EXPECT(damaris_client_comm_get(&clients) == DAMARIS_OK);
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(clients, Environment::GetEntityComm(), &same);
    EXPECT_EQ(same, MPI_IDENT);
    int me = 0, count = 0;
    MPI_Comm_rank(clients, &me);
    MPI_Comm_size(clients, &count);
    // Cells of different counts per client, laid out in client order (OPM's setupWritingPars).
    std::vector<int> sizes(static_cast<std::size_t>(count));
    for (int c = 0; c < count; ++c) sizes[static_cast<std::size_t>(c)] = 3 + 2 * c;
    long long offset = 0;
    for (int c = 0; c < me; ++c) offset += sizes[static_cast<std::size_t>(c)];
    int total = 0;
    for (int s : sizes) total += s;
    const int local = sizes[static_cast<std::size_t>(me)];
    EXPECT(damaris_parameter_set("n_elements_local", &local, sizeof(int)) == DAMARIS_OK);
    EXPECT(damaris_parameter_set("n_elements_total", &total, sizeof(int)) == DAMARIS_OK);
    for (int iteration = 0; iteration < 2; ++iteration) {
      EXPECT_EQ(Environment::GetLastIteration(), iteration);
      const int64_t position = offset;
      std::vector<double> pressure(static_cast<std::size_t>(local));
      for (int i = 0; i < local; ++i)
        pressure[static_cast<std::size_t>(i)] = 1000.0 * iteration + double(offset + i) + 0.5;
      EXPECT(damaris_set_position("PRESSURE", &position) == DAMARIS_OK);
      EXPECT(damaris_write("PRESSURE", pressure.data()) == DAMARIS_OK);
      // MPI_RANK straight into the shared memory, as OPM's DamarisVar does.
      void* block = nullptr;
      EXPECT(damaris_set_position("MPI_RANK", &position) == DAMARIS_OK);
      EXPECT(damaris_alloc("MPI_RANK", &block) == DAMARIS_OK);
      if (block != nullptr) {
        for (int i = 0; i < local; ++i) static_cast<int*>(block)[i] = me;
        EXPECT(damaris_commit("MPI_RANK") == DAMARIS_OK);
        EXPECT(damaris_clear("MPI_RANK") == DAMARIS_OK);
      }
      EXPECT(damaris_end_iteration() == DAMARIS_OK);
    }
    EXPECT(damaris_stop() == (standalone ? DAMARIS_NO_SERVER : DAMARIS_OK));
  } else {
    EXPECT_EQ(Environment::GetLastIteration(), -1);
  }
  EXPECT(damaris_finalize() == DAMARIS_OK);
  // After damaris_finalize(): uninitialized answers again.
  EXPECT(!Environment::Initialized());
  EXPECT(Environment::IsClient());
  EXPECT_EQ(Environment::CoresPerNode(), -1);
  EXPECT_EQ(Environment::GetMagicNumber(), std::string());

  int all_failures = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    std::cout << "damaris_cxx_consumer (" << world_size << " ranks, " << per_node << " per node, "
              << dedicated << " dedicated cores, " << dedicated_nodes << " dedicated nodes): "
              << (all_failures == 0 ? "OK" : std::to_string(all_failures) + " failed checks")
              << std::endl;
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
