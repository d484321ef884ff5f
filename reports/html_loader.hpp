#pragma once
/// report.html's section for `parasim calibrate --backend loader`: the real loader's time per sample
/// against its thread count and placement, measured and as the simulated input pipeline predicts it
/// from the calibrated figures (the analogue of the seed text's Figures 3 and 5).
#include <string>

#include "reports/html_charts.hpp"
#include "sim/profile.hpp"

namespace parasim::reports {

struct HtmlLoader {
  std::string format;  ///< the dataset's: "jpeg-tar", "cifar-bin"
  sim::LoaderProfile loader;
};

/// Per placement, time per sample against threads: measured points and predicted lines.
[[nodiscard]] HtmlChart loader_chart(const HtmlLoader& loader);
/// The calibrated figures and the checks as HTML tables (every string escaped).
[[nodiscard]] std::string loader_tables(const HtmlLoader& loader);

}  // namespace parasim::reports
