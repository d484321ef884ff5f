#include "sim/work/weight_gathers.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace parasim::sim {

WeightGathers::WeightGathers(AxisSet axes, std::vector<GatherUnitWork> units, const strategies::Implementation& implementation)
    : axes_(std::move(axes)), units_(std::move(units)), implementation_(implementation), item_of_unit_(units_.size(), 0) {
  for (std::size_t k = 0; k < units_.size(); ++k) {
    auto [it, inserted] = layer_units_.try_emplace(units_[k].layer, k, k + 1);
    if (!inserted) {
      PARASIM_CHECK(it->second.second == k, "a layer's gather units must be consecutive");
      it->second.second = k + 1;
    }
  }
}

std::size_t WeightGathers::prefetch_end(std::size_t end) const {
  if (implementation_.synchronous) return end;
  std::size_t last = end;
  double elements = 0;
  for (std::size_t k = end; k < units_.size(); ++k) {
    const bool within_units = static_cast<std::int64_t>(k - end) < implementation_.prefetch_units;
    const bool within_budget = elements + units_[k].elements <= implementation_.prefetch_elements;
    if (!within_units && !within_budget) break;
    elements += units_[k].elements;
    last = k + 1;
  }
  return last;
}

std::uint32_t WeightGathers::gather(ProgramBuilder& pb, const GatherUnitWork& u, const char* what) {
  // A synchronous gather sits in the compute chain; an asynchronous one runs beside it.
  const std::uint32_t item =
      pb.collective(CollectiveKind::AllGather, axes_, u.bytes, Category::GradientComm, u.name + what, implementation_.synchronous);
  pb.copies_per_rank(item, implementation_.copies_per_rank);
  gathers_.insert(item);
  return item;
}

void WeightGathers::issue_to(ProgramBuilder& pb, std::size_t end, std::optional<std::uint32_t> after) {
  for (; issued_ < end; ++issued_) {
    const std::uint32_t item = gather(pb, units_[issued_], " weights");
    if (after && !implementation_.synchronous) pb.add_dependency(item, *after);
    item_of_unit_[issued_] = item;
  }
}

void WeightGathers::start(ProgramBuilder& pb) {
  if (units_.empty() || implementation_.synchronous) return;
  const auto& [begin, end] = layer_units_.at(units_.front().layer);
  (void)begin;
  issue_to(pb, prefetch_end(end), std::nullopt);
}

void WeightGathers::enter(ProgramBuilder& pb, std::int32_t layer) {
  const auto it = layer_units_.find(layer);
  if (it == layer_units_.end()) return;  // a layer without gathered weights: its work may join the previous layer's
  pb.flush();
  const auto [begin, end] = it->second;
  // Units issued now start once the previous layer's work has finished and freed its weights.
  issue_to(pb, prefetch_end(end), last_work_item(pb));
  if (implementation_.synchronous) return;  // the layer's work follows its gathers in the chain
  for (std::size_t k = begin; k < end; ++k) pb.depend_on(item_of_unit_[k]);
}

void WeightGathers::regather(ProgramBuilder& pb, std::int32_t layer) {
  const auto it = layer_units_.find(layer);
  if (it == layer_units_.end()) return;
  const auto [begin, end] = it->second;
  double elements = 0;
  for (std::size_t k = begin; k < end; ++k) elements += units_[k].elements;
  if (elements <= implementation_.max_reuse_elements) return;
  pb.flush();
  for (std::size_t k = begin; k < end; ++k) {
    const std::uint32_t item = gather(pb, units_[k], " weights again");
    if (!implementation_.synchronous) pb.depend_on(item);
  }
}

std::optional<std::uint32_t> WeightGathers::last_work_item(const ProgramBuilder& pb) const {
  for (std::size_t i = pb.item_count(); i-- > 0;)
    if (!gathers_.count(static_cast<std::uint32_t>(i))) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

}  // namespace parasim::sim
