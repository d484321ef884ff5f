#include "sim/cluster.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/format.hpp"

namespace parasim::sim {
namespace {

constexpr std::int64_t kMaxTorusDims = 6;

template <typename Map>
std::vector<std::string> names_of(const Map& map) {
  std::vector<std::string> names;
  for (const auto& [name, value] : map) names.push_back(name);
  return names;
}

std::string unknown(const std::string& what, const std::string& name, const std::vector<std::string>& known) {
  return "unknown " + what + " \"" + name + "\"" + did_you_mean(name, known) + "; expected one of " + quoted_list(known);
}

/// Gbit/s per direction → bytes/s.
double gbps_to_bytes_per_s(double gbps) { return gbps * 1e9 / 8; }

std::optional<ClusterProblem> check_override(const std::string& pointer, const std::optional<double>& bandwidth_gbps,
                                             const std::optional<double>& latency_us) {
  if (bandwidth_gbps && !(std::isfinite(*bandwidth_gbps) && *bandwidth_gbps > 0))
    return ClusterProblem{pointer + "/bandwidth_gbps", "found " + format_number(*bandwidth_gbps) + ", expected a bandwidth > 0 Gbit/s"};
  if (latency_us && !(std::isfinite(*latency_us) && *latency_us >= 0))
    return ClusterProblem{pointer + "/latency_us", "found " + format_number(*latency_us) + ", expected a latency >= 0 us"};
  return std::nullopt;
}

/// The most balanced factorisation of n into `k` factors (smallest largest factor, then the
/// lexicographically largest smallest factors), ascending: 64,3 → {4,4,4}; 128,3 → {4,4,8}; 8,2 → {2,4}.
std::vector<std::int64_t> balanced_dims(std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> best;
  std::vector<std::int64_t> current;
  // Depth-first over non-decreasing factor lists; device counts are at most a few tens of thousands.
  auto better = [](const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
    if (b.empty()) return true;
    if (a.back() != b.back()) return a.back() < b.back();
    return a > b;
  };
  auto search = [&](auto&& self, std::int64_t rest, std::int64_t min_factor, std::int64_t left) -> void {
    if (left == 1) {
      if (rest >= min_factor) {
        current.push_back(rest);
        if (better(current, best)) best = current;
        current.pop_back();
      }
      return;
    }
    for (std::int64_t f = min_factor; f <= rest; ++f) {
      if (rest % f) continue;
      // The remaining left-1 factors are each >= f, so f^(left-1) must divide into rest / f.
      std::int64_t need = 1;
      for (std::int64_t i = 0; i < left - 1 && need <= rest / f; ++i) need *= f;
      if (need > rest / f) break;
      current.push_back(f);
      self(self, rest / f, f, left - 1);
      current.pop_back();
    }
  };
  search(search, n, 1, k);
  return best;
}

Link resolve_link(const LinkProfile& profile, const std::optional<double>& bandwidth_gbps, const std::optional<double>& latency_us) {
  Link link;
  link.name = profile.name;
  link.bandwidth_bytes_per_s = bandwidth_gbps ? gbps_to_bytes_per_s(*bandwidth_gbps) : profile.bandwidth_bytes_per_s;
  link.latency_s = latency_us ? *latency_us * 1e-6 : profile.latency_s;
  link.efficiency = profile.efficiency;
  link.collective_efficiency = profile.collective_efficiency;
  // A latency the scenario states replaces the profile's per-protocol figures.
  if (!latency_us) link.protocols = profile.protocols;
  return link;
}

}  // namespace

double Cluster::inter_bandwidth_per_device() const {
  if (devices_per_node <= 0) return 0;
  return static_cast<double>(nics_per_node) * inter.bandwidth_bytes_per_s / static_cast<double>(devices_per_node);
}

std::int64_t Cluster::pcie_switch_of(std::int64_t device) const {
  return local_index(device) * pcie_switches / devices_per_node;
}

std::int64_t Cluster::nic_of(std::int64_t device) const { return local_index(device) * nics_per_node / devices_per_node; }

std::int64_t Cluster::site_of_node(std::int64_t node) const { return node / (nodes / sites); }

namespace {
std::int64_t leaves_per_site(const Cluster& c) { return (c.nodes / c.sites + c.nodes_per_leaf - 1) / c.nodes_per_leaf; }
std::int64_t rails(const Cluster& c) { return c.rail_optimized ? c.nics_per_node : 1; }
}  // namespace

std::int64_t Cluster::leaf_count() const { return sites * leaves_per_site(*this) * rails(*this); }

std::int64_t Cluster::leaf_of(std::int64_t device) const {
  const std::int64_t node = node_of(device);
  const std::int64_t site = site_of_node(node);
  const std::int64_t group = (node - site * (nodes / sites)) / nodes_per_leaf;
  const std::int64_t rail = rail_optimized ? nic_of(device) : 0;
  return (site * leaves_per_site(*this) + group) * rails(*this) + rail;
}

std::int64_t Cluster::leaf_ports(std::int64_t leaf) const {
  const std::int64_t group = (leaf / rails(*this)) % leaves_per_site(*this);
  const std::int64_t site_nodes = nodes / sites;
  const std::int64_t members = std::min(nodes_per_leaf, site_nodes - group * nodes_per_leaf);
  return members * (rail_optimized ? 1 : nics_per_node);
}

double Cluster::leaf_uplink_bandwidth(std::int64_t leaf) const {
  return static_cast<double>(leaf_ports(leaf)) * inter.bandwidth_bytes_per_s / oversubscription;
}

std::vector<std::int64_t> Cluster::torus_coordinates(std::int64_t device) const {
  PARASIM_CHECK(!torus_dims.empty(), "torus coordinates asked of a cluster without a torus");
  PARASIM_CHECK(device >= 0 && device < device_count(), "device " + std::to_string(device) + " out of range");
  std::vector<std::int64_t> coords;
  coords.reserve(torus_dims.size());
  for (const std::int64_t dim : torus_dims) {
    coords.push_back(device % dim);
    device /= dim;
  }
  return coords;
}

std::optional<ClusterProblem> check_cluster_spec(const ClusterSpec& spec, const Profile& profile) {
  if (!profile.devices.count(spec.device)) return ClusterProblem{"/device", unknown("device", spec.device, names_of(profile.devices))};
  const DeviceProfile& device = profile.device(spec.device);
  if (spec.nodes < 1) return ClusterProblem{"/nodes", "found " + std::to_string(spec.nodes) + ", expected at least 1 node"};
  if (spec.devices_per_node < 1)
    return ClusterProblem{"/devices_per_node", "found " + std::to_string(spec.devices_per_node) + ", expected at least 1 device per node"};
  if (spec.nodes > std::numeric_limits<std::int32_t>::max() / spec.devices_per_node)
    return ClusterProblem{"/nodes", "found " + std::to_string(spec.nodes) + " nodes of " + std::to_string(spec.devices_per_node) +
                                        " devices, more devices than parasim can simulate"};
  const auto link_names = names_of(profile.links);

  // Heterogeneous nodes: groups that cover the nodes exactly, each of a known device.
  if (!spec.node_groups.empty()) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < spec.node_groups.size(); ++i) {
      const NodeGroupSpec& g = spec.node_groups[i];
      const std::string at = "/node_groups/" + std::to_string(i);
      if (g.nodes < 1) return ClusterProblem{at + "/nodes", "found " + std::to_string(g.nodes) + ", expected at least 1 node"};
      if (!g.device.empty() && !profile.devices.count(g.device))
        return ClusterProblem{at + "/device", unknown("device", g.device, names_of(profile.devices))};
      if (!(std::isfinite(g.speed_factor) && g.speed_factor > 0))
        return ClusterProblem{at + "/speed_factor", "found " + format_number(g.speed_factor) + ", expected a speed factor > 0"};
      // Capped so that no sum of absurd counts overflows; any total above `nodes` is wrong anyway.
      total = std::min(total + g.nodes, spec.nodes + 1);
    }
    if (total != spec.nodes)
      return ClusterProblem{"/node_groups", "the node groups hold " + std::string(total > spec.nodes ? "more than " : "") +
                                                std::to_string(std::min(total, spec.nodes)) + " nodes, but the cluster has " +
                                                std::to_string(spec.nodes) + " (nodes); the groups must cover every node once"};
  }
  for (std::size_t i = 0; i < spec.stragglers.size(); ++i) {
    const StragglerSpec& st = spec.stragglers[i];
    const std::string at = "/stragglers/" + std::to_string(i);
    if (st.device < 0 || st.device >= spec.device_count())
      return ClusterProblem{at + "/device", "found device " + std::to_string(st.device) + ", but the cluster's devices are 0 to " +
                                                std::to_string(spec.device_count() - 1)};
    if (!(std::isfinite(st.speed_factor) && st.speed_factor > 0))
      return ClusterProblem{at + "/speed_factor", "found " + format_number(st.speed_factor) + ", expected a speed factor > 0"};
  }

  // Intra-node link: crossed only when a node holds more than one device.
  const std::string intra = spec.intra_node.link.empty() ? device.default_intra_link : spec.intra_node.link;
  if (!spec.intra_node.link.empty() && !profile.links.count(spec.intra_node.link))
    return ClusterProblem{"/intra_node/link", unknown("link", spec.intra_node.link, link_names)};
  if (intra.empty() && spec.devices_per_node > 1)
    return ClusterProblem{"/intra_node/link", "device \"" + spec.device + "\" has no default intra-node link; name one (" +
                                                  quoted_list(link_names) + ")"};
  if (auto p = check_override("/intra_node", spec.intra_node.bandwidth_gbps, spec.intra_node.latency_us)) return p;
  const bool pcie = spec.intra_node.kind == IntraNodeKind::PCIe;
  if (spec.intra_node.pcie_switches != 1 && !pcie)
    return ClusterProblem{"/intra_node/pcie_switches", "pcie_switches applies only to a \"pcie\" node"};
  if (spec.intra_node.host_bridge_gbps && !pcie)
    return ClusterProblem{"/intra_node/host_bridge_gbps", "host_bridge_gbps applies only to a \"pcie\" node"};
  if (spec.intra_node.pcie_switches < 1 || spec.intra_node.pcie_switches > spec.devices_per_node ||
      spec.devices_per_node % spec.intra_node.pcie_switches != 0)
    return ClusterProblem{"/intra_node/pcie_switches", "found " + std::to_string(spec.intra_node.pcie_switches) +
                                                           " PCIe switches, expected a count that splits the node's " +
                                                           std::to_string(spec.devices_per_node) + " devices evenly"};
  if (auto p = check_override("/intra_node/host_bridge", spec.intra_node.host_bridge_gbps, std::nullopt))
    return ClusterProblem{"/intra_node/host_bridge_gbps", p->message};
  if (!spec.intra_node.nvls_link.empty()) {
    if (pcie) return ClusterProblem{"/intra_node/nvls_link", "nvls_link applies only to an \"nvswitch\" node (NVLink SHARP is the NVSwitch's)"};
    if (!profile.links.count(spec.intra_node.nvls_link))
      return ClusterProblem{"/intra_node/nvls_link", unknown("link", spec.intra_node.nvls_link, link_names)};
  }

  // Inter-node network.
  const InterNodeSpec& net = spec.inter_node;
  const bool torus = net.kind == InterNodeKind::Torus;
  if (net.kind == InterNodeKind::None && spec.nodes > 1)
    return ClusterProblem{"/inter_node/kind", "a cluster of " + std::to_string(spec.nodes) +
                                                  " nodes needs an inter-node network; without one it may have 1 node only"};
  const std::string inter = net.link.empty() ? device.default_inter_link : net.link;
  if (!net.link.empty() && !profile.links.count(net.link)) return ClusterProblem{"/inter_node/link", unknown("link", net.link, link_names)};
  if (inter.empty() && (spec.nodes > 1 || torus))
    return ClusterProblem{"/inter_node/link", "device \"" + spec.device + "\" has no default inter-node link; name one (" +
                                                  quoted_list(link_names) + ")"};
  if (auto p = check_override("/inter_node", net.bandwidth_gbps, net.latency_us)) return p;
  if (net.nics_per_node < 0)
    return ClusterProblem{"/inter_node/nics_per_node",
                          "found " + std::to_string(net.nics_per_node) + ", expected a NIC count >= 0 (0 = one per device)"};
  if (!(std::isfinite(net.oversubscription) && net.oversubscription >= 1))
    return ClusterProblem{"/inter_node/oversubscription",
                          "found " + format_number(net.oversubscription) + ", expected an oversubscription factor >= 1 (1 = non-blocking)"};

  if (net.nodes_per_leaf < 1)
    return ClusterProblem{"/inter_node/nodes_per_leaf", "found " + std::to_string(net.nodes_per_leaf) + ", expected at least 1 node per leaf switch"};
  if (net.kind != InterNodeKind::FatTree && net.nodes_per_leaf != 1)
    return ClusterProblem{"/inter_node/nodes_per_leaf", "nodes_per_leaf applies only to a fat-tree inter-node network"};
  if (net.kind != InterNodeKind::FatTree && net.sharp)
    return ClusterProblem{"/inter_node/sharp", "sharp (InfiniBand SHARP in-network reduction) applies only to a fat-tree inter-node network"};

  // Sites joined by a WAN.
  if (spec.wan) {
    const WanSpec& w = *spec.wan;
    if (net.kind != InterNodeKind::FatTree)
      return ClusterProblem{"/wan", "a WAN joins fat-tree sites; this cluster's inter-node network is not a fat-tree"};
    if (w.sites < 1 || w.sites > spec.nodes || spec.nodes % w.sites != 0)
      return ClusterProblem{"/wan/sites", "found " + std::to_string(w.sites) + " sites, expected a count that splits the cluster's " +
                                              std::to_string(spec.nodes) + " nodes evenly"};
    if (auto p = check_override("/wan", w.bandwidth_gbps, w.latency_us)) return p;
  }

  // Torus shape.
  if (!torus && !net.torus_dims.empty())
    return ClusterProblem{"/inter_node/torus_dims", "torus_dims applies only to a torus inter-node network"};
  if (!torus && net.torus_ndims != 0)
    return ClusterProblem{"/inter_node/torus_ndims", "torus_ndims applies only to a torus inter-node network"};
  if (torus) {
    if (net.torus_dims.empty()) {
      if (net.torus_ndims < 1 || net.torus_ndims > kMaxTorusDims)
        return ClusterProblem{"/inter_node/torus_dims", "a torus needs torus_dims (chips per dimension) or torus_ndims (1 to " +
                                                            std::to_string(kMaxTorusDims) + " dimensions)"};
    } else {
      if (static_cast<std::int64_t>(net.torus_dims.size()) > kMaxTorusDims)
        return ClusterProblem{"/inter_node/torus_dims", "found " + std::to_string(net.torus_dims.size()) +
                                                            " dimensions, expected at most " + std::to_string(kMaxTorusDims)};
      std::int64_t product = 1;
      for (std::size_t i = 0; i < net.torus_dims.size(); ++i) {
        const std::int64_t d = net.torus_dims[i];
        if (d < 1 || d > spec.device_count())
          return ClusterProblem{"/inter_node/torus_dims/" + std::to_string(i),
                                "found " + std::to_string(d) + ", expected between 1 and the device count " + std::to_string(spec.device_count())};
        product *= d;
        if (product > spec.device_count()) break;
      }
      if (product != spec.device_count()) {
        std::string shape;
        for (std::size_t i = 0; i < net.torus_dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(net.torus_dims[i]);
        return ClusterProblem{"/inter_node/torus_dims", "a " + shape + " torus does not hold the cluster's " + std::to_string(spec.device_count()) +
                                                            " devices (" + std::to_string(spec.nodes) + " nodes x " +
                                                            std::to_string(spec.devices_per_node) + ")"};
      }
    }
  }

  // Collective algorithms: one each kind has (sim/collectives.hpp), fitting the network.
  using A = CollectiveAlgorithm;
  const struct {
    const char* key;
    CollectiveAlgorithm algorithm;
    std::vector<CollectiveAlgorithm> allowed;
  } kinds[] = {
      {"all_reduce", spec.algorithms.all_reduce, {A::Auto, A::Ring, A::Tree, A::Hierarchical, A::TorusRings, A::Nvls, A::NvlsTree, A::CollNet}},
      {"reduce_scatter", spec.algorithms.reduce_scatter, {A::Auto, A::Ring, A::Hierarchical, A::TorusRings}},
      {"all_gather", spec.algorithms.all_gather, {A::Auto, A::Ring, A::Hierarchical, A::TorusRings}},
      {"broadcast", spec.algorithms.broadcast, {A::Auto, A::Ring}},
  };
  for (const auto& k : kinds) {
    const std::string at = std::string("/algorithms/") + k.key;
    const std::string name(to_string(k.algorithm));
    if (std::find(k.allowed.begin(), k.allowed.end(), k.algorithm) == k.allowed.end()) {
      std::vector<std::string> allowed;
      for (const CollectiveAlgorithm a : k.allowed) allowed.emplace_back(to_string(a));
      return ClusterProblem{at, std::string(k.key) + " has no " + name + " algorithm; expected one of " + quoted_list(allowed)};
    }
    if (k.algorithm == A::TorusRings && !torus)
      return ClusterProblem{at, "torus-rings applies only to a torus inter-node network"};
    if ((k.algorithm == A::Tree || k.algorithm == A::Hierarchical) && torus)
      return ClusterProblem{at, name + " applies only to a switched (fat-tree) network; on a torus use ring or torus-rings"};
    if ((k.algorithm == A::Nvls || k.algorithm == A::NvlsTree) && spec.intra_node.nvls_link.empty())
      return ClusterProblem{at, name + " needs NVSwitch nodes with NVLink SHARP: name their intra_node.nvls_link"};
    if (k.algorithm == A::CollNet && !net.sharp)
      return ClusterProblem{at, "collnet needs a fat-tree with InfiniBand SHARP: set inter_node.sharp"};
  }
  return std::nullopt;
}

