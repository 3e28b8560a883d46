#pragma once
// Reading a file with a third-party parser in a child process first.
//
// Gmsh's .msh reader and VTK's readers trust the counts a file declares: a malformed file can crash
// them or make them allocate gigabytes (found by fuzzing, tests/fuzz/README.md). Such a crash would
// take the whole run down without a word about the file. So dgrte lets a helper process
// (`dgrte-read-check`, which runs the same reading code) parse the file first: a crash, a runaway
// allocation or an error there becomes dgrte's InputError naming the file, and only a file the child
// read is parsed in-process. The child is started with posix_spawn (vfork semantics: no copy of the
// parent's address space, safe beside MPI's registered memory and OpenMP's threads).
#include <filesystem>
#include <string>
#include <vector>

namespace dgrte::isolation {

struct ReadCheck {
  std::string reader;                  // the helper's reader: "msh" or "vtk" (read_check_main.cpp)
  std::filesystem::path file;          // the file to parse
  std::vector<std::string> arguments;  // further arguments of that reader
  std::string context;                 // message prefix naming the file (and the case key)
  std::string library;                 // who parses it, for the message ("Gmsh's .msh reader")
  std::string remedy;                  // what the user should do with a file that crashes it
};

// Runs the helper on the file; returns when the child read it, throws InputError (the child's own
// message, or what a crash or an exhausted memory limit means) otherwise. Throws std::runtime_error
// when the helper cannot be found or started (an installation problem, not the file's).
void check_in_child(const ReadCheck& check);

// The helper: $DGRTE_READ_CHECK if set, else dgrte-read-check beside the running executable, else
// the one in the build tree this library was built in.
std::filesystem::path helper_path();

// Memory the child may use to read a file of `file_bytes` bytes: reading needs a few times the file
// (Gmsh ~10x a text mesh, a compressed .vtu more), so max(4 GiB, 64 x the file).
unsigned long long child_memory_limit(unsigned long long file_bytes);

// Exit codes of dgrte-read-check.
inline constexpr int kReadOk = 0;
inline constexpr int kReadInputError = 2;   // the reader's InputError, message on stdout
inline constexpr int kReadOutOfMemory = 3;  // std::bad_alloc under the memory limit
inline constexpr int kReadInternal = 4;     // another exception, message on stdout

}  // namespace dgrte::isolation
