// exec/: the CPU executor of `parasim execute` — its kernels on values derived by hand, its records,
// and one device's step run for real through the very task graph the simulation ran.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "exec/compare.hpp"
#include "exec/compute_activity.hpp"
#include "exec/executor.hpp"
#include "exec/kernels.hpp"
#include "scenarios/loader.hpp"
#include "sim/simulate.hpp"

using namespace parasim;
using Catch::Matchers::WithinRel;

TEST_CASE("exec: sgemm multiplies row-major matrices, transposed as asked", "[exec]") {
  // A = [1 2 3; 4 5 6] (2×3), B = [1 0; 0 1; 1 1] (3×2): A·B = [1+3 2+3; 4+6 5+6] = [4 5; 10 11].
  const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {1, 0, 0, 1, 1, 1};
  float c[4] = {};
  exec::sgemm(false, false, 2, 2, 3, a, b, c);
  CHECK(std::vector<float>(c, c + 4) == std::vector<float>{4, 5, 10, 11});
  // Aᵀ·A with A stored 2×3: a 3×3 product, [1·1+4·4 1·2+4·5 1·3+4·6; ...] = [17 22 27; 22 29 36; 27 36 45].
  float d[9] = {};
  exec::sgemm(true, false, 3, 3, 2, a, a, d);
  CHECK(std::vector<float>(d, d + 9) == std::vector<float>{17, 22, 27, 22, 29, 36, 27, 36, 45});
}

TEST_CASE("exec: the softmax normalises each row", "[exec]") {
  // Rows [0, ln 3] and [ln 2, ln 2]: exp gives 1, 3 and 2, 2; over their sums, 1/4, 3/4 and 1/2, 1/2.
  const float x[] = {0, std::log(3.0f), std::log(2.0f), std::log(2.0f)};
  float y[4] = {};
  exec::softmax_rows(x, y, 4, 2);
  CHECK_THAT(y[0], WithinRel(0.25f, 1e-5f));
  CHECK_THAT(y[1], WithinRel(0.75f, 1e-5f));
  CHECK_THAT(y[2], WithinRel(0.5f, 1e-5f));
  CHECK_THAT(y[3], WithinRel(0.5f, 1e-5f));
}

TEST_CASE("exec: Adam's update of one parameter", "[exec]") {
  // g = 1, m = v = 0: m = 0.1, v = 0.001, p -= 1e-6 · 0.1 / (sqrt(0.001) + 1e-8) = 1e-6 · 3.16227...
  float p = 1, g = 1, m = 0, v = 0;
  exec::adam_update(&p, &g, &m, &v, 1);
  CHECK_THAT(m, WithinRel(0.1f, 1e-6f));
  CHECK_THAT(v, WithinRel(0.001f, 1e-4f));
  CHECK_THAT(1 - p, WithinRel(1e-6 * 0.1 / std::sqrt(0.001), 1e-2));
}

TEST_CASE("exec: a rank's record survives its bytes", "[exec]") {
  exec::RankRecord r;
  r.rank = 3;
  r.steps.push_back({{1, 5}, {0, 10}, {9, 20}, {1}, {7}, {9}});
  r.steps.push_back({{2}, {4}, {8}, {}, {}, {}});
  CHECK(exec::record_from_bytes(exec::to_bytes(r)) == r);
}

namespace {

struct Loaded {
  scenarios::Scenario scenario;
  sim::Profile profile;
  sim::Cluster cluster;
  models::Graph graph;
  strategies::Plan plan;
};

Loaded load(const std::string& variant) {
  const scenarios::Scenario base = scenarios::load_scenario(std::string(PARASIM_TEST_DATA_DIR) + "/execute/tiny-gpt-2.json");
  scenarios::Scenario s = base;
  for (const auto& w : base.what_ifs)
    if (w.name == variant) s = w;
  sim::Profile profile = scenarios::scenario_profile(s);
  sim::Cluster cluster = sim::build_cluster(s.cluster, profile);
  models::Graph graph = scenarios::build_model(s);
  strategies::Plan plan = strategies::make_plan(graph, s.training, s.plan, cluster.device_count());
  return {s, std::move(profile), std::move(cluster), std::move(graph), std::move(plan)};
}

}  // namespace

