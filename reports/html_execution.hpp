#pragma once
/// The predicted-against-measured part of report.html that `parasim execute` writes
/// (exec/compare.hpp computes the figures; this file only draws them): a table of the step time
/// (measured median, fastest and slowest over the timed steps, predicted, error) and of each task
/// class, a chart of each class's measured and predicted time side by side, and a chart of every
/// timed step against the prediction. The measured step's timeline is drawn beside the simulated
/// one by the page (HtmlReport::measured_timeline).
#include <cstdint>
#include <string>
#include <vector>

#include "reports/html_charts.hpp"

namespace parasim::reports {

struct HtmlExecutionClass {
  std::string name;        ///< "GEMM", "all-reduce", "pipeline send", "idle compute", ...
  std::int64_t count = 0;  ///< operator passes or operations in a step over all ranks (0: not counted)
  double measured_s = 0, predicted_s = 0;  ///< per step (the median one), summed over ranks
};

/// One check of the host just before the run (calibrate/host_check.hpp): its measured time and the
/// profile's price.
struct HtmlHostCheck {
  std::string what;  ///< "512x512x512 fp32 sgemm", "64 MiB memory pass"
  double measured_s = 0, predicted_s = 0;
};

/// One rank's compute in the median step (exec/compare.hpp, Comparison::rank_compute_measured_s).
struct HtmlRankCompute {
  double measured_s = 0, predicted_s = 0;
};

struct HtmlExecution {
  std::string executed_by;  ///< how it ran: the executor, its ranks, kernels and collectives (plain text)
  std::vector<double> measured_step_s;  ///< every timed step, in the order run; at least one
  double measured_median_s = 0, predicted_s = 0;
  std::vector<HtmlExecutionClass> classes;
  std::vector<HtmlHostCheck> host_check;     ///< empty: no host check (a GPU run)
  std::vector<HtmlRankCompute> rank_compute;  ///< one per rank; drawn for two ranks or more
};

/// Measured and predicted time of each class, side by side.
[[nodiscard]] HtmlChart execution_class_chart(const HtmlExecution& execution);
/// Each timed step's measured time, with the prediction as a rule across them.
[[nodiscard]] HtmlChart execution_steps_chart(const HtmlExecution& execution);
/// The step and class tables as HTML (every string escaped), and those of the host check and of each
/// rank's compute where the execution has them.
[[nodiscard]] std::string execution_tables(const HtmlExecution& execution);

}  // namespace parasim::reports
