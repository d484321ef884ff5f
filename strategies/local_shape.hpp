#pragma once
/// Per-device sizes under a sharding: a dim split over axes of total size p has ⌈size / p⌉ elements
/// on each device (uneven splits, such as a padded vocabulary, round up).
#include <cstdint>

#include "models/operator.hpp"
#include "strategies/mesh.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies {

/// Product of the sizes of the given mesh axes.
[[nodiscard]] std::int64_t axes_product(const DeviceMesh& mesh, const std::vector<int>& axes);
[[nodiscard]] std::int64_t local_dim_size(const DeviceMesh& mesh, const OpSharding& sharding, const models::Dim& dim);
[[nodiscard]] std::int64_t local_dim_size(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op,
                                          std::string_view dim);
/// Elements of one of the operator's tensors on one device.
[[nodiscard]] double local_elements(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op,
                                    const models::TensorSpec& tensor);
/// Local points of the iteration space (local FLOPs = flops_per_point × this).
[[nodiscard]] double local_points(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op);

}  // namespace parasim::strategies
