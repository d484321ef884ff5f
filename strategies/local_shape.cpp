#include "strategies/local_shape.hpp"

namespace parasim::strategies {

std::int64_t axes_product(const DeviceMesh& mesh, const std::vector<int>& axes) {
  std::int64_t p = 1;
  for (int a : axes) p *= mesh.axes[static_cast<std::size_t>(a)].size;
  return p;
}

std::int64_t local_dim_size(const DeviceMesh& mesh, const OpSharding& sharding, const models::Dim& dim) {
  const std::int64_t parts = axes_product(mesh, sharding.axes_of(dim.name));
  return (dim.size + parts - 1) / parts;
}

std::int64_t local_dim_size(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op, std::string_view dim) {
  const models::Dim* d = op.find_dim(dim);
  return d ? local_dim_size(mesh, sharding, *d) : 1;
}

double local_elements(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op, const models::TensorSpec& tensor) {
  double e = 1;
  for (const auto& d : tensor.dims) e *= static_cast<double>(local_dim_size(mesh, sharding, op, d));
  return e;
}

double local_points(const DeviceMesh& mesh, const OpSharding& sharding, const models::Operator& op) {
  double p = 1;
  for (const auto& d : op.dims) p *= static_cast<double>(local_dim_size(mesh, sharding, d));
  return p;
}

}  // namespace parasim::strategies
