#include "calibrate/kernel_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "calibrate/source_text.hpp"
#include "calibrate/sweep.hpp"
#include "common/error.hpp"

namespace parasim::calibrate {
namespace {

constexpr std::size_t kMaxRows = 100000;
const std::vector<std::string> kColumns{"kernel", "seconds", "dtype", "m", "n", "k", "bytes"};

struct Cell {
  std::string_view text;
  int column = 1;  // 1-based
};

/// The cells of a CSV line (no quoting: no column holds a comma), each trimmed of spaces and tabs.
std::vector<Cell> cells_of(std::string_view line) {
  std::vector<Cell> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(line.find(',', start), line.size());
    std::size_t a = start, b = comma;
    while (a < b && (line[a] == ' ' || line[a] == '\t')) ++a;
    while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t' || line[b - 1] == '\r')) --b;
    cells.push_back({line.substr(a, b - a), static_cast<int>(a) + 1});
    if (comma == line.size()) break;
    start = comma + 1;
  }
  return cells;
}

std::string whole(double x) { return fixed(x, 0); }

}  // namespace

std::vector<KernelTiming> parse_kernel_csv(std::string_view text, const std::string& file) {
  std::vector<KernelTiming> rows;
  std::map<std::string, std::size_t> at;  // column name → index
  bool have_header = false;
  const std::vector<Line> lines = lines_of(text);
  for (const auto& [line_no, line] : lines) {
    const std::vector<Cell> cells = cells_of(line);
    if (cells.size() == 1 && cells[0].text.empty()) continue;  // blank
    if (!cells[0].text.empty() && cells[0].text.front() == '#') continue;
    if (!have_header) {
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string name(cells[i].text);
        if (std::find(kColumns.begin(), kColumns.end(), name) == kColumns.end())
          throw InputError(file, line_no, cells[i].column, "",
                           "found the column \"" + source_text(name) + "\", expected kernel, seconds, dtype, m, n, k or bytes");
        if (!at.emplace(name, i).second) throw InputError(file, line_no, cells[i].column, "", "found the column \"" + name + "\" twice, expected each once");
      }
      for (const char* required : {"kernel", "seconds"})
        if (!at.count(required)) throw InputError(file, line_no, 1, "", std::string("found no \"") + required + "\" column, expected one in the header row");
      have_header = true;
      continue;
    }
    if (cells.size() != at.size())
      throw InputError(file, line_no, cells.back().column, "",
                       "found " + std::to_string(cells.size()) + " cells, expected " + std::to_string(at.size()) + " (one per column of the header)");
    if (rows.size() == kMaxRows) throw InputError(file, line_no, 1, "", "found more than 100,000 rows, expected at most 100,000");
    auto cell = [&](const char* name) -> const Cell* {
      const auto it = at.find(name);
      return it == at.end() ? nullptr : &cells[it->second];
    };
    auto needed = [&](const char* name, const std::string& why) -> const Cell& {
      const Cell* c = cell(name);
      if (!c) throw InputError(file, line_no, 1, "", "found no \"" + std::string(name) + "\" column, expected one: " + why);
      if (c->text.empty()) throw InputError(file, line_no, c->column, "", "found an empty " + std::string(name) + " cell, expected " + why);
      return *c;
    };
    auto positive = [&](const Cell& c, const char* what, bool whole) {
      const auto v = finite_number(c.text);
      if (!v || *v <= 0 || (whole && (*v != std::floor(*v) || *v > 9007199254740992.0)))
        throw InputError(file, line_no, c.column, "",
                         "found \"" + source_text(c.text) + "\" in the " + what + " column, expected a positive " + (whole ? "whole number" : "number"));
      return *v;
    };
    KernelTiming t;
    t.line = static_cast<std::size_t>(line_no);
    const Cell& kernel = needed("kernel", "gemm or memory");
    if (kernel.text == "gemm") {
      t.kernel = KernelTiming::Kernel::Gemm;
      const Cell& dtype = needed("dtype", "a GEMM's compute dtype (fp32, tf32, bf16, fp16, fp8)");
      const auto d = models::dtype_from_string(dtype.text);
      if (!d || *d == models::DType::I32 || *d == models::DType::I64 || *d == models::DType::U8)
        throw InputError(file, line_no, dtype.column, "", "found the dtype \"" + source_text(dtype.text) + "\", expected fp32, tf32, bf16, fp16 or fp8");
      t.dtype = *d;
      t.m = static_cast<std::int64_t>(positive(needed("m", "a GEMM's m"), "m", true));
      t.n = static_cast<std::int64_t>(positive(needed("n", "a GEMM's n"), "n", true));
      t.k = static_cast<std::int64_t>(positive(needed("k", "a GEMM's k"), "k", true));
    } else if (kernel.text == "memory") {
      t.kernel = KernelTiming::Kernel::Memory;
      t.bytes = positive(needed("bytes", "the bytes a memory-bound kernel reads and writes"), "bytes", true);
    } else {
      throw InputError(file, line_no, kernel.column, "", "found the kernel \"" + source_text(kernel.text) + "\", expected gemm or memory");
    }
    const Cell& seconds = needed("seconds", "the kernel's time in seconds");
    t.seconds = positive(seconds, "seconds", false);
    // Bounds that keep every rate and every rate over the fastest finite and above zero.
    if (t.seconds < 1e-12 || t.seconds > 1e6)
      throw InputError(file, line_no, seconds.column, "", "found " + source_text(seconds.text) + " s, expected a time from 1e-12 to 1e6 seconds");
    rows.push_back(t);
  }
  if (!have_header) throw InputError(file, 1, 1, "", "found no header row, expected one naming the columns (kernel,dtype,m,n,k,bytes,seconds)");
  if (rows.empty()) throw InputError(file, lines.back().number, 1, "", "found no rows, expected one per timed kernel after the header");
  return rows;
}

