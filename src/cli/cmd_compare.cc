// `preflight compare A.yaml B.yaml [--set k=v]... [--set-a k=v]... [--set-b k=v]... [--json FILE]`:
// simulates two scenarios and prints them side by side with B − A and B / A (report/compare.h).
#include <cstdio>
#include <exception>
#include <thread>

#include "cli/common.h"
#include "config/loader.h"
#include "report/compare.h"
#include "report/report.h"
#include "simulate/simulate.h"

namespace preflight::cli {
namespace {

struct CompareArgs {
  std::string a;
  std::string b;
  std::vector<std::string> overrides;  // both sides
  std::vector<std::string> overrides_a;
  std::vector<std::string> overrides_b;
  std::string json;
  bool quiet = false;
};

// The word `default` is the built-in scenario (load_scenario's empty path).
std::string scenario_path(const std::string& arg) { return arg == "default" ? "" : arg; }

// "examples/x.yaml + parallelism.tp=2 parallelism.dp=auto": the side as the table names it.
std::string side_name(const std::string& arg, const std::vector<std::string>& overrides) {
  std::string out = arg;
  for (size_t i = 0; i < overrides.size(); ++i) out += (i == 0 ? " + " : " ") + overrides[i];
  return out;
}

int run(const CompareArgs& args) {
  // --set first, then the side's own: a side's key wins.
  std::vector<std::string> set_a = args.overrides, set_b = args.overrides;
  set_a.insert(set_a.end(), args.overrides_a.begin(), args.overrides_a.end());
  set_b.insert(set_b.end(), args.overrides_b.begin(), args.overrides_b.end());
  StatusOr<Scenario> a = load_scenario(scenario_path(args.a), set_a);
  if (!a.ok()) return fail(a.status());
  StatusOr<Scenario> b = load_scenario(scenario_path(args.b), set_b);
  if (!b.ok()) return fail(b.status());
  // The two simulations share nothing: B runs on a second thread while A runs on this one.
  StatusOr<SimulationReport> ra = invalid_argument("unreachable");
  StatusOr<SimulationReport> rb = invalid_argument("unreachable");
  std::thread second([&] {
    try {
      rb = simulate(*b);
    } catch (const std::exception& e) {  // main() reports the first side's the same way
      rb = internal_error(e.what());
    }
  });
  ra = simulate(*a);
  second.join();
  if (!ra.ok()) return fail(ra.status());
  if (!rb.ok()) return fail(rb.status());
  const bool json_to_stdout = args.json == "-";
  if (!args.quiet && !json_to_stdout) {
    std::fputs(
        format_comparison(*ra, *rb, side_name(args.a, set_a), side_name(args.b, set_b)).c_str(),
        stdout);
  }
  if (!args.json.empty()) {
    Status s = write_output(
        args.json,
        comparison_to_json(*ra, *rb).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
            "\n");
    if (!s.ok()) return fail(s);
    if (!args.quiet && !json_to_stdout) std::printf("json written to %s\n", args.json.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_compare_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Simulate two scenarios and print them side by side: iteration time, tokens/s, MFU, "
      "TFLOP/s per GPU, where the time goes (each side's critical pipeline stage), peak memory "
      "per GPU and whether it fits, with columns A, B, B-A and B/A (B/A below 1 for a time: B is "
      "faster). Either scenario may be the word `default` (the built-in scenario); --set applies "
      "to both, --set-a and --set-b to one side, after --set. A side that does not fit in GPU "
      "memory shows DOES NOT FIT (exit 0: both were simulated).\n"
      "Examples:\n"
      "  preflight compare default default --set-b parallelism.pp=8 \\\n"
      "      --set-b parallelism.dp=auto   # half the pipeline stages, twice the replicas\n"
      "  preflight compare examples/llama3-70b-h100.yaml examples/llama3-70b-h100.yaml \\\n"
      "      --set-b cluster.nic_bandwidth=200Gbps --json nic.json   # 400 -> 200 Gb/s "
      "per NIC\n"
      "Exit codes: 0 both simulated, 2 bad input (naming the file or flag), 1 internal error.");
  cmd->add_option("A", args->a, "Scenario A: a YAML file or `default`")->required();
  cmd->add_option("B", args->b, "Scenario B: a YAML file or `default`")->required();
  cmd->add_option("--set", args->overrides,
                  "Override a key on both sides: section.key=value (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--set-a", args->overrides_a, "Override a key of A only (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--set-b", args->overrides_b, "Override a key of B only (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--json", args->json,
                  "Write {\"a\": A's report, \"b\": B's report, \"delta\": B-A, \"ratio\": B/A} "
                  "('-' for stdout); the reports are `simulate --json`'s");
  cmd->add_flag("--quiet,-q", args->quiet, "Print nothing but errors");
  cmd->callback([args, exit_code]() { *exit_code = run(*args); });
}

}  // namespace preflight::cli
