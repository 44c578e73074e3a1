/* A Sidecore store plugin that writes every block of every iteration as a NumPy .npy file,
 *
 *   <FilesPath>/<simulation>_It<iteration>_<variable>_P<source>_B<block>.npy
 *
 * where <variable> is the variable's full name with '/' replaced by '.'. Each file holds the
 * block as it was written (ghost zones included), in C order, with the element type of its
 * layout: numpy.load() reads it back. One option, FilesPath (default: the working directory),
 * created if missing. Writers write only the blocks they hold, without communicating.
 *
 * The .npy format, version 1.0: the magic string "\x93NUMPY", the version bytes 1 and 0, the
 * header length as a little-endian 16-bit integer, then the header, a Python dict literal
 * padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes,
 * then the data. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <sidecore/plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct npy_store {
  char* directory; /* FilesPath ending in '/', or "" */
  char* simulation;
} npy_store;

static char* copy_string(const char* text) {
  char* copy = (char*)malloc(strlen(text) + 1);
  if (copy != NULL) strcpy(copy, text);
  return copy;
}

/* mkdir -p; 0 on success, else an errno value. */
static int make_directories(const char* path) {
  char* partial = copy_string(path);
  struct stat info;
  size_t i;
  int error = 0;
  if (partial == NULL) return ENOMEM;
  for (i = 1; partial[i] != '\0' && error == 0; ++i) {
    if (partial[i] != '/') continue;
    partial[i] = '\0';
    if (mkdir(partial, 0777) != 0 && errno != EEXIST) error = errno;
    partial[i] = '/';
  }
  if (error == 0 && mkdir(partial, 0777) != 0 && errno != EEXIST) error = errno;
  if (error == 0 && (stat(partial, &info) != 0 || !S_ISDIR(info.st_mode)))
    error = errno != 0 ? errno : ENOTDIR;
  free(partial);
  return error;
}

static void npy_destroy(void* store) {
  npy_store* self = (npy_store*)store;
  if (self == NULL) return;
  free(self->directory);
  free(self->simulation);
  free(self);
}

static int npy_create(const sidecore_store_config* config, void** store, char* message,
                      size_t message_size) {
  const char* files_path = "";
  uint64_t i;
  size_t length;
  npy_store* self;
  for (i = 0; i < config->option_count; ++i) {
    if (strcmp(config->option_keys[i], "FilesPath") == 0) {
      files_path = config->option_values[i];
    } else {
      snprintf(message, message_size,
               "unknown option \"%s\"; the npy store's only option is "
               "FilesPath",
               config->option_keys[i]);
      return SIDECORE_PLUGIN_CONFIG_ERROR;
    }
  }
  if (files_path[0] != '\0') {
    int error = make_directories(files_path);
    if (error != 0) {
      snprintf(message, message_size, "cannot create FilesPath \"%s\": %s", files_path,
               strerror(error));
      return SIDECORE_PLUGIN_ERROR;
    }
  }
  self = (npy_store*)calloc(1, sizeof *self);
  length = strlen(files_path);
  if (self != NULL) {
    self->directory = (char*)malloc(length + 2);
    self->simulation = copy_string(config->simulation);
  }
  if (self == NULL || self->directory == NULL || self->simulation == NULL) {
    npy_destroy(self);
    snprintf(message, message_size, "out of memory");
    return SIDECORE_PLUGIN_ERROR;
  }
  strcpy(self->directory, files_path);
  if (length > 0 && files_path[length - 1] != '/') strcat(self->directory, "/");
  *store = self;
  return SIDECORE_PLUGIN_OK;
}

/* The dtype string of an element type in this machine's byte order; NULL if unknown. */
static const char* descr(int32_t type) {
  const uint16_t one = 1;
  const int little = *(const unsigned char*)&one == 1;
  switch (type) {
    case SIDECORE_TYPE_INT8:
      return "|i1";
    case SIDECORE_TYPE_INT16:
      return little ? "<i2" : ">i2";
    case SIDECORE_TYPE_INT32:
      return little ? "<i4" : ">i4";
    case SIDECORE_TYPE_INT64:
      return little ? "<i8" : ">i8";
    case SIDECORE_TYPE_FLOAT32:
      return little ? "<f4" : ">f4";
    case SIDECORE_TYPE_FLOAT64:
      return little ? "<f8" : ">f8";
    default:
      return NULL;
  }
}

