#include "calibrate/nccl_tests.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "calibrate/source_text.hpp"
#include "common/error.hpp"

namespace parasim::calibrate {
namespace {

struct Token {
  std::string_view text;
  int column = 0;  ///< 1-based
};

std::vector<Token> tokens_of(std::string_view line) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

/// The factor nccl-tests multiplies algbw by to report busbw, and the latency steps parasim's ring
/// model counts (sim/collectives.hpp), for n ranks.
double bus_factor(NcclTest t, double n) {
  switch (t) {
    case NcclTest::AllReduce: return 2 * (n - 1) / n;
    case NcclTest::AllGather:
    case NcclTest::ReduceScatter: return (n - 1) / n;
    case NcclTest::SendRecv: return 1;
  }
  return 1;
}
double latency_steps(NcclTest t, double n) {
  switch (t) {
    case NcclTest::AllReduce: return 2 * (n - 1);
    case NcclTest::AllGather:
    case NcclTest::ReduceScatter: return n - 1;
    case NcclTest::SendRecv: return 1;
  }
  return 1;
}

}  // namespace

sim::CollectiveKind collective_kind(NcclTest t) {
  switch (t) {
    case NcclTest::AllReduce: return sim::CollectiveKind::AllReduce;
    case NcclTest::AllGather: return sim::CollectiveKind::AllGather;
    case NcclTest::ReduceScatter: return sim::CollectiveKind::ReduceScatter;
    case NcclTest::SendRecv: return sim::CollectiveKind::SendRecv;
  }
  return sim::CollectiveKind::AllReduce;
}

std::string_view to_string(NcclTest t) {
  switch (t) {
    case NcclTest::AllReduce: return "all_reduce";
    case NcclTest::AllGather: return "all_gather";
    case NcclTest::ReduceScatter: return "reduce_scatter";
    case NcclTest::SendRecv: return "sendrecv";
  }
  return "all_reduce";
}

std::optional<NcclTest> nccl_test_from_string(std::string_view s) {
  for (NcclTest t : {NcclTest::AllReduce, NcclTest::AllGather, NcclTest::ReduceScatter, NcclTest::SendRecv})
    if (s == to_string(t)) return t;
  return std::nullopt;
}

NcclTestsLog parse_nccl_tests(std::string_view text, const std::string& file, std::optional<NcclTest> test) {
  NcclTestsLog log;
  std::optional<NcclTest> named;
  int named_line = 0;
  std::set<std::string> hosts;
  // Columns of the out-of-place size, time and busbw (0-based token indices), from the header.
  std::optional<std::size_t> col_size, col_time, col_busbw, col_time_in_place, col_algbw;
  std::vector<double> bus_over_alg;  // busbw / algbw of each row that prints both above zero
  const std::vector<Line> lines = lines_of(text);
  for (const auto& [line_no, line] : lines) {
    const std::vector<Token> tok = tokens_of(line);
    if (tok.empty()) continue;
    // A comment — the collective's name, a rank, the table header or its units — or, in the
    // layout of older nccl-tests (2021: NVIDIA/nccl#583), the same lines printed without the '#'.
    const bool comment = tok[0].text.front() == '#';
    std::vector<Token> words = tok;
    if (comment) {
      if (words[0].text == "#") words.erase(words.begin());
      else words[0].text.remove_prefix(1);
    }
    const bool rank_line = words.size() >= 2 && words[0].text == "Rank";
    const bool header = !words.empty() && words[0].text == "size" && std::any_of(words.begin(), words.end(), [](const Token& w) { return w.text == "busbw"; });
    const bool units = !words.empty() && words[0].text == "(B)";
    const bool starting = words.size() >= 4 && words[0].text == "Collective" && words[1].text == "test" && words[2].text == "starting:";
    if (comment || rank_line || header || units || starting) {
      if (starting) {
        std::string_view name = words[3].text;
        if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") name.remove_suffix(5);
        named = nccl_test_from_string(name);
        if (!named)
          throw InputError(file, line_no, words[3].column, "",
                           "found the collective \"" + std::string(words[3].text) +
                               "\", expected all_reduce_perf, all_gather_perf, reduce_scatter_perf or sendrecv_perf (the collectives parasim's link calibration fits)");
        named_line = line_no;
      } else if (rank_line) {
        ++log.rank_lines;
        const auto index = finite_number(words[1].text);
        log.ranks = std::max(log.ranks, index && *index >= 0 && *index == std::floor(*index) ? static_cast<std::int64_t>(*index) + 1 : 0);
        for (std::size_t k = 0; k + 1 < words.size(); ++k)
          if (words[k].text == "on") hosts.insert(std::string(words[k + 1].text));
        if (log.device.empty()) {
          const auto bracket = line.find(']');
          if (bracket != std::string_view::npos) {
            std::string_view name = line.substr(bracket + 1);
            while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
            while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.remove_suffix(1);
            log.device = source_text(name);
          }
        }
      } else if (header) {
        // Token k of the header is token k of a result row (a row has no leading '#').
        for (std::size_t k = 0; k < words.size(); ++k) {
          if (words[k].text == "size" && !col_size) col_size = k;
          if (words[k].text == "time" && col_time && !col_time_in_place) col_time_in_place = k;
          if (words[k].text == "time" && !col_time) col_time = k;
          if (words[k].text == "algbw" && !col_algbw) col_algbw = k;
          if (words[k].text == "busbw" && !col_busbw) col_busbw = k;
        }
      } else if (units && words.size() >= 3 && words[2].text != "(us)") {
        // "(B) (elements) (us) (GB/s) ...": the units of size, count, then time (the type, redop
        // and root columns have none).
        throw InputError(file, line_no, words[2].column, "",
                         "found the time column's unit \"" + std::string(words[2].text) + "\", expected \"(us)\" (nccl-tests prints microseconds)");
      }
      continue;
    }
    // A result row starts with its size; anything else (NCCL_DEBUG output, warnings) is not ours.
    if (!std::isdigit(static_cast<unsigned char>(tok[0].text.front()))) continue;
    if (!col_size || !col_time || !col_busbw)
      throw InputError(file, line_no, tok[0].column, "",
                       "found a result row before the table header, expected a header line \"#  size  count  type ... time  algbw  busbw ...\"");
    const std::size_t need = std::max({*col_size, *col_time, *col_busbw}) + 1;
    if (tok.size() < need)
      throw InputError(file, line_no, tok.back().column, "",
                       "found " + std::to_string(tok.size()) + " fields, expected at least " + std::to_string(need) + " (size ... time algbw busbw)");
    NcclTestsRow row;
    row.line = static_cast<std::size_t>(line_no);
    auto field = [&](std::size_t k, const char* what, bool positive) {
      const auto v = finite_number(tok[k].text);
      if (!v || *v < 0 || (positive && *v <= 0))
        throw InputError(file, line_no, tok[k].column, "",
                         "found \"" + std::string(tok[k].text) + "\" in the " + what + " column, expected a " + (positive ? "positive" : "non-negative") + " number");
      return *v;
    };
    row.bytes = field(*col_size, "size", true);
    if (row.bytes != std::floor(row.bytes) || row.bytes > 9007199254740992.0)  // 2^53: whole bytes, exactly representable
      throw InputError(file, line_no, tok[*col_size].column, "",
                       "found \"" + std::string(tok[*col_size].text) + "\" in the size column, expected a whole number of bytes");
    row.time_s = field(*col_time, "time (us)", true) * 1e-6;
    if (col_time_in_place && *col_time_in_place < tok.size()) row.in_place_time_s = field(*col_time_in_place, "in-place time (us)", true) * 1e-6;
    row.bus_bytes_per_s = field(*col_busbw, "busbw (GB/s)", false) * 1e9;
    if (col_algbw && *col_algbw < tok.size())
      if (const auto alg = finite_number(tok[*col_algbw].text); alg && *alg >= 1 && row.bus_bytes_per_s >= 1e9) bus_over_alg.push_back(row.bus_bytes_per_s / 1e9 / *alg);
    log.rows.push_back(row);
  }
  if (test && named && *test != *named)
    throw InputError(file, named_line, 1, "",
                     "the log is of " + std::string(to_string(*named)) + ", but " + std::string(to_string(*test)) + " was asked for");
  if (log.rows.empty()) throw InputError(file, lines.back().number, 1, "", "found no result rows, expected the size/time/busbw table of nccl-tests");
  log.ranks = std::max(log.ranks, log.rank_lines);
  if (!test && !named) {
    // Older nccl-tests print no "Collective test starting" line (NVIDIA/nccl-tests#107, 2022). Its
    // busbw is algbw times the collective's factor (nccl-tests doc/PERFORMANCE.md): 2(n-1)/n for
    // all_reduce, (n-1)/n for all_gather and reduce_scatter, 1 for sendrecv. Where the factor the
    // rows print (their median; busbw and algbw of at least 1 GB/s, so that two decimals hold three
    // digits) is within 2% of one collective's alone, the log is that collective's; else the user
    // names it.
    std::vector<std::string> matching;
    double printed = 0;
    if (!bus_over_alg.empty() && log.ranks >= 2) {
      std::sort(bus_over_alg.begin(), bus_over_alg.end());
      printed = bus_over_alg[bus_over_alg.size() / 2];
      for (NcclTest t : {NcclTest::AllReduce, NcclTest::AllGather, NcclTest::ReduceScatter, NcclTest::SendRecv})
        if (std::abs(printed / bus_factor(t, static_cast<double>(log.ranks)) - 1) <= 0.02) {
          matching.emplace_back(to_string(t));
          if (!named) named = t;
        }
    }
    if (matching.size() != 1) {
      std::string which;
      for (std::size_t i = 0; i < matching.size(); ++i) which += (i == 0 ? "" : i + 1 == matching.size() ? " or " : ", ") + matching[i];
      throw InputError(file, 1, 1, "",
                       "found no \"# Collective test starting: X_perf\" line, expected one (or name the collective: --collective)" +
                           (matching.empty() ? std::string()
                                             : "; busbw / algbw = " + fixed(printed, 3) + " on " + std::to_string(log.ranks) + " ranks fits " + which + " alike"));
    }
  }
  log.test = test ? *test : *named;
  if (log.ranks < 2)
    throw InputError(file, 1, 1, "", "found " + std::to_string(log.ranks) + " \"#  Rank\" lines, expected at least two ranks (a collective between devices)");
  log.hosts = static_cast<std::int64_t>(hosts.size());
  return log;
}

NcclFit fit_nccl_tests(const NcclTestsLog& log, const std::string& file, sim::CollectiveAlgorithm algorithm, const sim::LinkProfile* base) {
  PARASIM_CHECK(!log.rows.empty() && log.ranks >= 2, "a parsed nccl-tests log");
  PARASIM_CHECK(algorithm == sim::CollectiveAlgorithm::Ring || algorithm == sim::CollectiveAlgorithm::Nvls, "a ring or NVLS fit");
  const bool nvls = algorithm == sim::CollectiveAlgorithm::Nvls;
  if (nvls && log.test != NcclTest::AllReduce)
    throw InputError(file, 1, 1, "", "found an " + std::string(to_string(log.test)) + "_perf log, expected all_reduce_perf: NVLS is fitted for all-reduce only");
  const double n = static_cast<double>(log.ranks);
  const double steps = nvls ? 1 : latency_steps(log.test, n);
  // Bytes each rank moves over its link per byte of the collective (sim/collectives/nvls.cpp, ring.cpp).
  const double factor = nvls ? (n + 1) / n : bus_factor(log.test, n);
  // α comes from the smallest size; from the fastest row where the log says its small sizes are
  // noisier than their differences (NcclTestsLog::latency_from_fastest_row).
  const auto smallest = log.latency_from_fastest_row
                            ? std::min_element(log.rows.begin(), log.rows.end(),
                                               [](const auto& a, const auto& b) {
                                                 return a.best_time_s() != b.best_time_s() ? a.best_time_s() < b.best_time_s() : a.bytes < b.bytes;
                                               })
                            : std::min_element(log.rows.begin(), log.rows.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  NcclFit fit;
  fit.smallest = *smallest;
  fit.latency_s = smallest->best_time_s() / steps;
  // The smallest size measures α only if moving its bytes is a negligible share of its time: at the
  // base link's line rate, at most 1% of it (nccl-tests prints times to 4 significant digits, so
  // its default smallest sizes, 8 B upwards, pass by orders of magnitude). A log that starts at
  // hundreds of MiB does not: its time is mostly bandwidth, whatever its efficiency.
  if (base && base->bandwidth_bytes_per_s > 0 && factor * smallest->bytes / base->bandwidth_bytes_per_s > 0.01 * smallest->best_time_s()) {
    fit.latency_s = base->latency_s;
    fit.latency_from_log = false;
  }
  for (const NcclTestsRow& r : log.rows) {
    const double bandwidth_time = r.best_time_s() - steps * fit.latency_s;
    if (bandwidth_time <= 0) continue;  // all latency: says nothing of the bandwidth
    const double rate = factor * r.bytes / bandwidth_time;
    // In a noisy sweep a small size whose time is within a nanosecond of the latency would read as
    // faster than any link: its bandwidth time is noise, and it says nothing of the bandwidth either.
    if (log.latency_from_fastest_row && base && rate > base->bandwidth_bytes_per_s) continue;
    fit.bus.push_back({r.bytes, rate});
  }
  if (fit.bus.empty())
    throw InputError(file, static_cast<int>(smallest->line), 1, "",
                     "no size's time exceeds the latency of the smallest size, expected sizes up to 1 GiB or more (nccl-tests -e 1G)");
  return fit;
}

sim::LinkProfile calibrated_link(const sim::LinkProfile& base, const NcclTestsLog& log, const std::string& file, std::string_view measured_by,
                                 sim::CollectiveAlgorithm algorithm) {
  const NcclFit fit = fit_nccl_tests(log, file, algorithm, &base);
  const bool nvls = algorithm == sim::CollectiveAlgorithm::Nvls;
  const double line_rate = base.bandwidth_bytes_per_s;
  PARASIM_CHECK(line_rate > 0, "a link with a line rate");
  std::vector<Sample> within;
  for (const Sample& s : fit.bus) {
    if (s.rate_per_s > 1.02 * line_rate) {
      const auto row = std::find_if(log.rows.begin(), log.rows.end(), [&](const auto& r) { return r.bytes == s.size; });
      throw InputError(file, static_cast<int>(row->line), 1, "",
                       "found a bus bandwidth of " + fixed(s.rate_per_s / 1e9, 2) + " GB/s at " + bytes_text(s.size) + " (latency taken off), above " +
                           base.name + "'s line rate of " + fixed(line_rate / 1e9, 2) +
                           " GB/s per direction: the log measured more than one " + base.name +
                           " link per device (several GPUs per node in a multi-node test share NVLink and the NICs; calibrate an "
                           "inter-node link from a test with one GPU per node)" +
                           (nvls ? std::string() : ", or an all-reduce the switch reduced (NVLink SHARP; calibrate the NVLS link: --algorithm nvls --link nvlink4-sharp)"));
    }
    within.push_back({s.size, std::min(s.rate_per_s, line_rate)});
  }
  sim::LinkProfile link = base;
  const std::string name = source_text(std::filesystem::path(file).filename().string());
  const std::string ranks =
      std::to_string(log.ranks) + " ranks" +
      (!(log.rank_lines > 0 && log.rank_lines < log.ranks) ? " on " + std::to_string(log.hosts) + (log.hosts == 1 ? " host" : " hosts")
                                   : " (" + std::to_string(log.rank_lines) + " of their lines printed)") +
      (log.device.empty() ? "" : " (" + log.device + ")") + (nvls ? ", fitted as an NVLS all-reduce" : "");
  const std::string what = measured_by.empty() ? "nccl-tests " + std::string(to_string(log.test)) + "_perf, " + ranks + ", " + name
                                               : std::string(measured_by) + ", " + ranks;
  link.description = base.description + "; calibrated from " + what;
  link.latency_s = fit.latency_s;
  link.efficiency = efficiency_curve(within, line_rate);
  // The measured times hold whatever protocol NCCL ran at each size: the fitted latency and curve
  // stand for all of them, in place of the base profile's per-protocol figures.
  link.protocols.clear();
  link.sources.erase("protocols");
  const double n = static_cast<double>(log.ranks);
  std::ostringstream curve;
  for (const Sample& s : within) curve << (&s == &within.front() ? "" : ", ") << bytes_text(s.size) << " -> " << fixed(s.rate_per_s / 1e9, 2);
  const double steps = nvls ? 1 : latency_steps(log.test, n);
  link.sources["latency_s"] =
      fit.latency_from_log
          ? what + ": the smallest size (" + bytes_text(fit.smallest.bytes) + ", " + fixed(fit.smallest.best_time_s() * 1e6, 2) + " us) over its " +
                fixed(steps, 0) + (nvls ? " NVLS step" : " ring steps")
          : what + " starts at " + bytes_text(fit.smallest.bytes) + ", too large to measure a latency: kept from the base profile (" +
                (base.sources.count("latency_s") ? base.sources.at("latency_s") : std::string("no source")) + ")";
  link.sources["efficiency"] = what + (nvls ? ": per-port rate (n+1)/n · S / (t − α)" : ": bus bandwidth with the fitted latency taken off") +
                               ", over the line rate of " + fixed(line_rate / 1e9, 2) + " GB/s, at the sizes whose time exceeds the latency: " +
                               curve.str() + " GB/s";
  return link;
}

sim::LinkProfile with_collective_curve(const sim::LinkProfile& link, const NcclTestsLog& log, std::string_view measured_by) {
  PARASIM_CHECK(log.test != NcclTest::AllReduce && !log.rows.empty() && log.ranks >= 2, "a log of another collective than the all-reduce");
  const double n = static_cast<double>(log.ranks);
  const double steps = latency_steps(log.test, n), factor = bus_factor(log.test, n), line_rate = link.bandwidth_bytes_per_s;
  std::vector<Sample> samples;
  std::ostringstream listing;
  for (const NcclTestsRow& r : log.rows) {
    const double bandwidth_time = r.best_time_s() - steps * link.latency_s;
    if (bandwidth_time <= 0) continue;  // all latency: says nothing of the bandwidth
    const double rate = std::min(factor * r.bytes / bandwidth_time, line_rate);
    samples.push_back({r.bytes, rate});
    listing << (samples.size() == 1 ? "" : ", ") << bytes_text(r.bytes) << " -> " << fixed(rate / 1e9, 2);
  }
  sim::LinkProfile out = link;
  if (samples.empty()) return out;
  const sim::CollectiveKind kind = collective_kind(log.test);
  out.collective_efficiency[kind] = efficiency_curve(samples, line_rate);
  out.sources["collective_efficiency." + std::string(sim::to_string(kind))] =
      std::string(measured_by) + ", " + std::to_string(log.ranks) + " ranks: bus bandwidth (nccl-tests' factor " + fixed(factor, 3) +
      ") with the link's latency taken off over " + fixed(steps, 0) + (steps == 1 ? " step" : " steps") + ", over the line rate of " +
      fixed(line_rate / 1e9, 2) + " GB/s: " + listing.str() + " GB/s";
  return out;
}

}  // namespace parasim::calibrate
