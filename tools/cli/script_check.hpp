// What damaris_initialize would find wrong with a configuration's <pyscript> files, found
// before a job starts (sidecore validate).
#pragma once

#include <string>

#include "config/model.hpp"

namespace sidecore::cli {

// "" when every script's file can be read and is Python without a syntax error (as the
// interpreter named by SIDECORE_PYTHON, else python3, parses it); otherwise one line per
// problem: the configuration's file and line, the script, what is wrong. A relative path is
// looked for where the job would look, from the working directory. When no interpreter can be
// run, the syntax is not checked and `note` says so.
std::string script_problems(const config::model& model, std::string& note);

}  // namespace sidecore::cli
