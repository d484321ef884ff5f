// `parasim execute`'s transport over MPI (exec/transport.hpp): a communicator per (group, stream)
// pair of the task graph's collectives, so each stream thread orders its own collectives as a
// CUDA stream with its NCCL communicator would; a duplicate of the world for pipeline sends, tagged
// by stream. Every operation is non-blocking and polled to completion: a blocked MPI call spins on
// its core, and on a CPU the compute stream beside it needs that core. Compiled into
// libparasim_mpi.so only (mpi/backend.hpp).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "common/error.hpp"
#include "mpi/polling.hpp"
#include "mpi/world.hpp"

namespace parasim::mpi {

namespace {

int count_of(double bytes) {
  const double n = std::max(1.0, bytes / sizeof(float));
  PARASIM_CHECK(n < 2147483647.0, "an MPI message's float count fits in an int");
  return static_cast<int>(n);
}

class MpiTransport final : public exec::Transport {
 public:
  /// The ranks of `base` (the world, or one replica's part of it), numbered as in it.
  explicit MpiTransport(MPI_Comm base) {
    MPI_Comm_dup(base, &base_);
    MPI_Comm_rank(base_, &rank_);
    MPI_Comm_size(base_, &size_);
    MPI_Comm_dup(base_, &p2p_);
  }
  ~MpiTransport() override {
    for (auto& [key, comm] : comms_) MPI_Comm_free(&comm);
    MPI_Comm_free(&p2p_);
    MPI_Comm_free(&base_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void prepare(const sim::TaskGraph& graph) override {
    PARASIM_CHECK(graph.devices == size_, "one rank per device");
    graph_ = &graph;
    std::set<std::pair<std::uint32_t, std::uint8_t>> pairs;
    for (sim::TaskId t = 0; t < graph.task_count(); ++t)
      if (graph.kind[t] == sim::TaskKind::Collective && graph.collectives[graph.owner[t]].kind != sim::CollectiveKind::SendRecv)
        pairs.insert({graph.collectives[graph.owner[t]].group, graph.stream[t]});
    MPI_Group world;
    MPI_Comm_group(base_, &world);
    int tag = 0;
    // Every rank walks the pairs in the same order, so the groups are created in one global order
    // and no two ranks wait on each other's creation.
    for (const auto& [group, stream] : pairs) {
      ++tag;
      const auto members = graph.group(group);
      if (members.size() < 2 || std::find(members.begin(), members.end(), rank_) == members.end()) continue;
      std::vector<int> ranks(members.begin(), members.end());
      MPI_Group g;
      MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &g);
      MPI_Comm comm;
      MPI_Comm_create_group(base_, g, tag, &comm);
      MPI_Group_free(&g);
      comms_[{group, stream}] = comm;
    }
    MPI_Group_free(&world);
  }

  void collective(std::uint32_t c, std::uint8_t stream, float* data) override {
    const sim::CollectiveSpec& spec = graph_->collectives[c];
    const auto members = graph_->group(spec.group);
    if (members.size() < 2) return;
    const auto it = comms_.find({spec.group, stream});
    PARASIM_CHECK(it != comms_.end(), "a communicator for the collective's group and stream");
    const MPI_Comm comm = it->second;
    const double p = static_cast<double>(members.size());
    MPI_Request request;
    switch (spec.kind) {
      case sim::CollectiveKind::AllReduce:
        MPI_Iallreduce(MPI_IN_PLACE, data, count_of(spec.bytes), MPI_FLOAT, MPI_SUM, comm, &request);
        break;
      case sim::CollectiveKind::AllGather:
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, count_of(spec.bytes / p), MPI_FLOAT, comm, &request);
        break;
      case sim::CollectiveKind::ReduceScatter:
        MPI_Ireduce_scatter_block(MPI_IN_PLACE, data, count_of(spec.bytes / p), MPI_FLOAT, MPI_SUM, comm, &request);
        break;
      case sim::CollectiveKind::AllToAll:
        MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, count_of(spec.bytes / p), MPI_FLOAT, comm, &request);
        break;
      case sim::CollectiveKind::Broadcast: {
        const std::int64_t root = spec.root < 0 ? members.front() : spec.root;
        const int root_rank = static_cast<int>(std::find(members.begin(), members.end(), root) - members.begin());
        MPI_Ibcast(data, count_of(spec.bytes), MPI_FLOAT, root_rank, comm, &request);
        break;
      }
      case sim::CollectiveKind::SendRecv: PARASIM_CHECK(false, "sends go through send()"); return;
    }
    wait_polling(request);
  }

