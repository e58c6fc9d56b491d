// ReportText and ReportJson (user_outputs.h): the words `lowbit check`, the
// gtest matchers and Python's assert_matches print.
#include <algorithm>
#include <cstdio>
#include <string>

#include "describe.h"
#include "diagnosis.h"
#include "lowbit/check/text.h"
#include "lowbit/check/user_outputs.h"

namespace lowbit::check {

namespace {

// Candidates listed in the text (all of them in the JSON).
constexpr std::size_t kCandidatesShown = 8;

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Json(const std::string& text) { return JsonString(text); }

std::string Field(const char* name, const std::string& json_value) { return Json(name) + ": " + json_value; }
std::string Field(const char* name, std::uint64_t v) { return Field(name, std::to_string(v)); }
std::string BoolJson(bool b) { return b ? "true" : "false"; }

std::string DifferencesJson(const std::vector<DifferenceClass>& classes) {
  std::string out = "[";
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const DifferenceClass& d = classes[i];
    out += (i ? ", " : "") + std::string("{") + Field("what", Json(d.what)) + ", " + Field("count", d.count) + ", " +
           Field("candidate_code", d.candidate_code) + ", " + Field("actual_code", d.actual_code) + "}";
  }
  return out + "]";
}

std::string MismatchText(const OutputMismatch& m) {
  std::string text = DescribeMismatch(m.mismatch, "expected", "kernel");
  if (m.block) {
    text += "\n      block " + std::to_string(m.block->index) + ": amax " + m.block->amax + ", scale expected " +
            m.block->expected_scale;
    if (!m.block->actual_scale.empty()) text += ", kernel " + m.block->actual_scale;
  }
  return text;
}

}  // namespace

std::string ReportText(const Report& r) {
  std::string text = "lowbit check " + r.target + " (" + r.kind + "): ";
  if (!r.error.empty()) return text + "not checked: " + r.error + "\n";
  text += Plural(r.checked, "output", "outputs") + " checked, " + Plural(r.mismatches, "mismatch", "mismatches");
  if (r.scale_mismatches > 0) {
    text += " (" + std::to_string(r.scale_mismatches) + " of them scales, zero points or the tensor scale)";
  }
  if (r.undefined > 0) text += ", " + std::to_string(r.undefined) + " left undefined by the target (not compared)";
  text += r.Passed() ? ": MATCH\n" : r.checked == 0 ? ": NOTHING CHECKED\n" : ": MISMATCH\n";
  if (!r.first_mismatches.empty()) {
    text += "first mismatches:\n";
    for (const OutputMismatch& m : r.first_mismatches) text += "  " + MismatchText(m) + "\n";
  }
  const Diagnosis& d = r.diagnosis;
  if (d.ran) {
    text += "diagnosis: " + d.summary + "\n";
    if (!d.candidates.empty()) {
      text += "candidates (" + std::to_string(d.candidates.size()) + " that differ from the target, best first):\n";
      const std::size_t shown = std::min(d.candidates.size(), kCandidatesShown);
      for (std::size_t i = 0; i < shown; ++i) {
        const Candidate& c = d.candidates[i];
        text += std::string("  ") + (c.FullMatch() ? "MATCH    " : "         ") + c.name + ": " +
                std::to_string(c.matched) + " of " + std::to_string(c.checked);
        if (!c.differences.empty()) {
          text += ", differs on " + internal::DescribeDifferences(c.differences, "it gives");
        }
        text += "\n";
      }
      if (d.candidates.size() > shown) text += "  ... " + std::to_string(d.candidates.size() - shown) + " more\n";
    }
  }
  return text;
}

std::string ReportJson(const Report& r) {
  std::string out = "{";
  out += Field("target", Json(r.target)) + ", " + Field("kind", Json(r.kind)) + ", " +
         Field("passed", BoolJson(r.Passed())) + ", " + Field("error", Json(r.error)) + ", " +
         Field("checked", r.checked) + ", " + Field("mismatches", r.mismatches) + ", " +
         Field("scale_mismatches", r.scale_mismatches) + ", " + Field("undefined", r.undefined) + ", ";
  out += Json("first_mismatches") + ": [";
  for (std::size_t i = 0; i < r.first_mismatches.size(); ++i) {
    const OutputMismatch& om = r.first_mismatches[i];
    const Mismatch& m = om.mismatch;
    out += i ? ", {" : "{";
    out += Field("description", Json(DescribeMismatch(m, "expected", "kernel"))) + ", ";
    out += Field("element", std::to_string(om.element)) + ", " + Field("where", Json(m.where)) + ", ";
    out += Field("input", m.input) + ", " + Field("input_format", Json(m.input_format)) + ", " +
           Field("input_value", Json(m.input_value)) + ", ";
    out += Field("output_format", Json(m.output_format)) + ", " + Field("expected", m.expected) + ", " +
           Field("expected_value", Json(m.expected_value)) + ", " + Field("actual", m.actual) + ", " +
           Field("actual_value", Json(m.actual_value)) + ", ";
    out += Field("code_distance", m.code_distance ? std::to_string(*m.code_distance) : "null") + ", ";
    out += Field("note", Json(m.note)) + ", ";
    if (om.block) {
      out += Field("block", "{" + Field("index", std::to_string(om.block->index)) + ", " +
                                Field("amax", Json(om.block->amax)) + ", " +
                                Field("expected_scale", Json(om.block->expected_scale)) + ", " +
                                Field("actual_scale", Json(om.block->actual_scale)) + "}");
    } else {
      out += Field("block", "null");
    }
    out += "}";
  }
  out += "], ";
  const Diagnosis& d = r.diagnosis;
  out += Json("diagnosis") + ": {" + Field("ran", BoolJson(d.ran)) + ", " + Field("summary", Json(d.summary)) + ", " +
         Field("matches_some", BoolJson(d.MatchesSome())) + ", " + Field("compared", d.compared) + ", " +
         Field("target_differences", DifferencesJson(d.target_differences)) + ", " + Json("candidates") + ": [";
  for (std::size_t i = 0; i < d.candidates.size(); ++i) {
    const Candidate& c = d.candidates[i];
    out += (i ? ", {" : "{") + Field("name", Json(c.name)) + ", " + Field("kind", Json(c.kind)) + ", " +
           Field("detail", Json(c.detail)) + ", " + Field("checked", c.checked) + ", " +
           Field("matched", c.matched) + ", " + Field("full_match", BoolJson(c.FullMatch())) + ", " +
           Field("differences", DifferencesJson(c.differences)) + "}";
  }
  out += "]}}";
  return out;
}

}  // namespace lowbit::check
