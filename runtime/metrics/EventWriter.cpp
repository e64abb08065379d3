//===- EventWriter.cpp - TensorBoard event files --------------------------===//

#include "runtime/metrics/EventWriter.h"

#include "runtime/support/Directories.h"

#include "runtime/metrics/TfRecord.h"

#include "proto/tensorboard/event.pb.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::metrics {

namespace {

constexpr size_t kFlushThreshold = 64 * 1024;

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
  tensorflow::Event event;
  event.set_wall_time(wallTime);
  event.set_file_version(fileVersion);
  return event.SerializeAsString();
}

std::string encodeScalarEvent(double wallTime, int64_t step,
                              const std::string &tag, float value) {
  tensorflow::Event event;
  event.set_wall_time(wallTime);
  event.set_step(step);
  tensorflow::Summary::Value *scalar = event.mutable_summary()->add_value();
  scalar->set_tag(tag);
  scalar->set_simple_value(value);
  return event.SerializeAsString();
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
