// Where the dynamic loader would find a library named without a directory, found without
// loading it: dlopen runs a library's constructors before anything can be asked of it, so a
// plugin named by its file name alone is searched for here, checked, then loaded by its path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sidecore {

// The directories glibc's dlopen searches for a name without '/' when called from `caller` (an
// ELF object: this library, or the program when Sidecore is linked into it) in the program
// `program`, in its order: the caller's DT_RPATH, then the program's (each only when that object
// has no DT_RUNPATH); LD_LIBRARY_PATH; the caller's DT_RUNPATH ($ORIGIN expanded); the
// directories of /etc/ld.so.conf (what ldconfig puts in the loader's cache); /lib and /usr/lib.
// Entries with other $ tokens are left out.
std::vector<std::string> loader_search_directories(const std::string& caller,
                                                   const std::string& program);

// The first `directory/name` of loader_search_directories (for the object this function is in,
// in this process) that is a readable regular file; nullopt when none is.
std::optional<std::string> find_library_file(const std::string& name);

}  // namespace sidecore
