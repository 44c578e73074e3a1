// damaris::model::ModifyModel (include/damaris/model/ModifyModel.hpp): Damaris's template
// filling, with the replacement rules Damaris applies, and saving that reports failures.
#include "damaris/model/ModifyModel.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/mpi_handles.hpp"

namespace damaris {
namespace model {

namespace {

// One entry of the map as a regex and its format. Damaris matches "\b(key)([^ ]*)" and writes
// "value$2": the key at a word boundary, then everything up to the next space, put back
// unchanged. The tail's group number follows the key's own groups, so that a key with groups
// keeps its tail too.
struct replacement {
  std::regex pattern;
  std::string format;
};

replacement compile(const std::string& key, const std::string& value) {
  std::size_t key_groups = 0;
  try {
    key_groups = std::regex(key, std::regex::ECMAScript).mark_count();
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("ModifyModel::RepalceWithRegEx: the key \"" + key +
                                "\" is not a valid regular expression (" + e.what() +
                                "); keys are ECMAScript regular expressions: escape . ( ) [ ] "
                                "{ } * + ? | ^ $ \\ with a backslash to match them literally");
  }
  replacement r;
  r.pattern = std::regex("\\b(" + key + ")([^ ]*)", std::regex::ECMAScript);
  r.format = value + "$" + std::to_string(2 + key_groups);
  return r;
}

struct file_closer {
  void operator()(std::FILE* f) const noexcept {
    if (f) std::fclose(f);
  }
};

[[noreturn]] void fail_to_write(const std::string& filename, int error, const char* step) {
  throw std::system_error(error, std::generic_category(),
                          "ModifyModel::SaveXMLStringToFile: cannot write the configuration to \"" +
                              filename + "\" (" + step + ")");
}

}  // namespace

ModifyModel::ModifyModel() = default;

ModifyModel::ModifyModel(const std::string& input_xml) : m_text(input_xml) {}

void ModifyModel::SetXMLstring(const std::string& input_xml) { m_text = input_xml; }

void ModifyModel::RepalceWithRegEx(const std::map<std::string, std::string>& find_and_replace) {
  // Every key is compiled before the text changes: a bad key leaves the text as it was.
  std::vector<replacement> steps;
  steps.reserve(find_and_replace.size());
  for (const auto& [key, value] : find_and_replace) steps.push_back(compile(key, value));
  std::string text = m_text;
  for (const replacement& step : steps) text = std::regex_replace(text, step.pattern, step.format);
  m_text = std::move(text);
}

std::string& ModifyModel::GetConfigString() { return m_text; }

const std::string& ModifyModel::GetConfigString() const { return m_text; }

void ModifyModel::SaveXMLStringToFile(const std::string& filename) const {
  std::unique_ptr<std::FILE, file_closer> file(std::fopen(filename.c_str(), "wb"));
  if (!file) fail_to_write(filename, errno, "open");
  if (!m_text.empty() && std::fwrite(m_text.data(), 1, m_text.size(), file.get()) != m_text.size())
    fail_to_write(filename, errno, "write");
  // A full disk often shows only when the buffer is flushed: the close is checked too.
  std::FILE* raw = file.release();
  if (std::fclose(raw) != 0) fail_to_write(filename, errno, "close");
}

bool ModifyModel::ReadAndBroadcastXMLFromFile(const MPI_Comm& comm, const std::string& uri) {
  int rank = 0;
  sidecore::check_mpi(MPI_Comm_rank(comm, &rank),
                      "ModifyModel::ReadAndBroadcastXMLFromFile: MPI_Comm_rank");
  // Rank 0 sends the length, -1 when it could not read the file, so that every rank returns
  // the same answer.
  long long length = -1;
  std::string text;
  if (rank == 0) {
    std::unique_ptr<std::FILE, file_closer> file(std::fopen(uri.c_str(), "rb"));
    if (file) {
      char chunk[65536];
      std::size_t got = 0;
      while ((got = std::fread(chunk, 1, sizeof chunk, file.get())) > 0) text.append(chunk, got);
      if (!std::ferror(file.get())) length = static_cast<long long>(text.size());
    }
  }
  sidecore::check_mpi(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, comm),
                      "ModifyModel::ReadAndBroadcastXMLFromFile: MPI_Bcast");
  if (length < 0) return false;
  text.resize(static_cast<std::size_t>(length));
  // In pieces: an MPI count is an int.
  constexpr long long piece = 1 << 30;
  for (long long at = 0; at < length; at += piece) {
    const int count = static_cast<int>(std::min(piece, length - at));
    sidecore::check_mpi(MPI_Bcast(text.data() + at, count, MPI_CHAR, 0, comm),
                        "ModifyModel::ReadAndBroadcastXMLFromFile: MPI_Bcast");
  }
  m_text = std::move(text);
  return true;
}

}  // namespace model
}  // namespace damaris
