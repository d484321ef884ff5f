#pragma once
/// Whether a simulated step is input-bound, and the fewest loader threads that end it (issue 18):
/// the step is simulated again with loaders that take no time (its copies and broadcasts kept), and
/// with other thread counts.
#include <cstdint>

#include "sim/simulate.hpp"

namespace parasim::sim {

/// A step longer than its unbounded counterpart by more than this share is reported input-bound: the
/// reports print step times to three significant figures, so a smaller difference would not show.
inline constexpr double kInputBoundTolerance = 0.01;
/// The most loader threads per host tried (a host with more cores than this is rare; a step that
/// these many threads do not feed is bound by its storage or its placement).
inline constexpr std::int64_t kMaxLoaderThreads = 1024;

/// Fills `simulation.result.input`'s verdict: simulates the step of `options.input` again with
/// loaders that take no time, and, when the step is input-bound and its placement has several
/// threads, with the fewest threads per host (found by bisection: more threads never slow a step)
/// that bring it within kInputBoundTolerance of that time. Precondition: `simulation` is the
/// simulation of this step with these options, and options.input is set.
void add_input_verdict(Simulation& simulation, const models::Graph& graph, const strategies::Plan& plan, const Cluster& cluster, const Profile& profile,
                       Backend backend, const LowerOptions& options);

}  // namespace parasim::sim