sim::DeviceProfile calibrated_from_csv(const sim::DeviceProfile& base, const std::vector<KernelTiming>& rows, const std::string& file) {
  PARASIM_CHECK(!rows.empty(), "a kernel CSV with rows");
  sim::DeviceProfile d = base;
  const std::string what = "kernel timings measured elsewhere, read by `parasim calibrate --from-csv` from " + source_text(file);
  std::map<models::DType, std::vector<Sample>> gemm;
  std::vector<models::DType> order;  // the file's dtypes, first seen first
  std::vector<Sample> memory;
  for (const KernelTiming& t : rows) {
    if (t.kernel == KernelTiming::Kernel::Gemm) {
      const double flops = 2.0 * static_cast<double>(t.m) * static_cast<double>(t.n) * static_cast<double>(t.k);
      if (!gemm.count(t.dtype)) order.push_back(t.dtype);
      gemm[t.dtype].push_back({flops, flops / t.seconds});
    } else {
      memory.push_back({t.bytes, t.bytes / t.seconds});
    }
  }
  for (const auto& [dtype, samples] : gemm) {
    const double peak = best_rate(samples);
    const std::string name(models::to_string(dtype));
    d.peak_flops_per_s[dtype] = peak;
    d.gemm_efficiency_by_dtype[dtype] = efficiency_curve(samples, peak);
    d.sources["peak_flops_per_s." + name] = what + ": the fastest " + name + " GEMM row, " + fixed(peak / 1e12, 3) + " TFLOP/s";
    d.sources["gemm_efficiency_by_dtype." + name] =
        what + ": each " + name + " GEMM row's FLOPs (2mnk) over its time, over the fastest, by FLOPs: " + listing(samples, 1e12, "TFLOP/s", whole);
  }
  if (!order.empty()) {
    const models::DType main = gemm.count(models::DType::F32) ? models::DType::F32 : order.front();
    d.gemm_efficiency = d.gemm_efficiency_by_dtype.at(main);
    d.sources["gemm_efficiency"] = what + ": the " + std::string(models::to_string(main)) + " rows' curve (gemm_efficiency_by_dtype." +
                                   std::string(models::to_string(main)) + ")";
  }
  if (!memory.empty()) {
    const double bandwidth = best_rate(memory);
    d.memory_bandwidth_bytes_per_s = bandwidth;
    d.memory_efficiency = efficiency_curve(memory, bandwidth);
    d.sources["memory_bandwidth_bytes_per_s"] = what + ": the fastest memory row, " + fixed(bandwidth / 1e9, 2) + " GB/s";
    d.sources["memory_efficiency"] = what + ": each memory row's bytes over its time, over the fastest, by bytes: " + listing(memory, 1e9, "GB/s", whole);
  }
  d.description = base.description + "; calibrated from " + source_text(file);
  return d;
}

}  // namespace parasim::calibrate
