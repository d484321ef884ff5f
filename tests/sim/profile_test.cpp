#include <string>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "common/json_document.hpp"
#include "sim/profile.hpp"
#include "sim/cost_model.hpp"
#include "sim/profile_json.hpp"

using parasim::InputError;
using parasim::JsonDocument;
using parasim::models::DType;
using namespace parasim::sim;
using Catch::Matchers::WithinRel;

TEST_CASE("efficiency curve: piecewise linear in log2(size), flat beyond its ends", "[sim][profile]") {
  const EfficiencyCurve curve{{{1024, 0.2}, {4096, 0.6}}};
  // Below the first and above the last point: the end values.
  CHECK(curve.at(1) == 0.2);
  CHECK(curve.at(0) == 0.2);
  CHECK(curve.at(1e12) == 0.6);
  // 2048 is halfway between 2^10 and 2^12 in log2: (0.2 + 0.6) / 2 = 0.4.
  CHECK_THAT(curve.at(2048), WithinRel(0.4, 1e-12));
  // 1448.15... = 2^10.5, a quarter of the way: 0.2 + 0.25 · 0.4 = 0.3.
  CHECK_THAT(curve.at(1448.1546878700492), WithinRel(0.3, 1e-9));
}

TEST_CASE("datasheet profile: every device and link has every figure, each with a source", "[sim][profile]") {
  const Profile& p = datasheet_profile();
  CHECK(p.name == "datasheet");
  CHECK(p.origin == "built-in datasheet figures");
  for (const char* name : {"v100", "a100-40gb", "a100-80gb", "h100-sxm", "h200", "b200", "tpu-v4", "tpu-v5e", "tpu-v5p", "host-cpu"}) {
    INFO("device " << name);
    REQUIRE(p.devices.count(name) == 1);
    const DeviceProfile& d = p.device(name);
    CHECK(d.name == name);
    CHECK_FALSE(d.description.empty());
    CHECK_FALSE(d.peak_flops_per_s.empty());
    CHECK(d.memory_bandwidth_bytes_per_s > 0);
    CHECK(d.memory_capacity_bytes > d.memory_reserved_bytes);
    CHECK(d.memory_reserved_bytes > 0);
    CHECK_FALSE(d.gemm_efficiency.points.empty());
    CHECK_FALSE(d.memory_efficiency.points.empty());
    CHECK(d.kernel_launch_overhead_s > 0);
    CHECK(p.links.count(d.default_inter_link) == 1);
    for (const auto& figure : figure_names(d)) {
      INFO("figure " << figure);
      CHECK(d.sources.count(figure) == 1);
      if (d.sources.count(figure)) CHECK(d.sources.at(figure).size() > 10);
    }
  }
  for (const char* name : {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5", "ib-edr", "ib-hdr", "ib-ndr",
                           "roce-400", "ethernet-100", "ici-v4", "ici-v5e", "ici-v5p", "dcn"}) {
    INFO("link " << name);
    REQUIRE(p.links.count(name) == 1);
    const LinkProfile& l = p.link(name);
    CHECK(l.bandwidth_bytes_per_s > 0);
    CHECK(l.latency_s > 0);
    CHECK_FALSE(l.efficiency.points.empty());
    for (const auto& figure : figure_names(l)) {
      INFO("figure " << figure);
      CHECK(l.sources.count(figure) == 1);
      if (l.sources.count(figure)) CHECK(l.sources.at(figure).size() > 10);
    }
  }
}

