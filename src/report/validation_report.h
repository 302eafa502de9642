// The outputs of `preflight validate`: the text tables and the JSON document, for the vTrain
// A100 set and for the published set. Pure functions of the results: the same validation gives
// the same bytes.
#pragma once

#include <string>

#include "validation/published_validate.h"
#include "validation/validate.h"

namespace preflight {

// Rows (unless `summary_only`), the rows not simulated with their reasons, coverage, the error
// table by GPU, kind, precision, source, ..., and the fitted constants (in-sample and per fold).
std::string format_published_validation(const PublishedValidationResult& res, bool summary_only);
// {rows, simulated, groups, constants, cross_validation_folds, folds, predictions}.
std::string published_validation_json(const PublishedValidationResult& res);

// Rows (unless `summary_only`), accuracy per set, ranking within each job and the constants
// (`folds` >= 2: per fold; `calibrate`: fitted on all rows).
std::string format_vtrain_validation(const ValidationResult& r, int folds, bool calibrate,
                                     bool summary_only);
// {SET: {rows, mape_pct, ..., groups}, predictions, cross_validation_folds, constants}.
std::string vtrain_validation_json(const ValidationResult& r, int folds);

}  // namespace preflight
