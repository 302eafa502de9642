// preflight: predicts how an LLM training job runs on a GPU cluster. main() only dispatches to
// one file per subcommand.
#include <cstdio>
#include <exception>

#include "cli/common.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Preflight: predict the iteration time, throughput, MFU and time breakdown of LLM "
      "training on a GPU cluster before you build or rent it.\n"
      "Start with `preflight simulate` (the default scenario: GPT-3 175B on 1,024 A100s), then "
      "pass your own scenario YAML or override any key with --set section.key=value."};
  app.name("preflight");
  app.require_subcommand(1);
  app.set_version_flag("--version", "preflight 0.1.0");
  int exit_code = preflight::cli::kExitOk;
  preflight::cli::add_simulate_command(app, &exit_code);
  preflight::cli::add_memory_command(app, &exit_code);
  preflight::cli::add_collective_command(app, &exit_code);
  preflight::cli::add_validate_command(app, &exit_code);
  preflight::cli::add_topology_command(app, &exit_code);
  preflight::cli::add_search_command(app, &exit_code);
  preflight::cli::add_sweep_command(app, &exit_code);
  preflight::cli::add_presets_command(app, &exit_code);
  preflight::cli::add_export_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "preflight: error: %s (see `preflight --help`)\n", e.what());
    return preflight::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight: internal error: %s\n", e.what());
    return preflight::cli::kExitInternal;
  }
  return exit_code;
}
