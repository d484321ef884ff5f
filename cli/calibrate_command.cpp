// `parasim calibrate`: measure this machine (or read nccl-tests results) and write a profile — the
// base profile (the datasheet one unless --base names another) with the measured figures in place of
// its own, each with a source naming the measurement. `parasim SCENARIO.json --profile P.json` then
// simulates with it, and every report says which profile produced each figure.
#include <iomanip>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "calibrate/cpu.hpp"
#include "calibrate/gpu.hpp"
#include "calibrate/kernel_csv.hpp"
#include "calibrate/loader.hpp"
#include "calibrate/nccl_tests.hpp"
#include "calibrate/source_text.hpp"
#include "cli/commands.hpp"
#include "common/input_file.hpp"
#include "cli/validators.hpp"
#include "cli/output_files.hpp"
#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/json_document.hpp"
#include "data/dataset.hpp"
#include "exec/host_memory.hpp"
#include "mpi/session.hpp"
#include "reports/format.hpp"
#include "reports/html.hpp"
#include "sim/cluster.hpp"
#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "sim/profile_json.hpp"

namespace parasim::cli {
namespace {

using calibrate::bytes_text;
using calibrate::fixed;

constexpr int kExitCannotRun = 3;

struct CalibrateArgs {
  std::string backend;
  std::string nccl_tests;
  std::string csv;  // --from-csv: kernel timings measured elsewhere
  std::string collective;
  std::string out;
  std::string base;
  std::string name = "calibrated";
  std::string device;
  int threads = 0;  // cpu: OpenBLAS threads of the GEMMs (0: every core)
  std::string link;
  std::string algorithm = "ring";
  std::string data;    // loader: the dataset's folder
  std::int64_t image_size = 0;  // loader: the tensors' side (0: the dataset's)
  std::string report;  // loader: the folder of report.html
};

std::vector<std::string> keys_of(const auto& map) {
  std::vector<std::string> out;
  for (const auto& [k, v] : map) out.push_back(k);
  return out;
}

const sim::DeviceProfile& device_of(const sim::Profile& p, const std::string& name, const std::string& option) {
  const auto it = p.devices.find(name);
  if (it == p.devices.end())
    throw InputError("<command line>", 0, 0, "", option + ": found \"" + name + "\", expected a device of profile \"" + p.name + "\"" + did_you_mean(name, keys_of(p.devices)) +
                                                     ": " + quoted_list(keys_of(p.devices)));
  return it->second;
}
const sim::LinkProfile& link_of(const sim::Profile& p, const std::string& name) {
  const auto it = p.links.find(name);
  if (it == p.links.end())
    throw InputError("<command line>", 0, 0, "", "--link: found \"" + name + "\", expected a link class of profile \"" + p.name + "\"" + did_you_mean(name, keys_of(p.links)) +
                                                     ": " + quoted_list(keys_of(p.links)));
  return it->second;
}

void print_curve(std::ostream& out, const char* what, const sim::EfficiencyCurve& c, const std::function<std::string(double)>& size) {
  out << "  " << what << ":";
  for (const auto& [s, e] : c.points) out << "  " << size(s) << " " << fixed(e, 3);
  out << "\n";
}

int calibrate(const CalibrateArgs& a, std::ostream& out, std::ostream& err) {
  // Kernels and collectives timed on memory kept as `parasim execute` keeps it (exec/host_memory.hpp).
  (void)exec::keep_freed_memory();
  // The output is checked before anything is measured: a sweep takes seconds to minutes.
  check_output_file(a.out);
  if ((a.backend.empty() ? 0 : 1) + (a.nccl_tests.empty() ? 0 : 1) + (a.csv.empty() ? 0 : 1) != 1)
    throw InputError("<command line>", 0, 0, "",
                     "give one of --backend cpu|cuda|nccl|mpi|loader (measure this machine), --from-nccl-tests LOG or --from-csv FILE (read results)");
  sim::Profile profile = a.base.empty() ? sim::datasheet_profile() : sim::profile_from_json(JsonDocument::read_file(a.base));
  const std::string base_name = a.base.empty() ? "the datasheet profile" : "profile \"" + profile.name + "\" (" + calibrate::source_text(a.base) + ")";
  profile.name = a.name;
  auto cannot_run = [&](const std::string& reason) {
    err << "parasim: calibrate cannot run: " << reason << "\n";
    return kExitCannotRun;
  };

  if (!a.csv.empty()) {
    if (a.device.empty()) throw InputError("<command line>", 0, 0, "", "--from-csv needs --device NAME: the profile device the timings measured (h100-sxm, host-cpu, ...)");
    const sim::DeviceProfile base_device = device_of(profile, a.device, "--device");  // a copy: the entry is replaced below
    const std::string text = read_input_file(a.csv, kMaxLogBytes, "a kernel-timing CSV");
    const std::vector<calibrate::KernelTiming> rows = calibrate::parse_kernel_csv(text, a.csv);
    const sim::DeviceProfile& d = profile.devices[a.device] = calibrate::calibrated_from_csv(base_device, rows, a.csv);
    profile.origin = "parasim calibrate --from-csv " + calibrate::source_text(a.csv) + " (device " + a.device + "), " + calibrate::today_utc() + " UTC, over " + base_name;
    std::size_t gemms = 0;
    for (const auto& r : rows) gemms += r.kernel == calibrate::KernelTiming::Kernel::Gemm ? 1 : 0;
    out << "parasim calibrate: " << a.device << " from " << rows.size() << " kernel timings in " << a.csv << " (" << gemms << " GEMM, " << rows.size() - gemms
        << " memory)\n";
    for (const auto& [dtype, curve] : d.gemm_efficiency_by_dtype) {
      if (base_device.gemm_efficiency_by_dtype.count(dtype) && base_device.gemm_efficiency_by_dtype.at(dtype) == curve) continue;
      const std::string name(models::to_string(dtype));
      out << "  " << name << " peak (fastest row)" << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ') << fixed(d.peak_flops_per_s.at(dtype) / 1e12, 3) << " TFLOP/s\n";
      print_curve(out, (name + " GEMM efficiency by FLOPs").c_str(), curve, [](double f) { return fixed(f / 1e9, 1) + " GFLOP"; });
    }
    if (gemms < rows.size()) {
      out << "  memory bandwidth (fastest row)  " << fixed(d.memory_bandwidth_bytes_per_s / 1e9, 2) << " GB/s\n";
      print_curve(out, "memory efficiency by bytes", d.memory_efficiency, bytes_text);
    }
  } else if (!a.nccl_tests.empty()) {
    if (a.link.empty()) throw InputError("<command line>", 0, 0, "", "--from-nccl-tests needs --link NAME: the link class the log measured (nvlink3, ib-hdr, ...)");
    const std::string text = read_input_file(a.nccl_tests, kMaxLogBytes, "an nccl-tests log");
    std::optional<calibrate::NcclTest> test;
    if (!a.collective.empty()) {
      test = calibrate::nccl_test_from_string(a.collective);
      if (!test) throw InputError("<command line>", 0, 0, "", "--collective: found \"" + a.collective + "\", expected all_reduce, all_gather, reduce_scatter or sendrecv");
    }
    if (a.algorithm != "ring" && a.algorithm != "nvls")
      throw InputError("<command line>", 0, 0, "", "--algorithm: found \"" + a.algorithm + "\", expected ring or nvls");
    const sim::CollectiveAlgorithm algorithm = a.algorithm == "nvls" ? sim::CollectiveAlgorithm::Nvls : sim::CollectiveAlgorithm::Ring;
    const calibrate::NcclTestsLog log = calibrate::parse_nccl_tests(text, a.nccl_tests, test);
    sim::LinkProfile& link = profile.links[a.link] = calibrate::calibrated_link(link_of(profile, a.link), log, a.nccl_tests, {}, algorithm);
    profile.origin = "parasim calibrate --from-nccl-tests " + calibrate::source_text(a.nccl_tests) + " (link " + a.link + "), over " + base_name;
    out << "parasim calibrate: " << a.link << " from nccl-tests " << calibrate::to_string(log.test) << "_perf, " << log.ranks << " ranks"
        << (!(log.rank_lines > 0 && log.rank_lines < log.ranks) ? " on " + std::to_string(log.hosts) + (log.hosts == 1 ? " host" : " hosts")
                                        : " (" + std::to_string(log.rank_lines) + " of their lines printed)")
        << (log.device.empty() ? "" : ", " + log.device) << "\n";
    out << (algorithm == sim::CollectiveAlgorithm::Nvls ? "  latency (alpha, one NVLS step)  " : "  latency (alpha per ring step)  ")
        << fixed(link.latency_s * 1e6, 3) << " us\n";
    out << "  line rate (kept)               " << fixed(link.bandwidth_bytes_per_s / 1e9, 2) << " GB/s per direction\n";
    print_curve(out, "efficiency by message size", link.efficiency, bytes_text);
  } else if (a.backend == "cpu") {
    const std::string device = a.device.empty() ? "host-cpu" : a.device;
    const sim::DeviceProfile& base = device_of(profile, device, "--device");
    calibrate::CpuOptions options;
    options.threads = static_cast<unsigned>(a.threads);
    const calibrate::CpuMeasurement m = calibrate::measure_cpu(options);
    const sim::DeviceProfile& d = profile.devices[device] = calibrate::calibrated_cpu(base, m);
    profile.origin = "parasim calibrate --backend cpu --threads " + std::to_string(m.threads) + " on " + m.cpu + ", " + calibrate::today_utc() + " UTC, over " + base_name;
    out << "parasim calibrate: " << device << " measured on " << m.cpu << " (GEMMs on " << m.threads << (m.threads == 1 ? " thread, " : " threads, ") << m.blas << ")\n";
    out << "  fp32 peak (fastest sgemm)      " << fixed(d.peak_flops_per_s.at(models::DType::F32) / 1e9, 2) << " GFLOP/s\n";
    print_curve(out, "GEMM efficiency by n^3", d.gemm_efficiency, [](double f) { return std::to_string(std::llround(std::cbrt(f / 2))) + "^3"; });
    print_curve(out, "thin-GEMM factor by smallest dim", d.gemm_thin_efficiency, [](double x) { return std::to_string(std::llround(x)); });
    for (std::size_t o = 0; o < 3; ++o)
      if (!d.gemm_thin_efficiency_by_dim[o].points.empty())
        print_curve(out, (std::string("  as ") + "mnk"[o] + " (untransposed)").c_str(), d.gemm_thin_efficiency_by_dim[o],
                    [](double x) { return std::to_string(std::llround(x)); });
    if (!d.gemm_thin_backward_efficiency.points.empty())
      print_curve(out, "  its backward pair, m thin", d.gemm_thin_backward_efficiency, [](double x) { return std::to_string(std::llround(x)); });
    out << "  memory bandwidth (best pass)   " << fixed(d.memory_bandwidth_bytes_per_s / 1e9, 2) << " GB/s\n";
    print_curve(out, "memory efficiency by bytes moved", d.memory_efficiency, bytes_text);
    out << "  softmax rate                   " << fixed(d.softmax_flops_per_s / 1e9, 2) << " GFLOP/s\n";
    out << "  optimizer rate (Adam)          " << fixed(d.optimizer_flops_per_s / 1e9, 2) << " GFLOP/s\n";
    if (d.optimizer_bytes_per_s > 0) {
      out << "  optimizer update (in place)    " << fixed(d.optimizer_bytes_per_s / 1e9, 2) << " GB/s\n";
      print_curve(out, "optimizer update efficiency by bytes in play", d.optimizer_memory_efficiency, bytes_text);
    }
    if (d.weight_reuse_bytes_per_s > 0) {
      out << "  weight read warm (sgemm " << m.weight_reuse_shape[0] << "x" << m.weight_reuse_shape[1] << "x" << m.weight_reuse_shape[2] << ")  "
          << fixed(d.weight_reuse_bytes_per_s / 1e9, 2) << " GB/s of weight, " << fixed(m.weight_reuse_warm_s * 1e3, 3) << " ms a call\n";
      print_curve(out, "its speed by bytes written between calls", d.weight_reuse_efficiency, bytes_text);
    }
    if (d.weight_reuse_backward_bytes_per_s > 0) {
      out << "  its backward (dX and dW) warm    " << fixed(m.weight_reuse_backward_warm_s * 1e3, 3) << " ms a call\n";
      print_curve(out, "its speed by bytes written between calls", d.weight_reuse_backward_efficiency, bytes_text);
    }
    if (d.memory_reuse_bytes_per_s > 0) {
      out << "  memory pass warm (" << bytes_text(m.memory_reuse_bytes) << ")      " << fixed(d.memory_reuse_bytes_per_s / 1e9, 2) << " GB/s, "
          << fixed(m.memory_reuse_warm_s * 1e6, 2) << " us a call\n";
      print_curve(out, "its speed by bytes written between calls, its output cold", d.memory_reuse_efficiency, bytes_text);
      print_curve(out, "the same, its input cold", d.memory_reuse_read_efficiency, bytes_text);
    }
    out << "  per-kernel overhead            " << fixed(d.kernel_launch_overhead_s * 1e6, 3) << " us\n";
    out << "  memory                         " << fixed(d.memory_capacity_bytes / double(1 << 30), 2) << " GiB\n";
    out << "  held-out shapes (median measured, predicted from the figures above, error):\n";
    for (const auto& c : d.held_out)
      out << "    " << (c.kernel == "gemm" ? "sgemm " : "memory pass ") << c.shape << ": " << fixed(c.measured_s * 1e6, 1) << " us, "
          << fixed(c.predicted_s * 1e6, 1) << " us, " << reports::change_percent(c.predicted_s, c.measured_s) << "\n";
    for (const double bytes : m.held_out_memory_skipped)
      out << "    memory pass " << bytes_text(bytes) << ": not checked, on the edge of the " << bytes_text(m.last_level_cache_bytes)
          << " last level cache (half to four times its size)\n";
  } else if (a.backend == "cuda") {
    const auto measured = calibrate::measure_cuda();
    if (const auto* u = std::get_if<calibrate::Unavailable>(&measured)) return cannot_run("--backend cuda: " + u->reason);
    const auto& m = std::get<calibrate::CudaMeasurement>(measured);
    std::string device = a.device;
    if (device.empty()) {
      const auto guess = calibrate::profile_device_for(m.device_name);
      if (!guess) throw InputError("<command line>", 0, 0, "", "the GPU \"" + m.device_name + "\" is no device parasim knows: name its profile device with --device");
      device = *guess;
    }
    const sim::DeviceProfile& d = profile.devices[device] = calibrate::calibrated_gpu(device_of(profile, device, "--device"), m, "--backend cuda");
    profile.origin = "parasim calibrate --backend cuda on " + m.device_name + ", " + calibrate::today_utc() + " UTC, over " + base_name;
    out << "parasim calibrate: " << device << " measured on " << m.device_name << "\n";
    print_curve(out, "fp16 GEMM efficiency by FLOPs", d.gemm_efficiency, [](double f) { return f < 1e9 ? fixed(f / 1e6, 0) + "M" : fixed(f / 1e9, 0) + "G"; });
    print_curve(out, m.memory.empty() ? "copy efficiency by bytes moved" : "memory-bound kernel efficiency by bytes moved", d.memory_efficiency, bytes_text);
    if (!d.gemm_thin_efficiency.points.empty()) print_curve(out, "thin GEMM factor by thin dim", d.gemm_thin_efficiency, [](double v) { return fixed(v, 0); });
    if (d.softmax_flops_per_s > 0) out << "  softmax                        " << fixed(d.softmax_flops_per_s / 1e12, 3) << " TFLOP/s\n";
    out << "  launch overhead                " << fixed(d.kernel_launch_overhead_s * 1e6, 3) << " us\n";
  } else if (a.backend == "nccl") {
    const auto measured = calibrate::measure_nccl();
    if (const auto* u = std::get_if<calibrate::Unavailable>(&measured)) return cannot_run("--backend nccl: " + u->reason);
    const auto& log = std::get<calibrate::NcclTestsLog>(measured);
    // The profile device of the GPU CUDA names, or the option that names it instead.
    auto device_named = [&](const std::string& cuda_name, const std::string& option) {
      const auto guess = calibrate::profile_device_for(cuda_name);
      if (!guess || !profile.devices.count(*guess))
        throw InputError("<command line>", 0, 0, "", "the GPU \"" + cuda_name + "\" is no device parasim knows: " + option);
      return *guess;
    };
    const std::string link =
        a.link.empty() ? profile.devices.at(device_named(log.device, "name the link class with --link")).default_intra_link : a.link;
    const sim::LinkProfile& l = profile.links[link] = calibrate::calibrated_link(link_of(profile, link), log, "--backend nccl", "ncclAllReduce by `parasim calibrate --backend nccl`");
    profile.origin = "parasim calibrate --backend nccl on " + std::to_string(log.ranks) + " x " + log.device + ", " + calibrate::today_utc() + " UTC, over " + base_name;
    out << "parasim calibrate: " << link << " measured by an NCCL all-reduce over " << log.ranks << " x " << log.device << "\n";
    out << "  latency (alpha per ring step)  " << fixed(l.latency_s * 1e6, 3) << " us\n";
    print_curve(out, "efficiency by message size", l.efficiency, bytes_text);
    // The same GPUs measure what an all-reduce and the GEMMs beside it cost each other.
    const auto beside = calibrate::measure_interference();
    if (const auto* u = std::get_if<calibrate::Unavailable>(&beside)) {
      out << "  interference                   not measured: " << u->reason << "\n";
    } else {
      const auto& m = std::get<calibrate::InterferenceMeasurement>(beside);
      const std::string device = a.device.empty() ? device_named(m.device_name, "name its profile device with --device") : a.device;
      const sim::DeviceProfile& d = profile.devices[device] =
          calibrate::calibrated_interference(device_of(profile, device, "--device"), {m}, "--backend nccl");
      const auto all_reduce = static_cast<std::size_t>(sim::CollectiveKind::AllReduce);
      out << "  interference (" << device << ")     compute keeps " << fixed(d.interference.compute[all_reduce], 3)
          << " beside an all-reduce, the all-reduce " << fixed(d.interference.communication[all_reduce], 3) << " beside the GEMMs\n";
    }
  } else if (a.backend == "mpi") {
    if (a.link.empty()) throw InputError("<command line>", 0, 0, "", "--backend mpi needs --link NAME: the link class between the ranks (ib-hdr, ethernet-100, ...)");
    const sim::LinkProfile& base_link = link_of(profile, a.link);
    const mpi::Session session;
    if (!session.active())
      return cannot_run(mpi::launched_by_mpirun() ? "--backend mpi: this build has no MPI (CMake found none)"
                                             : "--backend mpi: run it under mpirun with two ranks or more (mpirun -np 2 parasim calibrate --backend mpi ...)");
    if (session.size() < 2) return cannot_run("--backend mpi: an all-reduce needs two ranks or more; mpirun started 1");
    std::vector<double> sizes;
    // Every power of two from 8 B to 64 MiB. Open MPI's collectives change algorithm with size, and
    // a grid of fours missed a step of its shared-memory reduce-scatter: on this project's 2-core
    // host it moved 4.1 GB/s of buffer at 8 MiB, 3.4 at 12 MiB, 1.5 at 16 MiB, 1.1 at 32 MiB, and the
    // 14-19 MiB gradient buckets of ResNet-18 under ZeRO-3 fell between the 8 and 32 MiB points.
    for (double b = 8; b <= double(64 << 20); b *= 2) sizes.push_back(b);
    // Every collective the executor runs, as it runs it (polled non-blocking calls): the all-reduce
    // calibrates the link; the others check what the link then predicts for them.
    const calibrate::NcclTestsLog log = session.collective_sweep(calibrate::NcclTest::AllReduce, sizes, 2, 10);
    std::vector<calibrate::NcclTestsLog> others;
    for (const auto test : {calibrate::NcclTest::AllGather, calibrate::NcclTest::ReduceScatter, calibrate::NcclTest::SendRecv})
      others.push_back(session.collective_sweep(test, sizes, 2, 10));
    // What compute and each collective cost each other on these ranks, as `parasim execute` runs
    // them: a 512^3 sgemm (a few milliseconds on one core) beside each kind the executor runs, on
    // as many BLAS threads as each rank of `parasim execute` uses by default. Each kind gets its
    // own rates: on this project's 2-core host an all-gather kept 0.45 of its speed beside the
    // GEMMs where a send-recv kept 0.69. And each at 1, 4, 16 and 64 MiB (a pipeline send's, a
    // ZeRO-3 layer's and a gradient bucket's orders of size): there a polled all-reduce kept
    // 0.54-0.66 of its speed at 16 MiB and 0.47-0.50 at 40 MiB (docs/validation.md).
    const int blas_threads = a.threads > 0 ? static_cast<int>(a.threads) : mpi::cores_per_rank();
    std::vector<calibrate::InterferenceMeasurement> beside;
    for (const auto test : {calibrate::NcclTest::AllReduce, calibrate::NcclTest::AllGather, calibrate::NcclTest::ReduceScatter, calibrate::NcclTest::SendRecv})
      for (const double mib : {1, 4, 16, 64}) beside.push_back(session.interference(test, 512, mib * double(1 << 20), blas_threads));
    // How far apart the ranks run the same work at once: a step of ranks in step runs at the slower
    // one's pace. On this project's 2-core host two ranks' compute in the same step, the same work
    // on each, was 1.5-30% apart, the slower rank not the same from run to run (docs/validation.md).
    const calibrate::RankSpreadMeasurement spread = session.rank_spread(blas_threads);
    // The kernels' curves with every rank of a host running them at once, a barrier before each
    // size: the ranks of one host share its memory bandwidth and last level cache, and on this
    // project's 2-core host a 64 MiB pass moved 11.8 GB/s alone and 6.9 on each of two ranks at
    // once (sim/profile.hpp, DeviceProfile::shared_host). Rank 0's sweep is kept; the rank spread
    // above says how far the others are from it.
    const std::int64_t ranks_per_host = log.hosts > 0 ? log.ranks / log.hosts : 1;
    std::optional<calibrate::CpuMeasurement> together;
    if (ranks_per_host >= 2) {
      calibrate::CpuOptions options;
      options.threads = static_cast<unsigned>(blas_threads);
      options.refinements = 0;
      options.in_step = [&session] { session.barrier(); };
      together = calibrate::measure_cpu(options);
    }
    if (session.rank() != 0) return 0;  // rank 0 alone fits, prints and writes
    sim::LinkProfile& l = profile.links[a.link] =
        calibrate::calibrated_link(base_link, log, "--backend mpi", "MPI_Iallreduce polled to completion, as parasim execute runs it (" + log.timing + "; " + exec::freed_memory() + "), by `parasim calibrate --backend mpi`");
    profile.origin = "parasim calibrate --backend mpi, " + std::to_string(log.ranks) + " ranks on " + std::to_string(log.hosts) +
                     (log.hosts == 1 ? " host" : " hosts") + " (link " + a.link + "), " + calibrate::today_utc() + " UTC, over " + base_name;
    out << "parasim calibrate: " << a.link << " measured by MPI_Iallreduce, polled as parasim execute runs it, over " << log.ranks << " ranks on " << log.hosts << (log.hosts == 1 ? " host" : " hosts") << "\n";
    out << "  latency (alpha per ring step)  " << fixed(l.latency_s * 1e6, 3) << " us\n";
    print_curve(out, "efficiency by message size", l.efficiency, bytes_text);
    // The other collectives: each gets a curve of its own on the link (its time with the link's
    // latency taken off), and on one host each is predicted from the link before and after, so the
    // output says how far the all-reduce's curve alone was from it (sim::collective_time on one
    // host of `ranks` devices).
    auto error_range = [&](const calibrate::NcclTestsLog& other) -> std::string {
      if (log.hosts != 1) return "";
      sim::ClusterSpec spec;
      spec.device = a.device.empty() ? "host-cpu" : a.device;
      spec.nodes = 1;
      spec.devices_per_node = log.ranks;
      spec.intra_node.link = a.link;
      const sim::Cluster cluster = sim::build_cluster(spec, profile);
      std::vector<std::int64_t> group(static_cast<std::size_t>(log.ranks));
      for (std::size_t i = 0; i < group.size(); ++i) group[i] = static_cast<std::int64_t>(i);
      const sim::CollectiveKind kind = calibrate::collective_kind(other.test);
      double lowest = 0, highest = 0;
      std::string lowest_at, highest_at;
      for (std::size_t i = 0; i < other.rows.size(); ++i) {
        const auto& row = other.rows[i];
        // collective_time takes nccl-tests' size: a gather's and a scatter's whole buffer, a send's
        // message (sim/collectives/ring.cpp: T = (p-1)/p * S/B + (p-1) * alpha).
        const double per_device = row.bytes;
        const double predicted = kind == sim::CollectiveKind::SendRecv ? sim::collective_time(cluster, kind, std::span(group).first(2), per_device).time.seconds()
                                                                        : sim::collective_time(cluster, kind, group, per_device).time.seconds();
        const double error = (predicted - row.time_s) / row.time_s;
        if (i == 0 || error < lowest) lowest = error, lowest_at = bytes_text(row.bytes);
        if (i == 0 || error > highest) highest = error, highest_at = bytes_text(row.bytes);
      }
      return reports::change_percent(1 + lowest, 1) + " (" + lowest_at + ") to " + reports::change_percent(1 + highest, 1) + " (" + highest_at + ")";
    };
    out << "  own curves of the other collectives" << (log.hosts == 1 ? " (error against the measurement, 8 B to 64 MiB: from the all-reduce's curve -> from their own)" : "") << ":\n";
    for (const auto& other : others) {
      const std::string before = error_range(other);
      l = calibrate::with_collective_curve(l, other, "polled as parasim execute runs it (" + other.timing + "; " + exec::freed_memory() + ") by `parasim calibrate --backend mpi`");
      const std::string after = error_range(other);
      const std::string name(calibrate::to_string(other.test));
      const sim::CollectiveKind kind = calibrate::collective_kind(other.test);
      if (l.collective_efficiency.count(kind)) print_curve(out, ("  " + name).c_str(), l.collective_efficiency.at(kind), bytes_text);
      if (!before.empty()) {
        out << "      " << before << " -> " << after << "\n";
        l.sources["collective_efficiency." + std::string(sim::to_string(kind))] += "; predicted from the all-reduce's curve " + before + ", from its own " + after;
      }
    }
    // The ranks' compute device: --device, else the host's CPU (the device `parasim execute` runs).
    const std::string device = a.device.empty() ? "host-cpu" : a.device;
    const sim::DeviceProfile& d = profile.devices[device] = calibrate::calibrated_interference(device_of(profile, device, "--device"), beside, "--backend mpi");
    out << "  interference (" << device << "), what each keeps of its speed beside the other:\n";
    for (const auto& m : beside) {
      const auto k = static_cast<std::size_t>(calibrate::collective_kind(m.collective));
      out << "    " << std::left << std::setw(16) << calibrate::to_string(m.collective) << std::right << std::setw(10) << bytes_text(m.collective_bytes)
          << "  compute " << fixed(d.interference.compute_at(k, m.collective_bytes), 3) << ", the collective "
          << fixed(d.interference.communication_at(k, m.collective_bytes), 3) << "\n";
    }
    sim::DeviceProfile& spread_device = profile.devices[device];
    spread_device.rank_spread = {spread.ranks, spread.slowest_over_mean};
    spread_device.sources["rank_spread"] = "measured by `parasim calibrate --backend mpi` on " + std::to_string(spread.ranks) + " ranks (" + log.device +
                                           "): every rank timed the same block (" + spread.block_text + ", " + fixed(spread.block_s * 1e3, 1) +
                                           " ms on average), all started together, " + std::to_string(spread.rounds) +
                                           " rounds; the rounds' summed slowest time over their summed mean time";
    out << "  rank spread (" << device << ")      the slowest of " << spread.ranks << " ranks took " << fixed(spread.slowest_over_mean, 3)
        << " times their mean over " << spread.rounds << " rounds of the same " << fixed(spread.block_s * 1e3, 1) << " ms block\n";
    if (together) {
      // A device entry of its own, the alone entry's figures re-measured: every figure the CPU
      // calibration measures, with the host's ranks running each kernel at the same moment.
      const std::string shared_name = device + "@" + std::to_string(ranks_per_host);
      sim::DeviceProfile shared = calibrate::calibrated_cpu(profile.devices[device], *together);
      shared.name = shared_name;
      shared.shared_host = {};
      shared.description += "; with " + std::to_string(ranks_per_host) + " ranks of one host running each kernel at the same moment";
      const std::string alone = "measured by `parasim calibrate --backend cpu`";
      const std::string at_once = "measured by `parasim calibrate --backend mpi` with " + std::to_string(ranks_per_host) +
                                  " ranks of one host running each kernel at the same moment (a barrier before each size; rank 0's times)";
      for (auto& [figure, source] : shared.sources)
        for (std::size_t at = source.find(alone); at != std::string::npos; at = source.find(alone, at + at_once.size())) source.replace(at, alone.size(), at_once);
      const sim::DeviceProfile& s = profile.devices[shared_name] = shared;
      sim::DeviceProfile& d2 = profile.devices[device];
      d2.shared_host = {ranks_per_host, shared_name};
      d2.sources["shared_host"] = "measured by `parasim calibrate --backend mpi` on " + std::to_string(log.ranks) + " ranks (" + log.device +
                                  "): the device entry \"" + shared_name + "\" holds this device's figures re-measured with " +
                                  std::to_string(ranks_per_host) + " ranks of one host running each kernel at the same moment";
      const double alone_peak = d2.peak_flops_per_s.at(models::DType::F32), shared_peak = s.peak_flops_per_s.at(models::DType::F32);
      out << "  " << ranks_per_host << " ranks of a host at once (" << shared_name << "), each rank's speed:\n";
      out << "    fp32 peak (fastest sgemm)    " << fixed(shared_peak / 1e9, 2) << " GFLOP/s (alone " << fixed(alone_peak / 1e9, 2) << ")\n";
      for (const double bytes : {double(1 << 20), double(16 << 20), double(256 << 20)})
        out << "    memory pass " << std::left << std::setw(17) << bytes_text(bytes) << std::right
            << fixed(bytes / sim::kernel_seconds(s, models::OpClass::MemoryBound, models::DType::F32, 0, bytes, 0, 1) / 1e9, 2) << " GB/s (alone "
            << fixed(bytes / sim::kernel_seconds(d2, models::OpClass::MemoryBound, models::DType::F32, 0, bytes, 0, 1) / 1e9, 2) << ")\n";
      if (!s.gemm_thin_backward_efficiency.points.empty() && !d2.gemm_thin_backward_efficiency.points.empty())
        out << "    thin backward pair factor at 8 rows " << fixed(s.gemm_thin_backward_efficiency.at(8), 3) << " (alone "
            << fixed(d2.gemm_thin_backward_efficiency.at(8), 3) << ")\n";
      out << "    held-out shapes (median measured, predicted from these figures, error):\n";
      for (const auto& c : s.held_out)
        out << "      " << (c.kernel == "gemm" ? "sgemm " : "memory pass ") << c.shape << ": " << fixed(c.measured_s * 1e6, 1) << " us, "
            << fixed(c.predicted_s * 1e6, 1) << " us, " << reports::change_percent(c.predicted_s, c.measured_s) << "\n";
    }
  } else if (a.backend == "loader") {
    if (a.data.empty()) throw InputError("<command line>", 0, 0, "", "--backend loader needs --data DIR: a dataset (parasim data synth writes one)");
    calibrate::LoaderCalibrationOptions o;
    o.image_size = a.image_size;
    if (a.threads > 0) o.max_threads = a.threads;
    const std::string command = "parasim calibrate --backend loader --data " + a.data + (a.threads > 0 ? " --threads " + std::to_string(a.threads) : "") +
                                (a.image_size > 0 ? " --image-size " + std::to_string(a.image_size) : "");
    out << "parasim calibrate: the real loader on " << a.data << "\n";
    const data::Dataset dataset = data::Dataset::open(a.data);
    const std::string format(data::to_string(dataset.format()));
    const sim::LoaderProfile& loader = profile.loaders[format] = calibrate::calibrate_loader(a.data, o, command, out);
    profile.origin = command + ", " + calibrate::today_utc() + " UTC, over " + base_name;
    if (!a.report.empty()) {
      reports::HtmlReport page;
      page.title = "parasim calibrate: the loader on " + calibrate::source_text(a.data);
      page.loader = reports::HtmlLoader{format, loader};
      const std::filesystem::path html = std::filesystem::path(a.report) / "report.html";
      std::error_code ec;
      std::filesystem::create_directories(a.report, ec);
      write_atomically(html.string(), reports::render_html(page));
      out << "wrote " << html.string() << "\n";
    }
  } else {
    throw InputError("<command line>", 0, 0, "", "--backend: found \"" + a.backend + "\", expected \"cpu\", \"cuda\", \"nccl\", \"mpi\" or \"loader\"" +
                                                     did_you_mean(a.backend, {"cpu", "cuda", "nccl", "mpi", "loader"}));
  }

  // What is written must read back as it is (the profile format's checks: curves, sources, links).
  const std::string text = sim::to_json(profile).dump(2) + "\n";
  const sim::Profile again = sim::profile_from_json(JsonDocument::parse(text, a.out));
  PARASIM_CHECK(again == profile, "a calibrated profile reads back unchanged");
  write_atomically(a.out, text);
  out << "wrote " << a.out << " (profile \"" << profile.name << "\": " << base_name << " with the figures above measured)\n";
  return 0;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Action& action, std::ostream& out, std::ostream& err) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this machine, or read nccl-tests results, and write a calibrated profile");
  cmd->add_option("--backend", args->backend, "measure: cpu (OpenBLAS GEMMs, the executor's memory-bound and softmax kernels), cuda (cuBLAS GEMMs, copies), nccl (all-reduce over this node's GPUs), mpi (MPI_Allreduce between mpirun's ranks), loader (the real data loader on --data)");
  cmd->add_option("--from-nccl-tests", args->nccl_tests, "read an nccl-tests log (all_reduce_perf, all_gather_perf, reduce_scatter_perf, sendrecv_perf) instead");
  cmd->add_option("--algorithm", args->algorithm,
                  "--from-nccl-tests: the model the log is fitted with: ring (default), or nvls for an all-reduce the NVSwitch reduced (NVLink SHARP; "
                  "calibrate the NVLS link, e.g. --link nvlink4-sharp)");
  cmd->add_option("--from-csv", args->csv,
                  "read kernel timings measured elsewhere (columns kernel,dtype,m,n,k,bytes,seconds; calibrate/kernel_csv.hpp) into --device's GEMM and memory curves");
  cmd->add_option("--collective", args->collective, "the log's collective when it does not say: all_reduce, all_gather, reduce_scatter, sendrecv");
  cmd->add_option("--out", args->out, "the profile file to write")->required();
  cmd->add_option("--base", args->base, "the profile to start from (default: the datasheet profile)");
  cmd->add_option("--name", args->name, "the written profile's name (default \"calibrated\")");
  cmd->add_option("--device", args->device, "the profile device to calibrate (cpu: host-cpu; cuda: from the GPU's name)");
  cmd->add_option("--threads", args->threads, "cpu: OpenBLAS threads for the GEMMs, as many as each rank of `parasim execute` uses (default: every core); mpi: the GEMM's threads in the interference measurement (default: this host's cores over its ranks); loader: the most loader threads checked (default 2)")
      ->check(integer_from_to(1, 1024));
  cmd->add_option("--link", args->link, "the link class to calibrate (nccl-tests and mpi: required; nccl: the GPU's intra-node link)");
  cmd->add_option("--data", args->data, "loader: the dataset to measure the real loader on (parasim data synth writes one)");
  cmd->add_option("--image-size", args->image_size, "loader: the side of the tensors the loader makes (default: the dataset's images')")
      ->check(integer_from_to(1, 4096));
  cmd->add_option("--report", args->report, "loader: a folder for report.html, the measured and predicted time per sample by placement and threads");
  cmd->callback([&action, &out, &err, args] { action = [&out, &err, args] { return calibrate(*args, out, err); }; });
}

}  // namespace parasim::cli