  void send(int peer, std::uint8_t stream, const float* data, std::size_t count) override {
    MPI_Request request;
    MPI_Isend(data, count_of(static_cast<double>(count) * sizeof(float)), MPI_FLOAT, peer, stream, p2p_, &request);
    wait_polling(request);
  }

  void receive(int peer, std::uint8_t stream, float* data, std::size_t count) override {
    MPI_Request request;
    MPI_Irecv(data, count_of(static_cast<double>(count) * sizeof(float)), MPI_FLOAT, peer, stream, p2p_, &request);
    wait_polling(request);
  }

  void barrier() override { MPI_Barrier(base_); }

  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override {
    PARASIM_CHECK(mine.size() < 2147483647u, "a rank record fits in an int count");
    int bytes = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
    MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, base_);
    std::size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
    }
    std::vector<std::byte> all(rank_ == 0 ? total : 0);
    MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, base_);
    std::vector<std::vector<std::byte>> out;
    if (rank_ != 0) return out;
    for (int r = 0; r < size_; ++r) {
      const auto* begin = all.data() + displs[static_cast<std::size_t>(r)];
      out.emplace_back(begin, begin + counts[static_cast<std::size_t>(r)]);
    }
    return out;
  }

  bool any(bool mine) override {
    int flag = mine ? 1 : 0, result = 0;
    MPI_Allreduce(&flag, &result, 1, MPI_INT, MPI_MAX, base_);
    return result != 0;
  }

  void abort_all(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);  // every rank of the job, not only this transport's
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1;
  const sim::TaskGraph* graph_ = nullptr;
  MPI_Comm base_, p2p_;
  std::map<std::pair<std::uint32_t, std::uint8_t>, MPI_Comm> comms_;
};

}  // namespace

std::unique_ptr<exec::Transport> World::execute_transport(int part) const {
  if (part < 0) return std::make_unique<MpiTransport>(MPI_COMM_WORLD);
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, part, rank_, &comm);
  auto transport = std::make_unique<MpiTransport>(comm);
  MPI_Comm_free(&comm);
  return transport;
}

void World::send_to_clients(float* data, std::size_t count) const {
  const int n = count_of(static_cast<double>(count) * sizeof(float));
  if (rank_ == 0) {
    std::vector<MPI_Request> requests(static_cast<std::size_t>(size_ - 1));
    for (int r = 1; r < size_; ++r) MPI_Isend(data, n, MPI_FLOAT, r, 77, MPI_COMM_WORLD, &requests[static_cast<std::size_t>(r - 1)]);
    for (auto& request : requests) wait_polling(request);
  } else {
    MPI_Request request;
    MPI_Irecv(data, n, MPI_FLOAT, 0, 77, MPI_COMM_WORLD, &request);
    wait_polling(request);
  }
}

void World::gather_from_clients(const float* mine, std::size_t count, float* all) const {
  const int n = count_of(static_cast<double>(count) * sizeof(float));
  if (rank_ == 0) {
    std::vector<MPI_Request> requests(static_cast<std::size_t>(size_ - 1));
    for (int r = 1; r < size_; ++r)
      MPI_Irecv(all + static_cast<std::size_t>(r - 1) * count, n, MPI_FLOAT, r, 78, MPI_COMM_WORLD, &requests[static_cast<std::size_t>(r - 1)]);
    for (auto& request : requests) wait_polling(request);
  } else {
    MPI_Request request;
    MPI_Isend(mine, n, MPI_FLOAT, 0, 78, MPI_COMM_WORLD, &request);
    wait_polling(request);
  }
}

std::function<void(float*, std::size_t)> World::all_reduce_among(int part) const {
  auto comm = std::shared_ptr<MPI_Comm>(new MPI_Comm, [](MPI_Comm* c) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(c);
    delete c;
  });
  MPI_Comm_split(MPI_COMM_WORLD, part, rank_, comm.get());
  return [comm](float* data, std::size_t count) {
    MPI_Request request;
    MPI_Iallreduce(MPI_IN_PLACE, data, count_of(static_cast<double>(count) * sizeof(float)), MPI_FLOAT, MPI_SUM, *comm, &request);
    wait_polling(request);
  };
}

}  // namespace parasim::mpi
