//===- RuntimeApiTest.cpp - The public C API ------------------------------===//

#include "runtime/api/kiln.h"

#include "test/unit/ArtifactTestBuilder.h"
#include "test/unit/RuntimeTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

using namespace kiln::test;

extern "C" int kiln_test_run_sample_from_c(const char *path, float *relu,
                                           char *message, size_t size);

namespace {

/// Takes ownership of a status and gives its code and message.
struct StatusResult {
  kiln_code code;
  std::string message;
};
StatusResult take(kiln_status *status) {
  StatusResult result{kiln_status_code(status), kiln_status_message(status)};
  kiln_status_free(status);
  return result;
}

class RuntimeApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    path = dir.file("sample.kiln");
    writeFile(path, sampleArtifact().fileBytes());
    StatusResult loaded = take(kiln_artifact_load(path.c_str(), &artifact));
    ASSERT_EQ(loaded.code, KILN_OK) << loaded.message;
    ASSERT_EQ(take(kiln_session_create(artifact, &session)).code, KILN_OK);
  }
  void TearDown() override {
    kiln_session_free(session);
    kiln_artifact_free(artifact);
  }

  StatusResult bind(const char *feed, kiln_dtype dtype, size_t bytes) {
    std::vector<float> data(bytes / 4 + 1, 1.0f);
    return take(kiln_session_bind_feed(session, "forward", feed, dtype,
                                       data.data(), bytes));
  }

  TemporaryDirectory dir;
  std::string path;
  kiln_artifact *artifact = nullptr;
  kiln_session *session = nullptr;
};

TEST_F(RuntimeApiTest, ListsProgramsFeedsAndFetches) {
  size_t count = 0;
  ASSERT_EQ(take(kiln_artifact_program_count(artifact, &count)).code, KILN_OK);
  ASSERT_EQ(count, 2u);
  const char *name = nullptr;
  ASSERT_EQ(take(kiln_artifact_program_name(artifact, 1, &name)).code, KILN_OK);
  EXPECT_STREQ(name, "forward");
  ASSERT_EQ(
      take(kiln_artifact_binding_count(artifact, "forward", KILN_FETCH, &count))
          .code,
      KILN_OK);
  EXPECT_EQ(count, 3u);
  kiln_tensor_info info;
  ASSERT_EQ(take(kiln_artifact_binding_info(artifact, "forward", KILN_FETCH, 1,
                                            &info))
                .code,
            KILN_OK);
  EXPECT_STREQ(info.name, "out");
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.byte_size, 24u);
  ASSERT_EQ(
      take(kiln_artifact_binding_count(artifact, "init", KILN_FEED, &count))
          .code,
      KILN_OK);
  EXPECT_EQ(count, 0u);
}

TEST_F(RuntimeApiTest, RunsFromC) {
  float relu[8] = {0};
  char message[512] = "";
  ASSERT_EQ(
      kiln_test_run_sample_from_c(path.c_str(), relu, message, sizeof message),
      0)
      << message;
  for (float value : relu)
    EXPECT_EQ(value, 2.0f);
}

TEST_F(RuntimeApiTest, ASessionOutlivesItsArtifact) {
  kiln_artifact_free(artifact);
  artifact = nullptr;
  EXPECT_EQ(take(kiln_session_run(session, "init")).code, KILN_OK);
  ASSERT_EQ(bind("x", KILN_DTYPE_F32, 32).code, KILN_OK);
  ASSERT_EQ(bind("y", KILN_DTYPE_F32, 32).code, KILN_OK);
  EXPECT_EQ(take(kiln_session_run(session, "forward")).code, KILN_OK);
  float out[6];
  EXPECT_EQ(take(kiln_session_read_fetch(session, "forward", "out",
                                         KILN_DTYPE_F32, out, sizeof out))
                .code,
            KILN_OK);
}

