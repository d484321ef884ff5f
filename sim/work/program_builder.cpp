#include "sim/work/program_builder.hpp"

namespace parasim::sim {

void ProgramBuilder::compute(models::OpId op, Pass pass, Category category, const char* prefix) {
  if (open_ && category != category_) flush();
  if (!open_) {
    open_ = true;
    category_ = category;
    label_ = prefix + graph_.op(op).name;
    ops_begin_ = static_cast<std::uint32_t>(step_.ops.size());
  }
  step_.ops.push_back({op, pass});
}

void ProgramBuilder::flush() {
  if (!open_) return;
  WorkItem it;
  it.kind = ItemKind::Compute;
  it.category = category_;
  it.label = std::move(label_);
  it.compute = static_cast<WorkId>(step_.computes.size());
  step_.computes.push_back({ops_begin_, static_cast<std::uint32_t>(step_.ops.size()), -1});
  it.extra_deps = std::move(pending_extra_);
  it.grads = std::move(pending_grads_);
  program_.items.push_back(std::move(it));
  pending_extra_.clear();
  pending_grads_.clear();
  open_ = false;
}

std::uint32_t ProgramBuilder::collective(CollectiveKind kind, AxisSet axes, double bytes, Category category, const std::string& what,
                                         bool chained) {
  if (chained) flush();
  WorkItem it;
  it.kind = ItemKind::Collective;
  it.chained = chained;
  it.collective = kind;
  it.axes = std::move(axes);
  it.bytes = bytes;
  it.category = category;
  std::string axes_name;
  for (int a : it.axes) axes_name += (axes_name.empty() ? "" : "+") + mesh_.axes[static_cast<std::size_t>(a)].name;
  it.label = std::string(to_string(kind)) + " " + axes_name + " " + what;
  program_.items.push_back(std::move(it));
  return static_cast<std::uint32_t>(program_.items.size() - 1);
}

void ProgramBuilder::send(std::int64_t peer_chunk, double bytes, const std::string& what) {
  flush();
  WorkItem it;
  it.kind = ItemKind::Send;
  it.chained = false;
  it.peer_chunk = peer_chunk;
  it.bytes = bytes;
  it.category = Category::PipelineComm;
  it.label = "send " + what;
  program_.items.push_back(std::move(it));
}

}  // namespace parasim::sim
