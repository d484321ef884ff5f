#include "strategies/search/search.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "common/error.hpp"
#include "strategies/memory.hpp"
#include "strategies/pipeline_cut.hpp"
#include "strategies/plan.hpp"

namespace parasim::strategies::search {
namespace {

/// What the check-and-estimate phase learns about one variant (trivially copyable: MPI ranks
/// exchange these as bytes).
struct VariantRecord {
  std::uint8_t fits = 0;
  std::int64_t peak_stage = 0;
  double weights_bytes = 0, gradients_bytes = 0, optimizer_bytes = 0, activations_bytes = 0, buffers_bytes = 0;
  Evaluation estimate;
};
struct GroupRecord {
  std::uint8_t valid = 0;
  std::array<VariantRecord, kMaxVariants> variants{};
};

/// Model graphs by batch, built once before any parallel phase and only read afterwards (so the
/// phases share them between threads without locks). Nothing for a batch the model cannot take.
class GraphCache {
 public:
  explicit GraphCache(const std::function<models::Graph(std::int64_t)>& build) : build_(build) {}
  const models::Graph* get(std::int64_t batch) {
    auto it = graphs_.find(batch);
    if (it == graphs_.end()) {
      std::optional<models::Graph> g;
      try {
        g = build_(batch);
        if (g->batch() != batch) g.reset();  // a graph file fixes its batch
      } catch (const InputError&) {
        g.reset();
      }
      it = graphs_.emplace(batch, std::move(g)).first;
    }
    return it->second ? &*it->second : nullptr;
  }
  /// Precondition: get(batch) was called before.
  [[nodiscard]] const models::Graph* find(std::int64_t batch) const {
    const auto it = graphs_.find(batch);
    return it != graphs_.end() && it->second ? &*it->second : nullptr;
  }

 private:
  const std::function<models::Graph(std::int64_t)>& build_;
  std::map<std::int64_t, std::optional<models::Graph>> graphs_;
};

std::int64_t batch_of(const Candidate& c) { return c.batch(); }

/// The stage sizes of a plan's chunk assignment (v = 1: one chunk per stage).
std::vector<std::int64_t> stage_sizes(const Plan& p) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(p.chunks()), 0);
  for (const auto c : p.chunk_of_layer) ++sizes[static_cast<std::size_t>(c)];
  return sizes;
}

class Phase {
 public:
  Phase(const SearchObserver& o, std::string_view name, std::size_t tasks) : o_(o) {
    if (o_.begin_phase) o_.begin_phase(name, tasks);
  }
  ~Phase() {
    if (o_.end_phase) o_.end_phase();
  }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  const SearchObserver& o_;
};

/// For a non-uniform model: groups with pipeline stages cut by dynamic programming over the layer
/// order, each stage choosing how it uses the tensor axis. Added beside the balanced-cut groups
/// (only where the cut or a stage's choice differs from them).
std::vector<CandidateGroup> pipeline_cut_groups(const std::vector<CandidateGroup>& groups, GraphCache& graphs, const Evaluator& evaluator) {
  std::vector<CandidateGroup> out;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, int, bool, int>, LayerCosts> costs;
  for (const CandidateGroup& g : groups) {
    const Candidate& base = g.base;
    if (base.plan.pp <= 1 || base.plan.virtual_stages != 1) continue;
    const models::Graph* graph = graphs.get(batch_of(base));
    if (graph == nullptr || check_plan(*graph, base.training, base.plan, base.devices)) continue;
    const std::vector<std::int64_t> balanced = stage_sizes(make_plan(*graph, base.training, base.plan, base.devices));
    std::vector<InnerAxisUse> options{InnerAxisUse::Model};
    if (base.plan.tp > 1 && base.training.micro_batch % base.plan.tp == 0) options.push_back(InnerAxisUse::Data);
    std::vector<Recompute> recomputes;
    for (const Variant& v : g.variants)
      if (std::find(recomputes.begin(), recomputes.end(), v.recompute) == recomputes.end()) recomputes.push_back(v.recompute);
    for (const Recompute r : recomputes) {
      Candidate c = base;
      c.plan.recompute = r;
      LayerCostTable table;
      for (const InnerAxisUse use : options) {
        const auto key = std::make_tuple(c.plan.tp, c.training.micro_batch, c.plan.ep, static_cast<int>(r), c.plan.sequence_parallel,
                                         static_cast<int>(use));
        auto it = costs.find(key);
        if (it == costs.end()) it = costs.emplace(key, evaluator.layer_costs(c, use)).first;
        table.seconds.push_back(it->second.seconds);
        if (use == InnerAxisUse::Model) table.boundary_s = it->second.boundary_s;
      }
      const auto cut = cut_pipeline(table, c.plan.pp, c.micro_batches());
      if (!cut) continue;
      std::vector<InnerAxisUse> uses;
      for (const int o : cut->stage_option) uses.push_back(options[static_cast<std::size_t>(o)]);
      const bool all_model = std::all_of(uses.begin(), uses.end(), [](InnerAxisUse u) { return u == InnerAxisUse::Model; });
      if (all_model && cut->stage_layers == balanced) continue;  // the balanced group already holds it
      CandidateGroup cg;
      cg.base = c;
      cg.base.plan.stage_layers = cut->stage_layers;
      if (!all_model) cg.base.stage_uses = uses;
      for (const Variant& v : g.variants)
        if (v.recompute == r) cg.variants.push_back(v);
      cg.base.plan.zero = cg.variants.front().zero;
      out.push_back(std::move(cg));
    }
  }
  return out;
}

