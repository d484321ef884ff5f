// `parasim execute --backend cuda`'s transport (exec/transport.hpp): the task graph's collectives as
// NCCL operations on GPU buffers (the kernels' message buffers), a communicator per (group, stream)
// pair as the CPU transport has an MPI communicator per pair, and pipeline sends as ncclSend/ncclRecv
// on a communicator per (sender, receiver, stream) — NCCL communicators are not shared between
// threads, and a rank's stream thread sends while its receiver threads receive. Communicators are
// bootstrapped over MPI (ncclGetUniqueId on the group's first rank, MPI_Bcast to the others); each
// operation runs on the transport's CUDA stream for its communicator and is waited for there.
// Barriers, gathers and aborts go over MPI, through the CPU transport. Built where CMake found CUDA,
// NCCL and MPI (mpi/CMakeLists.txt).
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "common/error.hpp"
#include "mpi/session.hpp"

namespace parasim::mpi {
namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw PlanError(std::string("--backend cuda: ") + what + ": " + cudaGetErrorString(e));
}
void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw PlanError(std::string("--backend cuda: ") + what + ": " + ncclGetErrorString(r));
}

/// An NCCL communicator over `ranks` (world ranks, ascending; this rank among them) and its stream.
struct Comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* scratch = nullptr;  ///< an all-to-all's output (each communicator is one thread's)
  std::size_t scratch_count = 0;
};

Comm make_comm(const std::vector<int>& ranks, int me, int tag) {
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &group);
  MPI_Comm mpi_comm;
  MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &mpi_comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  ncclUniqueId id;
  const int index = static_cast<int>(std::find(ranks.begin(), ranks.end(), me) - ranks.begin());
  if (index == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi_comm);
  MPI_Comm_free(&mpi_comm);
  Comm c;
  check_nccl(ncclCommInitRank(&c.comm, static_cast<int>(ranks.size()), id, index), "ncclCommInitRank");
  check_cuda(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  return c;
}

/// Waits for `c`'s stream, sleeping 20 µs between queries (a spinning host thread would take a core
/// from the rank's other threads), and fails on an asynchronous NCCL error (a peer gone).
void wait(const Comm& c) {
  while (true) {
    const cudaError_t e = cudaStreamQuery(c.stream);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady) check_cuda(e, "a collective");
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(c.comm, &async), "ncclCommGetAsyncError");
    check_nccl(async, "a collective");
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::size_t count_of(double bytes) { return static_cast<std::size_t>(std::max(1.0, bytes / sizeof(float))); }

