//===- MetricsJsonl.cpp - Training logs as JSON lines ---------------------===//

#include "runtime/metrics/MetricsJsonl.h"

#include "runtime/support/JsonText.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace kiln::metrics {

MetricsJsonl::~MetricsJsonl() { close(); }

bool MetricsJsonl::open(const std::string &path, std::string &error) {
  close();
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    error = path + ": error: cannot open: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool MetricsJsonl::write(
    const std::vector<std::pair<std::string, double>> &fields,
    std::string &error) {
  if (fd_ < 0) {
    error = path_ + ": error: cannot write: the file is not open";
    return false;
  }
  std::string line = "{";
  for (const auto &[name, value] : fields) {
    if (line.size() > 1)
      line += ',';
    line += jsonString(name) + ':' + jsonNumber(value);
  }
  line += "}\n";
  // One write(2) per line: with O_APPEND a short write only happens on a
  // full disk or a signal, and finishing the line is all that can be done.
  const char *bytes = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t written = ::write(fd_, bytes, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0) {
      error = path_ + ": error: cannot write: " + std::strerror(errno);
      return false;
    }
    bytes += written;
    left -= size_t(written);
  }
  return true;
}

void MetricsJsonl::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

} // namespace kiln::metrics
