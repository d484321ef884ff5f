#pragma once
/// A logical device mesh with named axes (GSPMD / JAX style). Axes are listed outermost first; the
/// innermost axis varies fastest over device ids, so with the default order {pp, dp, tp} a
/// tensor-parallel group is a run of consecutive devices and stays inside a node.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace parasim::strategies {

/// What a mesh axis is for. The lowering decides streams and time categories from the role, never
/// from the axis's name (names are for people: they appear only in plans, labels and JSON).
enum class AxisRole : std::uint8_t {
  Data,      ///< data parallel: replicas reduce their gradients over it
  Tensor,    ///< tensor (and sequence) parallel
  Pipeline,  ///< pipeline stages
  Expert,    ///< expert parallel: a sub-axis of data parallelism that splits the MoE experts
  Context,   ///< context parallel: the sequence split across devices (reserved)
  Site,      ///< sites of a federated or multi-data-centre plan (reserved)
};

struct MeshAxis {
  std::string name;
  std::int64_t size = 1;
  AxisRole role = AxisRole::Data;
  bool operator==(const MeshAxis&) const = default;
};

struct DeviceMesh {
  std::vector<MeshAxis> axes;
  bool operator==(const DeviceMesh&) const = default;

  [[nodiscard]] std::int64_t device_count() const;
  /// Index of the axis named `name`, or -1.
  [[nodiscard]] int axis_index(std::string_view name) const;
  [[nodiscard]] std::int64_t axis_size(std::string_view name) const;  ///< 1 when absent
  /// Mesh coordinates of a device (one per axis).
  [[nodiscard]] std::vector<std::int64_t> coords_of(std::int64_t device) const;
  [[nodiscard]] std::int64_t device_at(std::span<const std::int64_t> coords) const;
  /// The group containing `device` that varies along the given axes (others fixed), ascending ids.
  [[nodiscard]] std::vector<std::int64_t> group_of(std::int64_t device, std::span<const int> axes) const;
  /// Every such group, each ascending, ordered by their first device.
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(std::span<const int> axes) const;
};

}  // namespace parasim::strategies
