// Text helpers for error messages built from user input: one line with control bytes escaped
// and long values shortened, UTF-8 validation, and "did you mean" suggestions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace preflight {

// `s` as one printable line: \n, \r and \t as themselves escaped, other control bytes, DEL and
// bytes that are not valid UTF-8 as \xNN, C1 controls and bidirectional controls as \uNNNN (so
// no input can move the terminal's cursor, clear it or reorder the text); when the escaped text
// is longer than `max_bytes`, the middle of `s` is replaced by "...(N bytes)..." so that the
// result stays under max_bytes + 32.
std::string escape_for_message(std::string_view s, size_t max_bytes = 2000);

// The offset of the first byte of `s` that is not part of valid UTF-8 (overlong forms,
// surrogates and code points above U+10FFFF count as invalid), or npos.
size_t invalid_utf8_at(std::string_view s);

// The candidate closest to `word` by edit distance (insertions, deletions, substitutions and
// adjacent transpositions, letters compared case-insensitively), when it is close enough to be a
// likely typo: at most 1 edit for words of up to 4 letters, 2 up to 8, 3 beyond; a candidate
// that equals `word` ignoring case always is; failing that, the one candidate that begins with
// `word` ("H100" → "H100-SXM5-80GB"). "" when none is.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for closest_match, naming up to two more candidates as close
// (" (did you mean 'x' or 'y'?)"), or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// 1234567 → "1,234,567".
std::string with_commas(int64_t v);

}  // namespace preflight
