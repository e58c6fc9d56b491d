// CheckModelAgainstOracle in a build without lowbit::reference: a SKIPPED
// row says so, so the table never implies the model was checked.
#include "lowbit/check/check.h"

namespace lowbit::check {

bool OracleBuilt() { return false; }

std::vector<Row> CheckModelAgainstOracle(Level /*level*/, const Filter& filter, int /*threads*/,
                                         Progress* /*progress*/) {
  std::vector<Row> rows;
  if (filter.Backend("oracle")) {
    Row row;
    row.kind = RowKind::kOracle;
    row.backend = "model-vs-oracle";
    row.operation = "all";
    row.format = "all";
    row.skipped = "lowbit::reference was not built";
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lowbit::check
