#include "validation/dataset.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/loader.h"

#ifndef PREFLIGHT_SOURCE_DIR
#define PREFLIGHT_SOURCE_DIR "."
#endif

namespace preflight {
namespace {

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

}  // namespace

StatusOr<std::vector<DatasetRow>> load_dataset_csv(const std::string& path,
                                                   const std::string& set) {
  std::ifstream in(path);
  if (!in) return not_found(path + ": cannot open dataset file");
  std::string header;
  if (!std::getline(in, header)) return invalid_argument(path + ": empty file");
  if (!header.empty() && header.back() == '\r') header.pop_back();
  const std::vector<std::string> cols = split_csv(header);
  // 11 columns (single) or 12 with a leading parameter count (multi).
  int offset = 0;
  if (cols.size() == 12) {
    offset = 1;
  } else if (cols.size() != 11) {
    return invalid_argument(path +
                            ":1: expected the vTrain header of 11 or 12 columns (# GPUs, "
                            "global batch, micro batch, hidden size, attention heads, # layers, "
                            "sequence length, tensor/data/pipeline parallelism, iteration time "
                            "(ms)), found " +
                            std::to_string(cols.size()));
  }
  std::vector<DatasetRow> rows;
  std::string text;
  int line_no = 1;
  while (std::getline(in, text)) {
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    const std::vector<std::string> cells = split_csv(text);
    if (cells.size() != cols.size()) {
      return invalid_argument(path + ":" + std::to_string(line_no) + ": expected " +
                              std::to_string(cols.size()) + " columns, found " +
                              std::to_string(cells.size()));
    }
    DatasetRow r;
    r.set = set;
    r.line = line_no;
    int* fields[] = {&r.gpus,   &r.global_batch, &r.micro_batch, &r.hidden, &r.heads,
                     &r.layers, &r.seq_len,      &r.tp,          &r.dp,     &r.pp};
    for (int i = 0; i < 10; ++i) {
      const std::string& c = cells[offset + i];
      char* end = nullptr;
      const long v = std::strtol(c.c_str(), &end, 10);
      if (c.empty() || *end != '\0' || v <= 0 || v > 100'000'000) {
        return invalid_argument(path + ":" + std::to_string(line_no) + ": column '" +
                                cols[offset + i] + "': '" + c + "': expected a positive integer");
      }
      *fields[i] = static_cast<int>(v);
    }
    const std::string& t = cells[offset + 10];
    char* end = nullptr;
    r.measured_ms = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(r.measured_ms > 0)) {
      return invalid_argument(path + ":" + std::to_string(line_no) + ": column '" +
                              cols[offset + 10] + "': '" + t + "': expected a positive time in ms");
    }
    rows.push_back(r);
  }
  return rows;
}

std::string find_data_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("PREFLIGHT_DATA_DIR"); env && *env) return env;
  for (const char* candidate : {"../shared/data", "shared/data", "../../shared/data"}) {
    if (fs::exists(fs::path(candidate) / "vtrain")) return candidate;
  }
  // Wherever it is run from: beside the checkout that holds the binary (build/preflight, or a
  // test binary in build/), the checkout's sibling shared/data.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* up : {"../../shared/data", "../shared/data", "../../../shared/data"}) {
      const fs::path candidate = (exe.parent_path() / up).lexically_normal();
      if (fs::exists(candidate / "vtrain", ec)) return candidate.string();
    }
  }
  const fs::path beside_source = fs::path(PREFLIGHT_SOURCE_DIR) / ".." / "shared" / "data";
  return beside_source.lexically_normal().string();
}

StatusOr<Scenario> scenario_for_row(const DatasetRow& r,
                                    const std::vector<std::string>& overrides) {
  const int gpn = r.gpus < 8 ? r.gpus : 8;
  if (r.gpus % gpn != 0) {
    return invalid_argument(r.set + " line " + std::to_string(r.line) + ": " +
                            std::to_string(r.gpus) + " GPUs is not a whole number of nodes");
  }
  std::ostringstream y;
  y << "model:\n"
    << "  name: gpt-h" << r.hidden << "-l" << r.layers << "\n"
    << "  layers: " << r.layers << "\n  hidden: " << r.hidden << "\n  heads: " << r.heads << "\n"
    << "  ffn_hidden: " << 4 * r.hidden << "\n  vocab: 50257\n"
    << "  activation: gelu\n  norm: layernorm\n  position_embedding: learned\n"
    << "  tied_embeddings: true\n  linear_bias: true\n  dropout: true\n"
    << "  max_seq_len: " << r.seq_len << "\n"
    << "cluster:\n  preset: vtrain-a100\n  gpus_per_node: " << gpn << "\n"
    << "  nodes: " << r.gpus / gpn << "\n"
    << "training:\n  stack: megatron-deepspeed-2022\n  seq_len: " << r.seq_len
    << "\n  global_batch: " << r.global_batch << "\n"
    << "  micro_batch: " << r.micro_batch << "\n  precision: fp16\n  flash_attention: false\n"
    << "parallelism:\n  tp: " << r.tp << "\n  pp: " << r.pp << "\n  dp: " << r.dp << "\n"
    << "  recompute: full\n  schedule: 1f1b\n  overlap_grad_reduce: false\n";
  return load_scenario_text(y.str(), r.set + " line " + std::to_string(r.line), overrides);
}

}  // namespace preflight
