// The search follows ld.so(8) for dlopen; the loader's cache is approximated by the directories
// ldconfig builds it from (a library installed but not yet in the cache is found here first).
#include "common/library_search.hpp"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/elf_symbols.hpp"

namespace sidecore {
namespace {

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A colon-separated list of the loader's, with $ORIGIN (or ${ORIGIN}) replaced by `origin`. An
// empty entry means the working directory, as for the loader.
void add_path_list(const std::string& list, const std::string& origin,
                   std::vector<std::string>& directories) {
  std::istringstream entries(list);
  std::string entry;
  while (std::getline(entries, entry, ':')) {
    for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
      for (std::size_t at; (at = entry.find(token)) != std::string::npos;)
        entry.replace(at, std::char_traits<char>::length(token), origin);
    }
    if (entry.find('$') != std::string::npos) continue;  // $LIB, $PLATFORM: not followed
    directories.push_back(entry.empty() ? "." : entry);
  }
}

// The directories of an ld.so.conf file, its includes followed (to a bounded depth).
void add_loader_configuration(const std::string& file, int depth,
                              std::vector<std::string>& directories) {
  if (depth > 8) return;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    if (word == "include") {
      std::string pattern;
      while (words >> pattern) {
        if (pattern[0] != '/') pattern = directory_of(file) + "/" + pattern;
        glob_t found{};
        if (::glob(pattern.c_str(), 0, nullptr, &found) == 0) {
          for (std::size_t i = 0; i < found.gl_pathc; ++i)
            add_loader_configuration(found.gl_pathv[i], depth + 1, directories);
        }
        ::globfree(&found);
      }
    } else if (word[0] == '/') {
      directories.push_back(word);
    }
  }
}

}  // namespace

std::vector<std::string> loader_search_directories(const std::string& caller,
                                                   const std::string& program) {
  std::vector<std::string> directories;
  const std::optional<elf_search_paths> callers = elf_library_search_paths(caller);
  const std::optional<elf_search_paths> programs =
      program == caller ? callers : elf_library_search_paths(program);
  if (callers && !callers->runpath) {
    if (callers->rpath) add_path_list(*callers->rpath, directory_of(caller), directories);
    if (programs && !programs->runpath && programs->rpath && program != caller)
      add_path_list(*programs->rpath, directory_of(program), directories);
  }
  if (const char* library_path = std::getenv("LD_LIBRARY_PATH"))
    add_path_list(library_path, ".", directories);
  if (callers && callers->runpath)
    add_path_list(*callers->runpath, directory_of(caller), directories);
  add_loader_configuration("/etc/ld.so.conf", 0, directories);
  for (const char* fallback : {"/lib", "/usr/lib"}) directories.emplace_back(fallback);
  return directories;
}

std::optional<std::string> find_library_file(const std::string& name) {
  char program[4096] = {};
  const ssize_t length = ::readlink("/proc/self/exe", program, sizeof program - 1);
  const std::string program_path = length > 0 ? std::string(program, length) : std::string();
  // The object this function is in: its path as loaded, or "" for the program itself.
  Dl_info self{};
  link_map* object = nullptr;
  if (::dladdr1(reinterpret_cast<void*>(&find_library_file), &self,
                reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP) == 0 ||
      object == nullptr)
    return std::nullopt;
  const std::string caller =
      object->l_name != nullptr && object->l_name[0] != '\0' ? object->l_name : program_path;
  for (const std::string& directory : loader_search_directories(caller, program_path)) {
    const std::string candidate = directory + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), R_OK) == 0)
      return candidate;
  }
  return std::nullopt;
}

}  // namespace sidecore
