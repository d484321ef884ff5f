#pragma once
/// The JavaScript every report.html inlines to draw its charts: Vega, Vega-Lite and vega-embed from
/// the npm registry, at the versions pinned in the top-level package.json. Their minified browser
/// bundles and licences are compiled into parasim (reports/vendor/vega.cmake), so a report opens
/// offline and parasim needs neither node nor a network when it writes one.
#include <array>
#include <string_view>

namespace parasim::reports {

/// One inlined library.
struct VendorScript {
  std::string_view name;     ///< the npm package: "vega", "vega-lite", "vega-embed"
  std::string_view version;  ///< the pinned version, e.g. "6.4.0"
  std::string_view code;     ///< its minified browser (UMD) bundle
  std::string_view licence;  ///< its LICENSE file, reproduced in every report as the licence asks
};

/// The three libraries in the order a page must load them (vega-lite needs vega; vega-embed both).
[[nodiscard]] std::array<VendorScript, 3> vega_scripts();

}  // namespace parasim::reports
