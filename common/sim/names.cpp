// names.cpp — how the emulator names things in its reports: numbers in hex, source lines, CTAs,
// threads, and the issuer of an operation (Origin), made into text only when a report is written.
#include <cstdio>
#include <cstring>
#include <sstream>

#include "internal.h"

namespace tcsim {
namespace detail {

std::string hex(uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

std::string loc(SrcLoc at) {
  if (!at.file) return "?";
  const char* f = at.file;
  if (const char* s = strstr(f, "steps/")) f = s;
  else if (const char* s2 = strstr(f, "common/")) f = s2;
  else if (const char* s3 = strstr(f, "tests/")) f = s3;
  return std::string(f) + ":" + std::to_string(at.line);
}

// "CTA (x,y,z)", plus the rank when the cluster has more than one CTA.
std::string cta_name(const Cta& cta) {
  std::ostringstream o;
  o << "CTA (" << cta.block_idx.x << "," << cta.block_idx.y << "," << cta.block_idx.z << ")";
  if (cta.cluster && cta.cluster->ctas.size() > 1) o << " rank " << cta.rank;
  return o.str();
}

std::string who(const Fiber& f) {
  std::ostringstream o;
  o << cta_name(*f.cta) << " warp " << f.warp << " lane " << f.lane << " (thread " << f.tid << ")";
  return o.str();
}

std::string Origin::text() const {
  if (!what) return who(*by) + " at " + loc(at);
  std::string s = the ? std::string("the ") + what : std::string(what);
  if (into) s += " into " + cta_name(*into);
  return s + " issued by " + who(*by) + " at " + loc(at);
}

}  // namespace detail
}  // namespace tcsim
