#include "strategies/pipeline_cut.hpp"

#include <algorithm>
#include <limits>

#include "common/error.hpp"

namespace parasim::strategies {

std::string_view to_string(InnerAxisUse u) { return u == InnerAxisUse::Data ? "data" : "model"; }

std::optional<PipelineCut> cut_pipeline(const LayerCostTable& table, std::int64_t stages, std::int64_t micro_batches, const StageFits& fits) {
  if (table.seconds.empty()) return std::nullopt;
  const std::size_t n = table.seconds.front().size();
  for (const auto& row : table.seconds)
    if (row.size() != n) return std::nullopt;
  if (table.boundary_s.size() != n || stages < 1 || static_cast<std::size_t>(stages) > n) return std::nullopt;
  const auto k = static_cast<std::size_t>(stages);
  const std::size_t options = table.seconds.size();

  // cost[i][j], option[i][j]: the cheapest option for a stage of layers [i, j), and its time.
  std::vector<std::vector<double>> prefix(options, std::vector<double>(n + 1, 0));
  for (std::size_t o = 0; o < options; ++o)
    for (std::size_t l = 0; l < n; ++l) prefix[o][l + 1] = prefix[o][l] + table.seconds[o][l];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> cost(n + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int>> option(n + 1, std::vector<int>(n + 1, 0));
  std::vector<double> bounds;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j <= n; ++j) {
      const double send = j < n ? table.boundary_s[j - 1] : 0.0;
      for (std::size_t o = 0; o < options; ++o) {
        const double c = prefix[o][j] - prefix[o][i] + send;
        if (c < cost[i][j]) {
          cost[i][j] = c;
          option[i][j] = static_cast<int>(o);
        }
      }
      bounds.push_back(cost[i][j]);
    }
  }
  // ok[s][i][j]: layers [i, j) fit as stage s.
  std::vector<std::vector<std::vector<char>>> ok;
  if (fits) {
    ok.assign(k, std::vector<std::vector<char>>(n + 1, std::vector<char>(n + 1, 0)));
    for (std::size_t s = 0; s < k; ++s)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j <= n; ++j) ok[s][i][j] = fits(s, i, j) ? 1 : 0;
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());

  const double steady = static_cast<double>(std::max<std::int64_t>(micro_batches, 1) - 1);
  double best_latency = kInf;
  std::vector<std::size_t> best_cuts;
  // sum[s][j]: least Σ t over the first j layers in s stages with every stage ≤ t_max; from[s][j]:
  // where the last of those stages starts.
  std::vector<std::vector<double>> sum(k + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<std::size_t>> from(k + 1, std::vector<std::size_t>(n + 1, 0));
  for (const double t_max : bounds) {
    if (steady * t_max >= best_latency) break;  // the steady state alone already costs more
    for (auto& row : sum) std::fill(row.begin(), row.end(), kInf);
    sum[0][0] = 0;
    for (std::size_t s = 1; s <= k; ++s) {
      for (std::size_t j = s; j <= n - (k - s); ++j) {
        for (std::size_t i = s - 1; i < j; ++i) {
          if (sum[s - 1][i] == kInf || cost[i][j] > t_max || (fits && !ok[s - 1][i][j])) continue;
          const double v = sum[s - 1][i] + cost[i][j];
          if (v < sum[s][j]) {
            sum[s][j] = v;
            from[s][j] = i;
          }
        }
      }
    }
    if (sum[k][n] == kInf) continue;
    std::vector<std::size_t> cuts(k + 1, n);
    for (std::size_t s = k; s >= 1; --s) cuts[s - 1] = from[s][cuts[s]];
    double slowest = 0;
    for (std::size_t s = 0; s < k; ++s) slowest = std::max(slowest, cost[cuts[s]][cuts[s + 1]]);
    const double latency = sum[k][n] + steady * slowest;
    if (latency < best_latency) {
      best_latency = latency;
      best_cuts = cuts;
    }
  }
  if (best_cuts.empty()) return std::nullopt;
  PipelineCut out;
  out.latency_s = best_latency;
  for (std::size_t s = 0; s < k; ++s) {
    out.stage_layers.push_back(static_cast<std::int64_t>(best_cuts[s + 1] - best_cuts[s]));
    out.stage_option.push_back(option[best_cuts[s]][best_cuts[s + 1]]);
  }
  return out;
}

Plan apply_stage_uses(const models::Graph& graph, Plan plan, const std::vector<InnerAxisUse>& uses) {
  PARASIM_CHECK(static_cast<std::int64_t>(uses.size()) == plan.pp && plan.virtual_stages == 1,
                "apply_stage_uses: one use per pipeline stage, without virtual stages");
  const int tp = plan.tp_axis;
  if (tp < 0 || plan.tp() <= 1) return plan;
  for (models::OpId id = 0; id < graph.op_count(); ++id) {
    const models::Operator& o = graph.op(id);
    const auto stage = plan.stage_of_chunk(plan.chunk_of_layer[static_cast<std::size_t>(o.layer)]);
    if (uses[static_cast<std::size_t>(stage)] != InnerAxisUse::Data || o.kind == models::OpKind::Input) continue;
    OpSharding& sh = plan.sharding[id];
    for (auto& d : sh.dims) d.axes.erase(std::remove(d.axes.begin(), d.axes.end(), tp), d.axes.end());
    std::erase_if(sh.dims, [](const DimSharding& d) { return d.axes.empty(); });
    const models::Dim* b = o.find_dim("b");
    if (b == nullptr || !b->splittable) continue;  // replicated over the axis: every device computes it whole
    auto it = std::find_if(sh.dims.begin(), sh.dims.end(), [](const DimSharding& d) { return d.dim == "b"; });
    if (it == sh.dims.end()) it = sh.dims.insert(sh.dims.end(), DimSharding{"b", {}});
    it->axes.push_back(tp);
    std::sort(it->axes.begin(), it->axes.end());  // mesh axes are listed outermost first
  }
  return plan;
}

}  // namespace parasim::strategies
