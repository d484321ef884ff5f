#pragma once
/// Predicted against measured: what `parasim execute` reports. The prediction is the simulation of
/// the very task graph that ran, from the same profile; the measurement is every rank's record of
/// its timed steps (exec/executor.hpp).
///  - Step time: a step's measured time is the latest task end over every rank (all ranks start
///    their clocks as they leave one barrier); the median, fastest and slowest over the timed steps
///    against the simulated makespan.
///  - Per class, in the median step, summed over ranks: each kernel class's operator passes (the
///    cost model's time of each pass, sim/work/work_cost.hpp, against its kernels' measured time),
///    each collective kind and the pipeline sends (each rank's time in the operation, which
///    includes waiting for the group's slowest member, against the simulated duration on each
///    member), and idle compute (the step time less the compute busy time of each device).
#include <span>
#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "sim/simulate.hpp"

namespace parasim::exec {

struct ClassFigure {
  std::string name;
  double measured_s = 0;   ///< per step, summed over ranks
  double predicted_s = 0;  ///< likewise
  std::int64_t count = 0;  ///< operator passes or operations, per step over all ranks
};

/// One operator pass (forward, recomputed forward or backward) of the model, over every rank that ran it.
struct OpFigure {
  std::string op;    ///< the operator's name, or "optimizer step"
  std::string pass;  ///< "forward", "recompute", "backward" or "update"
  std::string kernel_class;
  double measured_s = 0, predicted_s = 0;  ///< per step, summed over ranks and micro-batches
  std::int64_t count = 0;
};

struct Comparison {
  int ranks = 0;
  std::vector<double> measured_step_s;  ///< per timed step, in the order run
  double measured_median_s = 0, measured_min_s = 0, measured_max_s = 0;
  std::size_t median_step = 0;  ///< the index of the median step (the lower middle of an even count)
  double predicted_s = 0;
  std::vector<ClassFigure> classes;  ///< those with any time measured or predicted
  std::vector<OpFigure> ops;         ///< every operator pass run, in the order first met
  /// Per rank (its device), its compute stream's busy time in the median step: measured (the sum of
  /// its compute tasks' end − start) and predicted (the sum of their simulated durations). A
  /// synchronous step waits for the slowest rank; the cost model runs every rank of a device kind at
  /// one speed (the slowest rank's where the profile measured the ranks' spread), so a spread here is
  /// the host's, not the plan's.
  std::vector<double> rank_compute_measured_s, rank_compute_predicted_s;
  /// (predicted − measured median) / measured median.
  [[nodiscard]] double error() const { return (predicted_s - measured_median_s) / measured_median_s; }
};

/// Preconditions: `records` are every rank's (rank order) of `simulation.step`, with the same
/// number of timed steps (≥ 1); `profile` and `cluster` are the simulation's.
[[nodiscard]] Comparison compare(const sim::Simulation& simulation, const models::Graph& graph, const strategies::Plan& plan,
                                 const sim::Profile& profile, const sim::Cluster& cluster, std::span<const RankRecord> records);

/// The simulation with its timeline replaced by step `step` of the records: each task starts when
/// its last rank started it and finishes when its last rank finished it. Written with the trace
/// writer, it gives a trace of the real run in the simulated trace's layout.
[[nodiscard]] sim::Simulation measured_simulation(const sim::Simulation& simulation, std::span<const RankRecord> records, std::size_t step);

}  // namespace parasim::exec
