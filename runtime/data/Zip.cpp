//===- Zip.cpp - Reading zip archives (numpy .npz) ------------------------===//
//
// libzip does the zip format (ZIP64 included); what is checked here is what
// a data reader adds: the names, the methods read, and the sizes claimed.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Zip.h"

#include "runtime/data/DatasetRows.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

namespace kiln::data {

namespace {

/// Deflate's largest expansion: a 258-byte match costs at least 2 bits.
constexpr uint64_t kMaxDeflateRatio = 1032;

std::string zipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

std::string zipErrorText(zip_error_t *error) {
  return zip_error_strerror(error);
}

/// Whether `name` names a file outside the folder the archive would be
/// unpacked in: an absolute path ("/x", "C:/x"), or a '..' component.
bool leavesFolder(const std::string &name) {
  if (!name.empty() && (name[0] == '/' || name[0] == '\\'))
    return true;
  bool driveLetter = name.size() >= 3 && std::isalpha(uint8_t(name[0])) &&
                     name[1] == ':' && (name[2] == '/' || name[2] == '\\');
  if (driveLetter)
    return true;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("/\\", start);
    if (end == std::string::npos)
      end = name.size();
    if (name.compare(start, end - start, "..") == 0)
      return true;
    start = end + 1;
  }
  return false;
}

std::string memberPrefix(const ZipMember &member) {
  return "zip member '" + member.name + "': ";
}

/// Why `member` cannot be read, or its claimed size allocated: "" if it is
/// stored or deflated, not encrypted, and its size bounded by its compressed
/// size and that by the file's.
std::string unreadableReason(const ZipMember &member, uint64_t fileSize) {
  std::string compressed = std::to_string(member.compressedSize);
  std::string size = std::to_string(member.size);
  if (member.encryption != ZIP_EM_NONE)
    return "encrypted members are not supported";
  if (member.method != ZIP_CM_STORE && member.method != ZIP_CM_DEFLATE)
    return "compression method " + std::to_string(member.method) +
           " is not supported (only stored and deflate: np.savez, "
           "np.savez_compressed)";
  if (member.compressedSize > fileSize)
    return "corrupt zip archive: " + compressed +
           " compressed bytes claimed in a file of " + std::to_string(fileSize);
  if (member.method == ZIP_CM_STORE && member.size != member.compressedSize)
    return "corrupt zip archive: a stored member of " + compressed +
           " bytes claims " + size + " uncompressed";
  if (member.method == ZIP_CM_DEFLATE &&
      member.size > member.compressedSize * kMaxDeflateRatio + 64)
    return "corrupt zip archive: " + compressed +
           " deflated bytes cannot hold the " + size + " bytes claimed";
  return "";
}

/// Reads the directory entry `index` of `archive` into `member`.
bool statMember(zip_t *archive, uint64_t index, ZipMember &member,
                std::string &problem) {
  zip_stat_t stat;
  zip_stat_init(&stat);
  constexpr uint64_t kNeeded = ZIP_STAT_NAME | ZIP_STAT_SIZE |
                               ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD |
                               ZIP_STAT_ENCRYPTION_METHOD;
  if (zip_stat_index(archive, index, 0, &stat) != 0 ||
      (stat.valid & kNeeded) != kNeeded) {
    problem = "cannot read the directory entry of member " +
              std::to_string(index + 1) + ": " +
              zipErrorText(zip_get_error(archive));
    return false;
  }
  member.name = stat.name;
  member.index = index;
  member.method = stat.comp_method;
  member.encryption = stat.encryption_method;
  member.compressedSize = stat.comp_size;
  member.size = stat.size;
  return true;
}

} // namespace

ZipArchive::~ZipArchive() {
  if (archive_)
    zip_discard(archive_);
}

bool ZipArchive::open(const std::string &path, std::string &error) {
  auto fail = [&](const std::string &problem) {
    error = dataError(path, problem);
    return false;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(std::string("cannot read: ") + std::strerror(errno));
  struct stat info;
  std::string problem;
  if (::fstat(fd, &info) != 0)
    problem = std::string("cannot read: ") + std::strerror(errno);
  else if (!S_ISREG(info.st_mode))
    problem = "not a regular file";
  int code = ZIP_ER_OK;
  // zip_fdopen reads through a duplicate of `fd` and closes `fd` on success.
  zip_t *archive = problem.empty()
                       ? zip_fdopen(fd, ZIP_RDONLY | ZIP_CHECKCONS, &code)
                       : nullptr;
  if (!archive) {
    ::close(fd);
    if (!problem.empty())
      return fail(problem);
    if (code == ZIP_ER_NOZIP)
      return fail(
          "not a zip archive, or a damaged one (libzip: " + zipErrorText(code) +
          "); a .npz is written by np.savez or np.savez_compressed");
    if (code == ZIP_ER_EXISTS)
      return fail("two members have the same name (libzip: " +
                  zipErrorText(code) + ")");
    return fail("cannot open the zip archive: " + zipErrorText(code));
  }
  if (archive_)
    zip_discard(archive_);
  archive_ = archive;
  path_ = path;
  fileSize_ = static_cast<uint64_t>(info.st_size);
  members_.clear();

  zip_int64_t count = zip_get_num_entries(archive, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    ZipMember member;
    if (!statMember(archive, static_cast<uint64_t>(i), member, problem))
      return fail(problem);
    if (leavesFolder(member.name))
      return fail(memberPrefix(member) +
                  "the name leaves the archive's folder (an absolute path or "
                  "a '..' component); members are NAME.npy, one per input");
    members_.push_back(std::move(member));
  }
  return true;
}

const ZipMember *ZipArchive::find(const std::string &name) const {
  for (const ZipMember &member : members_)
    if (member.name == name)
      return &member;
  return nullptr;
}

bool ZipArchive::read(const ZipMember &member, std::vector<uint8_t> &out,
                      std::string &error) const {
  out.clear();
  std::string problem = unreadableReason(member, fileSize_);
  if (!problem.empty()) {
    error = dataError(path_, memberPrefix(member) + problem);
    return false;
  }
  zip_file_t *file = zip_fopen_index(archive_, member.index, 0);
  if (!file) {
    error = dataError(path_, memberPrefix(member) + "cannot open: " +
                                 zipErrorText(zip_get_error(archive_)));
    return false;
  }
  out.resize(member.size);
  uint64_t done = 0;
  zip_int64_t got = 1;
  while (done < member.size && got > 0) {
    got = zip_fread(file, out.data() + done, member.size - done);
    if (got > 0)
      done += static_cast<uint64_t>(got);
  }
  // Reading on reaches the member's end, where libzip compares the CRC-32
  // of what it read with the directory's.
  uint8_t extra = 0;
  if (got >= 0)
    got = zip_fread(file, &extra, 1);
  std::string size = std::to_string(member.size);
  if (got < 0)
    problem =
        (done < member.size ? "corrupt data after " + std::to_string(done) +
                                  " of " + size + " bytes: "
                            : "corrupt data: ") +
        zipErrorText(zip_file_get_error(file));
  else if (got > 0)
    problem =
        "corrupt data: more than the " + size + " bytes the directory says";
  else if (done < member.size)
    problem = "corrupt data: " + std::to_string(done) +
              " bytes, the directory says " + size;
  zip_fclose(file);
  if (problem.empty())
    return true;
  out.clear();
  error = dataError(path_, memberPrefix(member) + problem);
  return false;
}

} // namespace kiln::data
