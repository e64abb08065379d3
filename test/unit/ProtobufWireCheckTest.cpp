//===- ProtobufWireCheckTest.cpp - Where a binary protobuf file breaks ----===//
//
// describeWireFailure against protobuf's own parser: on every prefix of a
// model PyTorch exported and of a Keras GraphDef, and on single corrupted
// bytes of them, it names a problem exactly when ParseFromArray fails; and
// the problems it names, on messages built by hand, are the right ones at
// the right offsets.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/ProtobufWireCheck.h"

#include "onnx/onnx_pb.h"
#include "proto/tensorflow/graph.pb.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

using namespace kiln;

namespace {

std::string fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename Message = onnx::ModelProto> std::string describe(const std::string &bytes) {
  return describeWireFailure(bytes, *Message::descriptor());
}

template <typename Message = onnx::ModelProto> bool parses(const std::string &bytes) {
  google::protobuf::LogSilencer quiet; // A proto3 string that is not UTF-8 is logged.
  Message message;
  return message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

/// Checks that describeWireFailure names a problem exactly where protobuf
/// fails: on every prefix of the file at `path`, and on `trials` copies
/// with one byte replaced at random.
template <typename Message> void agreesWithProtobuf(const std::string &path, int trials) {
  std::string model = fileBytes(path);
  ASSERT_GT(model.size(), 1000u);
  ASSERT_TRUE(parses<Message>(model));
  EXPECT_EQ(describe<Message>(model), "");
  for (size_t size = 1; size < model.size(); ++size) {
    std::string prefix = model.substr(0, size);
    ASSERT_EQ(parses<Message>(prefix), describe<Message>(prefix).empty())
        << size << ": " << describe<Message>(prefix);
  }
  std::mt19937 random(7);
  int failures = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::string corrupt = model;
    corrupt[random() % corrupt.size()] = static_cast<char>(random() & 0xff);
    bool parsed = parses<Message>(corrupt);
    failures += !parsed;
    ASSERT_EQ(parsed, describe<Message>(corrupt).empty())
        << trial << ": " << describe<Message>(corrupt);
  }
  EXPECT_GT(failures, trials / 100); // The trials did reach the failing paths.
}

/// A varint.
std::string varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out += static_cast<char>(value ? byte | 0x80 : byte);
  } while (value);
  return out;
}

/// A length-delimited field.
std::string field(int number, const std::string &payload) {
  return varint(uint64_t(number) << 3 | 2) + varint(payload.size()) + payload;
}

TEST(ProtobufWireCheckTest, AgreesWithProtobufOnAPyTorchExport) {
  agreesWithProtobuf<onnx::ModelProto>(KILN_TEST_INPUTS "/frameworks/cnn_dynamo.onnx", 3000);
}

TEST(ProtobufWireCheckTest, AgreesWithProtobufOnAKerasGraphDef) {
  // proto3: its strings must be UTF-8 too.
  agreesWithProtobuf<tensorflow::GraphDef>(KILN_TEST_INPUTS "/frameworks/keras_dense.pb", 3000);
}

TEST(ProtobufWireCheckTest, NamesTheInnermostFieldAFileEndsIn) {
  // graph (7) { initializer (5) [0] { raw_data (9): 16 bytes } }, cut after 6 of them.
  std::string tensor = field(9, std::string(16, 'x'));
  std::string whole = field(7, field(5, tensor));
  std::string cut = whole.substr(0, whole.size() - 10);
  EXPECT_EQ(describe(cut), "the file ends at offset " + std::to_string(cut.size()) +
                               ", inside 'graph.initializer[0].raw_data' (16 bytes from "
                               "offset 4)");
  EXPECT_EQ(describe(whole.substr(0, 5)),
            "the file ends at offset 5, inside the length of 'graph.initializer[0].raw_data' "
            "(from offset 4)");
  // The second initializer is [1].
  std::string two = field(7, field(5, tensor) + field(5, tensor));
  EXPECT_NE(describe(two.substr(0, two.size() - 1)).find("'graph.initializer[1].raw_data'"),
            std::string::npos);
}

