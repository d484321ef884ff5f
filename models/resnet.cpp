#include "models/resnet.hpp"

#include "common/error.hpp"
#include "models/ops.hpp"

namespace parasim::models {
namespace {

using namespace ops;

/// A feature map [b, c, h, w] and the operator that produced it.
struct FeatureMap {
  OpId op;
  std::int64_t channels, height, width;
};

/// PyTorch's output size of a convolution or pooling window (ceil_mode off, dilation 1).
std::int64_t window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  return (in + 2 * pad - kernel) / stride + 1;
}

class CnnBuilder {
 public:
  CnnBuilder(const ResNetConfig& c) : c_(c), g_(c.name) { g_.set_batch(c.batch); }

  Graph& graph() { return g_; }
  void begin_layer(std::string name) { layer_ = g_.add_layer(std::move(name)); }

  FeatureMap input() {
    Operator o = make("images", OpKind::Input, map_dims(c_.in_channels, c_.image_size, c_.image_size), {}, {"b", "c", "hh", "ww"}, c_.dtype);
    return {add(std::move(o), {}), c_.in_channels, c_.image_size, c_.image_size};
  }

  /// A convolution without bias. `input_grad` is false for the first convolution, whose input (the
  /// images) needs no gradient, so autograd computes only the weight gradient.
  FeatureMap conv(const std::string& name, const FeatureMap& x, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                  std::int64_t pad, bool input_grad = true) {
    const std::int64_t oh = window_output(x.height, kernel, stride, pad), ow = window_output(x.width, kernel, stride, pad);
    Operator o = make(name, OpKind::Conv2d,
                      {dim("b", c_.batch), dim("co", out_channels), dim("oh", oh), dim("ow", ow), dim("ci", x.channels),
                       dim("kh", kernel, false), dim("kw", kernel, false)},
                      {{"b", "ci", "ih", "iw"}}, {"b", "co", "oh", "ow"}, c_.dtype);
    if (kernel == 1 && stride == 1 && pad == 0) {
      o.inputs[0].dims = {"b", "ci", "oh", "ow"};  // one input pixel per output pixel: a plain GEMM
    } else {
      o.extent_dims = {dim("ih", x.height, false), dim("iw", x.width, false)};
    }
    o.weights.push_back(Weight{name + ".weight", TensorSpec{{"co", "ci", "kh", "kw"}, c_.dtype}});
    o.gemm_m = {"b", "oh", "ow"};
    o.gemm_n = {"co"};
    o.gemm_k = {"ci", "kh", "kw"};
    o.flops_per_point = 2;
    o.bwd_flops_factor = input_grad ? 2 : 1;  // data gradient and weight gradient, each as costly as forward
    o.saved_inputs = {0};
    return {add(std::move(o), {x.op}), out_channels, oh, ow};
  }

  FeatureMap batch_norm(const std::string& name, const FeatureMap& x) {
    Operator o = make(name, OpKind::BatchNorm, map_dims(x.channels, x.height, x.width, false), {{"b", "c", "hh", "ww"}},
                      {"b", "c", "hh", "ww"}, c_.dtype);
    o.weights.push_back(Weight{name + ".weight", TensorSpec{{"c"}, c_.dtype}});
    o.weights.push_back(Weight{name + ".bias", TensorSpec{{"c"}, c_.dtype}});
    o.flops_per_point = kBatchNormFlops;
    o.bwd_flops_factor = 2;
    o.saved_inputs = {0};
    return {add(std::move(o), {x.op}), x.channels, x.height, x.width};
  }

  /// In-place ReLU as torchvision's: autograd keeps its output.
  FeatureMap relu(const std::string& name, const FeatureMap& x) {
    Operator o = make(name, OpKind::Activation, map_dims(x.channels, x.height, x.width), {{"b", "c", "hh", "ww"}}, {"b", "c", "hh", "ww"},
                      c_.dtype);
    o.variant = "relu";
    o.flops_per_point = kReluFlops;
    o.bwd_flops_factor = 1;
    o.saved_output = true;
    return {add(std::move(o), {x.op}), x.channels, x.height, x.width};
  }

