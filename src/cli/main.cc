// preflight: predicts how an LLM training job runs on a GPU cluster. main() only dispatches to
// one file per subcommand.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "base/text.h"
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
  preflight::cli::add_compare_command(app, &exit_code);
  preflight::cli::add_memory_command(app, &exit_code);
  preflight::cli::add_collective_command(app, &exit_code);
  preflight::cli::add_validate_command(app, &exit_code);
  preflight::cli::add_topology_command(app, &exit_code);
  preflight::cli::add_search_command(app, &exit_code);
  preflight::cli::add_sweep_command(app, &exit_code);
  preflight::cli::add_presets_command(app, &exit_code);
  preflight::cli::add_export_command(app, &exit_code);
  preflight::cli::add_kernels_command(app, &exit_code);
  // A first word that is not an option names the command: an unknown one is an error of its
  // own, with the closest command (CLI11 would ask for "a subcommand").
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
    bool known = false;
    for (const std::string& n : names) known |= n == argv[1];
    if (!known) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      std::fprintf(stderr,
                   "preflight: error: unknown command '%s'%s; the commands: %s (see "
                   "`preflight --help`)\n",
                   preflight::escape_for_message(argv[1], 200).c_str(),
                   preflight::did_you_mean(argv[1], names).c_str(), list.c_str());
      return preflight::cli::kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An unknown flag of a command: the closest of that command's flags, and its own help.
    std::string hint;
    std::string help = "preflight --help";
    const std::string what = e.what();
    const CLI::App* sub = nullptr;
    if (argc > 1 && argv[1][0] != '-') {
      for (const CLI::App* c : app.get_subcommands({})) {
        if (c->get_name() == argv[1]) sub = c;
      }
    }
    if (sub != nullptr) {
      help = "preflight " + sub->get_name() + " --help";
      const size_t at = what.find("--");
      if (what.find("not expected") != std::string::npos && at != std::string::npos) {
        const std::string flag = what.substr(at, what.find_first_of(" ,", at) - at);
        std::vector<std::string> flags;
        for (const CLI::Option* o : sub->get_options()) {
          for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
        }
        hint = preflight::did_you_mean(flag, flags);
      }
    }
    std::fprintf(stderr, "preflight: error: %s%s (see `%s`)\n",
                 preflight::escape_for_message(what).c_str(), hint.c_str(), help.c_str());
    return preflight::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "preflight: internal error: %s\n",
                 preflight::escape_for_message(e.what()).c_str());
    return preflight::cli::kExitInternal;
  }
  return exit_code;
}
