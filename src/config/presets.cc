#include "config/presets.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/text.h"
#include "config/presets_data.h"

namespace preflight {

StatusOr<std::string> preset_text(const std::string& kind, const std::string& name) {
  for (const EmbeddedPreset& p : embedded_presets()) {
    if (kind == p.kind && name == p.name) return std::string(p.text);
  }
  std::string known;
  std::vector<std::string> names;
  for (const EmbeddedPreset& p : embedded_presets()) {
    if (kind == p.kind) {
      known += (known.empty() ? "" : ", ") + std::string(p.name);
      names.emplace_back(p.name);
    }
  }
  std::string singular = kind.substr(0, kind.size() - 1);
  return not_found("unknown " + singular + " preset '" + name + "'" + did_you_mean(name, names) +
                   " (known: " + known + "; see `preflight presets`)");
}

StatusOr<YAML::Node> find_preset(const std::string& kind, const std::string& name) {
  PREFLIGHT_ASSIGN_OR_RETURN(std::string text, preset_text(kind, name));
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return internal_error("preset " + kind + "/" + name + " is malformed: " + e.what());
  }
}

std::vector<PresetInfo> list_presets() {
  std::vector<PresetInfo> out;
  for (const EmbeddedPreset& p : embedded_presets()) {
    PresetInfo info{p.kind, p.name, ""};
    try {
      YAML::Node n = YAML::Load(p.text);
      if (n["description"]) info.description = n["description"].Scalar();
    } catch (const YAML::Exception&) {
      info.description = "(malformed)";
    }
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(), [](const PresetInfo& a, const PresetInfo& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.name < b.name;
  });
  return out;
}

}  // namespace preflight
