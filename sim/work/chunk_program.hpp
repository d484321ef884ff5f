#pragma once
/// How a chunk's forward and backward programs are derived from the plan's shardings (the rules
/// behind sim/work/work.hpp's describe_step):
///  - a tensor whose layout differs between producer and consumer is resharded (sim/work/layout.hpp):
///    a partial sum (a split contraction) becomes an all-reduce, or a reduce-scatter when the
///    consumer wants it split; an axis that splits the producer's tensor but not the consumer's an
///    all-gather; an axis that moves to another dim an all-to-all; MoE token routing an all-to-all
///    over the expert axis. Backward applies the same rules to gradients, from the consumer's
///    layout to the producer's;
///  - weight gradients that are partial sums over data axes are marked ready after the backward
///    item that completes them; the lowering reduces them in buckets (sim/work/work.hpp,
///    gradient_buckets);
///  - tensors crossing a chunk boundary are sent point to point (with Megatron's scatter/gather:
///    each tensor-parallel rank sends 1/t and the receivers all-gather);
///  - recomputation repeats a layer's forward (full) or its attention core (selective) before its
///    backward; ZeRO-3 gathers each layer's weights ahead of it (sim/work/weight_gathers.hpp).
#include "sim/work/work.hpp"

namespace parasim::sim {

}  // namespace parasim::sim
