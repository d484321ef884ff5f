#include "cli/commands.hpp"

#include "common/error.hpp"

namespace parasim::cli {

int run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"parasim: simulate distributed deep-learning training plans on modeled GPU and TPU clusters"};
  app.set_version_flag("--version", std::string("parasim ") + PARASIM_VERSION);
  app.require_subcommand(0, 1);
  Action action;
  add_run_command(app, action, out);
  add_model_command(app, action, out);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help and --version arrive as exceptions derived from Success; CLI11 prints them in exit().
    return app.exit(e, out, err);
  } catch (const CLI::ParseError& e) {
    throw InputError("<command line>", 0, 0, "", e.what());
  }
  if (!action) {
    out << app.help();
    return 0;
  }
  return action();
}

}  // namespace parasim::cli
