#pragma once
/// When one data-parallel replica may stand for all (the replica shortcut of the analytical backend):
/// only when every replica would simulate exactly as replica 0.
#include "sim/cluster.hpp"
#include "strategies/plan.hpp"

namespace parasim::sim {

/// True when the plan has a data-parallel axis of size > 1 and every device matches its image in
/// replica 0 (the device at the same place of every other mesh axis): the same device kind and
/// speed; every group along another mesh axis takes as long for
/// every collective kind, at a latency-bound and a bandwidth-bound size, as its image in replica 0
/// (collective_time); and a send to the next device along each axis takes as long as its image's.
/// A tensor-parallel group inside one node in replica 0 but across two nodes in another replica
/// (tensor 3 on nodes of 8) takes longer there, and the step waits for the slowest replica: such
/// plans are simulated whole. Leaf switches and torus positions that change no cost do not count.
[[nodiscard]] bool data_parallel_replicas_alike(const strategies::Plan& plan, const Cluster& cluster);

}  // namespace parasim::sim
