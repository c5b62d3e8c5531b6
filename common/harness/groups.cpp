// groups.cpp — the groups of a grouped GEMM from `--groups`: the competition's presets, a list
// of M, or a file (groups.h). Errors are one line each, naming the group and what is wrong.
#include "common/harness/groups.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tcg::harness {

namespace {

// Does `value` look like a list (digits, signs, commas, blanks) rather than a name or a path?
bool looks_like_list(const std::string& value) {
  for (char c : value)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == ' ' || c == '\t' || c == '-' || c == '+'))
      return false;
  return !value.empty();
}

}  // namespace

const std::vector<GroupList>& group_presets() {
  // task.yml's ranked cases (M per group, N, K) and the speed of light the problem states for each.
  static const std::vector<GroupList> p = {
      {"g8-n4096-k7168", {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, 18.833},
      {"g8-n7168-k2048", {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, 10.667},
      {"g2-n3072-k4096", {192, 320}, 3072, 4096, 2.406},
      {"g2-n4096-k1536", {128, 384}, 4096, 1536, 1.525},
  };
  return p;
}

std::string group_presets_help() {
  std::string s;
  for (const GroupList& g : group_presets()) {
    s += "  " + g.name + ": M =";
    for (size_t i = 0; i < g.m.size(); ++i) s += (i ? "," : " ") + std::to_string(g.m[i]);
    s += ", N = " + std::to_string(g.n) + ", K = " + std::to_string(g.k) + "\n";
  }
  return s;
}

std::string parse_group_text(const std::string& text, const std::string& what, std::vector<int64_t>* m) {
  std::vector<int64_t> out;
  // Comments out, then every separator (comma, blank, newline) splits; an empty piece between two
  // commas is an error (a typo such as "80,,72"), blanks and newlines alone are not.
  std::string clean;
  bool comment = false;
  for (char c : text) {
    if (c == '#') comment = true;
    if (c == '\n') comment = false, c = ' ';
    if (!comment) clean += c == '\t' || c == '\r' ? ' ' : c;
  }
  std::vector<std::string> pieces;
  std::string cur;
  for (char c : clean + ",") {
    if (c == ',') {
      pieces.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  // A trailing comma ("80,72,") leaves an empty last piece: refuse it like any other empty one,
  // unless the whole text was blank.
  size_t index = 0;
  for (size_t p = 0; p < pieces.size(); ++p) {
    std::istringstream words(pieces[p]);
    std::string word;
    bool any = false;
    while (words >> word) {
      any = true;
      ++index;
      const std::string where = what + ": group " + std::to_string(index) + " (\"" + word + "\")";
      if (word[0] == '-') return where + ": M must be 0 or more";
      if (!std::isdigit(static_cast<unsigned char>(word[0]))) return where + ": not a number";
      errno = 0;
      char* end = nullptr;
      const unsigned long long v = std::strtoull(word.c_str(), &end, 10);
      if (*end != '\0') return where + ": not a number";
      if (errno == ERANGE || v > static_cast<unsigned long long>(kMaxGroupM))
        return where + ": M above " + std::to_string(kMaxGroupM);
      out.push_back(static_cast<int64_t>(v));
    }
    if (!any && pieces.size() > 1)
      return what + ": an empty entry after group " + std::to_string(index) + " (two commas, or a comma at an end)";
  }
  if (out.empty()) return what + ": no groups (expected M values such as 80,176,128)";
  if (out.size() > kMaxGroups) return what + ": " + std::to_string(out.size()) + " groups, more than " + std::to_string(kMaxGroups);
  *m = out;
  return "";
}

std::string parse_groups(const std::string& value, GroupList* out) {
  for (const GroupList& g : group_presets())
    if (g.name == value) {
      *out = g;
      return "";
    }
  GroupList g;
  if (looks_like_list(value)) {
    const std::string err = parse_group_text(value, "--groups=" + value, &g.m);
    if (!err.empty()) return err;
    *out = g;
    return "";
  }
  std::ifstream f(value);
  if (!f && value.find(',') != std::string::npos)  // meant as a list: say what is wrong with it
    return parse_group_text(value, "--groups=" + value, &g.m);
  if (!f) {
    std::string names;
    for (const GroupList& p : group_presets()) names += (names.empty() ? "" : ", ") + p.name;
    return "--groups=" + value + ": not a preset (" + names + "), a list of M such as 80,176,128, or a readable file";
  }
  std::stringstream text;
  text << f.rdbuf();
  const std::string err = parse_group_text(text.str(), "--groups file " + value, &g.m);
  if (!err.empty()) return err;
  *out = g;
  return "";
}

}  // namespace tcg::harness
