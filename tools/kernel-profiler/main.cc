// preflight-kernel-profiler --shapes SHAPES.csv --out TABLE.csv [--reps 50] [--warmup 10]
//                           [--device 0]
//
// Times every kernel of a shapes list (`preflight kernels --shapes SCENARIO --out SHAPES.csv`) on
// one GPU and writes the kernel table `compute: {model: measured, kernel_table: TABLE.csv}` reads.
// Rows this GPU or these libraries cannot run are left out with a warning on stderr. Exit codes:
// 0 done, 1 a CUDA / cuBLASLt / cuDNN call failed, 2 bad arguments or a malformed shapes list.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "kernels.h"
#include "profiler.h"

#ifndef PREFLIGHT_KP_CUDA_ARCHS
#define PREFLIGHT_KP_CUDA_ARCHS "?"  // set by CMakeLists.txt
#endif

namespace preflight::kp {
namespace {

constexpr const char* kProgram = "preflight-kernel-profiler";
constexpr const char* kUsage =
    "usage: preflight-kernel-profiler --shapes SHAPES.csv --out TABLE.csv [--reps 50] "
    "[--warmup 10] [--device 0]";

struct Args {
  std::string shapes;
  std::string out;
  int reps = 50;
  int warmup = 10;
  int device = 0;
};

Fatal bad_args(const std::string& message) {
  return Fatal{kExitBadInput, message + " (" + kUsage + ")"};
}

int parse_int(const std::string& flag, const std::string& value, int min, int max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || errno != 0 || *end != '\0' || v < min || v > max) {
    throw bad_args(flag + ": '" + value + "': expected a whole number from " + std::to_string(min) +
                   " to " + std::to_string(max));
  }
  return static_cast<int>(v);
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s\n", kUsage);
      std::exit(0);
    }
    std::string value;
    const size_t eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag == "--shapes" || flag == "--out" || flag == "--reps" || flag == "--warmup" ||
               flag == "--device") {
      if (i + 1 >= argc) throw bad_args(flag + ": expected a value");
      value = argv[++i];
    } else {
      throw bad_args("unknown argument '" + flag + "'");
    }
    if (flag == "--shapes") {
      a.shapes = value;
    } else if (flag == "--out") {
      a.out = value;
    } else if (flag == "--reps") {
      a.reps = parse_int(flag, value, 1, 1000000);
    } else if (flag == "--warmup") {
      a.warmup = parse_int(flag, value, 0, 1000000);
    } else if (flag == "--device") {
      a.device = parse_int(flag, value, 0, 1023);
    } else {
      throw bad_args("unknown argument '" + flag + "'");
    }
  }
  if (a.shapes.empty()) throw bad_args("--shapes: expected the shapes list");
  if (a.out.empty()) throw bad_args("--out: expected where to write the kernel table");
  return a;
}

// Fails early, before minutes of measuring, when the table cannot be written; leaves an existing
// file as it is until the end.
void check_writable(const std::string& path) {
  if (path == "-") return;
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  {
    std::ofstream probe(path, std::ios::app);
    if (!probe) throw Fatal{kExitBadInput, path + ": cannot write the kernel table"};
  }
  if (!existed) std::filesystem::remove(path, ec);
}

