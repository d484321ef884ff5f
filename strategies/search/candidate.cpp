#include "strategies/search/candidate.hpp"

#include <sstream>
#include <tuple>

namespace parasim::strategies::search {

std::int64_t Candidate::micro_batches() const {
  const std::int64_t per_round = training.micro_batch * plan.dp;
  return per_round > 0 ? training.global_batch / per_round : 0;
}

bool key_less(const Candidate& a, const Candidate& b) {
  const auto key = [](const Candidate& c) {
    return std::make_tuple(c.devices, c.plan.tp, c.plan.cp, c.plan.pp, c.plan.dp, c.plan.ep, c.training.micro_batch, static_cast<int>(c.plan.schedule),
                           c.plan.virtual_stages, c.plan.zero, static_cast<int>(c.plan.recompute), c.plan.sequence_parallel,
                           std::cref(c.plan.stage_layers), std::cref(c.stage_uses));
  };
  return key(a) < key(b);
}

std::string describe(const Candidate& c) {
  const PlanSpec& s = c.plan;
  std::ostringstream d;
  d << "tp " << s.tp;
  if (s.cp > 1) d << " × cp " << s.cp << " (" << to_string(s.cp_comm) << ")";
  d << " × pp " << s.pp << " × dp " << s.dp;
  if (s.ep > 1) d << " (ep " << s.ep << ")";
  d << ", " << to_string(s.schedule);
  if (s.virtual_stages > 1) d << " v" << s.virtual_stages;
  d << ", micro-batch " << c.training.micro_batch << " × " << c.micro_batches();
  if (s.fsdp) d << ", fsdp";
  else if (s.zero > 0) d << ", zero-" << s.zero;
  if (s.recompute != Recompute::None) d << ", recompute " << to_string(s.recompute);
  if (s.sequence_parallel) d << ", sequence parallel";
  if (!c.stage_uses.empty()) {
    d << "; stages ";
    for (std::size_t i = 0; i < s.stage_layers.size(); ++i) d << (i ? "+" : "") << s.stage_layers[i];
    d << " layers (";
    for (std::size_t i = 0; i < c.stage_uses.size(); ++i) d << (i ? ", " : "") << to_string(c.stage_uses[i]);
    d << ")";
  }
  return d.str();
}

}  // namespace parasim::strategies::search
