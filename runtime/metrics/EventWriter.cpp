//===- EventWriter.cpp - TensorBoard event files --------------------------===//

#include "runtime/metrics/EventWriter.h"

#include "runtime/support/Directories.h"

#include "runtime/metrics/TfRecord.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::metrics {

namespace {

constexpr size_t kFlushThreshold = 64 * 1024;

/// Protobuf wire format, the subset the Event encoding needs.
enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kBytes = 2,
  kFixed32 = 5
};

void putVarint(std::string &out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(char((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(char(value));
}

void putKey(std::string &out, uint32_t field, WireType type) {
  putVarint(out, (uint64_t(field) << 3) | type);
}

void putFixed(std::string &out, uint64_t bits, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((bits >> (8 * i)) & 0xFF));
}

void putDouble(std::string &out, uint32_t field, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  putKey(out, field, kFixed64);
  putFixed(out, bits, 8);
}

void putFloat(std::string &out, uint32_t field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  putKey(out, field, kFixed32);
  putFixed(out, bits, 4);
}

void putBytes(std::string &out, uint32_t field, const std::string &bytes) {
  putKey(out, field, kBytes);
  putVarint(out, bytes.size());
  out += bytes;
}

double unixSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}


std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !name[0])
    return "localhost";
  // A name is a file name component here: keep it one.
  std::string host = name;
  for (char &c : host)
    if (c == '/')
      c = '_';
  return host;
}

int writeAll(int fd, const char *bytes, size_t size) {
  while (size > 0) {
    ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    bytes += written;
    size -= size_t(written);
  }
  return 0;
}

} // namespace

std::string encodeFileVersionEvent(double wallTime,
                                   const std::string &fileVersion) {
  std::string event;
  putDouble(event, 1, wallTime);
  putBytes(event, 3, fileVersion);
  return event;
}

std::string encodeScalarEvent(double wallTime, int64_t step,
                              const std::string &tag, float value) {
  std::string summaryValue;
  putBytes(summaryValue, 1, tag);
  putFloat(summaryValue, 2, value);
  std::string summary;
  putBytes(summary, 1, summaryValue);
  std::string event;
  putDouble(event, 1, wallTime);
  putKey(event, 2, kVarint);
  putVarint(event, uint64_t(step));
  putBytes(event, 5, summary);
  return event;
}

EventWriter::~EventWriter() {
  std::string ignored;
  close(ignored);
}

bool EventWriter::open(const std::string &logdir, std::string &error) {
  std::string ignored;
  close(ignored);
  std::string dir = logdir.empty() ? "." : logdir;
  if (int failure = makeDirectories(dir)) {
    error = dir + ": error: cannot create the log directory: " +
            std::strerror(failure);
    return false;
  }
  double now = unixSeconds();
  std::string stem = dir + "/events.out.tfevents." +
                     std::to_string(int64_t(now)) + "." + hostName() + "." +
                     std::to_string(::getpid());
  for (int attempt = 0; attempt < 1000; ++attempt) {
    path_ = stem + (attempt ? "." + std::to_string(attempt) : "") + ".kiln";
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0 || errno != EEXIST)
      break;
  }
  if (fd_ < 0) {
    error =
        dir + ": error: cannot create an event file: " + std::strerror(errno);
    path_.clear();
    return false;
  }
  return append(encodeFileVersionEvent(now, "brain.Event:2"), error) &&
         flush(error);
}

bool EventWriter::scalar(const std::string &tag, int64_t step, double value,
                         std::string &error) {
  return append(encodeScalarEvent(unixSeconds(), step, tag, float(value)),
                error);
}

bool EventWriter::append(const std::string &event, std::string &error) {
  if (fd_ < 0) {
    error = (path_.empty() ? std::string("events") : path_) +
            ": error: cannot write: the event file is not open";
    return false;
  }
  appendTfRecord(pending_, event.data(), event.size());
  return pending_.size() < kFlushThreshold || flush(error);
}

bool EventWriter::flush(std::string &error) {
  if (pending_.empty())
    return true;
  if (fd_ < 0) {
    error = path_ + ": error: cannot write: the event file is not open";
    return false;
  }
  int failure = writeAll(fd_, pending_.data(), pending_.size());
  pending_.clear();
  if (failure) {
    error = path_ + ": error: cannot write: " + std::strerror(failure);
    return false;
  }
  return true;
}

bool EventWriter::close(std::string &error) {
  if (fd_ < 0)
    return true;
  bool flushed = flush(error);
  bool closed = ::close(fd_) == 0;
  if (!closed && flushed)
    error = path_ + ": error: cannot write: " + std::strerror(errno);
  fd_ = -1;
  return flushed && closed;
}

} // namespace kiln::metrics
