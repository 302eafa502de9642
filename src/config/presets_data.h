// Generated at build time by cmake/embed_presets.cmake from presets/**/*.yaml.
#pragma once

#include <span>

namespace preflight {

struct EmbeddedPreset {
  const char* kind;
  const char* name;
  const char* text;
};

std::span<const EmbeddedPreset> embedded_presets();

}  // namespace preflight
