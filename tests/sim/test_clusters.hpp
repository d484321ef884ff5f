#pragma once
/// Small clusters for hand-derived collective tests (tests/sim/collectives_test.cpp and
/// tests/sim/simgrid_backend_test.cpp): every link's efficiency is 1 at every size, so the closed
/// forms of sim/collectives/ hold exactly.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster.hpp"

namespace parasim::testing {

/// A link whose efficiency is 1 at every size.
inline sim::Link flat(const std::string& name, double bandwidth, double latency) {
  return sim::Link{name, bandwidth, latency, sim::EfficiencyCurve{{{1.0, 1.0}}}, {}, {}};
}

/// `nodes` × `per_node` devices on NVSwitch-like nodes (100 GB/s, 1 µs ports) and a rail-optimised
/// fat-tree of one 10 GB/s, 5 µs NIC per device; `nodes_per_leaf` nodes per leaf switch (per rail).
inline sim::Cluster switched(std::int64_t nodes, std::int64_t per_node, double oversubscription = 1, std::int64_t nodes_per_leaf = 1) {
  sim::Cluster c;
  c.nodes = nodes;
  c.devices_per_node = per_node;
  for (std::int64_t id = 0; id < nodes * per_node; ++id) c.devices.push_back(sim::Device{id, id / per_node, "chip", 1, ""});
  c.intra = flat("fast", 100e9, 1e-6);
  c.inter = flat("nic", 10e9, 5e-6);
  c.nics_per_node = per_node;
  c.oversubscription = oversubscription;
  c.nodes_per_leaf = nodes_per_leaf;
  return c;
}

/// switched(nodes, per_node) whose NVSwitches reduce in the network (NVLink SHARP: a 100 GB/s, 2 µs
/// in-switch all-reduce link) and whose fat-tree does too (InfiniBand SHARP).
inline sim::Cluster switched_sharp(std::int64_t nodes, std::int64_t per_node) {
  sim::Cluster c = switched(nodes, per_node);
  c.nvls = flat("in-switch", 100e9, 2e-6);
  c.sharp = true;
  return c;
}

/// A dims[0]×dims[1]×... torus with wraparound, 4 chips a host, 50 GB/s and 1 µs per link and direction.
inline sim::Cluster torus(std::vector<std::int64_t> dims) {
  sim::Cluster c;
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  c.devices_per_node = 4;
  c.nodes = n / 4;
  for (std::int64_t id = 0; id < n; ++id) c.devices.push_back(sim::Device{id, id / 4, "chip", 1, ""});
  c.inter_kind = sim::InterNodeKind::Torus;
  c.intra = flat("ici", 50e9, 1e-6);
  c.inter = flat("ici", 50e9, 1e-6);
  c.nics_per_node = 4;
  c.torus_dims = std::move(dims);
  return c;
}

}  // namespace parasim::testing
