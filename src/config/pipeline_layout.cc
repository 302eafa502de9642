#include "config/pipeline_layout.h"

#include <cctype>

namespace preflight {
namespace {

constexpr size_t kMaxExpanded = 1'000'000;  // symbols after expanding repetitions

// Recursive-descent expansion of "(...)*n" and "x*n" into a flat string of E, t, m, L and |.
class LayoutExpander {
 public:
  explicit LayoutExpander(const std::string& text) : text_(text) {}

  StatusOr<std::string> run() {
    PREFLIGHT_ASSIGN_OR_RETURN(std::string out, sequence(0));
    if (pos_ < text_.size()) return error("unmatched ')'");
    return out;
  }

 private:
  Status error(const std::string& what) const {
    return invalid_argument("pipeline layout '" + text_ + "': " + what + " at character " +
                            std::to_string(pos_ + 1));
  }

  StatusOr<std::string> sequence(int depth) {
    if (depth > 16) return error("groups nested more than 16 deep");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != ')') {
      std::string item;
      const char c = text_[pos_];
      if (c == '(') {
        ++pos_;
        PREFLIGHT_ASSIGN_OR_RETURN(item, sequence(depth + 1));
        if (pos_ >= text_.size() || text_[pos_] != ')') return error("unterminated '('");
        ++pos_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++pos_;
      } else if (c == ' ' || c == ',') {
        ++pos_;
        continue;
      } else {
        return error(
            std::string("unexpected '") +
            (std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : std::string("?")) +
            "' (expected E, t, m, L, |, ( ) or *n)");
      }
      if (pos_ < text_.size() && text_[pos_] == '*') {
        ++pos_;
        size_t digits = 0;
        long n = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          n = n * 10 + (text_[pos_] - '0');
          ++pos_;
          if (++digits > 7) return error("repeat count too large");
        }
        if (digits == 0) return error("expected a count after '*'");
        if (item.size() * static_cast<size_t>(n) > kMaxExpanded) {
          return error("expands to more than 1,000,000 symbols");
        }
        std::string repeated;
        for (long i = 0; i < n; ++i) repeated += item;
        item = std::move(repeated);
      }
      out += item;
      if (out.size() > kMaxExpanded) return error("expands to more than 1,000,000 symbols");
    }
    return out;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<std::vector<int>> parse_megatron_layout(const std::string& text, int chunks) {
  LayoutExpander expander(text);
  PREFLIGHT_ASSIGN_OR_RETURN(std::string flat, expander.run());
  std::vector<int> layers(1, 0);
  std::vector<std::string> symbols(1);
  for (char c : flat) {
    if (c == '|') {
      layers.push_back(0);
      symbols.emplace_back();
    } else {
      symbols.back() += c;
      if (c == 't') ++layers.back();
    }
  }
  const std::string where = "pipeline layout '" + text + "'";
  if (static_cast<int>(layers.size()) != chunks) {
    return invalid_argument(where + ": " + std::to_string(layers.size()) +
                            " virtual stages: expected pp × vpp = " + std::to_string(chunks));
  }
  for (size_t k = 0; k < symbols.size(); ++k) {
    const std::string& s = symbols[k];
    const bool first = k == 0, last = k + 1 == symbols.size();
    if (s.find('E') != std::string::npos && (!first || s[0] != 'E' || s.rfind('E') != 0)) {
      return invalid_argument(where +
                              ": 'E' (the embedding) only at the start of the first "
                              "virtual stage");
    }
    if (s.find('L') != std::string::npos &&
        (!last || s.back() != 'L' || s.find('L') + 1 != s.size())) {
      return invalid_argument(where +
                              ": 'L' (the loss) only at the end of the last virtual "
                              "stage");
    }
    if (s.find('m') != std::string::npos && !last) {
      return invalid_argument(where +
                              ": 'm' (multi-token prediction) only in the last virtual "
                              "stage");
    }
  }
  if (symbols.front().empty() || symbols.front()[0] != 'E') {
    return invalid_argument(where + ": expected the first virtual stage to start with 'E'");
  }
  if (symbols.back().empty() || symbols.back().back() != 'L') {
    return invalid_argument(where + ": expected the last virtual stage to end with 'L'");
  }
  return layers;
}

StatusOr<std::vector<int>> account_for_split(int layers, int chunks, bool embedding, bool loss) {
  const int64_t units = int64_t{layers} + embedding + loss;
  if (chunks <= 0 || units % chunks != 0 || units / chunks < 1) {
    return invalid_argument(std::to_string(layers) + " layers" +
                            (embedding ? " + the embedding" : "") + (loss ? " + the loss" : "") +
                            " = " + std::to_string(units) +
                            " units: expected a multiple of pp × vpp = " + std::to_string(chunks));
  }
  std::vector<int> out(static_cast<size_t>(chunks), static_cast<int>(units / chunks));
  if (embedding) out.front() -= 1;
  if (loss) out.back() -= 1;
  return out;
}

PipelineSplit default_pipeline_split(int layers, int chunks) {
  PipelineSplit split;
  if (chunks <= 1) {
    split.layers = {layers};
    return split;
  }
  StatusOr<std::vector<int>> both = account_for_split(layers, chunks, true, true);
  if (both.ok()) {
    split.layers = *std::move(both);
    split.description =
        "the embedding and the loss each take a layer's place (Megatron's account_for_embedding/"
        "loss_in_pipeline_split, as Megatron-Bridge's recipes set them)";
    return split;
  }
  const int q = (layers + chunks - 1) / chunks;
  if (int64_t{q} * (chunks - 1) < layers) {
    split.layers.assign(static_cast<size_t>(chunks), q);
    split.layers.back() = layers - q * (chunks - 1);
    split.description = std::to_string(q) +
                        " layers per virtual stage, the rest on the last (it also holds the loss; "
                        "Megatron-Bridge's DeepSeek-V3 and Kimi-K2 layouts)";
    return split;
  }
  const int base = layers / chunks, extra = layers % chunks;
  split.layers.assign(static_cast<size_t>(chunks), base);
  for (int k = 1; k <= extra; ++k) split.layers[k] += 1;
  split.description = std::to_string(base) + " layers per virtual stage, one more on the " +
                      std::to_string(extra) + " after the first";
  return split;
}

}  // namespace preflight
