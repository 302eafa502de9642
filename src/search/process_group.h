// The processes a search is split over: rank r of R evaluates candidates i ≡ r (mod R) and rank 0
// gathers every share. One process is a group of one; with -DPREFLIGHT_MPI=ON and a launch by
// mpirun (or srun) the group is MPI_COMM_WORLD. A group is used from one thread only; its
// collective calls must be made by every rank in the same order.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace preflight {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective: every rank passes its bytes; rank 0 gets one entry per rank in rank order, the
  // other ranks get an empty vector.
  virtual std::vector<std::string> gather(const std::string& bytes) = 0;
};

// Rank 0 of 1.
std::unique_ptr<ProcessGroup> make_single_process_group();

// MPI_COMM_WORLD when this binary was built with PREFLIGHT_MPI and started by an MPI launcher
// (OpenMPI, PMIx or PMI environment variables); the single-process group otherwise. The MPI
// group initializes MPI and finalizes it when destroyed: make one per process.
std::unique_ptr<ProcessGroup> make_process_group_from_environment();

}  // namespace preflight
