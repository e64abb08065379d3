//===- ProgressLine.cpp - A live progress line on the terminal ------------===//

#include "runtime/metrics/ProgressLine.h"

#include <cerrno>
#include <cmath>
#include <cstdio>

namespace kiln::metrics {

namespace {

constexpr std::chrono::milliseconds kRedrawInterval{100};

/// `value` rounded to a whole number, with thousands separators: "2,345".
std::string withSeparators(double value) {
  if (!std::isfinite(value) || value < 0)
    return "-";
  std::string digits = std::to_string(static_cast<long long>(value + 0.5));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string clockTime(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "-:--:--";
  long long whole = static_cast<long long>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", whole / 3600,
                whole / 60 % 60, whole % 60);
  return text;
}

void writeAll(int fd, const std::string &text) {
  const char *bytes = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t written = ::write(fd, bytes, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return; // A progress line is not worth failing over.
    bytes += written;
    left -= size_t(written);
  }
}

} // namespace

ProgressLine::ProgressLine(int64_t totalSteps, int64_t startStep, int fd)
    : total_(totalSteps), start_(startStep), fd_(fd),
      terminal_(::isatty(fd) == 1), began_(Clock::now()) {}

std::string ProgressLine::format(int64_t step, int64_t totalSteps, double loss,
                                 double examplesPerSecond, double etaSeconds) {
  std::string text = "step " + std::to_string(step);
  if (totalSteps > 0)
    text += "/" + std::to_string(totalSteps);
  char lossText[32];
  std::snprintf(lossText, sizeof lossText, "%.4g", loss);
  text += "  loss ";
  text += lossText;
  text += "  " + withSeparators(examplesPerSecond) + " ex/s";
  if (totalSteps > 0)
    text += "  ETA " + clockTime(etaSeconds);
  return text;
}

void ProgressLine::update(int64_t step, double loss, double examplesPerSecond) {
  update(step, loss, examplesPerSecond, Clock::now());
}

void ProgressLine::update(int64_t step, double loss, double examplesPerSecond,
                          Clock::time_point now) {
  if (!terminal_)
    return;
  double eta = -1;
  if (total_ > 0 && step > start_) {
    double elapsed = std::chrono::duration<double>(now - began_).count();
    eta = elapsed / double(step - start_) * double(total_ - step);
  }
  std::string text = format(step, total_, loss, examplesPerSecond, eta);
  bool last = total_ > 0 && step >= total_;
  if (drawn_ && !last && now - lastDraw_ < kRedrawInterval) {
    skipped_ = std::move(text);
    return;
  }
  lastDraw_ = now;
  draw(text);
}

void ProgressLine::draw(const std::string &text) {
  // Back to the start of the line, the text, then erase what is left of an
  // older, longer line.
  writeAll(fd_, "\r" + text + "\033[K");
  drawn_ = true;
  skipped_.clear();
}

void ProgressLine::finish() {
  if (!terminal_ || !drawn_)
    return;
  if (!skipped_.empty())
    draw(skipped_);
  writeAll(fd_, "\n");
  drawn_ = false;
}

} // namespace kiln::metrics
