#include "exec/compute_activity.hpp"

#include <atomic>

namespace parasim::exec {

namespace {
std::atomic<int> g_running{0};
}

bool computing() { return g_running.load(std::memory_order_relaxed) > 0; }

Computing::Computing() { g_running.fetch_add(1, std::memory_order_relaxed); }

Computing::~Computing() { g_running.fetch_sub(1, std::memory_order_relaxed); }

}  // namespace parasim::exec
