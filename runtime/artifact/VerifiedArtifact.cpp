//===- VerifiedArtifact.cpp - An artifact the executor can trust ----------===//

#include "runtime/artifact/VerifiedArtifact.h"

#include "runtime/artifact/ArtifactFile.h"
#include "runtime/artifact/ArtifactValidator.h"
#include "runtime/artifact/VerificationFailure.h"
#include "runtime/support/PrintableText.h"
#include "runtime/support/ReadAt.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::artifact {

namespace {

/// The smallest FlatBuffer with an identifier: root offset and identifier.
constexpr size_t kMinFlatBufferSize = 8;
constexpr size_t kMinFileSize = kMinFlatBufferSize + kFooterSize;

std::string hex64(uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

/// The four identifier bytes, quoted, with unprintable bytes as \xNN.
std::string quoteIdentifier(const uint8_t *bytes) {
  std::string text = "'";
  for (int i = 0; i < 4; ++i) {
    if (std::isprint(bytes[i])) {
      text += static_cast<char>(bytes[i]);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", bytes[i]);
      text += escaped;
    }
  }
  return text + "'";
}

/// Checks that a file of `fileSize` bytes ending in `footer` is long enough
/// and that the footer's length field matches it; no allocation happens
/// before this passes.
bool checkFileLength(uint64_t fileSize, const uint8_t *footer,
                     std::string &problem) {
  if (fileSize < kMinFileSize) {
    problem = "file of " + std::to_string(fileSize) +
              " bytes is too short for an artifact (at least " +
              std::to_string(kMinFileSize) + " bytes)";
    return false;
  }
  uint64_t declared = decodeArtifactFooter(footer).flatbufferSize;
  if (declared != fileSize - kFooterSize) {
    problem = "footer: length field says " + std::to_string(declared) +
              " bytes but the file holds " +
              std::to_string(fileSize - kFooterSize) +
              " before the footer (truncated, or not a kiln artifact)";
    return false;
  }
  if (declared >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    problem = "footer: a FlatBuffer of " + std::to_string(declared) +
              " bytes exceeds FlatBuffers' limit of " +
              std::to_string(FLATBUFFERS_MAX_BUFFER_SIZE - 1) + " bytes";
    return false;
  }
  return true;
}

/// Reads the whole artifact file into `bytes` after checking its length
/// against its footer.
bool readArtifactFile(const std::string &path, std::vector<uint8_t> &bytes,
                      std::string &problem) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0) {
    problem = std::string("cannot read: ") + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    problem = "not a regular file";
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  uint8_t footer[kFooterSize] = {};
  if (fileSize >= kFooterSize) {
    if (int failure = readAt(fd, footer, kFooterSize,
                             static_cast<off_t>(fileSize - kFooterSize))) {
      problem = std::string("cannot read: ") + std::strerror(failure);
      return false;
    }
  }
  if (!checkFileLength(fileSize, footer, problem))
    return false;
  bytes.resize(fileSize);
  if (int failure = readAt(fd, bytes.data(), bytes.size(), 0)) {
    problem = std::string("cannot read: ") + std::strerror(failure);
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<VerifiedArtifact>
VerifiedArtifact::load(const std::string &path, std::string &error) {
  std::vector<uint8_t> bytes;
  std::string problem;
  if (!readArtifactFile(path, bytes, problem)) {
    error = printableText(path + ": error: " + problem);
    return nullptr;
  }
  return fromFileBytes(path, std::move(bytes), error);
}

std::unique_ptr<VerifiedArtifact> VerifiedArtifact::fromFileBytes(
    std::string path, std::vector<uint8_t> fileBytes, std::string &error) {
  auto failure = [&](const std::string &problem) {
    error = printableText(path + ": error: " + problem);
    return nullptr;
  };
  std::string problem;
  const uint8_t *footer =
      fileBytes.size() >= kFooterSize
          ? fileBytes.data() + fileBytes.size() - kFooterSize
          : nullptr;
  uint8_t noFooter[kFooterSize] = {};
  if (!checkFileLength(fileBytes.size(), footer ? footer : noFooter, problem))
    return failure(problem);

  const uint8_t *flatbuffer = fileBytes.data();
  size_t size = fileBytes.size() - kFooterSize;
  uint64_t declared = decodeArtifactFooter(footer).checksum;
  uint64_t actual = fnv1a64(flatbuffer, size);
  if (declared != actual)
    return failure("footer: checksum " + hex64(declared) +
                   " does not match the contents (" + hex64(actual) +
                   "): the file is corrupt");
  if (!ArtifactBufferHasIdentifier(flatbuffer))
    return failure(
        "file identifier " +
        quoteIdentifier(flatbuffer + sizeof(flatbuffers::uoffset_t)) +
        " at offset 4 is not '" + ArtifactIdentifier() +
        "' (not a kiln artifact)");
  // Every table takes at least four bytes, so the file's size bounds their
  // number.
  flatbuffers::Verifier verifier(flatbuffer, size, /*max_depth=*/64,
                                 /*max_tables=*/size / 4 + 1);
  if (!VerifyArtifactBuffer(verifier)) {
    std::string where = locateVerificationFailure(flatbuffer, size);
    return failure("the FlatBuffer fails verification" + (where.empty() ? "" : ": " + where) +
                   " (corrupt, or not written from proto/kiln/artifact.fbs)");
  }
  const Artifact *root = GetArtifact(flatbuffer);
  if (root->format_version() < kOldestFormatVersion || root->format_version() > kFormatVersion)
    return failure("format_version " + std::to_string(root->format_version()) +
                   " is not supported (this runtime reads versions " +
                   std::to_string(kOldestFormatVersion) + " to " +
                   std::to_string(kFormatVersion) + ")");

  std::unique_ptr<VerifiedArtifact> artifact(new VerifiedArtifact());
  if (!validateArtifact(flatbuffer, artifact->buffers_, problem))
    return failure(problem);
  artifact->path_ = std::move(path);
  artifact->fileBytes_ = std::move(fileBytes);
  artifact->root_ = root;
  return artifact;
}

uint64_t VerifiedArtifact::regionSize(Region region) const {
  switch (region) {
  case Region_Arena:
    return root_->arena_bytes();
  case Region_State:
    return root_->state_bytes();
  case Region_Constants:
    return root_->constants() ? root_->constants()->size() : 0;
  case Region_Remote:
    return 0;
  }
  return 0;
}

const Program *VerifiedArtifact::findProgram(std::string_view name) const {
  if (const auto *programs = root_->programs())
    for (const Program *program : *programs)
      if (program->name()->string_view() == name)
        return program;
  return nullptr;
}

uint64_t VerifiedArtifact::checksum() const {
  return decodeArtifactFooter(fileBytes_.data() + fileBytes_.size() - kFooterSize).checksum;
}

} // namespace kiln::artifact
