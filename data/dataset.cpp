#include "data/dataset.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "common/error.hpp"
#include "common/json_reader.hpp"

namespace parasim::data {
namespace {

namespace fs = std::filesystem;

/// A CIFAR record's header: a coarse and a fine label byte.
constexpr std::int64_t kCifarLabelBytes = 2;
/// A label member's text is a class index: a few digits.
constexpr std::int64_t kMaxLabelBytes = 32;

InputError file_error(const std::string& file, const std::string& message) { return InputError(file, 0, 0, "", message); }

std::vector<std::string> files_with(const std::string& dir, const std::string& ext) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ext) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// The file open for reading, closed with its last owner.
std::shared_ptr<int> open_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw file_error(path, std::string("cannot open it: ") + std::strerror(errno));
  return std::shared_ptr<int>(new int(fd), [](int* f) {
    ::close(*f);
    delete f;
  });
}

/// Reads exactly `size` bytes at `offset` of the open file `fd`; false when the file ends first.
bool read_at(int fd, std::int64_t offset, std::int64_t size, unsigned char* out, std::string& why) {
  std::int64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, static_cast<std::size_t>(size - done), offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why = n < 0 ? std::strerror(errno) : "the file ends at byte " + std::to_string(offset + done) + ", " + std::to_string(size - done) + " bytes early";
      return false;
    }
    done += n;
  }
  return true;
}

DatasetManifest read_manifest(const std::string& path) {
  const JsonDocument doc = JsonDocument::read_file(path);
  ObjectReader r(doc, "");
  DatasetManifest m;
  m.format = r.enum_string("format", {"jpeg-tar", "cifar-bin"}) == "jpeg-tar" ? DatasetFormat::JpegTar : DatasetFormat::CifarBin;
  m.samples = r.integer("samples", 1);
  m.image_size = r.integer_or("image_size", 1, 32);
  m.classes = r.integer_or("classes", 1, 100);
  r.finish();
  return m;
}

}  // namespace

std::string_view to_string(DatasetFormat f) { return f == DatasetFormat::JpegTar ? "jpeg-tar" : "cifar-bin"; }

Dataset Dataset::open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw file_error(dir, "no such dataset folder; expected a folder of CIFAR .bin files or .tar shards");
  Dataset d;
  d.dir_ = dir;
  const std::string manifest_path = (fs::path(dir) / "dataset.json").string();
  const bool has_manifest = fs::exists(manifest_path, ec);
  const std::vector<std::string> bins = files_with(dir, ".bin"), tars = files_with(dir, ".tar");
  if (has_manifest) d.manifest_ = read_manifest(manifest_path);
  else if (!tars.empty() && bins.empty()) d.manifest_.format = DatasetFormat::JpegTar;
  else if (bins.empty()) throw file_error(dir, "no dataset files in the folder; expected CIFAR .bin files or .tar shards");
  const auto& paths = d.manifest_.format == DatasetFormat::JpegTar ? tars : bins;
  if (paths.empty())
    throw file_error(dir, std::string("no ") + (d.manifest_.format == DatasetFormat::JpegTar ? ".tar shards" : ".bin files") +
                              " in the folder, which its dataset.json says is " + std::string(to_string(d.manifest_.format)));

  std::int64_t samples = 0;
  if (d.manifest_.format == DatasetFormat::CifarBin) {
    d.record_bytes_ = kCifarLabelBytes + 3 * d.manifest_.image_size * d.manifest_.image_size;
    for (const std::string& p : paths) {
      const auto bytes = static_cast<std::int64_t>(fs::file_size(p, ec));
      if (ec) throw file_error(p, "cannot read its size: " + ec.message());
      if (bytes % d.record_bytes_ != 0)
        throw file_error(p, "truncated: " + std::to_string(bytes) + " bytes is not a whole number of " + std::to_string(d.record_bytes_) +
                                "-byte records (" + std::to_string(bytes / d.record_bytes_) + " and " + std::to_string(bytes % d.record_bytes_) +
                                " bytes)");
      d.files_.push_back({p, samples, open_file(p)});
      samples += bytes / d.record_bytes_;
    }
  } else {
    const CodecPlugin& codec = codec_plugin();
    for (std::size_t f = 0; f < paths.size(); ++f) {
      std::vector<TarMember> members;
      std::string why;
      if (!codec.index_tar(paths[f].c_str(), members, why)) throw file_error(paths[f], why);
      d.files_.push_back({paths[f], samples, open_file(paths[f])});
      // A sample is a KEY.jpg and its KEY.cls (WebDataset: the key is the name up to its first dot).
      std::map<std::string, const TarMember*> labels;
      for (const TarMember& m : members)
        if (m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".cls") == 0) labels[m.name.substr(0, m.name.size() - 4)] = &m;
      for (const TarMember& m : members) {
        if (m.name.size() <= 4 || m.name.compare(m.name.size() - 4, 4, ".jpg") != 0) continue;
        const std::string key = m.name.substr(0, m.name.size() - 4);
        const auto label = labels.find(key);
        if (label == labels.end())
          throw file_error(paths[f], "sample " + std::to_string(samples) + " (member " + m.name + ") has no label: expected a member " + key + ".cls");
        if (label->second->size > kMaxLabelBytes)
          throw file_error(paths[f], "member " + label->second->name + " holds " + std::to_string(label->second->size) +
                                         " bytes; expected a class index (at most " + std::to_string(kMaxLabelBytes) + ")");
        d.members_.push_back({f, m.offset, m.size, label->second->offset, label->second->size, m.name});
        ++samples;
      }
    }
  }
  if (samples == 0) throw file_error(dir, "the dataset holds no samples");
  if (has_manifest && d.manifest_.samples != samples)
    throw file_error(manifest_path, "says " + std::to_string(d.manifest_.samples) + " samples but the files hold " + std::to_string(samples) +
                                        " (a file missing or truncated?)");
  d.manifest_.samples = samples;
  return d;
}

