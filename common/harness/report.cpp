// report.cpp — the text the harness writes: the results CSV (header, quoting, one row per
// run, the check that a file is ours, the locked single-write append), CUDA-style version numbers,
// UTC dates, and strf (printf into a std::string) used by every part of the harness.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/harness/internal.h"

namespace tcg::harness {

// printf into a std::string (declared with printf format checking in internal.h).
std::string strf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int len = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string s(len > 0 ? static_cast<size_t>(len) : 0, '\0');
  if (len > 0) std::vsnprintf(&s[0], s.size() + 1, format, again);
  va_end(again);
  return s;
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

std::string csv_header() {
  return "step,step_name,gpu,sm_count,driver,cuda_runtime,cublas,m,n,k,dtype,inputs,iterations,"
         "median_ms,tflops,cublas_tflops,ratio,max_abs_err,verified,date,git_rev\n";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';  // a quote inside a quoted field is doubled
    q += c;
  }
  return q + "\"";
}

std::string csv_line(const CsvRecord& r) {
  const std::string* fields[] = {
      &r.step,          &r.step_name, &r.gpu,         &r.sm_count,  &r.driver,
      &r.cuda_runtime,  &r.cublas,    &r.m,           &r.n,         &r.k,
      &r.dtype,         &r.inputs,    &r.iterations,  &r.median_ms, &r.tflops,
      &r.cublas_tflops, &r.ratio,     &r.max_abs_err, &r.verified,  &r.date,
      &r.git_rev};
  std::string line;
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
    if (i > 0) line += ',';
    line += csv_field(*fields[i]);
  }
  return line + "\n";
}

namespace {

// Owns a POSIX file descriptor.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Decides whether the open file `fd` may take our rows. *empty: nothing in it yet (write the
// header first). Files that are not regular (a pipe, /dev/stdout) are treated as empty.
std::string inspect_csv(int fd, const std::string& path, bool* empty) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return path + ": is a directory";
  *empty = !S_ISREG(st.st_mode) || st.st_size == 0;
  if (*empty) return "";
  const std::string header = csv_header();
  std::string first(header.size(), '\0');
  const ssize_t got = ::pread(fd, &first[0], first.size(), 0);
  if (got < 0) return path + ": " + std::strerror(errno);
  if (static_cast<size_t>(got) != header.size() || first != header)
    return path +
           ": first line is not this harness's CSV header; refusing to append (use a new file)";
  char last = 0;
  if (::pread(fd, &last, 1, st.st_size - 1) != 1) return path + ": " + std::strerror(errno);
  if (last != '\n')
    return path + ": does not end with a newline (an interrupted write?); refusing to append";
  return "";
}

}  // namespace

std::string creatable_check(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return dir + ": " + std::strerror(errno);
  return "";
}

std::string csv_check(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno != ENOENT) return path + ": " + std::strerror(errno);
    // A new file: its directory must exist and be writable, or the append would fail only after
    // the whole run.
    const std::string dir_err = creatable_check(path);
    return dir_err.empty() ? "" : path + ": cannot create it (" + dir_err + ")";
  }
  bool empty = false;
  return inspect_csv(fd.get(), path, &empty);
}

std::string csv_append(const std::string& path, const CsvRecord& r) {
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) return path + ": " + std::strerror(errno);
  // Serialise against other runs appending to the same file, so the "is it empty, then write the
  // header" decision and the write happen as one step. Filesystems without flock: carry on.
  (void)::flock(fd.get(), LOCK_EX);
  bool empty = false;
  const std::string err = inspect_csv(fd.get(), path, &empty);
  if (!err.empty()) return err;
  const std::string text = (empty ? csv_header() : std::string()) + csv_line(r);
  // One write() for the whole text; the loop only matters for the rare short write.
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd.get(), text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return path + ": " + std::strerror(errno);
    }
    done += static_cast<size_t>(w);
  }
  if (::close(fd.release()) != 0) return path + ": " + std::strerror(errno);  // releases the lock
  return "";
}

std::string format_version(int v) {
  if (v <= 0) return "";
  return strf("%d.%d", v / 1000, (v % 1000) / 10);
}

std::string utc_iso8601(std::time_t t) {
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "";
  char buf[32];
  const size_t len = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf, len);
}

}  // namespace tcg::harness
