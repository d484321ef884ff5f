#include "reports/comparison.hpp"

#include <algorithm>
#include <functional>

#include "common/error.hpp"
#include "reports/format.hpp"
#include "sim/input_verdict.hpp"
#include "sim/local_update.hpp"

namespace parasim::reports {

double peak_memory_bytes(const sim::Result& result) {
  double peak = 0;
  for (const auto& s : result.memory) peak = std::max(peak, s.memory.total_bytes());
  return peak;
}

std::string provenance(const sim::Result& r) {
  std::string p = "the " + r.backend + " backend with profile \"" + r.profile + "\" (" + r.profile_origin + ")";
  if (r.replica_shortcut)
    p += "; identical data-parallel replicas simulated once (" + std::to_string(r.simulated_devices) + " of " +
         std::to_string(r.devices) + " devices)";
  return p;
}

bool compares_against_base(std::span<const sim::Result> results) {
  if (results.size() < 2) return false;
  return std::all_of(results.begin(), results.end(), [&](const sim::Result& r) { return r.scenario == results.front().scenario; });
}

std::vector<ComparisonRow> comparison_rows(std::span<const sim::Result> results) {
  PARASIM_CHECK(!results.empty(), "a comparison needs at least one result");
  const bool against_base = compares_against_base(results);
  std::vector<ComparisonRow> rows;
  const auto text = [&](std::string figure, const std::function<std::string(const sim::Result&)>& cell) {
    ComparisonRow row{std::move(figure), "", {}, {}};
    for (const auto& r : results) {
      row.values.push_back(cell(r));
      row.changes.emplace_back();
    }
    rows.push_back(std::move(row));
  };
  // A figure shown with `format`, compared by its unformatted value.
  const auto figure = [&](std::string name, std::string unit, const std::function<double(const sim::Result&)>& value,
                          const std::function<std::string(double)>& format) {
    ComparisonRow row{std::move(name), std::move(unit), {}, {}};
    const double base = value(results.front());
    for (std::size_t i = 0; i < results.size(); ++i) {
      const double v = value(results[i]);
      row.values.push_back(format(v));
      row.changes.push_back(i == 0 || !against_base ? "" : change_percent(v, base));
    }
    rows.push_back(std::move(row));
  };
  const auto sig4 = [](double x) { return significant(x, 4); };
  const auto pct = [](double x) { return percent(x); };

  text("backend", [](const sim::Result& r) { return r.backend; });
  text("profile", [](const sim::Result& r) { return r.profile; });
  text("profile origin", [](const sim::Result& r) { return r.profile_origin; });
  text("devices", [](const sim::Result& r) { return std::to_string(r.devices) + " × " + r.device_kind; });
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return !r.implementation.empty(); }))
    text("implementation", [](const sim::Result& r) { return r.implementation.empty() ? std::string("not recorded") : r.implementation; });
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return !r.attention_kernel.empty(); }))
    text("attention kernel", [](const sim::Result& r) { return r.attention_kernel.empty() ? std::string("none") : r.attention_kernel; });
  figure("step time", "s", [](const sim::Result& r) { return r.step_time_s; }, sig4);
  figure("throughput", "samples/s", [](const sim::Result& r) { return r.samples_per_s; }, sig4);
  // Tokens only for sequence models: an image model's "tokens" are its samples, so its cell says so.
  const auto sequences = [](const sim::Result& r) { return r.tokens_per_s != r.samples_per_s; };
  if (std::any_of(results.begin(), results.end(), sequences)) {
    figure("throughput", "tokens/s", [](const sim::Result& r) { return r.tokens_per_s; }, sig4);
    ComparisonRow& tokens = rows.back();
    for (std::size_t i = 0; i < results.size(); ++i)
      if (!sequences(results[i])) {
        tokens.values[i] = "- (samples)";
        tokens.changes[i] = "";
      }
  }
  figure("model TFLOP/s per device", "TFLOP/s", [](const sim::Result& r) { return r.model_tflops_per_device; }, sig4);
  figure("MFU", "%", [](const sim::Result& r) { return r.mfu; }, pct);
  figure("HFU", "%", [](const sim::Result& r) { return r.hfu; }, pct);
  figure("pipeline bubble (idle)", "% of step", [](const sim::Result& r) { return r.bubble_fraction; }, pct);
  figure("exposed communication", "s", [](const sim::Result& r) { return r.breakdown.exposed_comm_s(); }, sig4);
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.interference_compute_s > 0; })) {
    figure("compute lost to interference", "s per device", [](const sim::Result& r) { return r.interference_compute_s; }, sig4);
    figure("step time lost to interference", "s", [](const sim::Result& r) { return r.interference_step_s; }, sig4);
  }
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.local_update.has_value(); })) {
    // Local-update training (sim/result.hpp, LocalUpdateFigures): its "step time" above is one
    // replica's inner step; these rows put every variant on the same footing, a synchronous one's
    // step being its own (it synchronises every step).
    text("local update", [](const sim::Result& r) {
      if (!r.local_update) return std::string("none (synchronous)");
      const auto& l = *r.local_update;
      std::string t = l.algorithm + ", " + std::to_string(l.replicas) + " replicas, H " + std::to_string(l.inner_steps);
      if (l.algorithm == "streaming-diloco") t += ", " + std::to_string(l.fragments) + " fragments, overlap " + std::to_string(l.overlap_steps);
      if (l.compression != "none") t += ", " + l.compression;
      return t;
    });
    text("devices, every replica", [](const sim::Result& r) { return std::to_string(sim::devices_in_run(r)) + " × " + r.device_kind; });
    figure("time per step, synchronisation included", "s", [](const sim::Result& r) { return sim::time_per_step_s(r); }, sig4);
    figure("throughput, every replica", "samples/s", [](const sim::Result& r) { return r.local_update ? r.local_update->samples_per_s : r.samples_per_s; },
           sig4);
    figure("throughput, every replica", "tokens/s", [](const sim::Result& r) { return r.local_update ? r.local_update->tokens_per_s : r.tokens_per_s; },
           sig4);
    text("outer step (H inner steps and the synchronisations)", [](const sim::Result& r) {
      return r.local_update ? significant(r.local_update->outer_step_s, 4) + " s" : std::string("n/a");
    });
    text("compute utilisation over the outer step", [](const sim::Result& r) {
      return r.local_update ? percent(r.local_update->compute_utilisation) + "%" : std::string("n/a");
    });
    figure("WAN bytes per step", "GB", [](const sim::Result& r) { return (r.local_update ? r.local_update->wan_bytes_per_inner_step : sim::wan_bytes(r)) / 1e9; }, sig4);
    text("WAN busy (busiest link)", [](const sim::Result& r) {
      if (r.local_update) return percent(r.local_update->wan_utilisation) + "%";
      // A synchronous step's: its busiest WAN link's time in flight over the step.
      for (const auto& c : r.link_classes)
        if (c.link_class == "WAN" && r.step_time_s > 0) return percent(std::min(1.0, c.max_busy_s / r.step_time_s)) + "%";
      return std::string("n/a");
    });
    text("WAN bandwidth per site for 95% compute", [](const sim::Result& r) {
      if (!r.local_update) return std::string("n/a");
      const double b = r.local_update->wan_bandwidth_for_95_bytes_per_s;
      return b > 0 ? significant(b * 8 / 1e9, 4) + " Gbit/s" : std::string("none reaches it");
    });
    text("synchronous data parallelism on the same devices", [](const sim::Result& r) {
      return r.local_update ? significant(r.local_update->sync_step_s, 4) + " s a step, " +
                                  significant(r.local_update->sync_wan_bytes_per_step / 1e9, 4) + " GB over the WAN"
                            : std::string("n/a");
    });
    if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.local_update && r.local_update->target_tokens > 0; }))
      text("time to the target tokens", [](const sim::Result& r) {
        return r.local_update && r.local_update->target_tokens > 0 ? duration_text(r.local_update->time_to_target_s) : std::string("n/a");
      });
  }
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.federated.has_value(); })) {
    // Federated training (sim/result.hpp, FederatedFigures): its "step time" above is one client's
    // local step at speed 1; these rows are the rounds'.
    text("federated", [](const sim::Result& r) {
      if (!r.federated) return std::string("none");
      const auto& f = *r.federated;
      return f.algorithm + " (" + f.server_optimizer + "), " + std::to_string(f.per_round) + " of " + std::to_string(f.population) + " clients a round, " +
             std::to_string(f.local_steps) + " local steps, seed " + std::to_string(f.seed);
    });
    text("round time p50 / p90 / p99", [](const sim::Result& r) {
      if (!r.federated) return std::string("n/a");
      const auto& f = *r.federated;
      return significant(f.round_p50_s, 4) + " / " + significant(f.round_p90_s, 4) + " / " + significant(f.round_p99_s, 4) + " s over " +
             std::to_string(f.rounds) + " rounds";
    });
    text("round time, mean", [](const sim::Result& r) { return r.federated ? significant(r.federated->round_mean_s, 4) + " s" : std::string("n/a"); });
    text("sampled clients dropped", [](const sim::Result& r) {
      if (!r.federated) return std::string("n/a");
      return percent(r.federated->unavailable_fraction) + "% did not respond, " + percent(r.federated->late_fraction) + "% missed the deadline";
    });
    text("samples per second, every client", [](const sim::Result& r) {
      return r.federated ? significant(r.federated->samples_per_s, 4) : std::string("n/a");
    });
    text("server link: bytes a round, busy", [](const sim::Result& r) {
      return r.federated ? significant(r.federated->server_bytes_per_round / 1e9, 4) + " GB, " + percent(r.federated->server_link_utilisation) + "%"
                         : std::string("n/a");
    });
    if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.federated && r.federated->target_samples > 0; }))
      text("time to the target samples", [](const sim::Result& r) {
        return r.federated && r.federated->target_samples > 0 ? duration_text(r.federated->time_to_target_s) : std::string("n/a");
      });
  }
  if (std::any_of(results.begin(), results.end(), [](const sim::Result& r) { return r.input.has_value(); })) {
    // The input pipeline (sim/result.hpp, InputFigures): what the loaders read and move, and the
    // verdict of the step simulated again with loaders that take no time.
    text("input pipeline", [](const sim::Result& r) {
      if (!r.input) return std::string("none (inputs on the devices)");
      const auto& f = *r.input;
      return f.placement + ", " + std::to_string(f.threads_per_host) + " loader thread" + (f.threads_per_host == 1 ? "" : "s") +
             (f.hosts_loading == 1 ? std::string(" on 1 host") : " on each of " + std::to_string(f.hosts_loading) + " hosts") + ", " +
             std::to_string(f.prefetch) + " micro-batch" + (f.prefetch == 1 ? "" : "es") + " ahead";
    });
    text("input read, copied, broadcast, sent", [](const sim::Result& r) {
      if (!r.input) return std::string("n/a");
      const auto& f = *r.input;
      auto mb = [](double b) { return significant(b / 1e6, 4); };
      return std::to_string(f.samples_read) + " samples: " + mb(f.read_bytes) + " MB from storage, " + mb(f.host_to_device_bytes) + " MB to devices, " +
             mb(f.device_to_device_bytes) + " MB between devices, " + mb(f.network_bytes) + " MB between hosts";
    });
    text("loaders' time for a step's samples", [](const sim::Result& r) {
      if (!r.input) return std::string("n/a");
      return significant(r.input->loader_step_s, 4) + " s, the slowest host" + (r.input->storage_bound ? " (its storage's bandwidth bounds it)" : "");
    });
    text("input-bound", [](const sim::Result& r) {
      if (!r.input || !r.input->verdict) return std::string("n/a");
      const auto& f = *r.input;
      const double wait = r.step_time_s - f.unbounded_step_s;
      if (!f.input_bound) return "no: " + significant(f.unbounded_step_s, 4) + " s with loaders that take no time";
      return "yes: " + significant(wait, 4) + " s (" + percent(wait / r.step_time_s) + "% of the step) longer than with loaders that take no time (" +
             significant(f.unbounded_step_s, 4) + " s)";
    });
    text("fewest loader threads per host", [](const sim::Result& r) {
      if (!r.input || !r.input->verdict) return std::string("n/a");
      const auto& f = *r.input;
      if (!f.input_bound) return std::to_string(f.fewest_threads) + " (as set: not input-bound)";
      if (f.fewest_threads > 0)
        return std::to_string(f.fewest_threads) + ": a step of " + significant(f.step_at_fewest_s, 4) + " s";
      if (f.placement == "naive") return std::string("none: the naive placement loads on one thread (try \"sharded\")");
      return "none up to " + std::to_string(sim::kMaxLoaderThreads) + ": storage or copies bound the step";
    });
  }
  figure("peak memory per device", "GiB", peak_memory_bytes, [](double b) { return gib(b); });
  figure("usable memory per device", "GiB", [](const sim::Result& r) { return r.memory_capacity_bytes; },
         [](double b) { return gib(b); });
  text("memory", [](const sim::Result& r) { return std::string(r.fits ? "FITS" : "DOES NOT FIT"); });
  return rows;
}

std::vector<BreakdownRow> breakdown_rows(const sim::Result& r) {
  std::vector<BreakdownRow> rows;
  const auto share = [&](double s) { return r.step_time_s > 0 ? percent(s / r.step_time_s) : std::string("n/a"); };
  for (int c = 0; c < sim::kCategoryCount; ++c) {
    const double s = r.breakdown.seconds[static_cast<std::size_t>(c)];
    if (s > 0) rows.push_back({std::string(sim::to_string(static_cast<sim::Category>(c))), significant(s, 4), share(s)});
  }
  rows.push_back({"idle (bubble and waiting)", significant(r.breakdown.idle_s, 4), share(r.breakdown.idle_s)});
  rows.push_back({"total (step time)", significant(r.step_time_s, 4), share(r.step_time_s)});
  return rows;
}

}  // namespace parasim::reports
