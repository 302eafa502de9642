#include "search/process_group.h"

#include <cstdlib>

#include "base/check.h"

#ifdef PREFLIGHT_MPI
#include <mpi.h>
#endif

namespace preflight {
namespace {

class SingleProcessGroup : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> gather(const std::string& bytes) override { return {bytes}; }
};

#ifdef PREFLIGHT_MPI

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

class MpiProcessGroup : public ProcessGroup {
 public:
  MpiProcessGroup() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiProcessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(const std::string& bytes) override {
    PREFLIGHT_CHECK(bytes.size() < (1u << 31));
    int mine = static_cast<int>(bytes.size());
    std::vector<int> sizes(rank_ == 0 ? size_ : 0);
    MPI_Gather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(sizes.size(), 0);
    int64_t total = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      offsets[r] = static_cast<int>(total);
      total += sizes[r];
    }
    PREFLIGHT_CHECK(total < (int64_t{1} << 31));
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Gatherv(bytes.data(), mine, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(offsets[r], sizes[r]));
    return out;
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

#endif

}  // namespace

std::unique_ptr<ProcessGroup> make_single_process_group() {
  return std::make_unique<SingleProcessGroup>();
}

std::unique_ptr<ProcessGroup> make_process_group_from_environment() {
#ifdef PREFLIGHT_MPI
  if (launched_by_mpi()) return std::make_unique<MpiProcessGroup>();
#endif
  return make_single_process_group();
}

}  // namespace preflight
