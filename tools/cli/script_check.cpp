#include "tools/cli/script_check.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/environment.hpp"

extern char** environ;

namespace sidecore::cli {
namespace {

// Prints "<file>:<line>: <message>" and exits 1 for a syntax error; exits 0 otherwise.
constexpr const char* syntax_check =
    "import ast, sys\n"
    "path = sys.argv[1]\n"
    "try:\n"
    "    ast.parse(open(path, 'rb').read(), path)\n"
    "except SyntaxError as e:\n"
    "    print(f'{e.filename}:{e.lineno}: {e.msg}')\n"
    "    sys.exit(1)\n"
    "except (ValueError, UnicodeDecodeError) as e:\n"
    "    print(f'{path}: {e}')\n"
    "    sys.exit(1)\n";

// Runs argv with its output (stdout and stderr) captured; the exit status, or -1 when the
// program could not be started.
int run_capturing(const std::vector<std::string>& argv, std::string& output) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    return -1;
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      output.append(buffer, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::string script_problems(const config::model& model, std::string& note) {
  std::string problems;
  const std::string chosen = environment::text("SIDECORE_PYTHON");
  const std::string python = chosen.empty() ? "python3" : chosen;
  bool python_runs = true;
  // (where it is named, the file): every <pyscript>, and every Catalyst script of <paraview>.
  std::vector<std::pair<std::string, std::string>> files;
  for (const config::script& s : model.scripts) {
    if (s.paraview) continue;  // the runner's own sidecore_paraview.py
    files.emplace_back(model.file + ":" + std::to_string(s.line) + ": <pyscript name=\"" + s.name +
                           "\" file=\"" + s.file + "\">: ",
                       s.file);
  }
  if (model.paraview) {
    for (std::size_t i = 0; i < model.paraview->scripts.size(); ++i) {
      const std::string& file = model.paraview->scripts[i];
      files.emplace_back(model.file + ":" + std::to_string(model.paraview->script_lines[i]) +
                             ": <paraview><script>" + file + "</script>: ",
                         file);
    }
  }
  for (const auto& [where, file] : files) {
    std::error_code ignored;
    const std::string cwd = std::filesystem::current_path(ignored).string();
    errno = 0;
    std::ifstream readable(file, std::ios::binary);
    if (std::filesystem::is_directory(file, ignored) || !readable) {
      const int err = errno;
      problems += where + "cannot read the script file" +
                  (std::filesystem::path(file).is_relative()
                       ? " (a path without '/' is taken from the working directory, " + cwd + ")"
                       : std::string()) +
                  (err != 0 ? std::string(": ") + std::strerror(err) : std::string()) + "\n";
      continue;
    }
    if (!python_runs) continue;
    std::string output;
    const int status = run_capturing({python, "-c", syntax_check, file}, output);
    if (status == 1 && !output.empty()) {
      while (!output.empty() && output.back() == '\n') output.pop_back();
      problems += where + "not Python: " + output + "\n";
    } else if (status != 0) {
      python_runs = false;
      note = "the script files were not checked for syntax errors: '" + python +
             "' could not be run" + (chosen.empty() ? " (set SIDECORE_PYTHON)" : "");
    }
  }
  while (!problems.empty() && problems.back() == '\n') problems.pop_back();
  return problems;
}

}  // namespace sidecore::cli