  FeatureMap residual_add(const std::string& name, const FeatureMap& a, const FeatureMap& b) {
    PARASIM_CHECK(a.channels == b.channels && a.height == b.height && a.width == b.width, "residual shapes differ at " + name);
    Operator o = make(name, OpKind::Add, map_dims(a.channels, a.height, a.width), {{"b", "c", "hh", "ww"}, {"b", "c", "hh", "ww"}},
                      {"b", "c", "hh", "ww"}, c_.dtype);
    o.flops_per_point = kAddFlops;
    o.bwd_flops_factor = 0;  // the gradient passes through to both inputs unchanged
    return {add(std::move(o), {a.op, b.op}), a.channels, a.height, a.width};
  }

  FeatureMap max_pool(const std::string& name, const FeatureMap& x, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
    const std::int64_t oh = window_output(x.height, kernel, stride, pad), ow = window_output(x.width, kernel, stride, pad);
    Operator o = make(name, OpKind::Pool,
                      {dim("b", c_.batch), dim("c", x.channels), dim("oh", oh), dim("ow", ow), dim("kh", kernel, false),
                       dim("kw", kernel, false)},
                      {{"b", "c", "ih", "iw"}}, {"b", "c", "oh", "ow"}, c_.dtype);
    o.extent_dims = {dim("ih", x.height, false), dim("iw", x.width, false)};
    o.variant = "max";
    o.flops_per_point = 1;  // one comparison per window element
    // Backward routes one gradient per output element to its argmax: 1/(kh·kw) of the forward points.
    o.bwd_flops_factor = 1.0 / static_cast<double>(kernel * kernel);
    // PyTorch's max_pool2d_with_indices keeps its input and the int64 argmax of every output element.
    o.saved_inputs = {0};
    o.saved_mask_bytes_per_element = static_cast<double>(bytes_of(DType::I64));
    return {add(std::move(o), {x.op}), x.channels, oh, ow};
  }

  /// Adaptive average pooling to 1×1 (the mean over all rows and columns), flattened: [b, c].
  OpId global_avg_pool(const std::string& name, const FeatureMap& x) {
    Operator o = make(name, OpKind::Pool, map_dims(x.channels, x.height, x.width, false), {{"b", "c", "hh", "ww"}}, {"b", "c"}, c_.dtype);
    o.variant = "adaptive_avg";
    o.flops_per_point = 1;
    o.bwd_flops_factor = 1;
    o.saved_inputs = {0};  // autograd keeps the input of _adaptive_avg_pool2d
    return add(std::move(o), {x.op});
  }

  OpId add(Operator o, std::initializer_list<OpId> inputs) {
    o.layer = layer_;
    const OpId id = g_.add_op(std::move(o));
    int slot = 0;
    for (OpId in : inputs) g_.connect(in, id, slot++);
    return id;
  }

 private:
  std::vector<Dim> map_dims(std::int64_t channels, std::int64_t h, std::int64_t w, bool spatial_splittable = true) const {
    return {dim("b", c_.batch), dim("c", channels), dim("hh", h, spatial_splittable), dim("ww", w, spatial_splittable)};
  }