double Dataset::stored_bytes(std::int64_t i) const {
  if (manifest_.format == DatasetFormat::CifarBin) return static_cast<double>(record_bytes_);
  const Member& m = members_[static_cast<std::size_t>(i)];
  return static_cast<double>(m.size + m.label_size);
}

std::string Dataset::where(std::int64_t i) const {
  if (manifest_.format == DatasetFormat::JpegTar) {
    const Member& m = members_[static_cast<std::size_t>(i)];
    return files_[m.file].path + ", member " + m.name;
  }
  const auto f = std::upper_bound(files_.begin(), files_.end(), i, [](std::int64_t v, const File& file) { return v < file.first; }) - 1;
  return f->path + ", record " + std::to_string(i - f->first);
}

void Dataset::read(std::int64_t i, RawSample& out) const {
  PARASIM_CHECK(i >= 0 && i < size(), "a sample of the dataset");
  std::string why;
  if (manifest_.format == DatasetFormat::CifarBin) {
    const auto f = std::upper_bound(files_.begin(), files_.end(), i, [](std::int64_t v, const File& file) { return v < file.first; }) - 1;
    unsigned char labels[kCifarLabelBytes];
    out.bytes.resize(static_cast<std::size_t>(record_bytes_ - kCifarLabelBytes));
    const std::int64_t at = (i - f->first) * record_bytes_;
    if (!read_at(*f->fd, at, kCifarLabelBytes, labels, why) || !read_at(*f->fd, at + kCifarLabelBytes, record_bytes_ - kCifarLabelBytes, out.bytes.data(), why))
      throw file_error(f->path, "sample " + std::to_string(i) + " (record " + std::to_string(i - f->first) + "): " + why);
    out.label = labels[1];  // the fine label
  } else {
    const Member& m = members_[static_cast<std::size_t>(i)];
    const std::string& path = files_[m.file].path;
    const int fd = *files_[m.file].fd;
    out.bytes.resize(static_cast<std::size_t>(m.size));
    unsigned char text[kMaxLabelBytes + 1] = {};
    if (!read_at(fd, m.offset, m.size, out.bytes.data(), why) || !read_at(fd, m.label_offset, m.label_size, text, why))
      throw file_error(path, "sample " + std::to_string(i) + " (member " + m.name + "): " + why);
    char* end = nullptr;
    const long long label = std::strtoll(reinterpret_cast<const char*>(text), &end, 10);
    if (end == reinterpret_cast<const char*>(text) || label < 0)
      throw file_error(path, "sample " + std::to_string(i) + " (member " + m.name + "): its label is \"" + reinterpret_cast<const char*>(text) +
                                 "\"; expected a class index, a whole number ≥ 0");
    out.label = label;
  }
  if (out.label >= manifest_.classes)
    throw file_error(where(i), "sample " + std::to_string(i) + " has label " + std::to_string(out.label) + "; expected below the " +
                                   std::to_string(manifest_.classes) + " classes");
}

void Dataset::decode(std::int64_t i, const RawSample& raw, Image& out) const {
  if (manifest_.format == DatasetFormat::CifarBin) {
    // Plane by plane (all red, all green, all blue) into row-by-row RGB.
    const auto s = static_cast<std::size_t>(manifest_.image_size), plane = s * s;
    out.width = out.height = static_cast<int>(s);
    out.rgb.resize(3 * plane);
    for (std::size_t c = 0; c < 3; ++c)
      for (std::size_t p = 0; p < plane; ++p) out.rgb[p * 3 + c] = raw.bytes[c * plane + p];
    return;
  }
  std::string why;
  if (!codec_plugin().decode_jpeg(raw.bytes.data(), raw.bytes.size(), out.rgb, out.width, out.height, why))
    throw file_error(where(i), "sample " + std::to_string(i) + " is a corrupt JPEG: " + why);
}

}  // namespace parasim::data
