#pragma once
/// How the ranks of `parasim execute` talk: the collectives, sends and gathers the executor needs,
/// as an interface, so the executor is plain C++ and MPI stays in mpi/ (mpi/execute_transport.cpp).
/// A single process (one device, no launcher) uses LocalTransport.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/task_graph.hpp"

namespace parasim::exec {

class Transport {
 public:
  virtual ~Transport() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  /// Every rank calls it with the same graph before any collective: sets up a communicator per
  /// (group, stream) pair the graph's collectives use, so each stream's collectives are ordered on
  /// their own, as NCCL communicators and CUDA streams order them.
  virtual void prepare(const sim::TaskGraph& graph) = 0;
  /// Runs collective `c` of the prepared graph on `stream`: this rank's part, returning when it is
  /// done. `data` holds at least the collective's bytes on this rank (collectives.hpp's convention).
  virtual void collective(std::uint32_t c, std::uint8_t stream, float* data) = 0;
  /// A pipeline send of `count` floats to `peer`, tagged with the stream it is issued on; returns
  /// when the message has left. receive() is its other side; messages of one (peer, stream) arrive
  /// in the order they were sent.
  virtual void send(int peer, std::uint8_t stream, const float* data, std::size_t count) = 0;
  virtual void receive(int peer, std::uint8_t stream, float* data, std::size_t count) = 0;
  virtual void barrier() = 0;
  /// Rank 0 gets every rank's bytes (rank order); other ranks get an empty vector.
  [[nodiscard]] virtual std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) = 0;
  /// Whether any rank passed true (every rank calls it).
  [[nodiscard]] virtual bool any(bool mine) = 0;
  /// Ends every rank at once after this rank printed why (a failure inside a step, when the other
  /// ranks may be waiting in a collective for this one). Does not return.
  [[noreturn]] virtual void abort_all(int code) = 0;
};

/// One rank, no communication: a plan of one device.
class LocalTransport final : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void prepare(const sim::TaskGraph& graph) override;
  void collective(std::uint32_t, std::uint8_t, float*) override {}
  void send(int, std::uint8_t, const float*, std::size_t) override;
  void receive(int, std::uint8_t, float*, std::size_t) override;
  void barrier() override {}
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override { return {std::vector<std::byte>(mine.begin(), mine.end())}; }
  bool any(bool mine) override { return mine; }
  [[noreturn]] void abort_all(int code) override;
};

}  // namespace parasim::exec
