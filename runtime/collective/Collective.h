//===- Collective.h - Collectives over the replicas of a job ----*- C++ -*-===//
//
// One member (rank) of a fixed group of replicas. Every member calls the
// same collectives in the same order; `tag` tells apart collectives that
// may be in flight together (one per gradient bucket). Calls block the
// calling thread until the collective completes on this member, fails, or
// runs past the timeout given at creation.
//
// Failure: a timed-out or broken collective (a peer died, a connection
// dropped) returns false with `error` naming the problem, and the group is
// unusable afterwards: every later call fails at once with the same error.
// The caller ends the step; recovery is a new group.
//
// Thread safety: one collective call at a time per object (the
// AllReduceBuckets communication thread makes them in order).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_COLLECTIVE_COLLECTIVE_H
#define KILN_RUNTIME_COLLECTIVE_COLLECTIVE_H

#include "runtime/collective/KeyValueStore.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kiln::collective {

class Collective {
public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces the `count` floats at `data` by their elementwise sum over
  /// every member.
  virtual bool allReduceSum(float *data, size_t count, uint32_t tag, std::string &error) = 0;
  /// Writes every member's `bytes` at `input`, in rank order, to `output`
  /// (size() * bytes).
  virtual bool allGather(const void *input, size_t bytes, void *output, uint32_t tag,
                         std::string &error) = 0;
  /// Replaces the `bytes` at `data` by member `root`'s.
  virtual bool broadcast(void *data, size_t bytes, int root, uint32_t tag,
                         std::string &error) = 0;
  /// Returns once every member has called it.
  virtual bool barrier(uint32_t tag, std::string &error) = 0;
};

/// A group of one: every collective returns its input.
std::unique_ptr<Collective> createSingleCollective();

/// Whether `error` came from a collective that broke (a peer lost, a
/// timeout): such an error is a consequence, and the cause is elsewhere.
bool isCollectiveFailure(const std::string &error);

/// Gloo's all-reduce algorithms (docs/distributed.md): `ring` (the
/// bandwidth-optimal default for large buckets), `halving-doubling` (fewer
/// steps, best for small messages on a power-of-two group), `bcube`, or
/// `auto` (halving-doubling below 256 KiB on a power-of-two group, ring
/// otherwise).
enum class AllReduceAlgorithm { Ring, HalvingDoubling, Bcube, Auto };

/// Parses "ring", "halving-doubling", "bcube" or "auto".
bool parseAllReduceAlgorithm(const std::string &text, AllReduceAlgorithm &algorithm);

/// How the members of a group reach each other.
enum class CollectiveTransport {
  /// Shared memory when every member runs on this host (and the algorithm
  /// is `auto`), Gloo over TCP otherwise.
  Auto,
  /// Gloo over TCP always.
  Gloo,
};

struct GlooOptions {
  int rank = 0;
  int size = 1;
  /// The address this member listens on for its peers (an IP address or a
  /// host name of this machine).
  std::string hostname = "127.0.0.1";
  /// Keys of this group in the store start with it (a job and attempt).
  std::string prefix = "gloo";
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::Auto;
  CollectiveTransport transport = CollectiveTransport::Auto;
  /// Every collective fails after this long.
  std::chrono::milliseconds timeout{300000};
  /// The rendezvous (every member connecting to every other) fails after
  /// this long; 0: `timeout`. Members of a cluster start at different
  /// times, so a task gives it its patience for the others to start.
  std::chrono::milliseconds rendezvousTimeout{0};
};

/// Connects member `options.rank` of a Gloo group over TCP, finding the
/// others through `store` (which must outlive the call only). Null with
/// `error` set when a peer does not show up within the timeout or the
/// address cannot be bound. Sets SIGPIPE to be ignored when the process
/// left it at its default (ending the process): a lost peer must fail the
/// collective with an error, not kill its members.
std::unique_ptr<Collective> connectGloo(KeyValueStore &store, const GlooOptions &options,
                                        std::string &error);

/// Connects member `options.rank` in shared memory when every member runs on
/// this host (SharedMemoryCollective.cpp). Null with `sameHost` false and no
/// error when they do not; null with `error` when they do and it fails.
std::unique_ptr<Collective> connectSharedMemory(KeyValueStore &store, const GlooOptions &options,
                                                bool &sameHost, std::string &error);

/// Connects member `options.rank` as `options.transport` says: in shared
/// memory where it can, else over Gloo.
std::unique_ptr<Collective> connectCollective(KeyValueStore &store, const GlooOptions &options,
                                              std::string &error);

} // namespace kiln::collective

#endif // KILN_RUNTIME_COLLECTIVE_COLLECTIVE_H
