#include "data/codec.hpp"

#include "common/plugin.hpp"

namespace parasim::data {

const CodecPlugin& codec_plugin() {
  return plugin_table<CodecPlugin>("libparasim_codec.so", "parasim_codec_plugin", kCodecPluginVersion, false, "the dataset codecs (libjpeg-turbo, libarchive)");
}

}  // namespace parasim::data
