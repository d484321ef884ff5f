#include "sim/work/weight_gathers.hpp"

#include <algorithm>

#include "strategies/memory.hpp"

namespace parasim::sim {
namespace {

/// Layers ZeRO-3 gathers ahead of the one computing (strategies/memory.hpp budgets them).
constexpr auto kPrefetchLayers = static_cast<std::size_t>(strategies::kZero3PrefetchLayers);

}  // namespace

void WeightGathers::start(ProgramBuilder& pb) {
  for (std::size_t k = 0; k <= kPrefetchLayers && k < order_.size(); ++k) issue(pb, k, std::nullopt);
}

void WeightGathers::enter(ProgramBuilder& pb, std::int32_t layer) {
  const auto it = std::find(order_.begin(), order_.end(), layer);
  if (it == order_.end()) return;  // a layer without weights (or no ZeRO-3): its work may join the previous layer's
  pb.flush();
  const auto k = static_cast<std::size_t>(it - order_.begin());
  if (k >= 1 && k + kPrefetchLayers < order_.size()) issue(pb, k + kPrefetchLayers, last_work_item(pb));
  pb.depend_on(gather_item_.at(layer));
}

void WeightGathers::issue(ProgramBuilder& pb, std::size_t k, std::optional<std::uint32_t> after) {
  const std::uint32_t item = pb.collective(CollectiveKind::AllGather, axes_, bytes_[k], Category::GradientComm, names_[k] + " weights", false);
  if (after) pb.add_dependency(item, *after);
  gather_item_[order_[k]] = item;
  gathers_.insert(item);
}

std::optional<std::uint32_t> WeightGathers::last_work_item(const ProgramBuilder& pb) const {
  for (std::size_t i = pb.item_count(); i-- > 0;)
    if (!gathers_.count(static_cast<std::uint32_t>(i))) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

}  // namespace parasim::sim
