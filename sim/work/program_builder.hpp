#pragma once
/// Builds one chunk program item by item: consecutive operator passes of one time category join one
/// compute item until a chained collective or a send ends it (or the caller flushes it).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/work/work.hpp"

namespace parasim::sim {

class ProgramBuilder {
 public:
  /// Appends to `program`; compute items' operator passes and entries go to `step`'s tables.
  /// `mesh`: the plan's, for collective labels.
  ProgramBuilder(StepWork& step, Program& program, const models::Graph& graph, const strategies::DeviceMesh& mesh)
      : step_(step), program_(program), graph_(graph), mesh_(mesh) {}

  /// Adds `op`'s `pass` to the open compute item (a new one when none is open or its category
  /// differs); `prefix` starts the label of a new item.
  void compute(models::OpId op, Pass pass, Category category, const char* prefix);
  /// Extra dependency of the current (or next) compute item on an earlier item.
  void depend_on(std::uint32_t item) { pending_extra_.push_back(item); }
  /// Extra dependency of item `item`, already emitted, on an earlier item.
  void add_dependency(std::uint32_t item, std::uint32_t on) { program_.items[item].extra_deps.push_back(on); }
  /// Collective `item` runs on `kernel` rather than NCCL's.
  void run_on(std::uint32_t item, CommKernel kernel) { program_.items[item].kernel = kernel; }
  /// Collective `item` launches `copies` copy kernels per rank of its group.
  void copies_per_rank(std::uint32_t item, double copies) { program_.items[item].copies_per_rank = copies; }
  [[nodiscard]] std::size_t item_count() const { return program_.items.size(); }
  /// The index of the last chained item emitted, or -1 when there is none.
  [[nodiscard]] std::int64_t last_chained() const {
    for (std::size_t i = program_.items.size(); i-- > 0;)
      if (program_.items[i].chained) return static_cast<std::int64_t>(i);
    return -1;
  }
  void grads_ready(const AxisSet& axes, double bytes) { pending_grads_.push_back({axes, bytes}); }
  /// Closes the open compute item, if any.
  void flush();
  /// A collective over `axes`; returns its item index. Unchained collectives (prefetched gathers)
  /// leave the open compute item open.
  std::uint32_t collective(CollectiveKind kind, AxisSet axes, double bytes, Category category, const std::string& what, bool chained = true);
  void send(std::int64_t peer_chunk, double bytes, const std::string& what);

 private:
  StepWork& step_;
  Program& program_;
  const models::Graph& graph_;
  const strategies::DeviceMesh& mesh_;
  bool open_ = false;
  Category category_ = Category::Forward;
  std::string label_;
  std::uint32_t ops_begin_ = 0;
  std::vector<std::uint32_t> pending_extra_;
  std::vector<GradReady> pending_grads_;
};

}  // namespace parasim::sim