GroupRecord check_and_estimate(const CandidateGroup& g, const GraphCache& graphs, const Evaluator& evaluator, double usable_bytes) {
  GroupRecord rec;
  const models::Graph* graph = graphs.find(batch_of(g.base));
  if (graph == nullptr || check_plan(*graph, g.base.training, g.base.plan, g.base.devices)) return rec;
  rec.valid = 1;
  Plan plan = make_candidate_plan(*graph, g.base);
  for (std::size_t v = 0; v < g.variants.size(); ++v) {
    const Candidate c = g.candidate(v);
    plan.zero = c.plan.zero;
    plan.recompute = c.plan.recompute;
    plan.description = describe(c);
    VariantRecord& out = rec.variants[v];
    double peak = -1;
    for (const StageMemory& sm : memory_per_stage(*graph, plan)) {
      if (sm.memory.total_bytes() <= peak) continue;
      peak = sm.memory.total_bytes();
      out.peak_stage = sm.stage;
      out.weights_bytes = sm.memory.weights_bytes;
      out.gradients_bytes = sm.memory.gradients_bytes;
      out.optimizer_bytes = sm.memory.optimizer_bytes;
      out.activations_bytes = sm.memory.activations_bytes;
      out.buffers_bytes = sm.memory.buffers_bytes;
    }
    out.fits = peak <= usable_bytes ? 1 : 0;
    // A plan on a named mesh has its own shardings, which the closed form (the knobs' probes) does
    // not price: its estimate is its simulation.
    if (out.fits) out.estimate = c.plan.mesh.empty() ? evaluator.estimate(c, *graph, plan) : evaluator.simulate(c, *graph, plan);
  }
  return rec;
}

std::string gib(double bytes) {
  std::ostringstream s;
  s.precision(3);
  s << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return s.str();
}

}  // namespace

Plan make_candidate_plan(const models::Graph& g, const Candidate& c) {
  Plan p = make_plan(g, c.training, c.plan, c.devices);
  if (!c.stage_uses.empty()) p = apply_stage_uses(g, std::move(p), c.stage_uses);
  p.description = describe(c);
  return p;
}

