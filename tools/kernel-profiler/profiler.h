// Preflight kernel profiler: times, on the GPU it runs on, the kernels of a shapes list that
// `preflight kernels --shapes` writes, and writes a kernel table for `compute.model: measured`.
// The CSV format of both files is the contract of src/config/kernel_table.h
// (docs/kernel_tables.md).
//
// The profiler is its own program: it shares no code with the simulator, so it builds wherever
// nvcc is found and needs nothing but the CUDA toolkit, cuBLASLt and (for attention) cuDNN.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace preflight::kp {

constexpr int kExitLibraryError = 1;  // a CUDA, cuBLASLt or cuDNN call failed
constexpr int kExitBadInput = 2;      // bad arguments, an unreadable file, a malformed shapes list

// Ends the run: main() prints the message (one line) and exits with the code.
struct Fatal {
  int exit_code;
  std::string message;
};

// Leaves one row out of the table: main() prints a warning naming the row and goes on.
struct Skip {
  std::string reason;
};

enum class Kind { kGemm, kAttention, kMemory };

// The header of a shapes list and of a kernel table, in order (kernel_table.h).
extern const char* const kColumns[19];
constexpr int kNumColumns = 19;
constexpr int kShapeColumns = 15;  // kind ... bytes: the columns copied from the shapes list

// One row of the shapes list, checked as src/config/kernel_table.cc checks it.
struct Row {
  std::string file;
  int line = 0;
  std::vector<std::string> cells;  // all 19, trimmed, as read (the first 15 are written back)
  Kind kind = Kind::kMemory;
  std::string name;
  std::string dtype;
  int64_t m = 0, n = 0, k = 0, batch = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0, seq_q = 0, seq_kv = 0;
  bool causal = false;
  bool backward = false;
  int64_t bytes = 0;

  std::string describe() const;  // "file:line: gemm 'qkv' bf16 8192x6144x4096" for messages
};

// Reads and checks a shapes list ("-" reads standard input). Throws Fatal(kExitBadInput) naming
// file:line and what was expected.
std::vector<Row> read_shapes(const std::string& path);

// CUDA runtime errors end the run (exit 1) with the call and the error string.
void check_cuda(cudaError_t status, const char* call);
#define KP_CUDA(call) ::preflight::kp::check_cuda((call), #call)

// Device memory owned for the scope of one row: a skipped or failed row frees what it took.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Skips the row when `bytes` (all buffers of one measurement) does not fit in free device memory.
void require_device_memory(double bytes);

// Board telemetry during a timed loop: SM clock and power from NVML when the profiler was built
// with it (PREFLIGHT_KP_HAVE_NVML), else the device's peak clock attribute and no power.
class Telemetry {
 public:
  explicit Telemetry(int device);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  bool has_nvml() const { return nvml_ != nullptr; }
  void begin();   // forgets earlier samples
  void sample();  // one reading of the SM clock and the board power
  double mean_clock_mhz() const;
  double mean_power_w() const;
  std::string driver_version() const;  // the NVIDIA driver's version, from NVML; else empty
  std::string clock_source() const;    // how sm_clock_mhz and power_w are read (lines)

 private:
  void* nvml_ = nullptr;  // nvmlDevice_t when NVML is in use
  double peak_clock_mhz_ = 0;
  double clock_sum_ = 0, power_sum_ = 0;
  int clock_samples_ = 0, power_samples_ = 0;
};

struct Context {
  int device = 0;
  cudaDeviceProp prop{};
  cudaStream_t stream = nullptr;
  int warmup = 10;
  int reps = 50;
  Telemetry* telemetry = nullptr;
};

struct Measurement {
  double time_us = 0;  // mean device time of one launch
  int reps = 0;
  double sm_clock_mhz = 0;
  double power_w = 0;
};

// The timing method shared by every kind: `warmup` calls of launch(i), a synchronization, then
// CUDA events recorded on the stream around `reps` back-to-back calls (i = warmup ... warmup +
// reps - 1); time_us = elapsed / reps. Back-to-back launches on one stream measure the kernels'
// device time including the GPU's own launch gaps, not host overhead, as long as the host queues
// launches faster than the GPU runs them (true for kernels of more than a few microseconds).
// While the GPU works through the loop the host samples the telemetry.
Measurement time_launches(const Context& ctx, const std::function<void(int)>& launch);

Measurement measure_gemm(const Context& ctx, const Row& row);
Measurement measure_attention(const Context& ctx, const Row& row);
Measurement measure_memory(const Context& ctx, const Row& row);

// Library versions for the output's comments.
std::string cublaslt_version();
std::string cudnn_version();  // "not built in" without cuDNN
void release_cublaslt();
void release_cudnn();

}  // namespace preflight::kp