  const ResNetConfig& c_;
  Graph g_;
  std::int32_t layer_ = 0;
};

// torchvision's BasicBlock: conv3x3(stride) → bn → relu → conv3x3 → bn, + shortcut, relu.
// Bottleneck: conv1x1 → bn → relu → conv3x3(stride) → bn → relu → conv1x1 (×4) → bn, + shortcut, relu.
FeatureMap residual_block(CnnBuilder& B, const ResNetConfig& c, const std::string& p, const FeatureMap& x, std::int64_t planes,
                          std::int64_t stride) {
  const bool bottleneck = c.block == ResNetBlock::Bottleneck;
  const std::int64_t out_channels = bottleneck ? planes * 4 : planes;
  FeatureMap y = x;
  if (bottleneck) {
    const std::int64_t width = planes * c.width_per_group / 64;
    y = B.relu(p + "relu1", B.batch_norm(p + "bn1", B.conv(p + "conv1", y, width, 1, 1, 0)));
    y = B.relu(p + "relu2", B.batch_norm(p + "bn2", B.conv(p + "conv2", y, width, 3, stride, 1)));
    y = B.batch_norm(p + "bn3", B.conv(p + "conv3", y, out_channels, 1, 1, 0));
  } else {
    y = B.relu(p + "relu1", B.batch_norm(p + "bn1", B.conv(p + "conv1", y, planes, 3, stride, 1)));
    y = B.batch_norm(p + "bn2", B.conv(p + "conv2", y, planes, 3, 1, 1));
  }
  FeatureMap shortcut = x;
  if (stride != 1 || x.channels != out_channels)
    shortcut = B.batch_norm(p + "downsample.1", B.conv(p + "downsample.0", x, out_channels, 1, stride, 0));
  return B.relu(p + "relu_out", B.residual_add(p + "add", y, shortcut));
}

}  // namespace

std::optional<std::string> validate(const ResNetConfig& c) {
  auto in_range = [](const char* field, std::int64_t v, std::int64_t max) -> std::optional<std::string> {
    if (v < 1 || v > max)
      return std::string(field) + " must be between 1 and " + std::to_string(max) + ", found " + std::to_string(v);
    return std::nullopt;
  };
  if (auto e = in_range("image_size", c.image_size, kMaxImageSize)) return e;
  if (auto e = in_range("in_channels", c.in_channels, kMaxChannels)) return e;
  if (auto e = in_range("num_classes", c.num_classes, kMaxClasses)) return e;
  if (auto e = in_range("batch", c.batch, ops::kMaxBatch)) return e;
  for (std::size_t i = 0; i < c.blocks.size(); ++i)
    if (c.blocks[i] < 1 || c.blocks[i] > 1024)
      return "layer" + std::to_string(i + 1) + " must have between 1 and 1024 blocks, found " + std::to_string(c.blocks[i]);
  if (auto e = in_range("width_per_group", c.width_per_group, 4096)) return e;
  if (c.block == ResNetBlock::Basic && c.width_per_group != 64)
    return "width_per_group must be 64 for BasicBlock ResNets (as in torchvision), found " + std::to_string(c.width_per_group);
  return std::nullopt;
}

Graph build_resnet(const ResNetConfig& c) {
  if (auto problem = validate(c)) PARASIM_CHECK(false, "build_resnet: " + *problem);
  CnnBuilder B(c);

  B.begin_layer("stem");
  FeatureMap x = B.input();
  x = B.relu("relu", B.batch_norm("bn1", B.conv("conv1", x, 64, 7, 2, 3, /*input_grad=*/false)));
  x = B.max_pool("maxpool", x, 3, 2, 1);

  const std::array<std::int64_t, 4> planes{64, 128, 256, 512};
  for (std::size_t stage = 0; stage < planes.size(); ++stage) {
    for (std::int64_t i = 0; i < c.blocks[stage]; ++i) {
      const std::string name = "layer" + std::to_string(stage + 1) + "." + std::to_string(i);
      B.begin_layer(name);
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      x = residual_block(B, c, name + ".", x, planes[stage], stride);
    }
  }

  B.begin_layer("head");
  const OpId pooled = B.global_avg_pool("avgpool", x);
  const OpId logits =
      B.add(ops::linear("fc", {dim("b", c.batch)}, {dim("c", x.channels)}, {dim("o", c.num_classes)}, true, c.dtype), {pooled});
  B.add(ops::loss("loss", {dim("b", c.batch)}, dim("o", c.num_classes, false), c.dtype), {logits});
  return std::move(B.graph());
}

}  // namespace parasim::models
