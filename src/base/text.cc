#include "base/text.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>

namespace preflight {
namespace {

// Length of the UTF-8 sequence starting at s[i], or 0 when it is not valid there; its code
// point in `*code_point` when valid and asked for.
size_t utf8_length(std::string_view s, size_t i, uint32_t* code_point = nullptr) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) {
    if (code_point != nullptr) *code_point = c;
    return 1;
  }
  size_t n = 0;
  uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  if (code_point != nullptr) *code_point = cp;
  return n;
}

void append_hex(std::string* out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  *out += buf;
}

// Appends the printable form of the character at s[i] to `out`; returns the bytes it took.
size_t escape_char(std::string_view s, size_t i, std::string* out) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == '\n') {
    *out += "\\n";
  } else if (c == '\r') {
    *out += "\\r";
  } else if (c == '\t') {
    *out += "\\t";
  } else if (c < 0x20 || c == 0x7F) {
    append_hex(out, c);
  } else if (c < 0x80) {
    *out += static_cast<char>(c);
  } else {
    uint32_t cp = 0;
    const size_t n = utf8_length(s, i, &cp);
    if (n == 0) {
      append_hex(out, c);
      return 1;
    }
    // C1 controls (U+009B is a CSI to some terminals) and the bidirectional controls, which
    // reorder how a terminal shows what follows them ("Trojan Source", CVE-2021-42574).
    if (cp <= 0x9F || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
        (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
      *out += buf;
    } else {
      out->append(s.substr(i, n));
    }
    return n;
  }
  return 1;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string escape_for_message(std::string_view s, size_t max_bytes) {
  // The head: whole characters while their escapes fit, remembering where 2/3 of the budget
  // was reached in case all of `s` does not fit.
  std::string out;
  std::string piece;
  size_t i = 0;
  size_t head_in = 0, head_out = 0;
  while (i < s.size()) {
    piece.clear();
    const size_t n = escape_char(s, i, &piece);
    if (out.size() + piece.size() > max_bytes) break;
    out += piece;
    i += n;
    if (out.size() <= max_bytes * 2 / 3) head_in = i, head_out = out.size();
  }
  if (i == s.size()) return out;
  out.resize(head_out);
  // The tail: whole characters back from the end while their escapes fit in 1/4 of the budget.
  std::vector<std::string> tail;
  size_t tail_out = 0;
  size_t j = s.size();
  while (j > head_in) {
    size_t k = j - 1;
    while (k > head_in && j - k < 4 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
    piece.clear();
    if (escape_char(s, k, &piece) != j - k) {  // not one whole character: the last byte alone
      k = j - 1;
      piece.clear();
      escape_char(s, k, &piece);
    }
    if (tail_out + piece.size() > max_bytes / 4) break;
    tail_out += piece.size();
    tail.push_back(piece);
    j = k;
  }
  out += "...(" + std::to_string(j - head_in) + " bytes)...";
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) out += *it;
  return out;
}

size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

namespace {

// The candidates at the smallest edit distance within the typo budget, in their order.
std::vector<std::string> nearest(std::string_view word,
                                 const std::vector<std::string>& candidates) {
  std::vector<std::string> best;
  if (word.empty() || word.size() > 200) return best;
  const size_t budget = word.size() <= 4 ? 1 : word.size() <= 8 ? 2 : 3;
  size_t best_d = budget + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best.clear();
    }
    if (d == best_d && d <= budget && std::find(best.begin(), best.end(), c) == best.end()) {
      best.push_back(c);
    }
  }
  if (!best.empty() || word.size() < 2) return best;
  // A unique candidate that `word` begins ("H100" for "H100-SXM5-80GB").
  const auto lower = [](std::string_view v) {
    std::string out(v);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string w = lower(word);
  for (const std::string& c : candidates) {
    if (lower(c).rfind(w, 0) != 0) continue;
    if (!best.empty()) return {};
    best.push_back(c);
  }
  return best;
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> best = nearest(word, candidates);
  if (best.empty()) return "";
  // Ties: a candidate that starts with the same letter reads as the likelier typo.
  for (const std::string& c : best) {
    if (std::tolower(static_cast<unsigned char>(c[0])) ==
        std::tolower(static_cast<unsigned char>(word[0]))) {
      return c;
    }
  }
  return best.front();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> best = nearest(word, candidates);
  if (best.empty()) return "";
  const std::string first = closest_match(word, candidates);
  std::string out = " (did you mean '" + first + "'";
  int more = 0;
  for (const std::string& c : best) {
    if (c == first || more == 2) continue;
    out += " or '" + c + "'";
    ++more;
  }
  return out + "?)";
}

std::string with_commas(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out = v < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace preflight