std::string version_of(int v) {  // 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// The "# gpu:" name as the table reader accepts it: printable, no commas or quotes.
std::string gpu_name(const char* raw) {
  std::string name;
  for (const char* p = raw; *p != '\0' && name.size() < 200; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    name.push_back(c < 0x20 || c >= 0x7f || c == ',' || c == '"' ? ' ' : static_cast<char>(c));
  }
  while (!name.empty() && name.back() == ' ') name.pop_back();
  return name.empty() ? std::string("unknown GPU") : name;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

struct Result {
  const Row* row;
  Measurement m;
};

std::string table_text(const Args& args, const Context& ctx, const std::vector<Row>& rows,
                       const std::vector<Result>& results) {
  std::ostringstream o;
  const cudaDeviceProp& p = ctx.prop;
  o << "# Preflight kernel table measured by preflight-kernel-profiler (tools/kernel-profiler/)\n";
  o << "# gpu: " << gpu_name(p.name) << "\n";
  o << "# Columns (src/config/kernel_table.h, docs/kernel_tables.md):\n"
       "#   kind          gemm | attention | memory\n"
       "#   name          the kernel's name: a memory-bound kernel is looked up by it (ln.fwd, "
       "the\n"
       "#                 op names of docs/workload.md); informational for GEMMs and attention\n"
       "#   dtype         operand format: bf16 fp16 fp8 fp8_blockwise mxfp8 nvfp4 (attention and\n"
       "#                 memory kernels: bf16 or fp16)\n"
       "#   m n k batch   gemm: C[m x n] = A[m x k] . B[k x n], batch independent products;\n"
       "#                 attention: batch is the micro-batch; memory: unused (0)\n"
       "#   heads kv_heads head_dim seq_q seq_kv causal pass\n"
       "#                 attention: query heads, key/value heads, head width, query and key\n"
       "#                 lengths, causal 0|1, pass fwd|bwd (FlashAttention-style fused kernels);\n"
       "#                 else 0 / empty\n"
       "#   bytes         memory: HBM bytes read + written; else 0\n"
       "#   time_us       the kernel's device time in microseconds (mean over reps timed runs)\n"
       "#   reps sm_clock_mhz power_w\n"
       "#                 how it was measured (0 when unknown)\n";
  o << "# Method: per row, " << ctx.warmup << " warm-up launches, then CUDA events around "
    << ctx.reps
    << " back-to-back\n#   launches on one stream; time_us = elapsed / reps.\n"
       "#   gemm: cuBLASLt cublasLtMatmul, TN layout (a linear layer's forward as PyTorch and\n"
       "#     Transformer Engine call it: cuBLAS M = n, N = m, A = weight transposed), fp32\n"
       "#     accumulation, the heuristic's first algorithm, 32 MiB workspace; fp8 = E4M3 with\n"
       "#     per-tensor scales and bf16 output, fast accumulation.\n"
       "#   attention: cuDNN fused flash attention (backend graph API), BSHD layout, scale\n"
       "#     1/sqrt(head_dim), no dropout; fwd writes the softmax statistics (training).\n"
       "#   memory: the achieved HBM bandwidth of a representative kernel of the row's family at\n"
       "#     that byte count (norm/ln: RMSNorm rows; act/swiglu/gelu: 2 inputs 1 output; else a\n"
       "#     scaled copy), rotating buffers past the L2 cache; not the exact framework kernel.\n";
  std::istringstream clock_lines(ctx.telemetry->clock_source());
  for (std::string line; std::getline(clock_lines, line);) o << "# " << line << "\n";
  o << "# device " << ctx.device << ": compute capability " << p.major << "." << p.minor << ", "
    << p.multiProcessorCount << " SMs, " << fmt("%.1f", p.totalGlobalMem / 1073741824.0)
    << " GiB, L2 " << fmt("%.1f", p.l2CacheSize / 1048576.0) << " MiB\n";
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  const std::string nvidia_driver = ctx.telemetry->driver_version();
  o << "# driver: " << (nvidia_driver.empty() ? "" : "NVIDIA " + nvidia_driver + ", ")
    << "CUDA driver API " << version_of(driver) << "\n";
  o << "# CUDA runtime: " << version_of(runtime) << " (built against " << version_of(CUDART_VERSION)
    << ")\n";
  o << "# cuBLASLt: " << cublaslt_version() << "\n";
  o << "# cuDNN: " << cudnn_version() << "\n";
  o << "# date: " << utc_now() << "\n";
  o << "# shapes: " << args.shapes << " (" << rows.size() << " rows, " << results.size()
    << " measured, " << rows.size() - results.size() << " skipped)\n";
  for (int i = 0; i < kNumColumns; ++i) o << (i ? "," : "") << kColumns[i];
  o << "\n";
  for (const Result& r : results) {
    for (int i = 0; i < kShapeColumns; ++i) o << (i ? "," : "") << r.row->cells[i];
    // A time shows at least 0.001: a table's times are positive.
    o << "," << fmt("%.3f", std::max(r.m.time_us, 0.001)) << "," << r.m.reps << ","
      << fmt("%.0f", r.m.sm_clock_mhz) << "," << fmt("%.1f", r.m.power_w) << "\n";
  }
  return o.str();
}

int run(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  const std::vector<Row> rows = read_shapes(args.shapes);
  check_writable(args.out);

  int devices = 0;
  KP_CUDA(cudaGetDeviceCount(&devices));
  if (args.device >= devices) {
    throw bad_args("--device " + std::to_string(args.device) + ": this machine has " +
                   std::to_string(devices) + " CUDA device(s)");
  }
  Context ctx;
  ctx.device = args.device;
  ctx.warmup = args.warmup;
  ctx.reps = args.reps;
  KP_CUDA(cudaSetDevice(args.device));
  KP_CUDA(cudaGetDeviceProperties(&ctx.prop, args.device));
  KP_CUDA(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
  if (const cudaError_t e = kernels_runnable(); e != cudaSuccess) {
    throw Fatal{kExitLibraryError,
                std::string("this build has GPU code for sm ") + PREFLIGHT_KP_CUDA_ARCHS +
                    ", which compute capability " + std::to_string(ctx.prop.major) + "." +
                    std::to_string(ctx.prop.minor) + " cannot run (" + cudaGetErrorString(e) +
                    "); rebuild with -DPREFLIGHT_KP_CUDA_ARCHITECTURES=" +
                    std::to_string(ctx.prop.major) + std::to_string(ctx.prop.minor)};
  }
  Telemetry telemetry(args.device);
  ctx.telemetry = &telemetry;
  std::fprintf(stderr, "%s: %zu rows on %s (device %d, compute capability %d.%d)\n", kProgram,
               rows.size(), ctx.prop.name, args.device, ctx.prop.major, ctx.prop.minor);

  std::vector<Result> results;
  size_t skipped = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    try {
      Measurement m;
      switch (row.kind) {
        case Kind::kGemm:
          m = measure_gemm(ctx, row);
          break;
        case Kind::kAttention:
          m = measure_attention(ctx, row);
          break;
        case Kind::kMemory:
          m = measure_memory(ctx, row);
          break;
      }
      results.push_back({&row, m});
      std::fprintf(stderr, "[%zu/%zu] %s: %.3f us\n", i + 1, rows.size(), row.describe().c_str(),
                   m.time_us);
    } catch (const Skip& s) {
      ++skipped;
      std::fprintf(stderr, "%s: warning: %s: skipped: %s\n", kProgram, row.describe().c_str(),
                   s.reason.c_str());
      // A failed launch inside a skipped row would surface on the next row; catch it here.
      KP_CUDA(cudaStreamSynchronize(ctx.stream));
    } catch (const Fatal& f) {
      throw Fatal{f.exit_code, row.describe() + ": " + f.message};
    }
  }

  const std::string text = table_text(args, ctx, rows, results);
  if (args.out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    std::ofstream out(args.out, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw Fatal{kExitBadInput, args.out + ": cannot write the kernel table"};
  }
  release_cudnn();
  release_cublaslt();
  cudaStreamDestroy(ctx.stream);
  std::fprintf(stderr, "%s: %zu rows measured, %zu skipped%s%s\n", kProgram, results.size(),
               skipped, args.out == "-" ? "" : "; table written to ",
               args.out == "-" ? "" : args.out.c_str());
  return 0;
}

}  // namespace
}  // namespace preflight::kp

int main(int argc, char** argv) {
  try {
    return preflight::kp::run(argc, argv);
  } catch (const preflight::kp::Fatal& f) {
    std::fprintf(stderr, "%s: %s\n", preflight::kp::kProgram, f.message.c_str());
    return f.exit_code;
  } catch (const std::exception& e) {  // std::bad_alloc and the like
    std::fprintf(stderr, "%s: %s\n", preflight::kp::kProgram, e.what());
    return preflight::kp::kExitLibraryError;
  }
}