double rank_spread_slowdown(const DeviceProfile& device, std::size_t devices) {
  return devices >= 2 ? std::max(1.0, device.rank_spread.slowest_over_mean) : 1.0;
}

const std::string& shared_host_entry(const Profile& profile, const std::string& kind, std::int64_t devices_per_node) {
  const DeviceProfile& device = profile.device(kind);
  return devices_per_node >= 2 && device.shared_host.ranks > 0 ? device.shared_host.device : kind;
}

Cluster build_cluster(const ClusterSpec& spec, const Profile& profile) {
  if (auto problem = check_cluster_spec(spec, profile))
    PARASIM_CHECK(false, "build_cluster on an unchecked spec: at " + problem->pointer + ": " + problem->message);
  const DeviceProfile& device = profile.device(spec.device);
  Cluster c;
  c.nodes = spec.nodes;
  c.devices_per_node = spec.devices_per_node;
  c.devices.reserve(static_cast<std::size_t>(spec.device_count()));
  for (std::int64_t id = 0; id < spec.device_count(); ++id) c.devices.push_back(Device{id, id / spec.devices_per_node, spec.device, 1, ""});
  std::int64_t first_node = 0;
  for (const NodeGroupSpec& g : spec.node_groups) {
    for (std::int64_t node = first_node; node < first_node + g.nodes; ++node) {
      for (std::int64_t i = 0; i < spec.devices_per_node; ++i) {
        Device& d = c.devices[static_cast<std::size_t>(node * spec.devices_per_node + i)];
        if (!g.device.empty()) d.kind = g.device;
        d.speed_factor = g.speed_factor;
      }
    }
    first_node += g.nodes;
  }
  for (const StragglerSpec& st : spec.stragglers) c.devices[static_cast<std::size_t>(st.device)].speed_factor *= st.speed_factor;
  // The ranks of one host share its memory bandwidth and last level cache: on a node of two devices
  // or more, a kind measured with its host's ranks running at once is priced by that measurement.
  for (Device& d : c.devices)
    if (const std::string& entry = shared_host_entry(profile, d.kind, spec.devices_per_node); entry != d.kind) d.priced_as = entry;
  // Ranks in step run at the slower one's pace: where the device kind's profile measured how far
  // apart its ranks run the same work (DeviceProfile::rank_spread), every device of a cluster of two
  // or more runs that much slower. The expected slowest of n ranks whose speeds scatter by σ is
  // μ(1 + σ·e_n), e_2 = 1/√π (Tippett 1925, the expected largest of n standard normals); the factor
  // is measured at the calibration's rank count and applied as measured.
  for (Device& d : c.devices) d.speed_factor /= rank_spread_slowdown(profile.device(d.figures()), c.devices.size());
  c.intra_kind = spec.intra_node.kind;
  c.inter_kind = spec.inter_node.kind;
  const std::string intra = spec.intra_node.link.empty() ? device.default_intra_link : spec.intra_node.link;
  if (!intra.empty()) c.intra = resolve_link(profile.link(intra), spec.intra_node.bandwidth_gbps, spec.intra_node.latency_us);
  const std::string inter = spec.inter_node.link.empty() ? device.default_inter_link : spec.inter_node.link;
  if (!inter.empty() && (spec.inter_node.kind != InterNodeKind::None))
    c.inter = resolve_link(profile.link(inter), spec.inter_node.bandwidth_gbps, spec.inter_node.latency_us);
  // A torus chip drives its own links: one torus link's bandwidth per device.
  c.nics_per_node = (spec.inter_node.nics_per_node == 0 || spec.inter_node.kind == InterNodeKind::Torus) ? spec.devices_per_node
                                                                                                          : spec.inter_node.nics_per_node;
  c.oversubscription = spec.inter_node.oversubscription;
  c.nodes_per_leaf = spec.inter_node.nodes_per_leaf;
  c.pcie_switches = spec.intra_node.pcie_switches;
  // A switch's uplink is, unless stated, one link of the devices' kind (a x16 link for a x16 device).
  c.host_bridge = Link{"host-bridge", spec.intra_node.host_bridge_gbps ? gbps_to_bytes_per_s(*spec.intra_node.host_bridge_gbps)
                                                                      : c.intra.bandwidth_bytes_per_s,
                       0, c.intra.efficiency, {}, c.intra.collective_efficiency};
  if (spec.wan) {
    c.sites = spec.wan->sites;
    c.wan = Link{"wan", gbps_to_bytes_per_s(spec.wan->bandwidth_gbps), spec.wan->latency_us * 1e-6, c.inter.efficiency, {}, c.inter.collective_efficiency};
  }
  c.rail_optimized = spec.inter_node.rail_optimized;
  if (spec.inter_node.kind == InterNodeKind::Torus)
    c.torus_dims = spec.inter_node.torus_dims.empty() ? balanced_dims(spec.device_count(), spec.inter_node.torus_ndims)
                                                      : spec.inter_node.torus_dims;
  c.torus_wraparound = spec.inter_node.torus_wraparound;
  // The in-switch reduction keeps its profile's figures: an intra-node bandwidth override changes
  // the ring's link, not what the switch's reduction engines achieve.
  if (!spec.intra_node.nvls_link.empty()) c.nvls = resolve_link(profile.link(spec.intra_node.nvls_link), std::nullopt, std::nullopt);
  c.sharp = spec.inter_node.sharp;
  c.algorithms = spec.algorithms;
  return c;
}

