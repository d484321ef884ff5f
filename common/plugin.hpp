#pragma once
/// parasim's optional parts that link a large library — the GPU parts (CUDA, cuBLAS, cuDNN, NCCL),
/// MPI, SimGrid and OpenBLAS — are each built into a shared library of their own beside the
/// `parasim` binary (libparasim_gpu.so, libparasim_mpi.so, libparasim_simgrid.so,
/// libparasim_blas.so; cli/CMakeLists.txt), loaded only by the commands that use them, so that a
/// command maps only what it runs (`parasim --version` maps none of them). Each library finds the
/// rest of parasim in the process that loads it (the binaries export their symbols) and hands back a
/// table of function pointers from one extern "C" entry, the table's first member its version.
#include <mutex>
#include <string>

#include "common/error.hpp"

namespace parasim {

/// Opens this build's plugin library `file` (beside the running binary, one folder up — the tests'
/// binary is in build/tests — or else in the folder the build wrote it to) and returns what its
/// extern "C" function `entry` returns, after checking that the table's leading int equals
/// `version`. Null when it cannot: `why` then says why (the file is missing, the loader's error —
/// a library it needs is not installed —, no such entry, another build's table). `global`: its
/// symbols and its libraries' join the process's global scope (RTLD_GLOBAL), for a library whose
/// own plugins look its symbols up there (Open MPI's components). Not cached: find_plugin_table
/// keeps the result, so each plugin is loaded once.
[[nodiscard]] const void* load_plugin(const std::string& file, const char* entry, int version, bool global, std::string& why);

/// The table of plugin `file` (a `Table` whose first member is its int version), loaded on the first
/// call, thread-safe (one load per Table type: each plugin has its own); later calls return it
/// without looking again. Null when it cannot load, `why` (when given) then saying why.
template <class Table>
[[nodiscard]] const Table* find_plugin_table(const char* file, const char* entry, int version, bool global, std::string* why = nullptr) {
  static std::once_flag once;
  static const Table* loaded = nullptr;
  static std::string reason;
  std::call_once(once, [&] { loaded = static_cast<const Table*>(load_plugin(file, entry, version, global, reason)); });
  if (why) *why = reason;
  return loaded;
}

/// find_plugin_table, for a part a command cannot run without: throws PlanError "`what` is not
/// available: <why>" when the plugin cannot load.
template <class Table>
[[nodiscard]] const Table& plugin_table(const char* file, const char* entry, int version, bool global, const char* what) {
  std::string why;
  const Table* table = find_plugin_table<Table>(file, entry, version, global, &why);
  if (!table) throw PlanError(std::string(what) + " is not available: " + why);
  return *table;
}

}  // namespace parasim
