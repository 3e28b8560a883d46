#include "isolation/isolated_read.hpp"

#include "common/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dgrte::isolation {
namespace fs = std::filesystem;

namespace {

// A pipe whose ends close themselves.
struct Pipe {
  std::array<int, 2> fd{-1, -1};
  Pipe() {
    if (::pipe2(fd.data(), O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe2: {}", std::strerror(errno)));
  }
  ~Pipe() {
    close_end(0);
    close_end(1);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

// Reads both pipes to their ends (the child may fill one while we wait on the other); stderr keeps
// its last `keep` bytes only.
void drain(int out_fd, int err_fd, std::string& out, std::string& err, std::size_t keep) {
  std::array<pollfd, 2> fds{{{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}}};
  std::array<std::string*, 2> into{&out, &err};
  std::array<char, 4096> buffer{};
  int open = 2;
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("poll: {}", std::strerror(errno)));
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i].fd = -1;
        --open;
        continue;
      }
      into[i]->append(buffer.data(), static_cast<std::size_t>(n));
      if (into[i]->size() > 2 * keep) into[i]->erase(0, into[i]->size() - keep);
    }
  }
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string last_lines(const std::string& text, std::size_t lines) {
  const std::string t = trimmed(text);
  std::size_t start = t.size();
  for (std::size_t i = 0; i < lines && start > 0; ++i) {
    const std::size_t nl = t.rfind('\n', start - 1);
    start = nl == std::string::npos ? 0 : nl;
  }
  return t.substr(start < t.size() && t[start] == '\n' ? start + 1 : start);
}

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("signal {}, {}", sig, name ? name : "unknown");
}

}  // namespace

unsigned long long child_memory_limit(unsigned long long file_bytes) {
  constexpr unsigned long long kFloor = 4ULL << 30;
  return std::max(kFloor, 64 * file_bytes);
}

fs::path helper_path() {
  if (const char* env = std::getenv("DGRTE_READ_CHECK"); env && *env) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "dgrte-read-check";
    if (fs::exists(beside, ec)) return beside;
  }
  return DGRTE_READ_CHECK_BUILD_PATH;
}

void check_in_child(const ReadCheck& check) {
  const fs::path helper = helper_path();
  std::error_code ec;
  if (!fs::exists(helper, ec))
    throw std::runtime_error(fmt::format(
        "{}: the helper dgrte-read-check, which parses mesh and field files in a child process, is not at {}; "
        "build it (it is built with dgrte), or set DGRTE_READ_CHECK to its path",
        check.context, helper.string()));
  std::vector<std::string> args{helper.string(), check.reader, check.file.string()};
  args.insert(args.end(), check.arguments.begin(), check.arguments.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  Pipe out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error(fmt::format("{}: cannot start {}: {}", check.context, helper.string(), std::strerror(spawned)));
  out.close_end(1);
  err.close_end(1);
  std::string message, diagnostics;
  drain(out.fd[0], err.fd[0], message, diagnostics, 4096);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(fmt::format("waitpid: {}", std::strerror(errno)));

  message = trimmed(message);
  const std::string said = last_lines(diagnostics, 2);
  const std::string said_part = said.empty() ? "" : fmt::format(" (its last output: \"{}\")", said.substr(0, 300));
  if (WIFSIGNALED(status))
    throw InputError(fmt::format("{}: {} crashed reading this file ({}, in a child process: the run itself is unharmed){}; "
                                 "the file is malformed: most likely a count it declares disagrees with the data that "
                                 "follows (a truncated or hand-edited file). {}",
                                 check.context, check.library, describe_signal(WTERMSIG(status)), said_part, check.remedy));
  if (!WIFEXITED(status))
    throw std::runtime_error(fmt::format("{}: {} ended in an unknown state (wait status {})", check.context, helper.string(), status));
  switch (WEXITSTATUS(status)) {
    case kReadOk:
      return;
    case kReadInputError:
      throw InputError(message.empty() ? fmt::format("{}: {} refused the file", check.context, check.library) : message);
    case kReadOutOfMemory: {
      const auto bytes = fs::file_size(check.file, ec);
      const unsigned long long size = ec ? 0 : bytes;
      throw InputError(fmt::format("{}: {} needed more than {:.1f} GiB to read this file of {} bytes (the limit for a file of "
                                   "its size): a count it declares is larger than its data. {}",
                                   check.context, check.library,
                                   static_cast<double>(child_memory_limit(size)) / (1ULL << 30), size, check.remedy));
    }
    case kReadInternal:
      throw std::runtime_error(fmt::format("{}: reading it in a child process failed: {}", check.context, message));
    default:  // a sanitizer's report, or a library that exits on error
      throw InputError(fmt::format("{}: {} failed reading this file (exit status {}, in a child process){}; the file is "
                                   "malformed. {}",
                                   check.context, check.library, WEXITSTATUS(status), said_part, check.remedy));
  }
}

}  // namespace dgrte::isolation
