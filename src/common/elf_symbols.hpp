// Reads a shared library's dynamic symbol table from its file, without loading it: dlopen runs
// a library's constructors before anything can be asked of it, so a library that is not a
// plugin would run code in every process of the job before being refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sidecore {

// Whether the ELF shared library at `path` defines (exports) the function `symbol`. nullopt
// when the file cannot be read this way (not a 64-bit ELF shared library of this byte order,
// no section table, unreadable): dlopen is then left to say what is wrong.
std::optional<bool> elf_defines_function(const std::string& path, std::string_view symbol);

// The library search paths an ELF object (a library or a program) records for the loader:
// DT_RPATH and DT_RUNPATH, as written ($ORIGIN not expanded). nullopt when the file cannot be
// read this way (as above).
struct elf_search_paths {
  std::optional<std::string> rpath;
  std::optional<std::string> runpath;
};
std::optional<elf_search_paths> elf_library_search_paths(const std::string& path);

}  // namespace sidecore
