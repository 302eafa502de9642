// The timing loop, device memory and board telemetry shared by every kind of row.
#include <chrono>
#include <cstdio>
#include <thread>

#include "profiler.h"

#ifdef PREFLIGHT_KP_HAVE_NVML
#include <nvml.h>
#endif

namespace preflight::kp {

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  throw Fatal{kExitLibraryError, std::string(call) + " failed: " + cudaGetErrorName(status) + ": " +
                                     cudaGetErrorString(status)};
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status != cudaSuccess) {
    ptr_ = nullptr;
    throw Fatal{kExitLibraryError, "cudaMalloc(" + std::to_string(bytes) +
                                       " bytes) failed: " + cudaGetErrorString(status)};
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

void require_device_memory(double bytes) {
  size_t free_bytes = 0, total_bytes = 0;
  KP_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Leave room for library workspaces and the CUDA context's own allocations.
  const double usable = static_cast<double>(free_bytes) * 0.9;
  if (bytes > usable) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "needs %.2f GiB of device memory, %.2f GiB are free",
                  bytes / (1024.0 * 1024 * 1024), free_bytes / (1024.0 * 1024 * 1024));
    throw Skip{buf};
  }
}

// ---------------------------------------------------------------------------------------------
// Telemetry

Telemetry::Telemetry(int device) {
  int khz = 0;
  // cudaDevAttrClockRate is the SM's peak clock in kHz: an upper bound, not the clock the kernel
  // ran at (boost, power and thermal limits lower it under load).
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) {
    peak_clock_mhz_ = khz / 1000.0;
  }
#ifdef PREFLIGHT_KP_HAVE_NVML
  // NVML numbers devices its own way; the PCI bus id names the same board for both.
  char bus_id[32] = {0};
  nvmlDevice_t handle;
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) == cudaSuccess &&
      nvmlInit_v2() == NVML_SUCCESS) {
    if (nvmlDeviceGetHandleByPciBusId_v2(bus_id, &handle) == NVML_SUCCESS) {
      nvml_ = static_cast<void*>(handle);
    } else {
      nvmlShutdown();
    }
  }
#endif
}

Telemetry::~Telemetry() {
#ifdef PREFLIGHT_KP_HAVE_NVML
  if (nvml_ != nullptr) nvmlShutdown();
#endif
}

void Telemetry::begin() {
  clock_sum_ = power_sum_ = 0;
  clock_samples_ = power_samples_ = 0;
}

void Telemetry::sample() {
#ifdef PREFLIGHT_KP_HAVE_NVML
  if (nvml_ != nullptr) {
    const auto handle = static_cast<nvmlDevice_t>(nvml_);
    unsigned int mhz = 0, milliwatts = 0;
    if (nvmlDeviceGetClockInfo(handle, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) {
      clock_sum_ += mhz;
      ++clock_samples_;
    }
    if (nvmlDeviceGetPowerUsage(handle, &milliwatts) == NVML_SUCCESS) {
      power_sum_ += milliwatts / 1000.0;
      ++power_samples_;
    }
    return;
  }
#endif
  clock_sum_ += peak_clock_mhz_;
  ++clock_samples_;
}

double Telemetry::mean_clock_mhz() const {
  return clock_samples_ > 0 ? clock_sum_ / clock_samples_ : peak_clock_mhz_;
}

double Telemetry::mean_power_w() const {
  return power_samples_ > 0 ? power_sum_ / power_samples_ : 0.0;
}

std::string Telemetry::driver_version() const {
#ifdef PREFLIGHT_KP_HAVE_NVML
  char version[96] = {0};
  if (nvml_ != nullptr && nvmlSystemGetDriverVersion(version, sizeof version) == NVML_SUCCESS) {
    return version;
  }
#endif
  return "";
}

std::string Telemetry::clock_source() const {
  if (has_nvml()) {
    return "sm_clock_mhz, power_w: NVML (nvmlDeviceGetClockInfo NVML_CLOCK_SM,\n"
           "  nvmlDeviceGetPowerUsage), the mean of readings taken while the timed loop ran;\n"
           "  NVML averages power over its own window: short loops read partly idle power";
  }
  return "sm_clock_mhz: the SM's peak clock (cudaDevAttrClockRate), not a measurement: the\n"
         "  profiler was built without NVML; power_w: 0 (not known)";
}

// ---------------------------------------------------------------------------------------------
// The timing loop

Measurement time_launches(const Context& ctx, const std::function<void(int)>& launch) {
  for (int i = 0; i < ctx.warmup; ++i) launch(i);
  KP_CUDA(cudaStreamSynchronize(ctx.stream));

  cudaEvent_t start = nullptr, stop = nullptr;
  KP_CUDA(cudaEventCreate(&start));
  KP_CUDA(cudaEventCreate(&stop));
  // The events are destroyed whatever happens below.
  struct Events {
    cudaEvent_t a, b;
    ~Events() {
      cudaEventDestroy(a);
      cudaEventDestroy(b);
    }
  } events{start, stop};

  ctx.telemetry->begin();
  KP_CUDA(cudaEventRecord(start, ctx.stream));
  for (int i = 0; i < ctx.reps; ++i) launch(ctx.warmup + i);
  KP_CUDA(cudaEventRecord(stop, ctx.stream));
  // Sample while the GPU works through the queued launches (the launches return at once).
  int samples = 0;
  cudaError_t state;
  while ((state = cudaEventQuery(stop)) == cudaErrorNotReady) {
    ctx.telemetry->sample();
    ++samples;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  check_cuda(state, "cudaEventQuery(stop)");
  if (samples == 0) ctx.telemetry->sample();  // the loop ended before the first reading

  float ms = 0;
  KP_CUDA(cudaEventElapsedTime(&ms, start, stop));
  Measurement m;
  m.time_us = static_cast<double>(ms) * 1000.0 / ctx.reps;
  m.reps = ctx.reps;
  m.sm_clock_mhz = ctx.telemetry->mean_clock_mhz();
  m.power_w = ctx.telemetry->mean_power_w();
  return m;
}

}  // namespace preflight::kp
