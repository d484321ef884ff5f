// libparasim_codec.so's table (data/codec.hpp): libjpeg-turbo's libjpeg API and libarchive, as the
// real loader and `parasim data synth` use them. Compiled into the plugin only (cli/CMakeLists.txt).
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>

#include "data/codec.hpp"

namespace {

// libjpeg reports a fatal error through error_exit, which by default ends the process: it jumps back
// here instead, with the message kept.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_no_output(j_common_ptr) {}

// The calls between setjmp and a longjmp hold no object with a destructor: the output buffer is
// sized by the caller once the header is read (decode_header), then filled here.
bool decompress_into(jpeg_decompress_struct& cinfo, JpegError& err, std::uint8_t* out, int row_bytes) {
  if (setjmp(err.jump)) return false;
  jpeg_start_decompress(&cinfo);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out + static_cast<std::size_t>(cinfo.output_scanline) * static_cast<std::size_t>(row_bytes);
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  return true;
}

bool decode_header(jpeg_decompress_struct& cinfo, JpegError& err, const unsigned char* data, std::size_t size) {
  if (setjmp(err.jump)) return false;
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_calc_output_dimensions(&cinfo);
  return true;
}

bool decode_jpeg(const unsigned char* data, std::size_t size, std::vector<std::uint8_t>& rgb, int& width, int& height, std::string& error) {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.output_message = jpeg_no_output;
  bool ok = decode_header(cinfo, err, data, size);
  if (ok) {
    width = static_cast<int>(cinfo.output_width);
    height = static_cast<int>(cinfo.output_height);
    rgb.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3);
    ok = decompress_into(cinfo, err, rgb.data(), width * 3);
  }
  if (!ok) error = std::string("not a JPEG libjpeg-turbo can decode: ") + err.message;
  jpeg_destroy_decompress(&cinfo);
  return ok;
}

bool compress_from(jpeg_compress_struct& cinfo, JpegError& err, const std::uint8_t* rgb, int width, int height, int quality,
                   unsigned char** buffer, unsigned long* size) {
  if (setjmp(err.jump)) return false;
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, buffer, size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    auto* row = const_cast<JSAMPROW>(rgb + static_cast<std::size_t>(cinfo.next_scanline) * static_cast<std::size_t>(width) * 3);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  return true;
}

bool encode_jpeg(const std::uint8_t* rgb, int width, int height, int quality, std::vector<unsigned char>& out, std::string& error) {
  jpeg_compress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.output_message = jpeg_no_output;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const bool ok = compress_from(cinfo, err, rgb, width, height, quality, &buffer, &size);
  if (ok) out.assign(buffer, buffer + size);
  else error = std::string("libjpeg-turbo could not encode: ") + err.message;
  jpeg_destroy_compress(&cinfo);
  std::free(buffer);
  return ok;
}

// A ustar header's size field: octal digits, NUL- or space-terminated (POSIX pax, "ustar Interchange
// Format").
std::int64_t octal_field(const char* p, std::size_t n) {
  std::int64_t v = 0;
  for (std::size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; ++i) v = v * 8 + (p[i] - '0');
  return v;
}

bool index_tar(const char* path, std::vector<parasim::data::TarMember>& members, std::string& error) {
  members.clear();
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
    error = std::string("cannot read it as a tar file: ") + archive_error_string(a);
    archive_read_free(a);
    return false;
  }
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0;
  if (!ok) error = std::string("cannot open it: ") + std::strerror(errno);
  archive_entry* entry = nullptr;
  int r = ARCHIVE_OK;
  while (ok && (r = archive_read_next_header(a, &entry)) == ARCHIVE_OK) {
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const std::int64_t at = archive_read_header_position(a);
    const std::string name = archive_entry_pathname(entry);
    const std::int64_t size = archive_entry_size(entry);
    // The member's data follows its own 512-byte header: checked against the header's bytes, so a
    // member behind a long-name or extended header (whose position is another header's) is refused
    // rather than read from the wrong place.
    char header[512];
    const bool plain = ::pread(fd, header, sizeof header, at) == static_cast<ssize_t>(sizeof header) &&
                       std::strncmp(header, name.c_str(), 100) == 0 && octal_field(header + 124, 12) == size;
    if (!plain) {
      error = "member \"" + name + "\" (its header at byte " + std::to_string(at) +
              "): not a plain ustar member (long names and extended headers are not read); expected the shards parasim data synth writes";
      ok = false;
      break;
    }
    members.push_back({name, at + 512, size});
  }
  if (ok && r != ARCHIVE_EOF) {
    error = std::string("a damaged tar file: ") + archive_error_string(a) + " after " + std::to_string(members.size()) + " members";
    ok = false;
  }
  if (fd >= 0) ::close(fd);
  archive_read_free(a);
  return ok;
}

bool write_tar(const char* path, const parasim::data::TarInput* inputs, std::size_t count, std::string& error) {
  archive* a = archive_write_new();
  archive_write_set_format_ustar(a);
  bool ok = archive_write_open_filename(a, path) == ARCHIVE_OK;
  archive_entry* entry = archive_entry_new();
  for (std::size_t i = 0; ok && i < count; ++i) {
    archive_entry_clear(entry);
    archive_entry_set_pathname(entry, inputs[i].name.c_str());
    archive_entry_set_size(entry, static_cast<la_int64_t>(inputs[i].size));
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_mtime(entry, 0, 0);  // the same dataset, byte for byte, from the same seed
    ok = archive_write_header(a, entry) == ARCHIVE_OK &&
         archive_write_data(a, inputs[i].data, inputs[i].size) == static_cast<la_ssize_t>(inputs[i].size);
  }
  if (ok) ok = archive_write_close(a) == ARCHIVE_OK;
  if (!ok) error = std::string("cannot write the tar file: ") + (archive_error_string(a) ? archive_error_string(a) : "unknown error");
  archive_entry_free(entry);
  archive_write_free(a);
  return ok;
}

const char* versions() {
  static const std::string text = "libjpeg-turbo " + std::to_string(LIBJPEG_TURBO_VERSION_NUMBER / 1000000) + "." +
                                  std::to_string(LIBJPEG_TURBO_VERSION_NUMBER / 1000 % 1000) + "." +
                                  std::to_string(LIBJPEG_TURBO_VERSION_NUMBER % 1000) + " (libjpeg API " + std::to_string(JPEG_LIB_VERSION) +
                                  "), " + archive_version_string();
  return text.c_str();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const parasim::data::CodecPlugin* parasim_codec_plugin() {
  static const parasim::data::CodecPlugin table{parasim::data::kCodecPluginVersion, &decode_jpeg, &encode_jpeg, &index_tar, &write_tar, &versions};
  return &table;
}