TEST_CASE("datasheet profile: spot values against the published datasheet figures", "[sim][profile]") {
  const Profile& p = datasheet_profile();
  SECTION("A100 80GB") {
    const DeviceProfile& a = p.device("a100-80gb");
    // A100_SXM4_80GB.bf16_fp16_tensor_tflops = 312; hbm_bandwidth_TBps = 2.039.
    CHECK(a.peak_for(DType::BF16) == 312e12);
    CHECK(a.memory_bandwidth_bytes_per_s == 2.039e12);
    // cublaslt_fp16_gemm_tflops["8192^3"] = 253.7 of 312, at 2 · 8192^3 FLOPs.
    CHECK_THAT(a.gemm_efficiency.at(2.0 * 8192 * 8192 * 8192), WithinRel(253.7 / 312, 1e-3));
    // cublaslt_fp16_gemm_tflops["1024^3"] = 119.4 of 312.
    CHECK_THAT(a.gemm_efficiency.at(2.0 * 1024 * 1024 * 1024), WithinRel(119.4 / 312, 1e-3));
    // hbm_stream_TBps.triad = 1.7 of 2.039.
    CHECK_THAT(a.memory_efficiency.at(1e9), WithinRel(1.7 / 2.039, 1e-3));
  }
  SECTION("H100 SXM and H200") {
    const DeviceProfile& h = p.device("h100-sxm");
    // H100_SXM5_80GB: bf16 989.4, fp8 1978.9 TF/s, 3.35 TB/s.
    CHECK(h.peak_for(DType::BF16) == 989.4e12);
    CHECK(h.peak_for(DType::FP8) == 1978.9e12);
    CHECK(h.memory_bandwidth_bytes_per_s == 3.35e12);
    // cublaslt_fp8_gemm_tflops["16384^3"] = 1377.3 of 1978.9, placed at 16384^3 FLOPs (bf16 equivalent).
    CHECK_THAT(h.gemm_efficiency.at(16384.0 * 16384 * 16384), WithinRel(1377.3 / 1978.9, 1e-3));
    // Fused attention, FlashAttention-3 paper figures (H100, hdim 128, causal, forward, 16k): cuDNN 539,
    // FlashAttention-2 335 TF/s of 989.4; cuDNN is the default implementation.
    CHECK(h.attention_kernels() == std::vector<std::string>{"cudnn", "flash-attention-2", "flash-attention-3"});
    CHECK_THAT(*attention_efficiency(h, "", DType::BF16, 128, 16384, true, false), WithinRel(539 / 989.4, 1e-3));
    CHECK_THAT(*attention_efficiency(h, "flash-attention-2", DType::BF16, 128, 16384, true, false), WithinRel(335 / 989.4, 1e-3));
    // H200_SXM_141GB.hbm_bandwidth_TBps = 4.8; STREAM triad 4.15.
    CHECK(p.device("h200").memory_bandwidth_bytes_per_s == 4.8e12);
    CHECK_THAT(p.device("h200").memory_efficiency.at(1e9), WithinRel(4.15 / 4.8, 1e-3));
  }
  SECTION("V100 has no bf16; TPUs compute in bf16") {
    // V100_SXM2.fp16_tensor_tflops = 125; Volta has no bf16 tensor cores.
    CHECK(p.device("v100").peak_for(DType::F16) == 125e12);
    CHECK_FALSE(p.device("v100").peak_for(DType::BF16).has_value());
    // TPU_v4.bf16_tflops_per_chip = 275; TPU_v5e 197 and 819 GB/s; TPU_v5p 459 and 2765 GB/s.
    CHECK(p.device("tpu-v4").peak_for(DType::BF16) == 275e12);
    CHECK(p.device("tpu-v5e").memory_bandwidth_bytes_per_s == 819e9);
    CHECK(p.device("tpu-v5p").memory_bandwidth_bytes_per_s == 2765e9);
  }
  SECTION("links") {
    // NVLink3: 600 GB/s bidirectional = 300 per direction; 8-GPU all-reduce bus bandwidth 231.58.
    CHECK(p.link("nvlink3").bandwidth_bytes_per_s == 300e9);
    CHECK_THAT(p.link("nvlink3").efficiency.at(1e9), WithinRel(231.58 / 300, 1e-3));
    // InfiniBand.HDR_Gbps_per_4x_port = 200 Gb/s = 25 GB/s; NDR 400 Gb/s = 50 GB/s.
    CHECK(p.link("ib-hdr").bandwidth_bytes_per_s == 25e9);
    CHECK(p.link("ib-ndr").bandwidth_bytes_per_s == 50e9);
    // PCIe.gen4_x16 = 32 GB/s per direction.
    CHECK(p.link("pcie4").bandwidth_bytes_per_s == 32e9);
    // TPU_v5e: 400 GB/s bidirectional over 4 ports = 50 GB/s per direction per link.
    CHECK(p.link("ici-v5e").bandwidth_bytes_per_s == 50e9);
  }
}

