/*===- kiln.h - The kiln runtime's C API --------------------------*- C -*-===*/
/*
 * Loads a compiled artifact (.kiln), binds feeds, runs programs and reads
 * fetches. Callable from C, C++ and anything with a C FFI (Python's ctypes).
 *
 * Ownership
 *  - Every function that can fail returns a kiln_status *: NULL on success,
 *    otherwise a status the caller owns and releases with kiln_status_free.
 *  - Outputs come last, named out_*, and are written only on success.
 *  - kiln_artifact_load gives an artifact, kiln_session_create a session; the
 *    caller frees them with kiln_artifact_free and kiln_session_free (NULL is
 *    accepted). A session keeps what it needs of its artifact alive, so the
 *    two may be freed in any order.
 *  - Names and shapes the artifact queries return point into the artifact
 *    handle and stay valid until it is freed.
 *  - Feed data is copied in by kiln_session_bind_feed; fetch data is copied
 *    out by kiln_session_read_fetch. The runtime keeps no caller pointer,
 *    except the bytes kiln_session_borrow_feed reads where they are, until
 *    the next run.
 *
 * Threading
 *  - An artifact is immutable once loaded: any number of threads may query
 *    it and create sessions from it at the same time.
 *  - A session is used by one thread at a time; distinct sessions are
 *    independent and may run concurrently.
 *  - Status objects belong to whoever received them.
 *
 * Feeds and fetches: every feed of a program is bound before each run of it
 * (a run, of any program, consumes all bindings, because the memory plan may
 * reuse a feed's bytes). Fetches of the program that ran last are readable
 * until the next bind or run. Variables keep their values across runs; run
 * the artifact's "init" program to initialize them.
 *
 * An artifact holds native code: load only artifacts you trust.
 */

#ifndef KILN_RUNTIME_API_KILN_H
#define KILN_RUNTIME_API_KILN_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kiln_status kiln_status;
typedef struct kiln_artifact kiln_artifact;
typedef struct kiln_session kiln_session;

/* What kind of failure a status reports. */
typedef enum kiln_code {
  KILN_OK = 0,                  /* Only from kiln_status_code(NULL). */
  KILN_INVALID_ARGUMENT = 1,    /* A NULL argument, a wrong dtype or size. */
  KILN_NOT_FOUND = 2,           /* No such program, feed, fetch or index. */
  KILN_FAILED_PRECONDITION = 3, /* A feed not bound, a fetch not readable. */
  KILN_INVALID_ARTIFACT = 4,    /* The artifact cannot be read, fails a check,
                                   or cannot run on this machine. */
  KILN_RESOURCE_EXHAUSTED = 5,  /* Out of memory. */
  KILN_INTERNAL = 6             /* A library the runtime calls failed. */
} kiln_code;

/* Element types; the values are those of the artifact schema. Bools (I1)
   take one byte, 0 or 1. */
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_BF16 = 2,
  KILN_DTYPE_I32 = 3,
  KILN_DTYPE_I64 = 4,
  KILN_DTYPE_I1 = 5
} kiln_dtype;

typedef enum kiln_binding_kind {
  KILN_FEED = 0, /* An input the caller binds before a run. */
  KILN_FETCH = 1 /* An output the caller may read after a run. */
} kiln_binding_kind;

/* A feed or fetch. Pointers are valid until the artifact is freed. */
typedef struct kiln_tensor_info {
  const char *name;
  kiln_dtype dtype;
  size_t rank;
  const int64_t *shape; /* rank dimensions, row-major. */
  size_t byte_size;     /* Element count times element size. */
} kiln_tensor_info;

/* --- Status ------------------------------------------------------------- */

/* The code of `status`; KILN_OK for NULL. */
KILN_API kiln_code kiln_status_code(const kiln_status *status);
/* One line naming the file, program, feed or field; "" for NULL. Valid until
   the status is freed. */
KILN_API const char *kiln_status_message(const kiln_status *status);
KILN_API void kiln_status_free(kiln_status *status);

/* --- Artifact ----------------------------------------------------------- */

/* Reads and verifies the artifact at `path` and places its kernels. */
KILN_API kiln_status *kiln_artifact_load(const char *path,
                                         kiln_artifact **out_artifact);
KILN_API void kiln_artifact_free(kiln_artifact *artifact);

KILN_API kiln_status *kiln_artifact_program_count(const kiln_artifact *artifact,
                                                  size_t *out_count);
/* The name of program `index` (0 <= index < count). */
KILN_API kiln_status *kiln_artifact_program_name(const kiln_artifact *artifact,
                                                 size_t index,
                                                 const char **out_name);