TEST_CASE("exec: one device runs every task of its step once a step, each compute task's every operator pass", "[exec]") {
  const Loaded l = load("single");
  const sim::Simulation simulation = sim::simulate(l.graph, l.plan, l.cluster, l.profile, sim::Backend::Analytical, sim::LowerOptions{});
  REQUIRE(exec::cannot_execute(simulation.step, 0).empty());
  exec::LocalTransport transport;
  transport.prepare(simulation.step.tasks);
  exec::CpuKernels kernels(l.graph, simulation.step.work, l.plan, 1);
  const exec::RankRecord r = exec::execute_rank(l.plan, simulation.step, transport, kernels, {.warmup_steps = 1, .steps = 2});
  REQUIRE(r.steps.size() == 2);
  const sim::TaskGraph& g = simulation.step.tasks;
  for (const auto& s : r.steps) {
    CHECK(s.task.size() == g.task_count());
    CHECK(std::set<sim::TaskId>(s.task.begin(), s.task.end()).size() == g.task_count());
    std::size_t passes = 0;
    for (sim::TaskId t = 0; t < g.task_count(); ++t) {
      const auto& cw = simulation.step.work.computes[g.work_of(t)];
      passes += cw.optimizer_stage >= 0 ? 1 : cw.ops_end - cw.ops_begin;
    }
    CHECK(s.pass_op.size() == passes);
    for (std::size_t k = 0; k < s.task.size(); ++k) CHECK(s.end_ns[k] >= s.start_ns[k]);
  }
  // Compared with its own prediction: one rank, two steps, every kernel class of a GPT present.
  const std::vector<exec::RankRecord> records{r};
  const exec::Comparison c = exec::compare(simulation, l.graph, l.plan, l.profile, l.cluster, records);
  CHECK(c.ranks == 1);
  CHECK(c.measured_step_s.size() == 2);
  CHECK(c.measured_median_s > 0);
  CHECK(c.predicted_s == simulation.result.step_time_s);
  std::set<std::string> classes;
  for (const auto& f : c.classes) classes.insert(f.name);
  CHECK(classes == std::set<std::string>{"GEMM", "softmax", "elementwise", "optimizer", "idle compute"});
  // The rank's compute in the median step: its compute tasks' end − start, summed, against their
  // simulated durations; and its measured idle is the step less that busy time.
  double busy = 0, simulated = 0;
  const exec::RankStep& median = r.steps[c.median_step];
  for (std::size_t k = 0; k < median.task.size(); ++k)
    if (g.kind[median.task[k]] == sim::TaskKind::Compute) busy += static_cast<double>(median.end_ns[k] - median.start_ns[k]) * 1e-9;
  for (sim::TaskId t = 0; t < g.task_count(); ++t)
    if (g.kind[t] == sim::TaskKind::Compute) simulated += static_cast<double>(g.duration_ps[t]) * 1e-12;
  REQUIRE(c.rank_compute_measured_s.size() == 1);
  REQUIRE(c.rank_compute_predicted_s.size() == 1);
  CHECK(c.rank_compute_measured_s[0] == Approx(busy).epsilon(1e-12));
  CHECK(c.rank_compute_predicted_s[0] == Approx(simulated).epsilon(1e-12));
  // Each compute task's simulated span is shared among its passes' classes, so the compute classes'
  // predictions add up to the rank's predicted compute.
  double classes_predicted = 0;
  for (const auto& f : c.classes)
    if (f.name != "idle compute") classes_predicted += f.predicted_s;
  CHECK(classes_predicted == Approx(simulated).epsilon(1e-9));
  for (const auto& f : c.classes)
    if (f.name == "idle compute") CHECK(f.measured_s == Approx(c.measured_median_s - busy).epsilon(1e-9));
  // The measured timeline keeps the simulated layout: every task placed, the makespan the median step.
  const sim::Simulation m = exec::measured_simulation(simulation, records, c.median_step);
  CHECK(m.timeline.makespan.seconds() == Approx(c.measured_median_s).epsilon(1e-9));
}

