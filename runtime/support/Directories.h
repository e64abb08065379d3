//===- Directories.h - Creating and probing output directories --*- C++ -*-===//

#ifndef KILN_RUNTIME_SUPPORT_DIRECTORIES_H
#define KILN_RUNTIME_SUPPORT_DIRECTORIES_H

#include <string>

namespace kiln {

/// mkdir -p; returns 0 or the errno of the failure (ENOTDIR when `path`, or
/// a directory on the way, is a file).
int makeDirectories(const std::string &path);

/// Creates `path` as makeDirectories does, then creates and removes a file
/// in it: returns 0 when files can be written there, else the errno. Lets a
/// long job refuse an unusable output directory before it starts.
int probeWritableDirectory(const std::string &path);

} // namespace kiln

#endif // KILN_RUNTIME_SUPPORT_DIRECTORIES_H
