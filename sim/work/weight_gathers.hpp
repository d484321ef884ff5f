#pragma once
/// ZeRO-3's weight all-gathers for one program (a chunk's forward or its backward), as the plan's
/// implementation runs them (strategies/implementation.hpp): each layer's weights are gathered
/// before the layer runs, in the order the program uses the layers (the backward's is the reverse of
/// the forward's), every micro-batch (Rajbhandari et al. 2020, §5.3), in gather units — the whole
/// layer (FSDP2), each operator's weights (DeepSpeed) or each weight tensor (DeepSpeed 2021).
///
/// Asynchronous implementations issue the units ahead of the one computing: as a layer begins, its
/// own units and the implementation's prefetch beyond them (at least prefetch_units, more while under
/// prefetch_elements), each issued to start once the previous layer's work has finished and freed
/// its gathered weights; so no more is gathered at once than the memory model
/// (strategies/memory.hpp, zero3_gathered_bytes) counts. Synchronous ones (DeepSpeed before v0.6)
/// gather a layer's units in the compute chain: each waits for the work before it and the work
/// waits for it, so nothing overlaps. With full recomputation, a layer larger than the
/// implementation's reuse distance is gathered again between its recomputed forward and its backward.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/work/program_builder.hpp"
#include "strategies/implementation.hpp"

namespace parasim::sim {

/// One all-gather's worth of weights.
struct GatherUnitWork {
  std::int32_t layer = 0;
  double bytes = 0;     ///< gathered bytes per device
  double elements = 0;  ///< elements gathered
  std::string name;
};

class WeightGathers {
 public:
  /// `units`: the units of the layers holding gathered weights, grouped by layer in the order the
  /// program uses the layers. No units: no ZeRO-3.
  WeightGathers(AxisSet axes, std::vector<GatherUnitWork> units, const strategies::Implementation& implementation);

  /// The gathers issued as the program starts.
  void start(ProgramBuilder& pb);
  /// Layer `layer` begins: its units and the prefetch beyond them are issued, and the layer's work
  /// waits for its own units.
  void enter(ProgramBuilder& pb, std::int32_t layer);
  /// Between layer `layer`'s recomputed forward and its backward: its units again when the layer is
  /// beyond the implementation's reuse distance.
  void regather(ProgramBuilder& pb, std::int32_t layer);

 private:
  /// Issues units [issued_, end).
  void issue_to(ProgramBuilder& pb, std::size_t end, std::optional<std::uint32_t> after);
  std::uint32_t gather(ProgramBuilder& pb, const GatherUnitWork& u, const char* what);
  /// The units a layer of units [begin, end) brings with it: its own and the prefetch beyond.
  [[nodiscard]] std::size_t prefetch_end(std::size_t end) const;
  /// The last item the program emitted other than a gather: the end of the previous layer.
  [[nodiscard]] std::optional<std::uint32_t> last_work_item(const ProgramBuilder& pb) const;

  AxisSet axes_;
  std::vector<GatherUnitWork> units_;
  strategies::Implementation implementation_;
  std::map<std::int32_t, std::pair<std::size_t, std::size_t>> layer_units_;  ///< layer → [begin, end) in units_
  std::vector<std::uint32_t> item_of_unit_;
  std::size_t issued_ = 0;
  std::set<std::uint32_t> gathers_;
};

}  // namespace parasim::sim
