//===- EventWriter.h - TensorBoard event files ------------------*- C++ -*-===//
//
// Writes scalars to a TensorBoard event file: a TFRecord file (TfRecord.h) of
// serialized tensorflow.Event protobufs (proto/tensorboard/event.proto and
// summary.proto: TensorFlow's messages, reduced to the fields written here).
//
// The first record of a file is an Event with file_version "brain.Event:2".
// Not thread-safe: one writer per thread, or a lock around it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_METRICS_EVENTWRITER_H
#define KILN_RUNTIME_METRICS_EVENTWRITER_H

#include <cstdint>
#include <string>

namespace kiln::metrics {

/// The serialized Event{wall_time, file_version}.
std::string encodeFileVersionEvent(double wallTime,
                                   const std::string &fileVersion);

/// The serialized Event{wall_time, step, summary{value{tag, simple_value}}}.
std::string encodeScalarEvent(double wallTime, int64_t step,
                              const std::string &tag, float value);

class EventWriter {
public:
  EventWriter() = default;
  EventWriter(const EventWriter &) = delete;
  EventWriter &operator=(const EventWriter &) = delete;
  /// Flushes and closes the file; a failure here goes unreported, so call
  /// flush() first where it matters.
  ~EventWriter();

  /// Creates `logdir` (and its parents) if needed and a new file in it named
  /// events.out.tfevents.<unix seconds>.<hostname>.<pid>.kiln (with a
  /// counter before ".kiln" if that name is taken), and writes the
  /// file_version event. On failure sets `error` to "LOGDIR: error: PROBLEM"
  /// and returns false.
  bool open(const std::string &logdir, std::string &error);

  /// Appends a scalar event stamped with the current time. Events are
  /// buffered and written by flush(), or when the buffer grows past 64 KiB.
  bool scalar(const std::string &tag, int64_t step, double value,
              std::string &error);

  /// Writes the buffered events to the file. On failure sets `error` to
  /// "FILE: error: cannot write: REASON" and returns false.
  bool flush(std::string &error);

  /// Closes the file after flushing it.
  bool close(std::string &error);

  /// The event file's path once open.
  const std::string &path() const { return path_; }

private:
  bool append(const std::string &event, std::string &error);

  std::string path_;
  std::string pending_; ///< Framed records not yet written.
  int fd_ = -1;
};

} // namespace kiln::metrics

#endif // KILN_RUNTIME_METRICS_EVENTWRITER_H