TEST_CASE("profile JSON: to_json then profile_from_json gives the same profile", "[sim][profile]") {
  const Profile& p = datasheet_profile();
  const std::string text = to_json(p).dump(2);
  const Profile back = profile_from_json(JsonDocument::parse(text, "round-trip.json"));
  CHECK(back == p);
}

namespace {

/// A minimal valid profile document with one device and one link; make() splices text at the
/// markers Z (end of the device object) and L (end of the link object).
std::string profile_text(const std::string& intra) {
  return R"({
  "name": "mine",
  "devices": {
    "chip": {
      "peak_flops_per_s": { "bf16": 1e12 },
      "memory_bandwidth_bytes_per_s": 1e11,
      "memory_capacity_bytes": 1e9,
      "gemm_efficiency": [[1e6, 0.5], [1e9, 0.9]],
      "memory_efficiency": [[1e6, 0.8]],
      "kernel_launch_overhead_s": 1e-6,
      "default_intra_link": ")" + intra + R"("Z
    }
  },
  "links": {
    "wire": { "bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6, "efficiency": [[1, 1.0]]L }
  }
}
)";
}

std::string make(const std::string& device_extra, const std::string& link_extra = "", const std::string& intra = "wire") {
  std::string t = profile_text(intra);
  t.replace(t.find("Z\n"), 1, device_extra);
  t.replace(t.find("]L"), 2, "]" + link_extra);
  return t;
}