/* The header after the magic and version: its length (2 bytes, little endian) and the dict.
 * Returns the bytes written into out (at most 4096), 0 if the type is unknown. */
static size_t npy_header(const sidecore_block* block, unsigned char* out) {
  char* dict = (char*)out + 2;
  const char* type = descr(block->type);
  size_t length, padded;
  int32_t d;
  if (type == NULL) return 0;
  length = (size_t)sprintf(dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", type);
  for (d = 0; d < block->ndims; ++d)
    length += (size_t)sprintf(dict + length, d == 0 ? "%lld" : ", %lld", (long long)block->dims[d]);
  length += (size_t)sprintf(dict + length, "%s), }", block->ndims == 1 ? "," : "");
  /* 6 magic + 2 version + 2 length + dict + '\n', rounded up to 64 bytes. */
  padded = (10 + length + 1 + 63) / 64 * 64 - 10;
  memset(dict + length, ' ', padded - length - 1);
  dict[padded - 1] = '\n';
  out[0] = (unsigned char)(padded & 0xff);
  out[1] = (unsigned char)(padded >> 8);
  return 2 + padded;
}

static int write_block(const npy_store* self, const sidecore_block* block, char* message,
                       size_t message_size) {
  static const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  unsigned char header[4096];
  const size_t header_size = npy_header(block, header);
  size_t bytes = sidecore_element_size(block->type), i;
  char* path;
  char* name;
  int length, ok;
  FILE* file;
  int32_t d;
  if (header_size == 0) {
    snprintf(message, message_size, "variable \"%s\": unknown element type %d", block->variable,
             (int)block->type);
    return SIDECORE_PLUGIN_ERROR;
  }
  for (d = 0; d < block->ndims; ++d) bytes *= (size_t)block->dims[d];
  name = copy_string(block->variable);
  if (name == NULL) return SIDECORE_PLUGIN_ERROR;
  for (i = 0; name[i] != '\0'; ++i)
    if (name[i] == '/') name[i] = '.';
  length = snprintf(NULL, 0, "%s%s_It%d_%s_P%d_B%d.npy", self->directory, self->simulation,
                    (int)block->iteration, name, (int)block->source, (int)block->block);
  path = (char*)malloc((size_t)length + 1);
  if (path == NULL) {
    free(name);
    return SIDECORE_PLUGIN_ERROR;
  }
  sprintf(path, "%s%s_It%d_%s_P%d_B%d.npy", self->directory, self->simulation,
          (int)block->iteration, name, (int)block->source, (int)block->block);
  free(name);
  file = fopen(path, "wb");
  if (file == NULL) {
    snprintf(message, message_size, "cannot create \"%s\": %s", path, strerror(errno));
    free(path);
    return SIDECORE_PLUGIN_ERROR;
  }
  ok = fwrite(magic, 1, sizeof magic, file) == sizeof magic;
  ok = ok && fwrite(header, 1, header_size, file) == header_size;
  ok = ok && fwrite(block->data, 1, bytes, file) == bytes;
  if (!ok) snprintf(message, message_size, "cannot write \"%s\": %s", path, strerror(errno));
  if (fclose(file) != 0 && ok) {
    snprintf(message, message_size, "cannot close \"%s\": %s", path, strerror(errno));
    ok = 0;
  }
  if (!ok) remove(path); /* a file that exists is complete */
  free(path);
  return ok ? SIDECORE_PLUGIN_OK : SIDECORE_PLUGIN_ERROR;
}

static int npy_write_iteration(void* store, const sidecore_iteration* iteration, char* message,
                               size_t message_size) {
  const npy_store* self = (const npy_store*)store;
  uint64_t i;
  for (i = 0; i < iteration->block_count; ++i) {
    int code = write_block(self, &iteration->blocks[i], message, message_size);
    if (code != SIDECORE_PLUGIN_OK) return code;
  }
  return SIDECORE_PLUGIN_OK;
}

static const sidecore_store_descriptor npy_descriptor = {
    SIDECORE_PLUGIN_ABI_VERSION, "npy", npy_create, npy_write_iteration, NULL, npy_destroy};

SIDECORE_PLUGIN_EXPORT const sidecore_store_descriptor* sidecore_store_plugin(void) {
  return &npy_descriptor;
}