/* The number of feeds or fetches of `program`. */
KILN_API kiln_status *kiln_artifact_binding_count(const kiln_artifact *artifact,
                                                  const char *program,
                                                  kiln_binding_kind kind,
                                                  size_t *out_count);
/* Feed or fetch `index` of `program`. */
KILN_API kiln_status *kiln_artifact_binding_info(const kiln_artifact *artifact,
                                                 const char *program,
                                                 kiln_binding_kind kind,
                                                 size_t index,
                                                 kiln_tensor_info *out_info);
/* The exclusive bound of the ids feed `index` of `program` holds (the rows
   of the table it indexes, the classes of a loss's labels): binding values
   outside [0, bound) fails. 0 for a feed that indexes nothing. */
KILN_API kiln_status *kiln_artifact_binding_id_bound(const kiln_artifact *artifact,
                                                     const char *program, size_t index,
                                                     int64_t *out_bound);

/* The number of variables (model parameters and state). */
KILN_API kiln_status *kiln_artifact_variable_count(const kiln_artifact *artifact,
                                                   size_t *out_count);
/* Variable `index` (0 <= index < count): its name, dtype and shape. */
KILN_API kiln_status *kiln_artifact_variable_info(const kiln_artifact *artifact,
                                                  size_t index,
                                                  kiln_tensor_info *out_info);

/* --- Session ------------------------------------------------------------ */

/* Allocates the artifact's memory (arena, state, constants) once. */
KILN_API kiln_status *kiln_session_create(const kiln_artifact *artifact,
                                          kiln_session **out_session);
KILN_API void kiln_session_free(kiln_session *session);

/* Copies `byte_size` bytes of `dtype` at `data` into feed `feed` of
   `program`; dtype and byte size must be the feed's, and a feed of ids must
   hold ids in [0, its id bound) (kiln_artifact_binding_id_bound; the labels
   of a loss with an ignore_index may also hold that label):
   KILN_INVALID_ARGUMENT names the first one outside, as PyTorch and
   TensorFlow refuse an index past a table's end, and the feed is then
   unbound. */
KILN_API kiln_status *kiln_session_bind_feed(kiln_session *session,
                                             const char *program,
                                             const char *feed, kiln_dtype dtype,
                                             const void *data,
                                             size_t byte_size);
/* As kiln_session_bind_feed, but the program reads the bytes at `data`
   where they are, with no copy, when every instruction reading the feed can
   (*out_borrowed = 1); the bytes must then stay valid and unchanged until
   `program` has run, and any later binding of the feed puts it back in its
   own buffer. Where an instruction cannot (a convolution, a 16-bit product,
   a feed the program also fetches, an artifact from an older kilnc), the
   bytes are copied as kiln_session_bind_feed copies them (*out_borrowed =
   0). */
KILN_API kiln_status *kiln_session_borrow_feed(kiln_session *session,
                                               const char *program,
                                               const char *feed, kiln_dtype dtype,
                                               const void *data,
                                               size_t byte_size,
                                               int *out_borrowed);
/* Runs `program`; every one of its feeds must be bound. */
KILN_API kiln_status *kiln_session_run(kiln_session *session,
                                       const char *program);
/* Copies fetch `fetch` of `program`, which ran last, into the `byte_size`
   bytes at `out_data`; dtype and byte size must be the fetch's. */
KILN_API kiln_status *kiln_session_read_fetch(kiln_session *session,
                                              const char *program,
                                              const char *fetch,
                                              kiln_dtype dtype, void *out_data,
                                              size_t byte_size);

/* Copies the current value of variable `variable` into the `byte_size` bytes
   at `out_data`; dtype and byte size must be the variable's. */
KILN_API kiln_status *kiln_session_read_variable(kiln_session *session,
                                                 const char *variable,
                                                 kiln_dtype dtype,
                                                 void *out_data,
                                                 size_t byte_size);
/* Overwrites variable `variable` with `byte_size` bytes of `dtype`. */
KILN_API kiln_status *kiln_session_write_variable(kiln_session *session,
                                                  const char *variable,
                                                  kiln_dtype dtype,
                                                  const void *data,
                                                  size_t byte_size);
/* Fills the session's arena (intermediates, feeds and fetches; not the
   variables) with `byte`, 0 to 255. Tests poison it with 255, NaN in every
   float type, so that an element a program fails to write shows in its
   fetch. Bindings are lost; bind feeds afterwards. */
KILN_API kiln_status *kiln_session_fill_arena(kiln_session *session, int byte);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_API_KILN_H */
