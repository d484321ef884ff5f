#include "common/plugin.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

namespace parasim {
namespace {

/// The folder the build wrote the plugins to ("" where the build gave none).
std::string plugin_build_dir() {
#ifdef PARASIM_PLUGIN_DIR
  return PARASIM_PLUGIN_DIR;
#else
  return "";
#endif
}

}  // namespace

const void* load_plugin(const std::string& file, const char* entry, int version, bool global, std::string& why) {
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / file);
    candidates.push_back(self.parent_path().parent_path() / file);
  }
  const std::string built = plugin_build_dir();
  if (!built.empty()) candidates.push_back(std::filesystem::path(built) / file);
  for (const auto& path : candidates) {
    if (!std::filesystem::exists(path, ec)) continue;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      why = "cannot load " + path.string() + ": " + ::dlerror();
      return nullptr;
    }
    using Entry = const void* (*)();
    const auto function = reinterpret_cast<Entry>(::dlsym(handle, entry));
    if (!function) {
      why = path.string() + " has no " + entry + " entry: it is not this build's " + file;
      return nullptr;
    }
    const void* table = function();
    if (!table || *static_cast<const int*>(table) != version) {
      why = path.string() + " is another build's " + file + " (its table's version differs)";
      return nullptr;
    }
    why.clear();
    return table;
  }
  why = "this build's " + file + " is not beside the parasim binary" + (built.empty() ? std::string() : " nor in " + built) +
        " (`cmake --build BUILD_FOLDER` builds it with the rest; the README's run command builds the binary alone)";
  return nullptr;
}

}  // namespace parasim
