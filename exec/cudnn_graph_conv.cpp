// A convolution through cuDNN's graph API (exec/cudnn_graph_conv.hpp). The attribute names and
// their types are cuDNN's backend API reference ("cuDNN Backend API", docs.nvidia.com/deeplearning/
// cudnn): tensors, a convolution descriptor, one operation, its graph, the heuristics, a plan.
#include "exec/cudnn_graph_conv.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace parasim::exec::cudnn_graph {
namespace {

/// Descriptors destroyed on scope exit (the plan keeps its own).
struct Owned {
  std::vector<cudnnBackendDescriptor_t> all;
  ~Owned() {
    for (auto d : all) cudnnBackendDestroyDescriptor(d);
  }
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type, cudnnStatus_t& status) {
    cudnnBackendDescriptor_t d = nullptr;
    status = cudnnBackendCreateDescriptor(type, &d);
    if (status == CUDNN_STATUS_SUCCESS) all.push_back(d);
    return d;
  }
};

constexpr std::int64_t kX = 1, kW = 2, kY = 3;  // the tensors' unique ids

}  // namespace

std::unique_ptr<Plan> Plan::make(cudnnHandle_t handle, const Shape& sh, Direction direction, std::size_t max_workspace, std::string& why) {
  Owned owned;
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  std::string step;
  // Every call goes through `ok`: the first failure names its step and cuDNN's status.
  auto ok = [&](cudnnStatus_t s, const char* what) {
    if (s == CUDNN_STATUS_SUCCESS) return true;
    if (step.empty()) step = std::string(what) + ": " + cudnnGetErrorString(s);
    return false;
  };
  auto tensor = [&](std::int64_t id, std::array<std::int64_t, 4> dims) -> cudnnBackendDescriptor_t {
    cudnnBackendDescriptor_t t = owned.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR, st);
    if (!ok(st, "a tensor descriptor")) return nullptr;
    // dims are N, C, H, W (a filter's K, C, R, S); NHWC (KRSC) strides put C innermost.
    const std::int64_t c = dims[1], h = dims[2], w = dims[3];
    std::array<std::int64_t, 4> strides = sh.nhwc ? std::array<std::int64_t, 4>{c * h * w, 1, w * c, c} : std::array<std::int64_t, 4>{c * h * w, h * w, w, 1};
    const std::int64_t alignment = 16;
    const cudnnDataType_t type = sh.type;
    if (!ok(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type), "the tensor's type") ||
        !ok(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data()), "the tensor's dimensions") ||
        !ok(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data()), "the tensor's strides") ||
        !ok(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id), "the tensor's id") ||
        !ok(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment), "the tensor's alignment") ||
        !ok(cudnnBackendFinalize(t), "finalizing a tensor"))
      return nullptr;
    return t;
  };
  auto fail = [&]() -> std::unique_ptr<Plan> {
    why = step.empty() ? "cuDNN's graph API refused the convolution" : step;
    return nullptr;
  };
  cudnnBackendDescriptor_t x = tensor(kX, {sh.n, sh.c, sh.h, sh.w}), w = tensor(kW, {sh.k, sh.c, sh.r, sh.s}),
                           y = tensor(kY, {sh.n, sh.k, sh.oh, sh.ow});
  if (!x || !w || !y) return fail();

  cudnnBackendDescriptor_t conv = owned.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, st);
  if (!ok(st, "a convolution descriptor")) return fail();
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t dims = 2;
  const std::array<std::int64_t, 2> dilation{1, 1}, stride{sh.stride_h, sh.stride_w}, pad{sh.pad_h, sh.pad_w};
  if (!ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute), "the accumulation type") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode), "the mode") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims), "the spatial dims") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation.data()), "the dilations") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride.data()), "the strides") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data()), "the paddings") ||
      !ok(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad.data()), "the paddings") ||
      !ok(cudnnBackendFinalize(conv), "finalizing the convolution descriptor"))
    return fail();

  // The operation: each direction names its tensors and scales with its own attributes.
  struct Names {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
  };
  const Names names =
      direction == Direction::Forward
          ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA}
      : direction == Direction::BackwardData
          ? Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA}
          : Names{CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  cudnnBackendDescriptor_t op = owned.make(names.type, st);
  if (!ok(st, "the convolution operation")) return fail();
  const float alpha = 1, beta = 0;
  if (!ok(cudnnBackendSetAttribute(op, names.x, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x), "the operation's x") ||
      !ok(cudnnBackendSetAttribute(op, names.w, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w), "the operation's w") ||
      !ok(cudnnBackendSetAttribute(op, names.y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y), "the operation's y") ||
      !ok(cudnnBackendSetAttribute(op, names.conv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv), "the operation's convolution") ||
      !ok(cudnnBackendSetAttribute(op, names.alpha, CUDNN_TYPE_FLOAT, 1, &alpha), "the operation's alpha") ||
      !ok(cudnnBackendSetAttribute(op, names.beta, CUDNN_TYPE_FLOAT, 1, &beta), "the operation's beta") || !ok(cudnnBackendFinalize(op), "finalizing the operation"))
    return fail();

  cudnnBackendDescriptor_t graph = owned.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, st);
  if (!ok(st, "the operation graph")) return fail();
  if (!ok(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op), "the graph's operation") ||
      !ok(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle), "the graph's handle") ||
      !ok(cudnnBackendFinalize(graph), "finalizing the graph"))
    return fail();

  cudnnBackendDescriptor_t heuristics = owned.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, st);
  if (!ok(st, "the heuristics")) return fail();
  const cudnnBackendHeurMode_t heur_mode = CUDNN_HEUR_MODE_A;
  if (!ok(cudnnBackendSetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph), "the heuristics' graph") ||
      !ok(cudnnBackendSetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode), "the heuristics' mode") ||
      !ok(cudnnBackendFinalize(heuristics), "finalizing the heuristics"))
    return fail();
  std::int64_t count = 0;
  if (!ok(cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr), "the heuristics' count"))
    return fail();
  if (count <= 0) {
    step = "cuDNN's heuristics rank no engine for it";
    return fail();
  }
  std::vector<cudnnBackendDescriptor_t> configs(static_cast<std::size_t>(count));
  for (auto& c : configs) {
    c = owned.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, st);
    if (!ok(st, "an engine configuration")) return fail();
  }
  std::int64_t got = 0;
  if (!ok(cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, configs.data()),
          "the heuristics' results"))
    return fail();
  // The first configuration, in the heuristics' order, that finalizes within the workspace limit.
  std::string last;
  for (std::int64_t i = 0; i < got; ++i) {
    cudnnBackendDescriptor_t plan = nullptr;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS) continue;
    std::int64_t workspace = 0;
    cudnnStatus_t s = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]);
    if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendFinalize(plan);
    if (s == CUDNN_STATUS_SUCCESS) {
      std::int64_t n = 0;
      s = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &workspace);
    }
    if (s == CUDNN_STATUS_SUCCESS && workspace >= 0 && static_cast<std::size_t>(workspace) <= max_workspace) {
      std::unique_ptr<Plan> p(new Plan);
      p->plan_ = plan;
      p->workspace_ = static_cast<std::size_t>(workspace);
      p->engine_ = "the heuristics' choice " + std::to_string(i + 1) + " of " + std::to_string(got);
      return p;
    }
    last = s == CUDNN_STATUS_SUCCESS ? "a workspace of " + std::to_string(workspace) + " bytes" : cudnnGetErrorString(s);
    cudnnBackendDestroyDescriptor(plan);
  }
  step = "none of the " + std::to_string(got) + " engine configurations cuDNN's heuristics rank finalizes (the last: " + last + ")";
  return fail();
}

Plan::~Plan() {
  if (plan_) cudnnBackendDestroyDescriptor(plan_);
}

cudnnStatus_t Plan::execute(cudnnHandle_t handle, void* x, void* w, void* y, void* workspace) const {
  cudnnBackendDescriptor_t pack = nullptr;
  cudnnStatus_t s = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (s != CUDNN_STATUS_SUCCESS) return s;
  std::array<void*, 3> pointers{x, w, y};
  const std::array<std::int64_t, 3> ids{kX, kW, kY};
  s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data());
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, ids.data());
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendFinalize(pack);
  if (s == CUDNN_STATUS_SUCCESS) s = cudnnBackendExecute(handle, plan_, pack);
  cudnnBackendDestroyDescriptor(pack);
  return s;
}

}  // namespace parasim::exec::cudnn_graph
