// Reads a shared library's dynamic symbol table from its file, without loading it: dlopen runs
// a library's constructors before anything can be asked of it, so a library that is not a
// plugin would run code in every process of the job before being refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sidecore::plugins {

// Whether the ELF shared library at `path` defines (exports) the function `symbol`. nullopt
// when the file cannot be read this way (not a 64-bit ELF shared library of this byte order,
// no section table, unreadable): dlopen is then left to say what is wrong.
std::optional<bool> elf_defines_function(const std::string& path, std::string_view symbol);

}  // namespace sidecore::plugins