class NcclTransport final : public exec::Transport {
 public:
  NcclTransport(std::unique_ptr<exec::Transport> host, int gpu) : host_(std::move(host)), gpu_(gpu) {}
  ~NcclTransport() override {
    auto destroy = [](Comm& c) {
      ncclCommDestroy(c.comm);
      cudaStreamDestroy(c.stream);
      if (c.scratch) cudaFree(c.scratch);
    };
    for (auto& [key, c] : group_comms_) destroy(c);
    for (auto& [key, c] : p2p_comms_) destroy(c);
  }

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }

  void prepare(const sim::TaskGraph& graph) override {
    host_->prepare(graph);
    graph_ = &graph;
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    gpu_ %= std::max(devices, 1);
    check_cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    // Every rank walks the same sorted keys, so communicators are created in one global order.
    std::set<std::pair<std::uint32_t, std::uint8_t>> groups;
    std::set<std::tuple<int, int, std::uint8_t>> pairs;
    std::map<std::pair<std::uint32_t, std::uint8_t>, double> all_to_all_bytes;  // the largest, per communicator
    for (sim::TaskId t = 0; t < graph.task_count(); ++t) {
      if (graph.kind[t] != sim::TaskKind::Collective) continue;
      const auto& spec = graph.collectives[graph.owner[t]];
      if (spec.kind == sim::CollectiveKind::SendRecv) {
        const auto m = graph.group(spec.group);
        const auto to = m[0] == spec.root ? m[1] : m[0];
        pairs.insert({static_cast<int>(spec.root), static_cast<int>(to), graph.stream[t]});
      } else {
        groups.insert({spec.group, graph.stream[t]});
        if (spec.kind == sim::CollectiveKind::AllToAll) {
          double& b = all_to_all_bytes[{spec.group, graph.stream[t]}];
          b = std::max(b, spec.bytes);
        }
      }
    }
    int tag = 1000;
    const int me = rank();
    for (const auto& [group, stream] : groups) {
      ++tag;
      const auto members = graph.group(group);
      if (members.size() < 2 || std::find(members.begin(), members.end(), me) == members.end()) continue;
      Comm& c = group_comms_[{group, stream}] = make_comm(std::vector<int>(members.begin(), members.end()), me, tag);
      // An all-to-all's output buffer, allocated now: not while other threads' collectives run.
      if (const auto it = all_to_all_bytes.find({group, stream}); it != all_to_all_bytes.end())
        (void)scratch(c, count_of(it->second / static_cast<double>(members.size())) * members.size());
    }
    for (const auto& [from, to, stream] : pairs) {
      ++tag;
      if (me != from && me != to) continue;
      p2p_comms_[{from, to, stream}] = make_comm({std::min(from, to), std::max(from, to)}, me, tag);
    }
  }

  void collective(std::uint32_t c, std::uint8_t stream, float* data) override {
    const sim::CollectiveSpec& spec = graph_->collectives[c];
    const auto members = graph_->group(spec.group);
    if (members.size() < 2) return;
    const auto it = group_comms_.find({spec.group, stream});
    PARASIM_CHECK(it != group_comms_.end(), "an NCCL communicator for the collective's group and stream");
    Comm& k = it->second;
    // The current device is a thread's own: set it on every thread that reaches here.
    check_cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    const std::size_t p = members.size();
    const auto me = static_cast<std::size_t>(std::find(members.begin(), members.end(), rank()) - members.begin());
    switch (spec.kind) {
      case sim::CollectiveKind::AllReduce:
        check_nccl(ncclAllReduce(data, data, count_of(spec.bytes), ncclFloat, ncclSum, k.comm, k.stream), "ncclAllReduce");
        break;
      case sim::CollectiveKind::AllGather: {
        const std::size_t n = count_of(spec.bytes / static_cast<double>(p));
        check_nccl(ncclAllGather(data + me * n, data, n, ncclFloat, k.comm, k.stream), "ncclAllGather");
        break;
      }
      case sim::CollectiveKind::ReduceScatter: {
        const std::size_t n = count_of(spec.bytes / static_cast<double>(p));
        check_nccl(ncclReduceScatter(data, data + me * n, n, ncclFloat, ncclSum, k.comm, k.stream), "ncclReduceScatter");
        break;
      }
      case sim::CollectiveKind::AllToAll: {
        // NCCL has no all-to-all: a send and a receive to every member in one group call, into a
        // second buffer (NCCL's own all-to-all in nccl-tests is built the same way).
        const std::size_t n = count_of(spec.bytes / static_cast<double>(p));
        float* out = scratch(k, n * p);
        check_nccl(ncclGroupStart(), "ncclGroupStart");
        for (std::size_t j = 0; j < p; ++j) {
          check_nccl(ncclSend(data + j * n, n, ncclFloat, static_cast<int>(j), k.comm, k.stream), "ncclSend");
          check_nccl(ncclRecv(out + j * n, n, ncclFloat, static_cast<int>(j), k.comm, k.stream), "ncclRecv");
        }
        check_nccl(ncclGroupEnd(), "ncclGroupEnd");
        check_cuda(cudaMemcpyAsync(data, out, n * p * sizeof(float), cudaMemcpyDeviceToDevice, k.stream), "cudaMemcpyAsync");
        break;
      }
      case sim::CollectiveKind::Broadcast: {
        const std::int64_t root = spec.root < 0 ? members.front() : spec.root;
        const int root_index = static_cast<int>(std::find(members.begin(), members.end(), root) - members.begin());
        check_nccl(ncclBroadcast(data, data, count_of(spec.bytes), ncclFloat, root_index, k.comm, k.stream), "ncclBroadcast");
        break;
      }
      case sim::CollectiveKind::SendRecv: PARASIM_CHECK(false, "sends go through send()"); return;
    }
    wait(k);
  }

  void send(int peer, std::uint8_t stream, const float* data, std::size_t count) override {
    check_cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    const Comm& k = p2p(rank(), peer, stream);
    check_nccl(ncclSend(data, count, ncclFloat, peer < rank() ? 0 : 1, k.comm, k.stream), "ncclSend");
    wait(k);
  }

  void receive(int peer, std::uint8_t stream, float* data, std::size_t count) override {
    check_cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    const Comm& k = p2p(peer, rank(), stream);
    check_nccl(ncclRecv(data, count, ncclFloat, peer < rank() ? 0 : 1, k.comm, k.stream), "ncclRecv");
    wait(k);
  }

  void barrier() override { host_->barrier(); }
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override { return host_->gather(mine); }
  bool any(bool mine) override { return host_->any(mine); }
  [[noreturn]] void abort_all(int code) override {
    host_->abort_all(code);
    std::_Exit(code);  // not reached: the host transport's abort does not return
  }

 private:
  const Comm& p2p(int from, int to, std::uint8_t stream) const {
    const auto it = p2p_comms_.find({from, to, stream});
    PARASIM_CHECK(it != p2p_comms_.end(), "an NCCL communicator for the send's ranks and stream");
    return it->second;
  }
  /// `c`'s device buffer of at least `count` floats (an all-to-all's output), grown on its stream
  /// after the stream's work is done.
  static float* scratch(Comm& c, std::size_t count) {
    if (count > c.scratch_count) {
      check_cuda(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
      if (c.scratch) check_cuda(cudaFree(c.scratch), "cudaFree");
      check_cuda(cudaMalloc(reinterpret_cast<void**>(&c.scratch), count * sizeof(float)), "cudaMalloc");
      c.scratch_count = count;
    }
    return c.scratch;
  }

  std::unique_ptr<exec::Transport> host_;
  int gpu_;
  const sim::TaskGraph* graph_ = nullptr;
  std::map<std::pair<std::uint32_t, std::uint8_t>, Comm> group_comms_;
  std::map<std::tuple<int, int, std::uint8_t>, Comm> p2p_comms_;
};

}  // namespace

/// libparasim_gpu.so's entry for Session::execute_nccl_transport (mpi/execute_nccl_loader.cpp):
/// NCCL over the CPU transport `host` (barriers, gathers, aborts) on CUDA device `gpu`.
std::unique_ptr<exec::Transport> make_nccl_transport(std::unique_ptr<exec::Transport> host, int gpu) {
  return std::make_unique<NcclTransport>(std::move(host), gpu);
}

}  // namespace parasim::mpi