namespace {

ClusterSpec dgx(const std::string& device, const std::string& nvlink, const std::string& nic) {
  ClusterSpec s;
  s.device = device;
  s.nodes = 1;
  s.devices_per_node = 8;
  s.intra_node.kind = IntraNodeKind::NVSwitch;
  s.intra_node.link = nvlink;
  s.inter_node.kind = InterNodeKind::FatTree;
  s.inter_node.link = nic;
  s.inter_node.nics_per_node = 8;  // one NIC per GPU
  s.inter_node.oversubscription = 1;
  s.inter_node.rail_optimized = true;
  return s;
}

ClusterSpec tpu(const std::string& device, const std::string& ici, std::int64_t chips_per_host, std::int64_t ndims) {
  ClusterSpec s;
  s.device = device;
  s.nodes = 1;
  s.devices_per_node = chips_per_host;
  // Chips of one host are torus neighbours like any others: the intra-node link is the same ICI
  // link, and the torus collectives never use the host grouping.
  s.intra_node.kind = IntraNodeKind::NVSwitch;
  s.intra_node.link = ici;
  s.inter_node.kind = InterNodeKind::Torus;
  s.inter_node.link = ici;
  s.inter_node.nics_per_node = 0;
  s.inter_node.rail_optimized = false;
  s.inter_node.torus_ndims = ndims;
  s.inter_node.torus_wraparound = true;
  return s;
}

const std::map<std::string, ClusterSpec>& presets() {
  static const std::map<std::string, ClusterSpec> table = [] {
    std::map<std::string, ClusterSpec> t;
    // NVIDIA DGX A100: 8 GPUs on NVSwitch (NVLink3), 8 single-port HDR 200 Gb/s HCAs, and in a
    // SuperPOD a rail-optimised non-blocking fat-tree; the superpod name is the same node model.
    t["dgx-a100"] = dgx("a100-80gb", "nvlink3", "ib-hdr");
    // NVIDIA DGX SuperPOD (A100) reference architecture: scalable units of 20 nodes, one leaf switch
    // per rail per unit (QM8790: 20 ports down, 20 up).
    t["dgx-a100"].inter_node.nodes_per_leaf = 20;
    t["dgx-a100-superpod"] = t["dgx-a100"];
    t["dgx-a100-40gb"] = t["dgx-a100"];
    t["dgx-a100-40gb"].device = "a100-40gb";
    // DGX H100 / H200: NVLink4 through NVSwitch, 8 ConnectX-7 NDR 400 Gb/s.
    t["dgx-h100"] = dgx("h100-sxm", "nvlink4", "ib-ndr");
    // NVIDIA DGX SuperPOD (H100) reference architecture: scalable units of 32 nodes, one leaf switch
    // per rail per unit (QM9700: 32 ports down, 32 up).
    t["dgx-h100"].inter_node.nodes_per_leaf = 32;
    t["dgx-h100-superpod"] = t["dgx-h100"];
    t["dgx-h200"] = dgx("h200", "nvlink4", "ib-ndr");
    // DGX B200: NVLink5, 8 ConnectX-7 400 Gb/s.
    t["dgx-b200"] = dgx("b200", "nvlink5", "ib-ndr");
    // Their NVSwitches reduce in the network (NVLink SHARP: 3rd-generation NVSwitch on H100/H200, the
    // NVLink 5 switch on B200; NVIDIA H100 Tensor Core GPU Architecture whitepaper, "NVLink SHARP"),
    // which NCCL uses for all-reduce from 2.17 (NVLS, NCCL src/transport/nvls.cc).
    t["dgx-h100"].intra_node.nvls_link = "nvlink4-sharp";
    t["dgx-h100-superpod"].intra_node.nvls_link = "nvlink4-sharp";
    t["dgx-h200"].intra_node.nvls_link = "nvlink4-sharp";
    t["dgx-b200"].intra_node.nvls_link = "nvlink5-sharp";
    // GB200 NVL72: 72 Blackwell GPUs in one NVLink domain (18 NVLink 5 switch chips, 1.8 TB/s per GPU,
    // NVLink SHARP in the switches), which parasim models as one 72-GPU NVSwitch node; racks joined
    // by InfiniBand, one 400 Gb/s ConnectX-7 per GPU (NVIDIA GB200 NVL72 product page,
    // https://www.nvidia.com/en-us/data-center/gb200-nvl72/; NVIDIA DGX GB200 datasheet: 72 OSFP
    // single-port ConnectX-7 VPI, 400 Gb/s InfiniBand, per rack).
    t["gb200-nvl72"] = dgx("gb200", "nvlink5", "ib-ndr");
    t["gb200-nvl72"].devices_per_node = 72;
    t["gb200-nvl72"].inter_node.nics_per_node = 72;
    t["gb200-nvl72"].intra_node.nvls_link = "nvlink5-sharp";
    // DGX-2-like: V100 on a 1st-generation NVSwitch. A real DGX-2 holds 16 GPUs and 8 EDR HCAs; this
    // preset models half of one (8 GPUs, 4 EDR NICs) so that every preset has 8 GPUs a node.
    t["dgx-v100"] = dgx("v100", "nvlink2", "ib-edr");
    t["dgx-v100"].inter_node.nics_per_node = 4;
    // A commodity PCIe server: 8 V100 on PCIe Gen3 without NVLink, one 100 Gb/s Ethernet NIC.
    ClusterSpec pcie = dgx("v100", "pcie3", "ethernet-100");
    pcie.intra_node.kind = IntraNodeKind::PCIe;
    pcie.inter_node.nics_per_node = 1;
    pcie.inter_node.rail_optimized = false;
    t["pcie-v100"] = pcie;
    // TPU pods (Google Cloud TPU docs): v4 and v5p hosts drive 4 chips in a 3D torus; v5e hosts 8
    // chips (hardware-specs.json TPU_v5e.chips_per_host) in a 2D torus.
    t["tpu-v4-pod"] = tpu("tpu-v4", "ici-v4", 4, 3);
    t["tpu-v5e-pod"] = tpu("tpu-v5e", "ici-v5e", 8, 2);
    t["tpu-v5p-pod"] = tpu("tpu-v5p", "ici-v5p", 4, 3);
    return t;
  }();
  return table;
}

}  // namespace

std::optional<ClusterSpec> cluster_preset(const std::string& name) {
  auto it = presets().find(name);
  if (it == presets().end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> cluster_preset_names() { return names_of(presets()); }

}  // namespace parasim::sim