SearchOutcome run_search(const SearchProblem& problem, const SearchOptions& options, const Evaluator& evaluator, const Executor& executor,
                         const SearchObserver& observer) {
  PARASIM_CHECK(problem.build_graph && evaluator.estimate && evaluator.simulate, "run_search: a graph builder and an evaluator");
  SearchOutcome outcome;
  outcome.objective = options.objective;
  outcome.price_per_device_hour = options.price_per_device_hour;
  outcome.usable_memory_bytes = problem.usable_memory_bytes;
  outcome.refine_name = evaluator.refine_name;

  // ---- enumerate (every process the same, sequentially) ----
  GraphCache graphs(problem.build_graph);
  const std::int64_t probe_batch = problem.reference ? batch_of(*problem.reference) : 1;
  const models::Graph* probe = graphs.get(probe_batch);
  const ModelFacts facts = probe ? ModelFacts::of(*probe) : ModelFacts::of(problem.build_graph(probe_batch));
  SearchSpace space = options.space;
  if (space.nodes.empty()) space.nodes = {problem.nodes};
  std::vector<CandidateGroup> groups = enumerate_groups(space, facts, problem.training, problem.base, problem.devices_per_node);
  // Nothing of the space can run: said, rather than ranking the scenario's own plan alone.
  if (groups.empty())
    throw PlanError("no candidate of the search space can run on the cluster: in every combination of its degrees one (tp, cp, pp, ep) does "
                    "not divide the devices left to it, or the global batch is not a multiple of micro_batch × dp; widen the space's lists");
  if (!facts.transformer && evaluator.layer_costs) {
    const Phase phase(observer, "cutting pipelines", 0);
    auto cuts = pipeline_cut_groups(groups, graphs, evaluator);
    for (const auto& g : cuts) outcome.pipeline_cuts += static_cast<std::int64_t>(g.variants.size());
    groups.insert(groups.end(), std::make_move_iterator(cuts.begin()), std::make_move_iterator(cuts.end()));
  }
  std::optional<std::pair<std::size_t, std::size_t>> reference_at;
  if (problem.reference) {
    for (std::size_t g = 0; g < groups.size() && !reference_at; ++g)
      for (std::size_t v = 0; v < groups[g].variants.size(); ++v)
        if (groups[g].candidate(v) == *problem.reference) reference_at = {{g, v}};
    if (!reference_at) {
      CandidateGroup g;
      g.base = *problem.reference;
      g.variants.push_back({problem.reference->plan.zero, problem.reference->plan.recompute});
      groups.push_back(std::move(g));
      reference_at = {{groups.size() - 1, 0}};
    }
  }
  std::set<std::size_t> extra_groups;
  for (const Candidate& e : problem.extra) {
    CandidateGroup g;
    g.base = e;
    g.variants.push_back({e.plan.zero, e.plan.recompute});
    groups.push_back(std::move(g));
    extra_groups.insert(groups.size() - 1);
  }
  for (const auto& g : groups) {
    outcome.candidates += static_cast<std::int64_t>(g.variants.size());
    (void)graphs.get(batch_of(g.base));
  }

  // ---- check, size and estimate every group (parallel) ----
  std::vector<GroupRecord> records;
  {
    const Phase phase(observer, "checking, sizing and estimating plans", groups.size());
    records = map_records<GroupRecord>(
        executor, groups.size(),
        [&](std::size_t i) { return check_and_estimate(groups[i], graphs, evaluator, problem.usable_memory_bytes); }, observer.progress);
  }
  std::vector<RankedPlan> plans;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!records[g].valid) {
      if (reference_at && reference_at->first == g) {
        const models::Graph* graph = graphs.find(batch_of(groups[g].base));
        const auto problem_found = graph ? check_plan(*graph, groups[g].base.training, groups[g].base.plan, groups[g].base.devices)
                                         : std::nullopt;
        outcome.reference_note = problem_found ? "the scenario's plan is not valid: " + problem_found->message
                                               : "the model cannot be built for the scenario's plan";
      }
      continue;
    }
    outcome.valid += static_cast<std::int64_t>(groups[g].variants.size());
    for (std::size_t v = 0; v < groups[g].variants.size(); ++v) {
      const VariantRecord& r = records[g].variants[v];
      const bool is_reference = reference_at && *reference_at == std::make_pair(g, v);
      if (!r.fits) {
        if (is_reference)
          outcome.reference_note = "the scenario's plan does not fit: it needs " +
                                   gib(r.weights_bytes + r.gradients_bytes + r.optimizer_bytes + r.activations_bytes + r.buffers_bytes) +
                                   " per device on pipeline stage " + std::to_string(r.peak_stage) + ", " +
                                   gib(problem.usable_memory_bytes) + " usable";
        continue;
      }
      RankedPlan p;
      p.candidate = groups[g].candidate(v);
      p.description = describe(p.candidate);
      p.memory = MemoryBreakdown{r.weights_bytes, r.gradients_bytes, r.optimizer_bytes, r.activations_bytes, r.buffers_bytes};
      p.peak_stage = r.peak_stage;
      p.memory_capacity_bytes = problem.usable_memory_bytes;
      p.estimate = r.estimate;
      p.reference = is_reference;
      p.extra = extra_groups.count(g) > 0;
      plans.push_back(std::move(p));
    }
  }
  outcome.fitting = static_cast<std::int64_t>(plans.size());
  if (plans.empty()) {
    throw PlanError("no plan of the search space fits: " + std::to_string(outcome.candidates) + " candidates, " +
                    std::to_string(outcome.valid) + " valid, none within the " + gib(problem.usable_memory_bytes) +
                    " usable per device; try more nodes, recomputation or ZeRO");
  }

  // ---- simulate the best by estimate, the estimate's Pareto front and the reference (parallel) ----
  const auto by_estimate = [&](const RankedPlan& a, const RankedPlan& b) {
    return better(a, a.estimate, b, b.estimate, options.objective, options.price_per_device_hour);
  };
  std::sort(plans.begin(), plans.end(), by_estimate);
  std::vector<std::size_t> chosen;
  const auto top = static_cast<std::size_t>(std::max<std::int64_t>(options.simulate_top, 1));
  for (std::size_t i = 0; i < plans.size() && i < top; ++i) chosen.push_back(i);
  // The front's members in index order are in estimate order: the fastest of them first.
  std::size_t extra = 0;
  const auto extra_max = static_cast<std::size_t>(std::max<std::int64_t>(options.pareto_extra, 0));
  for (const std::size_t i : mark_pareto_front(plans))
    if (i >= top && extra < extra_max) {
      chosen.push_back(i);
      ++extra;
    }
  outcome.simulated_top = static_cast<std::int64_t>(std::min(top, plans.size()));
  outcome.simulated_front = static_cast<std::int64_t>(extra);
  for (std::size_t i = 0; i < plans.size(); ++i)
    if ((plans[i].reference || plans[i].extra) && i >= top && std::find(chosen.begin(), chosen.end(), i) == chosen.end()) {
      chosen.push_back(i);
      if (plans[i].reference) outcome.simulated_reference = 1;
      else ++outcome.simulated_extra;
    }
  std::sort(chosen.begin(), chosen.end());
  std::vector<Evaluation> simulated;
  {
    const Phase phase(observer, "simulating the best plans (analytical)", chosen.size());
    simulated = map_records<Evaluation>(
        executor, chosen.size(),
        [&](std::size_t k) {
          const Candidate& c = plans[chosen[k]].candidate;
          const models::Graph& g = *graphs.find(batch_of(c));
          return evaluator.simulate(c, g, make_candidate_plan(g, c));
        },
        observer.progress);
  }
  for (std::size_t k = 0; k < chosen.size(); ++k) plans[chosen[k]].simulated = simulated[k];
  outcome.simulated = static_cast<std::int64_t>(chosen.size());
  rank_plans(plans, options.objective, options.price_per_device_hour);

  // ---- re-simulate the very best with the second backend (parallel) ----
  const auto refine_count = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(options.refine_top, 0)), chosen.size());
  if (!evaluator.refine) {
    outcome.refine_note = "no second backend in this build";
  } else if (refine_count == 0) {
    outcome.refine_note = "refine_top is 0";
  } else {
    struct Refined {
      std::uint8_t ok = 0;
      Evaluation figures;
    };
    const auto refine_one = [&](std::size_t i) {
      const Candidate& c = plans[i].candidate;
      const models::Graph& g = *graphs.find(batch_of(c));
      return evaluator.refine(c, g, make_candidate_plan(g, c));
    };
    std::vector<Refined> refined;
    {
      const Phase phase(observer, "re-simulating the best plans (" + evaluator.refine_name + ")", refine_count);
      refined = map_records<Refined>(
          executor, refine_count,
          [&](std::size_t i) {
            // A backend that cannot run a plan says why (PlanError); the message is recovered below on
            // every process alike, so no process waits on another that failed.
            try {
              return Refined{1, refine_one(i)};
            } catch (const PlanError&) {
              return Refined{};
            }
          },
          observer.progress);
    }
    for (std::size_t i = 0; i < refine_count; ++i) {
      if (refined[i].ok) {
        plans[i].refined = refined[i].figures;
        ++outcome.refined;
      } else if (outcome.refine_note.empty()) {
        try {
          (void)refine_one(i);
        } catch (const PlanError& e) {
          outcome.refine_note = e.what();
        }
      }
    }
  }

  outcome.pareto = mark_pareto_front(plans, true);
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>> shapes;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].reference) outcome.reference = i;
    const PlanSpec& p = plans[i].candidate.plan;
    if (shapes.insert({plans[i].candidate.devices, p.tp, p.cp, p.pp, p.dp, p.ep}).second) outcome.shapes.push_back(i);
  }
  outcome.plans = std::move(plans);
  return outcome;
}

}  // namespace parasim::strategies::search