// Tests kiln_session_borrow_feed: in an artifact that lists the feeds'
// views and its kernels' outputs, x is read where the caller keeps it (the
// relu fetch follows the caller's bytes); y, which the sample's fetch
// "relu" does not read but whose views are not listed, is copied.
TEST(RuntimeApiBorrowTest, ReadsAFeedWhereTheCallerKeepsIt) {
  ArtifactSpec spec = sampleArtifact();
  ProgramSpec &forward = spec.programs[1];
  std::get<KernelCallSpec>(forward.instructions[0]).outputs = 1;
  forward.feeds[0].views = std::vector<uint32_t>{};
  TemporaryDirectory dir;
  std::string path = dir.file("borrow.kiln");
  writeFile(path, spec.fileBytes());
  kiln_artifact *artifact = nullptr;
  kiln_session *session = nullptr;
  ASSERT_EQ(take(kiln_artifact_load(path.c_str(), &artifact)).code, KILN_OK);
  ASSERT_EQ(take(kiln_session_create(artifact, &session)).code, KILN_OK);
  std::vector<float> x = {1, -2, 3, -4, 5, -6, 7, -8}, y(8, 0.5f), relu(8);
  int borrowed = -1;
  ASSERT_EQ(take(kiln_session_borrow_feed(session, "forward", "x", KILN_DTYPE_F32, x.data(), 32,
                                          &borrowed))
                .code,
            KILN_OK);
  EXPECT_EQ(borrowed, 1);
  ASSERT_EQ(take(kiln_session_borrow_feed(session, "forward", "y", KILN_DTYPE_F32, y.data(), 32,
                                          &borrowed))
                .code,
            KILN_OK);
  EXPECT_EQ(borrowed, 0);
  x[0] = 10; // Read where it is: the run sees the change; y was copied.
  y[0] = 100;
  ASSERT_EQ(take(kiln_session_run(session, "forward")).code, KILN_OK);
  ASSERT_EQ(take(kiln_session_read_fetch(session, "forward", "relu", KILN_DTYPE_F32, relu.data(),
                                         32))
                .code,
            KILN_OK);
  EXPECT_EQ(relu[0], 10.5f);
  EXPECT_EQ(relu[2], 3.5f);
  StatusResult missing = take(kiln_session_borrow_feed(session, "forward", "x", KILN_DTYPE_F32,
                                                       x.data(), 32, nullptr));
  EXPECT_EQ(missing.code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(missing.message, "kiln_session_borrow_feed: out_borrowed is NULL");
  StatusResult size = take(kiln_session_borrow_feed(session, "forward", "x", KILN_DTYPE_F32,
                                                    x.data(), 28, &borrowed));
  EXPECT_EQ(size.code, KILN_INVALID_ARGUMENT);
  kiln_session_free(session);
  kiln_artifact_free(artifact);
}

TEST_F(RuntimeApiTest, LoadFailuresNameTheFile) {
  kiln_artifact *other = nullptr;
  StatusResult missing = take(kiln_artifact_load("/no/such.kiln", &other));
  EXPECT_EQ(missing.code, KILN_INVALID_ARTIFACT);
  EXPECT_EQ(missing.message,
            "/no/such.kiln: error: cannot read: No such file or directory");
  std::vector<uint8_t> bytes = sampleArtifact().fileBytes();
  bytes[40] ^= 0xFF;
  writeFile(dir.file("corrupt.kiln"), bytes);
  StatusResult corrupt =
      take(kiln_artifact_load(dir.file("corrupt.kiln").c_str(), &other));
  EXPECT_EQ(corrupt.code, KILN_INVALID_ARTIFACT);
  EXPECT_NE(corrupt.message.find("corrupt.kiln: error: footer: checksum"),
            std::string::npos);
  EXPECT_EQ(other, nullptr); // Outputs are written only on success.
}

TEST_F(RuntimeApiTest, NullArgumentsAreInvalid) {
  kiln_artifact *other = nullptr;
  size_t count;
  const char *name;
  kiln_tensor_info info;
  kiln_session *newSession;
  float data[8];
  std::pair<kiln_status *, const char *> cases[] = {
      {kiln_artifact_load(nullptr, &other), "kiln_artifact_load: path is NULL"},
      {kiln_artifact_load(path.c_str(), nullptr),
       "kiln_artifact_load: out_artifact is NULL"},
      {kiln_artifact_program_count(nullptr, &count),
       "kiln_artifact_program_count: artifact is NULL"},
      {kiln_artifact_program_count(artifact, nullptr),
       "kiln_artifact_program_count: out_count is NULL"},
      {kiln_artifact_program_name(artifact, 0, nullptr),
       "kiln_artifact_program_name: out_name is NULL"},
      {kiln_artifact_binding_count(artifact, nullptr, KILN_FEED, &count),
       "kiln_artifact_binding_count: program is NULL"},
      {kiln_artifact_binding_info(artifact, "forward", KILN_FEED, 0, nullptr),
       "kiln_artifact_binding_info: out_info is NULL"},
      {kiln_artifact_binding_id_bound(artifact, "forward", 0, nullptr),
       "kiln_artifact_binding_id_bound: out_bound is NULL"},
      {kiln_session_create(nullptr, &newSession),
       "kiln_session_create: artifact is NULL"},
      {kiln_session_bind_feed(session, "forward", "x", KILN_DTYPE_F32, nullptr,
                              32),
       "kiln_session_bind_feed: data is NULL"},
      {kiln_session_run(nullptr, "forward"),
       "kiln_session_run: session is NULL"},
      {kiln_session_read_fetch(session, "forward", nullptr, KILN_DTYPE_F32,
                               data, 24),
       "kiln_session_read_fetch: fetch is NULL"},
  };
  for (auto &[status, message] : cases) {
    StatusResult result = take(status);
    EXPECT_EQ(result.code, KILN_INVALID_ARGUMENT) << message;
    EXPECT_EQ(result.message, message);
  }
  (void)name;
  (void)info;
}

TEST_F(RuntimeApiTest, UnknownNamesAndIndicesAreNotFound) {
  const char *name;
  size_t count;
  kiln_tensor_info info;
  StatusResult result = take(kiln_artifact_program_name(artifact, 2, &name));
  EXPECT_EQ(result.code, KILN_NOT_FOUND);
  EXPECT_EQ(result.message, "no program 2 (2 programs)");
  result =
      take(kiln_artifact_binding_count(artifact, "eval", KILN_FEED, &count));
  EXPECT_EQ(result.code, KILN_NOT_FOUND);
  EXPECT_EQ(result.message, "no program 'eval' (programs: init, forward)");
  result = take(
      kiln_artifact_binding_info(artifact, "forward", KILN_FETCH, 3, &info));
  EXPECT_EQ(result.code, KILN_NOT_FOUND);
  EXPECT_EQ(result.message, "program 'forward' has no fetch 3 (3 fetches)");
  result = take(kiln_session_run(session, "eval"));
  EXPECT_EQ(result.code, KILN_NOT_FOUND);
  result = bind("z", KILN_DTYPE_F32, 32);
  EXPECT_EQ(result.code, KILN_NOT_FOUND);
  EXPECT_EQ(result.message, "program 'forward' has no feed 'z' (feeds: x, y)");
}

TEST_F(RuntimeApiTest, WrongDTypesAndSizesAreInvalid) {
  StatusResult result = bind("x", KILN_DTYPE_I32, 32);
  EXPECT_EQ(result.code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(result.message, "program 'forward': feed 'x' is f32 [2, 4] (32 "
                            "bytes); got i32 data of 32 bytes");
  EXPECT_EQ(bind("x", KILN_DTYPE_F32, 31).code, KILN_INVALID_ARGUMENT);
  result = bind("x", static_cast<kiln_dtype>(42), 32);
  EXPECT_EQ(result.code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(result.message, "kiln_session_bind_feed: unknown dtype 42");
  float out[6];
  result = take(kiln_session_read_fetch(session, "forward", "out",
                                        static_cast<kiln_dtype>(-1), out, 24));
  EXPECT_EQ(result.message, "kiln_session_read_fetch: unknown dtype -1");
}

TEST_F(RuntimeApiTest, UnboundFeedsAndUnreadableFetchesFailPreconditions) {
  StatusResult result = take(kiln_session_run(session, "forward"));
  EXPECT_EQ(result.code, KILN_FAILED_PRECONDITION);
  EXPECT_EQ(result.message, "program 'forward': feed 'x' is not bound");
  float out[6];
  result = take(kiln_session_read_fetch(session, "forward", "out",
                                        KILN_DTYPE_F32, out, sizeof out));
  EXPECT_EQ(result.code, KILN_FAILED_PRECONDITION);
}

TEST_F(RuntimeApiTest, ReadsAndWritesVariables) {
  size_t count = 0;
  ASSERT_EQ(take(kiln_artifact_variable_count(artifact, &count)).code, KILN_OK);
  ASSERT_EQ(count, 1u);
  kiln_tensor_info info;
  ASSERT_EQ(take(kiln_artifact_variable_info(artifact, 0, &info)).code, KILN_OK);
  EXPECT_STREQ(info.name, "w");
  ASSERT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 4);
  EXPECT_EQ(info.byte_size, 48u);
  EXPECT_EQ(take(kiln_artifact_variable_info(artifact, 1, &info)).code,
            KILN_NOT_FOUND);

  ASSERT_EQ(take(kiln_session_run(session, "init")).code, KILN_OK);
  std::vector<float> initial(12, 0.0f), written(12), read(12);
  ASSERT_EQ(take(kiln_session_read_variable(session, "w", KILN_DTYPE_F32,
                                            initial.data(), 48))
                .code,
            KILN_OK);
  // Glorot uniform of a [4, 3] matrix: nonzero, within +-sqrt(6/7).
  for (float v : initial) {
    EXPECT_NE(v, 0.0f);
    EXPECT_LE(std::fabs(v), std::sqrt(6.0f / 7.0f));
  }
  for (size_t i = 0; i < written.size(); ++i)
    written[i] = static_cast<float>(i) - 5.5f;
  ASSERT_EQ(take(kiln_session_write_variable(session, "w", KILN_DTYPE_F32,
                                             written.data(), 48))
                .code,
            KILN_OK);
  ASSERT_EQ(take(kiln_session_read_variable(session, "w", KILN_DTYPE_F32,
                                            read.data(), 48))
                .code,
            KILN_OK);
  EXPECT_EQ(read, written);

  StatusResult unknown =
      take(kiln_session_read_variable(session, "v", KILN_DTYPE_F32, read.data(), 48));
  EXPECT_EQ(unknown.code, KILN_NOT_FOUND);
  EXPECT_EQ(unknown.message, "no variable 'v'");
  StatusResult wrongSize =
      take(kiln_session_write_variable(session, "w", KILN_DTYPE_F32, read.data(), 44));
  EXPECT_EQ(wrongSize.code, KILN_INVALID_ARGUMENT);
  EXPECT_NE(wrongSize.message.find("48 bytes"), std::string::npos) << wrongSize.message;
  EXPECT_EQ(take(kiln_session_read_variable(session, "w", KILN_DTYPE_I32,
                                            read.data(), 48))
                .code,
            KILN_INVALID_ARGUMENT);
}

TEST_F(RuntimeApiTest, FillingTheArenaDropsBindingsAndPoisonsFetches) {
  ASSERT_EQ(take(kiln_session_run(session, "init")).code, KILN_OK);
  ASSERT_EQ(bind("x", KILN_DTYPE_F32, 32).code, KILN_OK);
  ASSERT_EQ(take(kiln_session_fill_arena(session, 0xFF)).code, KILN_OK);
  // The binding went with the arena's old contents.
  EXPECT_EQ(take(kiln_session_run(session, "forward")).code,
            KILN_FAILED_PRECONDITION);
  EXPECT_EQ(take(kiln_session_fill_arena(session, 256)).code,
            KILN_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_session_fill_arena(nullptr, 0)).code,
            KILN_INVALID_ARGUMENT);
}

TEST(RuntimeApiStatusTest, NullStatusIsSuccess) {
  EXPECT_EQ(kiln_status_code(nullptr), KILN_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "");
  kiln_status_free(nullptr);
  kiln_artifact_free(nullptr);
  kiln_session_free(nullptr);
}

} // namespace
