// `parasim calibrate --from-csv`: kernel timings measured elsewhere fitted into a device
// (calibrate/kernel_csv.hpp). Every figure is derived by hand beside its check.
#include <catch2/catch.hpp>

#include <string>

#include "calibrate/kernel_csv.hpp"
#include "common/error.hpp"
#include "sim/cost_model.hpp"

using namespace parasim;
using namespace parasim::calibrate;
using Catch::Matchers::WithinRel;

namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_kernel_csv(text, "k.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

// bf16: 2·1024³ = 2,147,483,648 FLOPs in 100 µs is 21.47 TFLOP/s; 2·4096³ = 137,438,953,472 FLOPs in
// 1.6 ms is 85.90 TFLOP/s, the peak; so the curve is 0.25 then 1. Memory: 1 MiB in 10 µs is 104.9
// GB/s, 1 GiB in 0.5 ms 2147.5 GB/s, the bandwidth; so 0.0488 then 1. Columns in another order,
// a comment and a blank line between rows.
TEST_CASE("calibrate --from-csv fits each dtype's peak and curve and the memory curve from the rows", "[calibrate][csv]") {
  const std::string text =
      "# cuBLAS and a copy kernel, timed elsewhere\n"
      "seconds,kernel,dtype,m,n,k,bytes\n"
      "0.0001,gemm,bf16,1024,1024,1024,\n"
      "\n"
      "0.0016, gemm, bf16, 4096, 4096, 4096,\n"
      "0.00001,memory,,,,,1048576\n"
      "0.0005,memory,,,,,1073741824\n";
  const auto rows = parse_kernel_csv(text, "k.csv");
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].line == 5);
  const sim::DeviceProfile& base = sim::datasheet_profile().device("h100-sxm");
  const sim::DeviceProfile d = calibrated_from_csv(base, rows, "k.csv");
  CHECK_THAT(d.peak_flops_per_s.at(models::DType::BF16), WithinRel(137438953472.0 / 0.0016, 1e-12));
  const auto& curve = d.gemm_efficiency_by_dtype.at(models::DType::BF16);
  REQUIRE(curve.points.size() == 2);
  CHECK_THAT(curve.points[0].second, WithinRel(0.25, 1e-12));
  CHECK(curve.points[1].second == 1.0);
  CHECK(d.gemm_efficiency == curve);  // the file's only dtype gives the default curve too
  CHECK(d.peak_flops_per_s.at(models::DType::FP8) == base.peak_flops_per_s.at(models::DType::FP8));  // not timed: kept
  CHECK_THAT(d.memory_bandwidth_bytes_per_s, WithinRel(1073741824.0 / 0.0005, 1e-12));
  CHECK_THAT(d.memory_efficiency.points[0].second, WithinRel((1048576.0 / 0.00001) / (1073741824.0 / 0.0005), 1e-12));
  // The cost model gives back a row's time: the bf16 1024³ GEMM, 100 µs (plus the launch overhead).
  const double f = 2.0 * 1024 * 1024 * 1024;
  CHECK_THAT(sim::kernel_seconds(d, models::OpClass::Gemm, models::DType::BF16, f, 0, f, 1) - d.kernel_launch_overhead_s, WithinRel(1e-4, 1e-9));
  CHECK(d.sources.at("peak_flops_per_s.bf16") ==
        "kernel timings measured elsewhere, read by `parasim calibrate --from-csv` from k.csv: the fastest bf16 GEMM row, 85.899 TFLOP/s");
}

TEST_CASE("calibrate --from-csv: errors name the file, line, column and what was expected", "[calibrate][csv]") {
  CHECK(error_of("") == "k.csv:1:1: found no header row, expected one naming the columns (kernel,dtype,m,n,k,bytes,seconds)");
  CHECK(error_of("kernel,secs\n") == "k.csv:1:8: found the column \"secs\", expected kernel, seconds, dtype, m, n, k or bytes");
  CHECK(error_of("kernel,seconds,kernel\n") == "k.csv:1:16: found the column \"kernel\" twice, expected each once");
  CHECK(error_of("kernel,bytes\nmemory,8\n") == "k.csv:1:1: found no \"seconds\" column, expected one in the header row");
  CHECK(error_of("kernel,seconds\n") == "k.csv:2:1: found no rows, expected one per timed kernel after the header");
  CHECK(error_of("kernel,seconds,bytes\nmemory,1e-3\n") == "k.csv:2:8: found 2 cells, expected 3 (one per column of the header)");
  CHECK(error_of("kernel,seconds,bytes\nconv,1e-3,8\n") == "k.csv:2:1: found the kernel \"conv\", expected gemm or memory");
  CHECK(error_of("kernel,seconds,bytes\nmemory,-1,8\n") == "k.csv:2:8: found \"-1\" in the seconds column, expected a positive number");
  CHECK(error_of("kernel,seconds,bytes\nmemory,1e-3,8.5\n") == "k.csv:2:13: found \"8.5\" in the bytes column, expected a positive whole number");
  CHECK(error_of("kernel,seconds,bytes\ngemm,1e-3,8\n") ==
        "k.csv:2:1: found no \"dtype\" column, expected one: a GEMM's compute dtype (fp32, tf32, bf16, fp16, fp8)");
  CHECK(error_of("kernel,seconds,dtype,m,n,k\ngemm,1e-3,int32,1,1,1\n") == "k.csv:2:11: found the dtype \"int32\", expected fp32, tf32, bf16, fp16 or fp8");
  CHECK(error_of("kernel,seconds,dtype,m,n,k\ngemm,1e-3,fp16,1,,1\n") == "k.csv:2:18: found an empty n cell, expected a GEMM's n");
}
