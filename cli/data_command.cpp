// `parasim data synth`: a dataset in a format the real loader reads (data/synth.hpp), for tests and
// benchmarks of the input pipeline.
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/thousands.hpp"
#include "cli/validators.hpp"
#include "common/error.hpp"
#include "data/codec.hpp"
#include "data/synth.hpp"

namespace parasim::cli {
namespace {

struct SynthArgs {
  std::string format;
  std::int64_t samples = 1000;
  std::int64_t image_size = 32;
  std::int64_t classes = 100;
  std::int64_t seed = 1;
  std::int64_t samples_per_shard = 1000;
  std::string out;
};

int run_synth(const SynthArgs& a, std::ostream& out) {
  data::SynthOptions o;
  o.format = a.format == "jpeg-tar" ? data::DatasetFormat::JpegTar : data::DatasetFormat::CifarBin;
  o.samples = a.samples;
  o.image_size = a.image_size;
  o.classes = a.classes;
  o.seed = static_cast<std::uint64_t>(a.seed);
  o.samples_per_shard = a.samples_per_shard;
  const data::SynthResult r = data::synthesize(a.out, o);
  out << "wrote " << with_commas(static_cast<std::uint64_t>(a.samples)) << " samples (" << a.format << ", " << a.image_size << " × " << a.image_size
      << " px, " << a.classes << " classes, seed " << a.seed << ") in " << r.files.size() - 1 << " file" << (r.files.size() == 2 ? "" : "s") << " of "
      << with_commas(static_cast<std::uint64_t>(r.bytes)) << " bytes, and " << r.files.back();
  if (o.format == data::DatasetFormat::JpegTar) out << " (" << data::codec_plugin().versions() << ")";
  out << "\n";
  return 0;
}

}  // namespace

void add_data_command(CLI::App& app, Action& action, std::ostream& out) {
  CLI::App* cmd = app.add_subcommand("data", "Datasets for the input pipeline");
  cmd->require_subcommand(1);
  auto args = std::make_shared<SynthArgs>();
  CLI::App* synth = cmd->add_subcommand("synth", "Write a synthetic dataset the real loader reads: CIFAR binary records or WebDataset-style tar shards of JPEG");
  synth->add_option("--format", args->format, "cifar-bin (CIFAR-100's binary records) or jpeg-tar (tar shards of KEY.jpg and KEY.cls)")
      ->required()
      ->check(CLI::IsMember({"cifar-bin", "jpeg-tar"}));
  synth->add_option("--samples", args->samples, "samples to write (default 1000)")->check(integer_from_to(1, 100'000'000));
  synth->add_option("--image-size", args->image_size, "side of each square image in pixels (default 32, CIFAR's)")->check(integer_from_to(1, 4096));
  synth->add_option("--classes", args->classes, "classes the labels cycle through (default 100, at most 256: a CIFAR label is a byte)")
      ->check(integer_from_to(1, 256));
  synth->add_option("--seed", args->seed, "the images' seed (default 1)")->check(integer_from_to(0, 9'007'199'254'740'991));
  synth->add_option("--samples-per-shard", args->samples_per_shard, "jpeg-tar: samples in each tar shard (default 1000)")->check(integer_from_to(1, 100'000'000));
  synth->add_option("--out", args->out, "the dataset's folder (made if missing)")->required();
  synth->callback([&action, args, &out] {
    // A dataset of up to 2^40 pixel bytes: beyond, the command would run for hours.
    const double pixels = static_cast<double>(args->samples) * static_cast<double>(args->image_size * args->image_size) * 3;
    if (pixels > 1099511627776.0)
      throw InputError("<command line>", 0, 0, "", "--samples × --image-size² × 3 is " + std::to_string(static_cast<long long>(pixels)) +
                                                       " pixel bytes, above 2^40; expected a smaller dataset");
    action = [args, &out] { return run_synth(*args, out); };
  });
}

}  // namespace parasim::cli
