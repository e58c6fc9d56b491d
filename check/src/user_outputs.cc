// Users' kernels against the model (user_outputs.h). Stub: filled in next.
#include "lowbit/check/user_outputs.h"

namespace lowbit::check {

Report CheckElementOutputs(const Target& target, const InputBuffer&, const CodeBuffer&, const CheckOptions&) {
  Report r;
  r.target = target.name;
  r.kind = "encode";
  r.error = "not implemented yet";
  return r;
}

Report CheckRecipeOutputs(const Target& target, const InputBuffer&, long, long, const RecipeOutputs&,
                          const CheckOptions&) {
  Report r;
  r.target = target.name;
  r.kind = "quantize";
  r.error = "not implemented yet";
  return r;
}

Report CheckRecipeDequantized(const Target& target, const RecipeOutputs&, long, long, const float*,
                              const CheckOptions&) {
  Report r;
  r.target = target.name;
  r.kind = "dequantize";
  r.error = "not implemented yet";
  return r;
}

std::string ReportText(const Report& report) { return report.target + ": " + report.error + "\n"; }
std::string ReportJson(const Report& report) { return "{\"target\":\"" + report.target + "\"}"; }

}  // namespace lowbit::check
