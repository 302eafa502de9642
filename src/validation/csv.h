// A small RFC 4180 CSV reader for the dev-set files: comma-separated cells, a cell in double
// quotes may hold commas, line breaks and doubled quotes (""). Errors name the file and line.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace preflight {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> cells;
};

// Splits `text` (the contents of `path`, used in messages) into records. Blank lines are skipped;
// a trailing '\r' on a line is dropped. Fails on an unterminated quoted cell or a quote inside an
// unquoted cell, naming path:line.
StatusOr<std::vector<CsvRecord>> parse_csv(const std::string& text, const std::string& path);

// Reads the file at `path` and parses it as above.
StatusOr<std::vector<CsvRecord>> read_csv_file(const std::string& path);

}  // namespace preflight
