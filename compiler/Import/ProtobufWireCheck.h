//===- ProtobufWireCheck.h - Where a binary protobuf file goes wrong -*- C++ -*-===//
//
// Protobuf's parser says only that a binary message failed to parse. A file
// cut short (an interrupted download or copy, the commonest corruption of a
// model file) or overwritten in the middle fails somewhere in particular:
// describeWireFailure walks the wire format itself, guided by the message's
// descriptor, and names the first place it breaks (its byte offset and the
// field there, as a path like "graph.initializer[3].raw_data").
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_IMPORT_PROTOBUFWIRECHECK_H
#define KILN_COMPILER_IMPORT_PROTOBUFWIRECHECK_H

#include "llvm/ADT/StringRef.h"

#include <google/protobuf/descriptor.h>

#include <string>

namespace kiln {

/// Why `bytes` are not a well-formed `type` on the wire: "at offset N: WHAT"
/// (the first problem, N counted from the start of `bytes`), or the empty
/// string where the wire format holds together (the parse then failed for
/// another reason).
std::string describeWireFailure(llvm::StringRef bytes,
                                const google::protobuf::Descriptor &type);

/// "protobuf parse failed", followed by describeWireFailure's account when
/// it has one: the text kiln's readers put in their "not a ... file (...)"
/// errors.
std::string protobufParseFailure(llvm::StringRef bytes,
                                 const google::protobuf::Descriptor &type);

} // namespace kiln

#endif // KILN_COMPILER_IMPORT_PROTOBUFWIRECHECK_H
