// The child-process read check (isolation/isolated_read.hpp): how each way the helper can end becomes
// the caller's error. Stand-in helpers (shell scripts, chosen through DGRTE_READ_CHECK) crash, run out
// of memory, refuse the file or read it; the real helper is exercised by the mesh and field tests.
#include "common/error.hpp"
#include "isolation/isolated_read.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace dgrte::isolation {
namespace {

namespace fs = std::filesystem;

// Points DGRTE_READ_CHECK at a script with the given body for the test's lifetime.
class StandInHelper {
 public:
  explicit StandInHelper(const std::string& body) {
    fs::create_directories(dir_);
    const auto script = dir_ / "helper.sh";
    std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(script, fs::perms::owner_all);
    setenv("DGRTE_READ_CHECK", script.c_str(), 1);
  }
  ~StandInHelper() {
    unsetenv("DGRTE_READ_CHECK");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  fs::path dir_ = fs::temp_directory_path() / ("dgrte_isolation_" + std::to_string(::getpid()));
};

ReadCheck a_check() {
  return {.reader = "vtk",
          .file = "/tmp/field.vtu",
          .arguments = {"case.yaml: media.gas.field"},
          .context = "case.yaml: media.gas.field: /tmp/field.vtu",
          .library = "VTK's reader",
          .remedy = "Write the file again."};
}

std::string input_error_of(const ReadCheck& check) {
  try {
    check_in_child(check);
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected an InputError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected an InputError, nothing was thrown";
  return {};
}

TEST(IsolatedRead, AFileTheChildReadsPasses) {
  StandInHelper helper("test \"$1\" = vtk && test \"$2\" = /tmp/field.vtu && test \"$3\" = 'case.yaml: media.gas.field'");
  EXPECT_NO_THROW(check_in_child(a_check()));
}

TEST(IsolatedRead, ACrashIsAnInputErrorNamingFileLibrarySignalAndRemedy) {
  StandInHelper helper("echo 'ERR| vtkPoints: Number of components is different' >&2\nkill -SEGV $$");
  const auto msg = input_error_of(a_check());
  for (const std::string word : {"case.yaml: media.gas.field: /tmp/field.vtu", "VTK's reader crashed", "signal 11",
                                 "Number of components is different", "Write the file again."})
    EXPECT_NE(msg.find(word), std::string::npos) << "missing \"" << word << "\" in: " << msg;
}

TEST(IsolatedRead, TheReadersOwnInputErrorIsPassedOnVerbatim) {
  StandInHelper helper("echo 'case.yaml: media.gas.field: /tmp/field.vtu: cell 3 names point 9'\nexit 2");
  EXPECT_EQ(input_error_of(a_check()), "case.yaml: media.gas.field: /tmp/field.vtu: cell 3 names point 9");
}

TEST(IsolatedRead, MemoryBeyondTheLimitIsAnInputError) {
  StandInHelper helper("exit 3");
  const auto msg = input_error_of(a_check());
  EXPECT_NE(msg.find("needed more than 4.0 GiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a count it declares is larger than its data"), std::string::npos) << msg;
}

TEST(IsolatedRead, AnotherExitStatusIsAnInputError) {  // e.g. a sanitizer's report in the child
  StandInHelper helper("exit 1");
  EXPECT_NE(input_error_of(a_check()).find("exit status 1"), std::string::npos);
}

TEST(IsolatedRead, AMissingHelperIsAnInstallationErrorNotTheFiles) {
  setenv("DGRTE_READ_CHECK", "/nonexistent/dgrte-read-check", 1);
  try {
    check_in_child(a_check());
    ADD_FAILURE() << "nothing thrown";
  } catch (const InputError& e) {
    ADD_FAILURE() << "a missing helper is not the file's fault: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("DGRTE_READ_CHECK"), std::string::npos) << e.what();
  }
  unsetenv("DGRTE_READ_CHECK");
}

TEST(IsolatedRead, MemoryLimitGrowsWithTheFile) {
  EXPECT_EQ(child_memory_limit(0), 4ULL << 30);
  EXPECT_EQ(child_memory_limit(1ULL << 30), 64ULL << 30);
}

}  // namespace
}  // namespace dgrte::isolation
