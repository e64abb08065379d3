/*===- RuntimeApiFromC.c - The C API, called from C ---------------*- C -*-===*/
/*
 * Compiled as C, so the header is checked to be C; RuntimeApiTest.cpp calls
 * this with the sample artifact.
 */

#include "runtime/api/kiln.h"

#include <stdio.h>
#include <string.h>

/* Loads `path`, runs init and forward with x = y = 1 and reads fetch "relu"
   into `relu` (8 floats). Returns 0, or 1 with the failure in `message`. */
int kiln_test_run_sample_from_c(const char *path, float *relu, char *message,
                                size_t size);

static int failed(kiln_status *status, char *message, size_t size) {
  if (!status)
    return 0;
  snprintf(message, size, "%s", kiln_status_message(status));
  kiln_status_free(status);
  return 1;
}

int kiln_test_run_sample_from_c(const char *path, float *relu, char *message,
                                size_t size) {
  kiln_artifact *artifact = NULL;
  kiln_session *session = NULL;
  float ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  kiln_tensor_info info;
  int result = 1;
  if (failed(kiln_artifact_load(path, &artifact), message, size))
    return 1;
  if (failed(
          kiln_artifact_binding_info(artifact, "forward", KILN_FEED, 0, &info),
          message, size))
    goto done;
  if (strcmp(info.name, "x") != 0 || info.byte_size != sizeof ones) {
    snprintf(message, size, "unexpected feed %s", info.name);
    goto done;
  }
  if (failed(kiln_session_create(artifact, &session), message, size) ||
      failed(kiln_session_run(session, "init"), message, size) ||
      failed(kiln_session_bind_feed(session, "forward", "x", KILN_DTYPE_F32,
                                    ones, sizeof ones),
             message, size) ||
      failed(kiln_session_bind_feed(session, "forward", "y", KILN_DTYPE_F32,
                                    ones, sizeof ones),
             message, size) ||
      failed(kiln_session_run(session, "forward"), message, size) ||
      failed(kiln_session_read_fetch(session, "forward", "relu", KILN_DTYPE_F32,
                                     relu, 8 * sizeof(float)),
             message, size))
    goto done;
  result = 0;
done:
  kiln_session_free(session);
  kiln_artifact_free(artifact);
  return result;
}