TEST(ProtobufWireCheckTest, NamesCorruptionAtItsOffset) {
  // A nested length past the end of its message, not of the file.
  std::string graph = field(7, varint(5 << 3 | 2) + varint(40) + std::string(2, 'x')) +
                      std::string(60, '\0');
  EXPECT_EQ(describe(graph), "at offset 2: 'graph.initializer[0]' (40 bytes from offset 2) runs "
                             "past the end of 'graph'");
  EXPECT_EQ(describe(std::string("\x0f", 1)),
            "at offset 0: 'ir_version' has wire type 7, which protobuf does not define");
  EXPECT_EQ(describe(std::string("\x02\x00", 2)), "at offset 0: a field numbered 0");
  EXPECT_EQ(describe(std::string("\x0c", 1)),
            "at offset 0: an end-group tag for field 1 with no group open");
  EXPECT_EQ(describe(field(7, std::string("\x0c", 1))),
            "at offset 2: an end-group tag for field 1 with no group open in 'graph'");
  // An unknown group, closed and not.
  EXPECT_EQ(describe(varint(99 << 3 | 3) + varint(1 << 3) + "\x05" + varint(99 << 3 | 4)), "");
  EXPECT_EQ(describe(varint(99 << 3 | 3) + varint(1 << 3) + "\x05"),
            "the file ends at offset 4, inside group 'field 99' (from offset 0)");
}

TEST(ProtobufWireCheckTest, NamesPackedTagAndTextProblems) {
  // Packed values that are not whole: a varint cut short (dims, int64) and
  // three bytes of floats (float_data).
  std::string dims = field(7, field(5, field(1, "\x80")));
  EXPECT_FALSE(parses(dims));
  EXPECT_EQ(describe(dims), "at offset 4: 'graph.initializer[0].dims[0]' holds 1 bytes, not a "
                            "whole number of packed values");
  std::string floats = field(7, field(5, field(4, "abc")));
  EXPECT_FALSE(parses(floats));
  EXPECT_EQ(describe(floats), "at offset 4: 'graph.initializer[0].float_data[0]' holds 3 bytes, "
                              "not a whole number of packed values");
  // A field number beyond 2^29 - 1, and a tag longer than protobuf reads.
  std::string big = varint(uint64_t(1) << 32) + varint(1);
  EXPECT_FALSE(parses(big));
  EXPECT_EQ(describe(big), "at offset 0: a field numbered 536870912");
  std::string wide = std::string("\x88\x80\x80\x80\x80\x00\x01", 7);
  EXPECT_FALSE(parses(wide));
  EXPECT_EQ(describe(wide), "at offset 0: a field's tag of more than 5 bytes");
  // proto3 strings (a GraphDef's node name) must be UTF-8; ONNX's proto2 ones
  // need not be.
  std::string graph = field(1, field(1, "\xff"));
  EXPECT_FALSE(parses<tensorflow::GraphDef>(graph));
  EXPECT_EQ(describe<tensorflow::GraphDef>(graph), "at offset 2: 'node[0].name' is not UTF-8 text");
  std::string onnxName = field(7, field(2, "\xff"));
  EXPECT_TRUE(parses(onnxName));
  EXPECT_EQ(describe(onnxName), "");
}

TEST(ProtobufWireCheckTest, RefusesDeepNesting) {
  // FunctionProto (25) .node (7) .attribute (5) .g (6) .node (1) ... a loop of messages.
  std::string inner;
  for (int i = 0; i < 60; ++i)
    inner = field(1, field(5, field(6, inner)));
  EXPECT_FALSE(parses(field(7, inner)));
  EXPECT_NE(describe(field(7, inner)).find("nested more than 100 messages deep"),
            std::string::npos)
      << describe(field(7, inner));
}

} // namespace