std::string error_of(const std::string& text) {
  try {
    (void)profile_from_json(JsonDocument::parse(text, "p.json"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("profile JSON: errors name file, line, column, pointer and the fault", "[sim][profile]") {
  SECTION("a valid document reads, with the origin defaulted to the file") {
    const Profile p = profile_from_json(JsonDocument::parse(make(""), "p.json"));
    CHECK(p.origin == "profile file p.json");
    CHECK(p.device("chip").memory_reserved_bytes == 0);
    CHECK(p.link("wire").bandwidth_bytes_per_s == 1e10);
  }
  SECTION("unknown key, with did-you-mean") {
    CHECK(error_of(make(",\n      \"desription\": \"x\"")) ==
          "p.json:12:7: at /devices/chip/desription: unknown key \"desription\" (did you mean \"description\"?); expected one of "
          "\"attention_efficiency\", \"convolution\", \"default_inter_link\", \"default_intra_link\", \"description\", \"gemm_efficiency\", "
          "\"gemm_efficiency_by_dtype\", \"gemm_thin_backward_efficiency\", \"gemm_thin_efficiency\", \"gemm_thin_efficiency_by_dim\", \"held_out\", \"interference\", \"kernel_launch_overhead_s\", "
          "\"memory_bandwidth_bytes_per_s\", \"memory_capacity_bytes\", \"memory_efficiency\", \"memory_reserved_bytes\", \"memory_reuse_bytes_per_s\", "
          "\"memory_reuse_efficiency\", \"memory_reuse_read_efficiency\", "
          "\"optimizer_bytes_per_s\", \"optimizer_flops_per_s\", \"optimizer_memory_efficiency\", \"peak_flops_per_s\", \"rank_spread\", \"shared_host\", \"softmax_flops_per_s\", \"sources\", "
          "\"weight_reuse_backward_bytes_per_s\", \"weight_reuse_backward_efficiency\", \"weight_reuse_bytes_per_s\" or \"weight_reuse_efficiency\"");
  }
  SECTION("operands out of cache: each rate with its curve, read back as written") {
    const Profile p = profile_from_json(JsonDocument::parse(
        make(",\n      \"weight_reuse_bytes_per_s\": 8e9,\n      \"weight_reuse_efficiency\": [[1e6, 1.0], [2.5e8, 0.5]],"
             "\n      \"weight_reuse_backward_bytes_per_s\": 4e9,\n      \"weight_reuse_backward_efficiency\": [[1e6, 1.0], [2.5e8, 0.4]]"),
        "p.json"));
    CHECK(p.device("chip").weight_reuse_bytes_per_s == 8e9);
    CHECK(p.device("chip").weight_reuse_efficiency.at(2.5e8) == 0.5);
    CHECK(p.device("chip").weight_reuse_backward_efficiency.at(1e9) == 0.4);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK(error_of(make(",\n      \"weight_reuse_bytes_per_s\": 8e9")) == "p.json:4:13: at /devices/chip: missing required key \"weight_reuse_efficiency\"");
    // The memory pass's three figures come together.
    const Profile q = profile_from_json(JsonDocument::parse(
        make(",\n      \"memory_reuse_bytes_per_s\": 9e10,\n      \"memory_reuse_efficiency\": [[2.6e5, 1.0], [2.7e8, 0.1]],"
             "\n      \"memory_reuse_read_efficiency\": [[2.6e5, 1.0], [2.7e8, 0.2]]"),
        "p.json"));
    CHECK(q.device("chip").memory_reuse_bytes_per_s == 9e10);
    CHECK(q.device("chip").memory_reuse_read_efficiency.at(1e9) == 0.2);
    CHECK(profile_from_json(JsonDocument::parse(to_json(q).dump(), "again.json")) == q);
    CHECK(error_of(make(",\n      \"memory_reuse_bytes_per_s\": 9e10,\n      \"memory_reuse_efficiency\": [[2.6e5, 1.0]]")) ==
          "p.json:4:13: at /devices/chip: missing required key \"memory_reuse_read_efficiency\"");
    // The backward's curve without its rate is refused the same way, naming the rate.
    CHECK(error_of(make(",\n      \"weight_reuse_backward_efficiency\": [[1e6, 1.0]]")) ==
          "p.json:4:13: at /devices/chip: missing required key \"weight_reuse_backward_bytes_per_s\"");
  }
  SECTION("the backward pair's thin-m factor: read back as written") {
    const Profile p = profile_from_json(JsonDocument::parse(make(",\n      \"gemm_thin_backward_efficiency\": [[8, 0.3], [1024, 1.0]]"), "p.json"));
    CHECK(p.device("chip").gemm_thin_backward_efficiency.at(8) == 0.3);
    CHECK(p.device("chip").gemm_thin_backward_efficiency.at(4096) == 1.0);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
  }
  SECTION("the ranks' measured spread: read back as written; a slowest rank faster than the mean refused") {
    const Profile p = profile_from_json(JsonDocument::parse(make(",\n      \"rank_spread\": {\"ranks\": 2, \"slowest_over_mean\": 1.07}"), "p.json"));
    CHECK(p.device("chip").rank_spread.ranks == 2);
    CHECK(p.device("chip").rank_spread.slowest_over_mean == 1.07);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK_THAT(error_of(make(",\n      \"rank_spread\": {\"ranks\": 2, \"slowest_over_mean\": 0.9}")),
               Catch::Matchers::Contains("at /devices/chip/rank_spread/slowest_over_mean") && Catch::Matchers::Contains("0.9"));
  }
  SECTION("the shared-host entry: read back as written; a name the profile lacks, or an entry with its own, refused") {
    // A second device, "chip@2", closed by the template's own brace.
    const std::string second = "\n    },\n    \"chip@2\": {\n      \"peak_flops_per_s\": { \"bf16\": 9e11 },\n"
                               "      \"memory_bandwidth_bytes_per_s\": 5e10,\n      \"memory_capacity_bytes\": 1e9,\n"
                               "      \"gemm_efficiency\": [[1e6, 0.5]],\n      \"memory_efficiency\": [[1e6, 0.8]],\n"
                               "      \"kernel_launch_overhead_s\": 1e-6";
    const Profile p = profile_from_json(JsonDocument::parse(make(",\n      \"shared_host\": {\"ranks\": 2, \"device\": \"chip@2\"}" + second), "p.json"));
    CHECK(p.device("chip").shared_host == DeviceProfile::SharedHost{2, "chip@2"});
    CHECK(p.device("chip@2").memory_bandwidth_bytes_per_s == 5e10);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK(error_of(make(",\n      \"shared_host\": {\"ranks\": 2, \"device\": \"chip@3\"}" + second)) ==
          "p.json:12:45: at /devices/chip/shared_host/device: unknown device \"chip@3\" (did you mean \"chip@2\"?); the profile's devices are \"chip\" or \"chip@2\"");
    CHECK_THAT(error_of(make(",\n      \"shared_host\": {\"ranks\": 2, \"device\": \"chip\"}")),
               Catch::Matchers::Contains("at /devices/chip/shared_host/device: found \"chip\", a device with a shared_host entry of its own"));
    CHECK_THAT(error_of(make(",\n      \"shared_host\": {\"ranks\": 1, \"device\": \"chip@2\"}" + second)),
               Catch::Matchers::Contains("at /devices/chip/shared_host/ranks"));
  }
  SECTION("the optimizer's measured update: its rate and curve together, read back as written") {
    const Profile p = profile_from_json(JsonDocument::parse(
        make(",\n      \"optimizer_bytes_per_s\": 5e10,\n      \"optimizer_memory_efficiency\": [[1e6, 1.0], [1e8, 0.25]]"), "p.json"));
    CHECK(p.device("chip").optimizer_bytes_per_s == 5e10);
    CHECK(p.device("chip").optimizer_memory_efficiency.at(1e8) == 0.25);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK(error_of(make(",\n      \"optimizer_bytes_per_s\": 5e10")) ==
          "p.json:4:13: at /devices/chip: missing required key \"optimizer_memory_efficiency\"");
  }
  SECTION("interference rates by size read back as written; a rate above 1 or an unknown kind is refused") {
    const Profile p = profile_from_json(JsonDocument::parse(
        make(",\n      \"interference\": { \"compute\": { \"all-reduce\": 0.6 }, \"compute_by_size\": { \"all-reduce\": [[1048576, 0.8], [67108864, 0.5]] } }"),
        "p.json"));
    const InterferenceRates& x = p.device("chip").interference;
    // All-reduce: its curve at 8 MiB, 3/6 of the way from 1 to 64 MiB in log2: 0.8 − 0.5 · 0.3 = 0.65;
    // its communication rate, with no curve, 1 at every size.
    CHECK_THAT(x.compute_at(0, 8 << 20), Catch::Matchers::WithinRel(0.65, 1e-12));
    CHECK(x.communication_at(0, 8 << 20) == 1);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK(error_of(make(",\n      \"interference\": { \"communication_by_size\": { \"all-reduce\": [[1048576, 1.5]] } }")) ==
          "p.json:12:77: at /devices/chip/interference/communication_by_size/all-reduce/0/1: found number 1.5, expected an efficiency in (0, 1]");
    CHECK_THAT(error_of(make(",\n      \"interference\": { \"compute_by_size\": { \"allreduce\": [[1, 0.5]] } }")),
               Catch::Matchers::Contains("at /devices/chip/interference/compute_by_size/allreduce: unknown collective kind or kernel \"allreduce\""));
  }
  SECTION("a collective kind's own curve reads back; the all-reduce's is the link's efficiency") {
    const Profile p = profile_from_json(JsonDocument::parse(make("", ",\n      \"collective_efficiency\": { \"all-gather\": [[1, 0.5]] }"), "p.json"));
    CHECK(p.link("wire").collective_efficiency.at(CollectiveKind::AllGather).at(1) == 0.5);
    CHECK(profile_from_json(JsonDocument::parse(to_json(p).dump(), "again.json")) == p);
    CHECK_THAT(error_of(make("", ",\n      \"collective_efficiency\": { \"all-reduce\": [[1, 0.5]] }")),
               Catch::Matchers::EndsWith("at /links/wire/collective_efficiency/all-reduce: found \"all-reduce\", expected a collective kind other than the "
                                         "all-reduce (\"reduce-scatter\", \"all-gather\", \"all-to-all\", \"broadcast\", \"send-recv\"); the all-reduce's curve is \"efficiency\""));
  }
  SECTION("a held-out check of a kernel the calibration does not check") {
    CHECK(error_of(make(",\n      \"held_out\": [{ \"kernel\": \"conv\", \"shape\": \"3x3\", \"measured_s\": 1, \"predicted_s\": 1 }]")) ==
          "p.json:12:32: at /devices/chip/held_out/0/kernel: found \"conv\", expected \"gemm\" or \"memory\"");
  }
  SECTION("a convolution algorithm the cost model does not know") {
    CHECK(error_of(make(",\n      \"convolution\": \"fft\"")) == "p.json:12:22: at /devices/chip/convolution: found \"fft\", expected \"winograd\" or \"im2col-gemm\"");
  }
  SECTION("an efficiency above 1") {
    std::string t = make("");
    t.replace(t.find("0.9]"), 3, "1.5");
    CHECK(error_of(t) ==
          "p.json:8:45: at /devices/chip/gemm_efficiency/1/1: found number 1.5, expected an efficiency in (0, 1]");
  }
  SECTION("a source for a figure the device does not have") {
    CHECK(error_of(make(",\n      \"sources\": { \"peak_flops_per_s.fp16\": \"x\" }")) ==
          "p.json:12:20: at /devices/chip/sources/peak_flops_per_s.fp16: no figure named \"peak_flops_per_s.fp16\" (did you mean "
          "\"peak_flops_per_s.bf16\"?); the figures are \"peak_flops_per_s.bf16\", \"memory_bandwidth_bytes_per_s\", "
          "\"memory_capacity_bytes\", \"memory_reserved_bytes\", \"gemm_efficiency\", \"memory_efficiency\" or "
          "\"kernel_launch_overhead_s\"");
  }
  SECTION("an unknown dtype") {
    std::string t = make("");
    t.replace(t.find("\"bf16\""), 6, "\"bf61\"");
    CHECK(error_of(t) == "p.json:5:29: at /devices/chip/peak_flops_per_s/bf61: unknown dtype \"bf61\" (did you mean \"bf16\"?); "
                         "expected one of \"fp32\", \"tf32\", \"fp16\", \"bf16\", \"fp8\", \"int32\", \"int64\" or \"uint8\"");
  }
  SECTION("an attention curve without its implementation, or with a malformed one") {
    const std::string curve = "\"dtype\": \"bf16\", \"head_dim\": 64, \"forward\": [[1, 0.5]], \"backward\": [[1, 0.5]]";
    CHECK(error_of(make(",\n      \"attention_efficiency\": [{" + curve + "}]")) ==
          "p.json:12:32: at /devices/chip/attention_efficiency/0: missing required key \"implementation\"");
    CHECK(error_of(make(",\n      \"attention_efficiency\": [{\"implementation\": \"Flash Attn\", " + curve + "}]")) ==
          "p.json:12:51: at /devices/chip/attention_efficiency/0/implementation: found \"Flash Attn\", expected a kernel library's name "
          "of 1 to 64 lower-case letters, digits and '-' (\"cudnn\", \"flash-attention-2\")");
    CHECK(error_of(make(",\n      \"attention_efficiency\": [{\"implementation\": \"fa\", " + curve + "}, {\"implementation\": \"fa\", " +
                        curve + "}]")) ==
          "p.json:12:138: at /devices/chip/attention_efficiency/1: a second fa curve for bf16, head dim 64, causal; each combination "
          "may appear once");
  }
  SECTION("a default link the profile lacks") {
    CHECK(error_of(make("", "", "wrie")) ==
          "p.json:11:29: at /devices/chip/default_intra_link: unknown link \"wrie\" (did you mean \"wire\"?); the profile's links are \"wire\"");
  }
}
