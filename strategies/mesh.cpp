#include "strategies/mesh.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace parasim::strategies {

std::int64_t DeviceMesh::device_count() const {
  std::int64_t n = 1;
  for (const auto& a : axes) n *= a.size;
  return n;
}

int DeviceMesh::axis_index(std::string_view name) const {
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::int64_t DeviceMesh::axis_size(std::string_view name) const {
  const int i = axis_index(name);
  return i < 0 ? 1 : axes[static_cast<std::size_t>(i)].size;
}

std::vector<std::int64_t> DeviceMesh::coords_of(std::int64_t device) const {
  std::vector<std::int64_t> c(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    c[i] = device % axes[i].size;
    device /= axes[i].size;
  }
  return c;
}

std::int64_t DeviceMesh::device_at(std::span<const std::int64_t> coords) const {
  PARASIM_CHECK(coords.size() == axes.size(), "mesh coordinate rank");
  std::int64_t d = 0;
  for (std::size_t i = 0; i < axes.size(); ++i) d = d * axes[i].size + coords[i];
  return d;
}

std::vector<std::int64_t> DeviceMesh::group_of(std::int64_t device, std::span<const int> group_axes) const {
  std::vector<std::int64_t> base = coords_of(device);
  for (int a : group_axes) base[static_cast<std::size_t>(a)] = 0;
  std::vector<std::int64_t> out{device_at(base)};
  for (int a : group_axes) {
    const std::int64_t size = axes[static_cast<std::size_t>(a)].size;
    std::vector<std::int64_t> next;
    next.reserve(out.size() * static_cast<std::size_t>(size));
    for (std::int64_t d : out) {
      std::vector<std::int64_t> c = coords_of(d);
      for (std::int64_t k = 0; k < size; ++k) {
        c[static_cast<std::size_t>(a)] = k;
        next.push_back(device_at(c));
      }
    }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<std::int64_t>> DeviceMesh::groups(std::span<const int> group_axes) const {
  std::vector<std::vector<std::int64_t>> out;
  std::vector<char> seen(static_cast<std::size_t>(device_count()), 0);
  for (std::int64_t d = 0; d < device_count(); ++d) {
    if (seen[static_cast<std::size_t>(d)]) continue;
    auto g = group_of(d, group_axes);
    for (std::int64_t m : g) seen[static_cast<std::size_t>(m)] = 1;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace parasim::strategies
