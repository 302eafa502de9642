// The modern dev set: published throughput of real training runs (shared/data/published/:
// NVIDIA's NeMo and Megatron-Bridge performance tables, the Megatron-LM README's H100 tables, the
// A100 tables of the Megatron-LM papers; other_stacks.csv: llm-foundry's FSDP runs). One metric
// per row (tokens/s per GPU, model TFLOP/s per GPU, MFU, an iteration time, ...), converted here
// to the iteration time it implies under the source's own FLOP-counting convention
// (validation/flops_conventions.h). What a table leaves out comes from the defaults of the
// recipe that ran it (validation/recipes.h), never from the row.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"

namespace preflight {

// One row of training_runs.csv / other_stacks.csv as published. Integer columns hold 0 when the
// cell is empty (the source does not state it).
struct PublishedRow {
  std::string file;  // for messages
  int line = 0;      // 1-based line in the CSV
  std::string source, model, gpu, recompute, precision, metric, notes;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0;
  int num_gpus = 0, tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, vpp = 0;
  int micro_batch = 0, global_batch = 0;
  int sp = -1;  // sequence parallelism: 1 yes, 0 no, -1 not stated
  double value = 0;
  // model_tflops_per_gpu rows: tokens/s per GPU of the same run's tokens/s row (0 = none).
  double partner_tokens_per_gpu = 0;
};

// Parses a published-runs CSV (the header of shared/data/published/README.md). Errors name the
// file, line and column.
StatusOr<std::vector<PublishedRow>> load_published_csv(const std::string& path);

// Whether `header` (the first line of a CSV) is the published layout.
bool is_published_header(const std::string& header);

// A row turned into a simulation: the scenario, the iteration time its metric implies, and the
// labels validate groups by.
struct PublishedCase {
  Scenario scenario;
  double measured_ms = 0;
  std::string family;     // model family: the unit of grouped cross-validation
  std::string model;      // Preflight's model name (preset or GPT shape)
  std::string gpu;        // GPU preset name
  std::string kind;       // dense | moe | hybrid
  std::string precision;  // bf16, fp16, fp8, mxfp8, nvfp4, ...
  std::string stack;      // the training stack the row ran on
  // Where the expert-parallel group's all-to-alls run: "none" (no expert parallelism), "nvlink"
  // (the ep·etp ranks of a group lie in one node, the part of an NVLink domain the job uses) or
  // "nics" (the group spans nodes, its all-to-alls cross the NICs): expert_parallel_span().
  std::string expert_parallel;
  std::string notes;  // what validate assumed beyond the row (e.g. the pipeline split)
  // Per-layer rows (Korthikanti Table 4: one layer's forward, backward or both): the blocks
  // whose times are summed instead of the iteration. Empty for iteration rows.
  std::string layer_metric;
  std::string yaml;  // the scenario's text: rows of one run share it (and one simulation)
};

// Where `s`'s expert-parallel groups run (PublishedCase::expert_parallel). Megatron-Core lays a
// stage's expert layers out as etp × ep × edp over its consecutive ranks (pipeline stages
// outermost), so a group of ep·etp ranks stays in one node exactly when it fits in one.
std::string expert_parallel_span(const Scenario& s);

// The case for `row`, or an error whose message says why it cannot be simulated: a fact the
// source does not give (no parallel configuration, no architecture), a metric with no time in
// it, or a scenario Preflight rejects (then the loader's message). `overrides`
// ("section.key=value") apply after the row's keys; `yaml` stays the row's own.
StatusOr<PublishedCase> published_case(const PublishedRow& row,
                                       const std::vector<std::string>& overrides = {});

}  // namespace preflight