TEST_CASE("exec: the CPU executor refuses a plan it cannot run, saying why", "[exec]") {
  const Loaded one = load("single");
  const sim::Simulation s1 = sim::simulate(one.graph, one.plan, one.cluster, one.profile, sim::Backend::Analytical, sim::LowerOptions{});
  CHECK(exec::cannot_execute(s1.step, 1) == "rank 1 has no device in a plan of 1");
  // A profile with a bf16 peak for the host would let the plan through the loader; the CPU kernels
  // still run fp32 only.
  strategies::Plan bf16 = one.plan;
  bf16.precision = models::DType::BF16;
  const exec::CpuKernels cpu(one.graph, s1.step.work, one.plan, 1);
  CHECK(cpu.refuses(one.plan).empty());
  CHECK(cpu.refuses(bf16) == "the CPU executor runs fp32 plans only; the plan trains in bf16");
  // The replica shortcut simulates one replica for two: not a graph a rank per device can run.
  const Loaded dp = load("base");
  const sim::Simulation shortcut = sim::simulate(dp.graph, dp.plan, dp.cluster, dp.profile, sim::Backend::Analytical, sim::LowerOptions{.replicate_data_parallel = true, .input = {}});
  REQUIRE(shortcut.step.replica_shortcut);
  CHECK(exec::cannot_execute(shortcut.step, 0) == "the step was lowered with one data-parallel replica standing for all");
}

namespace {
/// CpuKernels, noting whether the process was marked computing at each run (mpi/polling.hpp reads it).
struct MarkSpy : exec::Kernels {
  exec::CpuKernels inner;
  std::size_t runs = 0, marked = 0;
  MarkSpy(const models::Graph& g, const sim::StepWork& w, const strategies::Plan& p) : inner(g, w, p, 1) {}
  std::string refuses(const strategies::Plan& p) const override { return inner.refuses(p); }
  std::string describe() const override { return inner.describe(); }
  void set_lanes(std::size_t lanes) override { inner.set_lanes(lanes); }
  void run(sim::WorkId w, std::size_t lane, std::vector<double>& pass_seconds) override {
    ++runs;
    marked += exec::computing() ? 1 : 0;
    inner.run(w, lane, pass_seconds);
  }
  float* message_buffer(std::size_t lane, std::size_t count) override { return inner.message_buffer(lane, count); }
};
}  // namespace

TEST_CASE("exec: the process is marked computing while a compute task runs, and only then", "[exec]") {
  CHECK_FALSE(exec::computing());
  {
    const exec::Computing one;
    CHECK(exec::computing());
    {
      const exec::Computing two;  // two compute streams at once
      CHECK(exec::computing());
    }
    CHECK(exec::computing());  // the first still runs
  }
  CHECK_FALSE(exec::computing());
  // The executor marks each of its compute tasks: the single-rank GPT's step runs them all marked.
  const Loaded l = load("single");
  const sim::Simulation simulation = sim::simulate(l.graph, l.plan, l.cluster, l.profile, sim::Backend::Analytical, sim::LowerOptions{});
  exec::LocalTransport transport;
  transport.prepare(simulation.step.tasks);
  MarkSpy kernels(l.graph, simulation.step.work, l.plan);
  (void)exec::execute_rank(l.plan, simulation.step, transport, kernels, {.warmup_steps = 0, .steps = 1});
  CHECK(kernels.runs > 0);
  CHECK(kernels.marked == kernels.runs);
  CHECK_FALSE(exec::computing());
}
