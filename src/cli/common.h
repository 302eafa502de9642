// Shared pieces of the subcommands: exit codes and error printing. Exit 0 on success, 2 on bad
// input (one line on stderr naming the file, key path and what was expected), 1 on internal
// errors, 3 when simulate or memory finds the strategy does not fit in GPU memory (the outputs
// are still written).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"

namespace preflight::cli {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;
// simulate and memory: the strategy was simulated (or estimated) but does not fit in GPU memory.
constexpr int kExitDoesNotFit = 3;

// Prints "preflight: <message>" and returns the exit code for `s`.
int fail(const Status& s);

// Each subcommand registers itself on `app` and stores its exit code in `*exit_code` when run.
void add_simulate_command(CLI::App& app, int* exit_code);
void add_presets_command(CLI::App& app, int* exit_code);
void add_memory_command(CLI::App& app, int* exit_code);
void add_collective_command(CLI::App& app, int* exit_code);
void add_validate_command(CLI::App& app, int* exit_code);
void add_topology_command(CLI::App& app, int* exit_code);
void add_search_command(CLI::App& app, int* exit_code);
void add_sweep_command(CLI::App& app, int* exit_code);
void add_compare_command(CLI::App& app, int* exit_code);
void add_export_command(CLI::App& app, int* exit_code);
void add_kernels_command(CLI::App& app, int* exit_code);

}  // namespace preflight::cli
