// `preflight presets [--kind K] [--show NAME]`: lists the built-in presets or prints one.
#include <cstdio>

#include "base/text.h"
#include "cli/common.h"
#include "config/presets.h"

namespace preflight::cli {

void add_presets_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand("presets", "List the built-in GPU, cluster and model presets");
  auto kind = std::make_shared<std::string>();
  auto show = std::make_shared<std::string>();
  cmd->add_option("--kind", *kind, "Only this kind: gpus, clusters, models, scenarios")
      ->check(CLI::IsMember({"gpus", "clusters", "models", "scenarios"}));
  cmd->add_option("--show", *show, "Print the YAML of one preset (e.g. --show gpt3-175b)");
  cmd->callback([=]() {
    if (!show->empty()) {
      for (const char* k : {"gpus", "clusters", "models", "stacks", "scenarios"}) {
        if (!kind->empty() && *kind != k) continue;
        StatusOr<std::string> text = preset_text(k, *show);
        if (text.ok()) {
          std::fputs(text->c_str(), stdout);
          *exit_code = kExitOk;
          return;
        }
      }
      std::vector<std::string> names;
      for (const PresetInfo& p : list_presets()) {
        if (kind->empty() || p.kind == *kind) names.push_back(p.name);
      }
      *exit_code = fail(not_found("unknown preset '" + *show + "'" + did_you_mean(*show, names) +
                                  " (see `preflight presets`)"));
      return;
    }
    std::string current;
    for (const PresetInfo& p : list_presets()) {
      if (!kind->empty() && p.kind != *kind) continue;
      if (p.kind != current) {
        std::printf("%s%s:\n", current.empty() ? "" : "\n", p.kind.c_str());
        current = p.kind;
      }
      std::printf("  %-18s %s\n", p.name.c_str(), p.description.c_str());
    }
    std::printf(
        "\nUse a preset in a scenario (model: {preset: gpt3-175b}) or with --set "
        "model.preset=gpt3-175b; `preflight presets --show NAME` prints its YAML.\n");
    *exit_code = kExitOk;
  });
}

}  // namespace preflight::cli
