#include "strategies/search/candidate.hpp"

#include <sstream>
#include <tuple>

#include "strategies/plan.hpp"

namespace parasim::strategies::search {

std::int64_t Candidate::data_parallel() const { return plan.mesh.empty() ? plan.dp : resolve_dp(plan, devices); }

std::int64_t Candidate::micro_batches() const {
  const std::int64_t per_round = batch();
  return per_round > 0 ? training.global_batch / per_round : 0;
}

namespace {
/// A named mesh's axis sizes, outermost first (empty for the knobs' plans).
std::vector<std::int64_t> mesh_sizes(const Candidate& c) {
  std::vector<std::int64_t> sizes;
  for (const auto& a : c.plan.mesh) sizes.push_back(a.size);
  return sizes;
}
}  // namespace

bool key_less(const Candidate& a, const Candidate& b) {
  const auto key = [](const Candidate& c) {
    return std::make_tuple(c.devices, c.plan.tp, c.plan.cp, c.plan.pp, c.plan.dp, c.plan.ep, c.training.micro_batch, static_cast<int>(c.plan.schedule),
                           c.plan.virtual_stages, c.plan.zero, static_cast<int>(c.plan.recompute), c.plan.sequence_parallel,
                           std::cref(c.plan.stage_layers), std::cref(c.stage_uses), mesh_sizes(c));
  };
  return key(a) < key(b);
}

std::string describe(const Candidate& c) {
  const PlanSpec& s = c.plan;
  std::ostringstream d;
  d << describe_plan(s, c.training, c.data_parallel(), c.micro_batches());
  // A cut of its own (the dynamic programme's, strategies/pipeline_cut.hpp, or the automatic
  // pipeline's, sim/auto_pipeline.hpp): named, so that two cuts of one mesh are told apart.
  if (!s.stage_layers.empty()) {
    d << "; stages ";
    for (std::size_t i = 0; i < s.stage_layers.size(); ++i) d << (i ? "+" : "") << s.stage_layers[i];
    d << " layers";
  }
  if (!c.stage_uses.empty()) {
    d << " (";
    for (std::size_t i = 0; i < c.stage_uses.size(); ++i) d << (i ? ", " : "") << to_string(c.stage_uses[i]);
    d << ")";
  }
  return d.str();
}

}  // namespace parasim::strategies::search
