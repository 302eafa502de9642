#include "validation/csv.h"

#include <fstream>
#include <sstream>

namespace preflight {

StatusOr<std::vector<CsvRecord>> parse_csv(const std::string& text, const std::string& path) {
  std::vector<CsvRecord> out;
  CsvRecord record;
  std::string cell;
  int line = 1;
  record.line = 1;
  bool quoted = false;      // inside a quoted cell
  bool was_quoted = false;  // the current cell was quoted (only a separator may follow)
  bool line_empty = true;   // nothing but the line break seen in this record
  const auto where = [&](int l) { return path + ":" + std::to_string(l); };
  const auto end_record = [&]() {
    if (!line_empty) {
      record.cells.push_back(std::move(cell));
      out.push_back(std::move(record));
    }
    record = CsvRecord();
    record.line = line;
    cell.clear();
    was_quoted = false;
    line_empty = true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
          was_quoted = true;
        }
      } else {
        if (c == '\n') ++line;
        cell += c;
      }
      continue;
    }
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) continue;
    if (c == '\n') {
      ++line;
      end_record();
      continue;
    }
    line_empty = false;
    if (c == ',') {
      record.cells.push_back(std::move(cell));
      cell.clear();
      was_quoted = false;
    } else if (c == '"') {
      if (!cell.empty() || was_quoted) {
        return invalid_argument(where(line) +
                                ": a quote inside an unquoted cell: expected the "
                                "whole cell in quotes, with quotes doubled (\"\")");
      }
      quoted = true;
    } else {
      if (was_quoted) {
        return invalid_argument(where(line) +
                                ": text after a closing quote: expected ',' or the line's end");
      }
      cell += c;
    }
  }
  if (quoted) {
    return invalid_argument(where(record.line) + ": unterminated quoted cell");
  }
  end_record();
  return out;
}

StatusOr<std::vector<CsvRecord>> read_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open dataset file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path);
}

}  // namespace preflight
