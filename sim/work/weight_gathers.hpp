#pragma once
/// ZeRO-3's weight all-gathers for one program (a chunk's forward or its backward): each layer's
/// weights are gathered before the layer runs, in the order the program uses the layers (the
/// backward's is the reverse of the forward's), every micro-batch (Rajbhandari et al. 2020, §5.3).
/// The first kPrefetchLayers + 1 gathers are issued when the program starts; as layer i begins, the
/// gather of layer i + kPrefetchLayers is issued to start once layer i − 1 has finished and freed its
/// gathered weights. So no more layers are gathered at once than the memory model
/// (strategies/memory.hpp) counts.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/work/program_builder.hpp"

namespace parasim::sim {

class WeightGathers {
 public:
  /// `order`: the layers holding weights, in the order the program uses them; `bytes[k]`: layer
  /// order[k]'s gathered bytes per device; `names[k]`: its name. No layers: no ZeRO-3.
  WeightGathers(AxisSet axes, std::vector<std::int32_t> order, std::vector<double> bytes, std::vector<std::string> names)
      : axes_(std::move(axes)), order_(std::move(order)), bytes_(std::move(bytes)), names_(std::move(names)) {}

  /// The gathers issued as the program starts.
  void start(ProgramBuilder& pb);
  /// Layer `layer` begins: the previous layer's work ends here (so the next prefetch can wait for
  /// it), the gather kPrefetchLayers ahead is issued, and the layer's work waits for its own gather.
  void enter(ProgramBuilder& pb, std::int32_t layer);

 private:
  void issue(ProgramBuilder& pb, std::size_t k, std::optional<std::uint32_t> after);
  /// The last item the program emitted other than a gather: the end of the previous layer.
  [[nodiscard]] std::optional<std::uint32_t> last_work_item(const ProgramBuilder& pb) const;

  AxisSet axes_;
  std::vector<std::int32_t> order_;
  std::vector<double> bytes_;
  std::vector<std::string> names_;
  std::map<std::int32_t, std::uint32_t> gather_item_;
  std::set<std::uint32_t> gathers_;
};

}  // namespace parasim::sim
